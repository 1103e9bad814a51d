#include "sim/dag.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/error.hpp"

using trainsim::sim::Dag;
using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::FlowNetwork;
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

struct Recorder : TraceSink {
  std::vector<std::string> names;
  void record(const TraceRecord& r) override { names.emplace_back(r.name); }
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

TEST_CASE("a diamond DAG waits for its longer branch") {
  // a(10) -> {b(20) on lane 1, c(5) on lane 2} -> d(1): d starts at 10 + max(20, 5) = 30.
  Dag dag;
  const TaskId a = dag.busy(dag.lane("l0"), ps(10), "a");
  const TaskId b = dag.busy(dag.lane("l1"), ps(20), "b");
  const TaskId c = dag.busy(dag.lane("l2"), ps(5), "c");
  const TaskId d = dag.busy(dag.lane("l0"), ps(1), "d");
  dag.depend(a, b);
  dag.depend(a, c);
  dag.depend(b, d);
  dag.depend(c, d);
  Engine e;
  const auto r = trainsim::sim::execute(dag, e);
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
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(100.0, Duration::zero());
  Dag dag;
  const auto comm = dag.lane("gpu 0 / dp comm");
  const std::vector<LinkId> path{l};
  const TaskId t1 = dag.transfer(comm, path, 100.0, "send 1", "comm");
  const TaskId t2 = dag.transfer(comm, path, 100.0, "send 2", "comm");
  const TaskId j = dag.join(comm, "done");
  dag.depend(t1, j);
  dag.depend(t2, j);
  Recorder rec;
  const auto r = trainsim::sim::execute(dag, e, &net, &rec);
  CHECK(r.tasks[t1].end == at(2'000'000'000'000));
  CHECK(r.tasks[j].start == r.tasks[j].end);
  CHECK(r.makespan == ps(2'000'000'000'000));
  CHECK(rec.names.size() == 3);  // every task recorded exactly once
  CHECK(dag.category(t1) == "comm");
  CHECK(net.bytes_carried(l) == 200.0);
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
