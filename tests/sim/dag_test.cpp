#include "sim/dag.hpp"

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "sim/error.hpp"

using trainsim::sim::Dag;
using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::FlowNetwork;
using trainsim::sim::kNoTask;
using trainsim::sim::LinkId;
using trainsim::sim::TaskId;
using trainsim::sim::Time;
using trainsim::sim::TraceRecord;
using trainsim::sim::TraceSink;

namespace {
Duration ps(std::int64_t n) {
  return Duration::from_ps(n);
}
Time at(std::int64_t n) {
  return Time::from_ps(n);
}

// Two transfers of the given sizes on one 100 B/s link, on one comm lane, and a join j that waits for both.
struct TwoTransfersJoined {
  Engine engine;
  FlowNetwork net{engine};
  LinkId link = net.add_link(100.0, Duration::zero());
  Dag dag;
  TaskId t1 = kNoTask, t2 = kNoTask, j = kNoTask;
  TwoTransfersJoined(double bytes1, const char* name1, double bytes2, const char* name2, const char* join) {
    const auto comm = dag.lane("gpu 0 / dp comm");
    const std::vector<LinkId> path{link};
    t1 = dag.transfer(comm, path, bytes1, name1, "comm");
    t2 = dag.transfer(comm, path, bytes2, name2, "comm");
    j = dag.join(comm, join);
    dag.depend(t1, j);
    dag.depend(t2, j);
  }
};

struct Recorder : TraceSink {
  std::vector<std::string> names;
  std::vector<double> path_places;  // per record: its critical_path arg, 0 without one
  void record(const TraceRecord& r) override {
    names.emplace_back(r.name);
    double place = 0;
    for (const auto& arg : r.args) {
      if (arg.key == trainsim::sim::kCriticalPathArg) place = arg.number;
    }
    path_places.push_back(place);
  }
};

// a(10) on l0 -> {b(20) on l1, c(5) on l2} -> d(1) on l0.
struct Diamond {
  Dag dag;
  std::array<TaskId, 4> ids{};  // a, b, c, d
  Diamond() {
    const TaskId a = dag.busy(dag.lane("l0"), ps(10), "a");
    const TaskId b = dag.busy(dag.lane("l1"), ps(20), "b");
    const TaskId c = dag.busy(dag.lane("l2"), ps(5), "c");
    const TaskId d = dag.busy(dag.lane("l0"), ps(1), "d");
    dag.depend(a, b);
    dag.depend(a, c);
    dag.depend(b, d);
    dag.depend(c, d);
    ids = {a, b, c, d};
  }
};
}  // namespace

TEST_CASE("a chain DAG's makespan equals the sum of its tasks") {
  Dag dag;
  const auto gpu = dag.lane("gpu 0 / compute");
  const auto copy = dag.lane("gpu 0 / copy");
  const TaskId a = dag.busy(gpu, ps(10), "a");
  const TaskId b = dag.busy(copy, ps(20), "b");
  const TaskId c = dag.busy(gpu, ps(30), "c");
  dag.depend(a, b);
  dag.depend(b, c);
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.makespan == ps(60));
  CHECK(r.tasks[b].start == at(10));
  CHECK(r.tasks[c].start == at(30));
  CHECK(r.tasks[c].end == at(60));
  CHECK(r.lane_busy[gpu] == ps(40));
  CHECK(r.lane_busy[copy] == ps(20));
}

TEST_CASE("an extended busy task runs for its work plus what was added, and only busy tasks extend") {
  Dag dag;
  const auto gpu = dag.lane("gpu 0 / compute");
  const TaskId a = dag.busy(gpu, ps(10), "a");
  const TaskId b = dag.busy(gpu, ps(5), "b");
  dag.depend(a, b);
  dag.extend(a, ps(20));
  dag.extend(a, ps(0));
  CHECK(dag.work(a) == ps(30));
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.tasks[b].start == at(30));  // 10 + 20: b waits for the whole of a
  CHECK(r.makespan == ps(35));
  const TaskId j = dag.join(gpu, "j");
  CHECK_THROWS_AS(dag.extend(j, ps(1)), trainsim::InputError);
  CHECK_THROWS_AS(dag.extend(a, ps(-1)), trainsim::InputError);
  CHECK_THROWS_AS(dag.extend(99, ps(1)), trainsim::InputError);
}
TEST_CASE("a diamond DAG waits for its longer branch") {
  // a(10) -> {b(20) on lane 1, c(5) on lane 2} -> d(1): d starts at 10 + max(20, 5) = 30.
  const Diamond g;
  const auto [a, b, c, d] = g.ids;
  Engine e;
  const auto r = trainsim::sim::execute(g.dag, e);
  CHECK(r.tasks[c].end == at(15));
  CHECK(r.tasks[d].start == at(30));
  CHECK(r.makespan == ps(31));
}

TEST_CASE("tasks ready at the same instant start on a shared lane in id order") {
  // x (id 1) and y (id 2) both wait on a and share a lane; y's dependency is declared first, yet x runs
  // first because ready tasks are released by id.
  Dag dag;
  const auto lane = dag.lane("gpu 0 / compute");
  const TaskId a = dag.busy(dag.lane("other"), ps(10), "a");
  const TaskId x = dag.busy(lane, ps(20), "x");
  const TaskId y = dag.busy(lane, ps(5), "y");
  dag.depend(a, y);
  dag.depend(a, x);
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.tasks[x].start == at(10));
  CHECK(r.tasks[y].start == at(30));
  CHECK(r.makespan == ps(35));
}

TEST_CASE("a join takes no time and transfers share links by max-min fairness") {
  // Two 100-byte transfers on one 100 B/s link run at 50 B/s each: both end at 2 s; the join with them.
  TwoTransfersJoined g(100.0, "send 1", 100.0, "send 2", "done");
  Recorder rec;
  const auto r = trainsim::sim::execute(g.dag, g.engine, &g.net, &rec);
  const TaskId t1 = g.t1, j = g.j;
  CHECK(r.tasks[t1].end == at(2'000'000'000'000));
  CHECK(r.tasks[j].start == r.tasks[j].end);
  CHECK(r.makespan == ps(2'000'000'000'000));
  CHECK(rec.names.size() == 3);  // every task recorded exactly once
  CHECK(g.dag.category(t1) == "comm");
  CHECK(g.net.bytes_carried(g.link) == 200.0);
}

TEST_CASE("a repeated block has the same tasks and dependencies, renamed, with its paths shared") {
  // Block: "x start" (join) -> "x" (30 B over the 100 B/s link, 0.3 s) -> "x done" (join); then repeated
  // as "longer name": the copy's tasks come next, and its transfer shares the original's path.
  Engine engine;
  FlowNetwork net{engine};
  const LinkId link = net.add_link(100.0, Duration::zero());
  Dag dag;
  const auto lane = dag.lane("comm");
  const TaskId before = dag.busy(lane, ps(7), "before", "compute");
  const std::vector<LinkId> path{link};
  const TaskId first = dag.join(lane, "x start", "dp");
  const std::size_t edge_first = dag.edge_count();
  const TaskId flow = dag.transfer(lane, path, 30.0, "x", "dp");
  const TaskId done = dag.join(lane, "x done", "dp");
  dag.depend(first, flow);
  dag.depend(flow, done);
  const auto end = static_cast<TaskId>(dag.size());
  const std::size_t edge_end = dag.edge_count();
  dag.depend(before, first);
  const TaskId copy = dag.repeat(first, end, edge_first, edge_end, "x", "longer name");
  CHECK(copy == 4);  // after before, x start, x and x done
  REQUIRE(dag.size() == 7);
  CHECK(dag.edge_count() == 5);
  CHECK(dag.name(copy) == "longer name start");
  CHECK(dag.name(copy + 1) == "longer name");
  CHECK(dag.name(copy + 2) == "longer name done");
  CHECK(dag.kind(copy + 1) == trainsim::sim::TaskKind::transfer);
  CHECK(dag.bytes(copy + 1) == 30.0);
  CHECK(dag.path(copy + 1).data() == dag.path(flow).data());  // stored once
  CHECK(dag.category(copy + 2) == "dp");
  dag.depend(done, copy);  // the copy runs after the original
  // A second transfer over the same path, of its own size: 20 B, 0.2 s.
  const TaskId like = dag.transfer_like(flow, lane, 20.0, "like");
  dag.depend(copy + 2, like);
  const auto r = trainsim::sim::execute(dag, engine, &net);
  // 7 ps, then 0.3 s, 0.3 s again in the copy (its own dependencies), then 0.2 s.
  CHECK(r.tasks[copy + 1].start == at(7 + 300'000'000'000));
  CHECK(r.tasks[copy + 2].end == at(7 + 600'000'000'000));
  CHECK(r.tasks[like].end == at(7 + 800'000'000'000));
  CHECK(net.bytes_carried(link) == 80.0);
  CHECK_THROWS_AS(dag.repeat(first, end, edge_first, edge_end, "y", "z"), trainsim::InputError);
  CHECK_THROWS_AS(dag.repeat(first, end, edge_first, edge_end + 1, "x", "z"),
                  trainsim::InputError);  // leaves
  CHECK_THROWS_AS(dag.transfer_like(before, lane, 1.0, "not a transfer"), trainsim::InputError);
}

TEST_CASE("dependencies on tasks added later run in dependency order") {
  // d(1) -> b(2) -> c(3) -> a(4) with ids a < b < c < d: two of the edges point back, none closes a cycle;
  // they run one after another, so a ends at 1 + 2 + 3 + 4.
  Dag dag;
  const TaskId a = dag.busy(dag.lane("la"), ps(4), "a");
  const TaskId b = dag.busy(dag.lane("lb"), ps(2), "b");
  const TaskId c = dag.busy(dag.lane("lc"), ps(3), "c");
  const TaskId d = dag.busy(dag.lane("ld"), ps(1), "d");
  dag.depend(d, b);
  dag.depend(b, c);
  dag.depend(c, a);
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.tasks[b].start == at(1));
  CHECK(r.tasks[c].start == at(3));
  CHECK(r.tasks[a].end == at(10));
  CHECK(r.released_by[a] == c);
}

TEST_CASE("a cycle is rejected with the names of the tasks in it") {
  Dag dag;
  const auto lane = dag.lane("l");
  const TaskId start = dag.busy(lane, ps(1), "start");
  const TaskId a = dag.busy(lane, ps(1), "a");
  const TaskId b = dag.busy(lane, ps(1), "b");
  const TaskId c = dag.busy(lane, ps(1), "c");
  dag.depend(start, a);
  dag.depend(a, b);
  dag.depend(b, c);
  dag.depend(c, a);
  Engine e;
  CHECK_THROWS_WITH_AS(trainsim::sim::execute(dag, e), "the task graph has a cycle: 'a' -> 'b' -> 'c' -> 'a'",
                       trainsim::InputError);
}

TEST_CASE("bad tasks and dependencies are rejected as input errors") {
  Dag dag;
  const auto lane = dag.lane("l");
  const TaskId a = dag.busy(lane, ps(1), "a");
  CHECK_THROWS_WITH_AS(dag.depend(a, a), "task 'a' depends on itself", trainsim::InputError);
  CHECK_THROWS_AS(dag.depend(a, 7), trainsim::InputError);
  CHECK_THROWS_AS(dag.busy(lane, ps(-1), "neg"), trainsim::InputError);
  CHECK_THROWS_AS(dag.busy(lane + 1, ps(1), "no lane"), trainsim::InputError);
  const std::vector<LinkId> path{0};
  dag.transfer(lane, path, 1.0, "t");
  Engine e;
  CHECK_THROWS_WITH_AS(trainsim::sim::execute(dag, e),
                       "the task graph has transfers but no flow network was given", trainsim::InputError);
  // A network of one link (id 0): the second transfer's path names link 3.
  const std::vector<LinkId> beyond{0, 3};
  dag.transfer(lane, beyond, 1.0, "beyond");
  FlowNetwork net(e);
  net.add_link(1.0, Duration::zero());
  CHECK_THROWS_WITH_AS(trainsim::sim::execute(dag, e, &net), "transfer 'beyond' uses unknown link id 3",
                       trainsim::InputError);
}

TEST_CASE("an empty DAG finishes at once") {
  Dag dag;
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.makespan == Duration::zero());
  CHECK(r.tasks.empty());
}

TEST_CASE("execute returns when the last task is done and leaves later events queued") {
  Dag dag;
  dag.busy(dag.lane("l"), ps(10), "only");
  Engine e;
  int later = 0;
  e.at(at(5), [&] { ++later; });
  e.at(at(1000), [&] { ++later; });
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.makespan == ps(10));
  CHECK(later == 1);
  CHECK(e.now() == at(10));
  CHECK(e.pending() == 1);
}

TEST_CASE("the critical path follows the dependency that released each task: the longer branch") {
  // The diamond: a [0,10], b [10,30], c [10,15]; d is released by b (the later of its two dependencies,
  // at 30) and ends last at 31. Path: a, b, d.
  const Diamond g;
  const auto [a, b, c, d] = g.ids;
  Engine e;
  Recorder rec;
  const auto r = trainsim::sim::execute(g.dag, e, nullptr, &rec);
  CHECK(r.released_by[a] == kNoTask);
  CHECK(r.released_by[b] == a);
  CHECK(r.released_by[c] == a);
  CHECK(r.released_by[d] == b);
  CHECK(trainsim::sim::critical_path(g.dag, r) == std::vector<TaskId>{a, b, d});
  // Recorded in completion order (a at 10, c at 15, b at 30, d at 31), each task of the path with its place.
  CHECK(rec.names == std::vector<std::string>{"a", "c", "b", "d"});
  CHECK(rec.path_places == std::vector<double>{1, 0, 2, 3});
}

TEST_CASE("a task that waited for its lane, not for its dependency, has the lane's previous task before it") {
  // x(50) and y(10) start at 0 on lanes l0 and l1; z(5) on l0 depends on y only. By hand: z is released by
  // y at 10 but l0 is busy with x until 50, so z runs [50,55]: the path is x, z (not y, z).
  Dag dag;
  const auto l0 = dag.lane("l0");
  const TaskId x = dag.busy(l0, ps(50), "x");
  const TaskId y = dag.busy(dag.lane("l1"), ps(10), "y");
  const TaskId z = dag.busy(l0, ps(5), "z");
  dag.depend(y, z);
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
  CHECK(r.tasks[z].start == at(50));
  CHECK(r.released_by[z] == y);
  CHECK(trainsim::sim::critical_path(dag, r) == std::vector<TaskId>{x, z});
}

TEST_CASE("the critical path runs through transfers slowed by sharing and through joins") {
  // t1 (100 B) and t2 (300 B) share one 100 B/s link: 50 B/s each until t1 ends at 2 s, then t2 alone
  // moves its last 200 B in 2 s, ending at 4 s. The join j waits for both: t2 releases it at 4 s. Then
  // e(1 s) on a compute lane: [4 s, 5 s]. Path: t2, j, e.
  TwoTransfersJoined g(100.0, "t1", 300.0, "t2", "joined");
  const TaskId t1 = g.t1, t2 = g.t2, j = g.j;
  Dag& dag = g.dag;
  const TaskId e = dag.busy(dag.lane("gpu 0 / compute"), ps(1'000'000'000'000), "e");
  dag.depend(j, e);
  const auto r = trainsim::sim::execute(dag, g.engine, &g.net);
  CHECK(r.tasks[t1].end == at(2'000'000'000'000));
  CHECK(r.tasks[t2].end == at(4'000'000'000'000));
  CHECK(r.released_by[j] == t2);
  CHECK(r.makespan == ps(5'000'000'000'000));
  CHECK(trainsim::sim::critical_path(dag, r) == std::vector<TaskId>{t2, j, e});
}

TEST_CASE("of tasks that end last together the path ends at the lowest id; an empty graph has none") {
  // p(7) and q(7) on separate lanes both end at 7; nothing else runs.
  Dag dag;
  const TaskId p = dag.busy(dag.lane("l0"), ps(7), "p");
  dag.busy(dag.lane("l1"), ps(7), "q");
  Engine e;
  CHECK(trainsim::sim::critical_path(dag, trainsim::sim::execute(dag, e)) == std::vector<TaskId>{p});
  Dag empty;
  Engine e2;
  CHECK(trainsim::sim::critical_path(empty, trainsim::sim::execute(empty, e2)).empty());
}
