// The queue simulator with durations given by hand: every expected schedule below is worked out in the
// comments from the rules in SPEC "Shared clusters", not read back from the code. Clusters of one GPU per
// node and a price of $1 per GPU-hour make node-hours, GPU-hours and dollars the same numbers.
#include "models/cluster/queue_simulator.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/error.hpp"

namespace trainsim::model {
namespace {

constexpr double h = 3600;

QueueJob job(const std::string& name, double submit_h, std::int64_t nodes, double duration_h,
             std::size_t team = 0) {
  QueueJob q;
  q.name = name;
  q.scenario = name;
  q.team = team;
  q.submit = submit_h * h;
  q.nodes = nodes;
  q.duration = duration_h * h;
  return q;
}

QueueSpec small_cluster(std::int64_t nodes, double period_h, QueuePolicy policy) {
  QueueSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 1;
  s.period = period_h * h;
  s.policy = policy;
  s.teams = {"a", "b"};
  s.gpu_hour_usd = 1;
  return s;
}

// Four jobs on 4 nodes (first fit):
//   A: submit 0, 3 nodes, 4 h     B: submit 1, 4 nodes, 2 h
//   C: submit 2, 1 node, 1 h      D: submit 2, 1 node, 6 h
// FIFO: A 0-4 (nodes 0-2). B needs all 4 nodes: waits until A ends, 4-6. C and D are behind B: both start
// at 6 (C 6-7, D 6-12). Waits: A 0, B 3, C 4, D 4.
// EASY: at 1 B is blocked; its reservation is at 4 (A's end) on all 4 nodes. At 2, C (1 h) ends at
// 3 <= 4 and fits on the free node 3: it starts at 2 (wait 0). D (6 h) would end at 8 > 4 and every free
// node is reserved for B: it waits. At 3 (C ends) the same holds for D. B starts at 4 as under FIFO — not
// delayed — and D at 6. Busy node-hours either way: 3x4 + 4x2 + 1 + 6 = 27 of 4 x 24 = 96.
QueueSpec four_jobs(QueuePolicy policy) {
  QueueSpec s = small_cluster(4, 24, policy);
  s.jobs = {job("A", 0, 3, 4), job("B", 1, 4, 2), job("C", 2, 1, 1), job("D", 2, 1, 6)};
  return s;
}

TEST_CASE("FIFO: the small job waits behind the blocked wide one") {
  const QueueReport r = simulate_queue(four_jobs(QueuePolicy::fifo));
  CHECK(r.jobs[0].first_start == doctest::Approx(0));
  CHECK(r.jobs[1].first_start == doctest::Approx(4 * h));
  CHECK(r.jobs[2].first_start == doctest::Approx(6 * h));
  CHECK(r.jobs[3].first_start == doctest::Approx(6 * h));
  CHECK(r.jobs[1].wait == doctest::Approx(3 * h));
  CHECK(r.jobs[2].wait == doctest::Approx(4 * h));
  CHECK(r.jobs[3].end == doctest::Approx(12 * h));
  CHECK(r.cluster.busy_gpu_hours == doctest::Approx(27));
  CHECK(r.cluster.idle_gpu_hours == doctest::Approx(96 - 27));
  CHECK(r.cluster.utilisation == doctest::Approx(27.0 / 96));
}

TEST_CASE("EASY backfill starts the small job at once without delaying the head job") {
  const QueueReport fifo = simulate_queue(four_jobs(QueuePolicy::fifo));
  const QueueReport easy = simulate_queue(four_jobs(QueuePolicy::backfill));
  CHECK(easy.jobs[2].first_start == doctest::Approx(2 * h));  // C backfilled
  CHECK(easy.jobs[2].wait == doctest::Approx(0));
  CHECK(easy.jobs[1].first_start == doctest::Approx(fifo.jobs[1].first_start));  // B not delayed: 4 h
  CHECK(easy.jobs[3].first_start == doctest::Approx(6 * h));                     // D would have delayed B
  CHECK(easy.jobs[2].end == doctest::Approx(3 * h));
  CHECK(easy.cluster.busy_gpu_hours == doctest::Approx(27));
  // Team a (all four jobs): mean wait (0 + 3 + 0 + 4) / 4 = 1.75 h; p95 (nearest rank 4 of 4) = 4 h.
  CHECK(easy.teams[0].mean_wait == doctest::Approx(1.75 * h));
  CHECK(easy.teams[0].p95_wait == doctest::Approx(4 * h));
  CHECK(easy.teams[0].gpu_hours == doctest::Approx(27));
  CHECK(easy.teams[0].share == doctest::Approx(1));
}

// 6 nodes, first fit. A: submit 0, 4 nodes, 4 h (nodes 0-3). B: submit 1, 4 nodes, 2 h: only nodes 4-5
// are free, so B is blocked; its reservation is at 4 on the lowest four nodes then free, 0-3. C: submit 2,
// 2 nodes, 10 h: it would end at 12, after the reservation, but nodes 4-5 are not reserved, so EASY starts
// it at 2 and B still starts at 4 (on 0-3). Under FIFO C waits behind B and starts at 4 on 4-5.
TEST_CASE("EASY backfill starts a long job now on nodes the head job's reservation does not use") {
  QueueSpec s = small_cluster(6, 24, QueuePolicy::backfill);
  s.jobs = {job("A", 0, 4, 4), job("B", 1, 4, 2), job("C", 2, 2, 10)};
  const QueueReport easy = simulate_queue(s);
  CHECK(easy.jobs[2].first_start == doctest::Approx(2 * h));
  CHECK(easy.jobs[1].first_start == doctest::Approx(4 * h));
  REQUIRE(easy.segments.size() == 3);
  CHECK(easy.segments[1].nodes == std::vector<std::int32_t>{4, 5});        // C, the second to start
  CHECK(easy.segments[2].nodes == std::vector<std::int32_t>{0, 1, 2, 3});  // B
  s.policy = QueuePolicy::fifo;
  const QueueReport fifo = simulate_queue(s);
  CHECK(fifo.jobs[2].first_start == doctest::Approx(4 * h));
  CHECK(fifo.jobs[1].first_start == doctest::Approx(4 * h));
}

// 4 nodes in 2 leaves of 2 (leaf-aware). X (10 h), Y (1 h) and Z (10 h), 1 node each, submit 0: X takes
// node 0; Y the leaf with the fewest free nodes that holds it (leaf 0: node 1); Z leaf 1 (node 2).
// W (2 nodes, 1 h, submit 0.5) needs one whole leaf. At 0.5 one node is free (3): not enough in total. At 1
// Y ends: nodes 1 and 3 are free — enough in total, but in two leaves: fragmentation from 1 until X and Z
// end at 10, 2 free nodes x 9 h = 18 GPU-hours. W runs 10-11. Under first fit W starts at 1 on nodes 1, 3.
TEST_CASE("leaf-aware placement: fragmentation is the free GPU-hours a placeable-in-total job waited on") {
  QueueSpec s = small_cluster(4, 12, QueuePolicy::fifo);
  s.nodes_per_leaf = 2;
  s.placement = PlacementRule::leaf_aware;
  s.jobs = {job("X", 0, 1, 10), job("Y", 0, 1, 1), job("Z", 0, 1, 10), job("W", 0.5, 2, 1)};
  const QueueReport leaf = simulate_queue(s);
  CHECK(leaf.jobs[3].first_start == doctest::Approx(10 * h));
  CHECK(leaf.cluster.fragmentation_gpu_hours == doctest::Approx(18));
  REQUIRE(leaf.segments.size() == 4);
  CHECK(leaf.segments[2].nodes == std::vector<std::int32_t>{2});
  CHECK(leaf.segments[3].nodes == std::vector<std::int32_t>{0, 1});

  s.placement = PlacementRule::first_fit;
  const QueueReport first = simulate_queue(s);
  CHECK(first.jobs[3].first_start == doctest::Approx(1 * h));
  CHECK(first.segments[3].nodes == std::vector<std::int32_t>{1, 3});
  CHECK(first.cluster.fragmentation_gpu_hours == 0);
  // Topology-aware spills over more leaves rather than wait: W also starts at 1 on nodes 1 and 3.
  s.placement = PlacementRule::topology_aware;
  const QueueReport aware = simulate_queue(s);
  CHECK(aware.jobs[3].first_start == doctest::Approx(1 * h));
  CHECK(aware.segments[3].nodes == std::vector<std::int32_t>{1, 3});
  CHECK(aware.cluster.fragmentation_gpu_hours == 0);
}

// 2 nodes, priority with preemption. L (priority 0, submit 0, 2 nodes, 10 h, checkpoint every 3 h,
// recovery 0.5 h); H (priority 1, submit 4, 2 nodes, 2 h). At 4 H preempts L: L ran 4 h, its last
// checkpoint is at 3 h, so 1 h is lost. H runs 4-6. L resumes at 6 and needs 0.5 + (10 - 3) = 7.5 h: ends
// at 13.5. L: run time 4 + 7.5 = 11.5 h, wait 2 h, 1 preemption; lost to preemption: 1 h lost work + 0.5 h
// recovery, on 2 GPUs = 3 GPU-hours.
TEST_CASE("preemption resumes from the last checkpoint and charges the lost work") {
  QueueSpec s = small_cluster(2, 24, QueuePolicy::priority);
  s.preemption = true;
  QueueJob low = job("L", 0, 2, 10);
  low.checkpoint_interval = 3 * h;
  low.recovery = 0.5 * h;
  QueueJob high = job("H", 4, 2, 2);
  high.priority = 1;
  s.jobs = {low, high};
  const QueueReport r = simulate_queue(s);
  CHECK(r.jobs[1].first_start == doctest::Approx(4 * h));
  CHECK(r.jobs[1].end == doctest::Approx(6 * h));
  CHECK(r.jobs[0].preemptions == 1);
  CHECK(r.jobs[0].lost_work == doctest::Approx(1 * h));
  CHECK(r.jobs[0].end == doctest::Approx(13.5 * h));
  CHECK(r.jobs[0].run_time == doctest::Approx(11.5 * h));
  CHECK(r.jobs[0].wait == doctest::Approx(2 * h));
  CHECK(r.cluster.lost_gpu_hours_preemption == doctest::Approx(3));
  CHECK(r.cluster.busy_gpu_hours == doctest::Approx(2 * 11.5 + 2 * 2));

  s.preemption = false;  // H waits for L: 10-12
  const QueueReport waited = simulate_queue(s);
  CHECK(waited.jobs[1].first_start == doctest::Approx(10 * h));
  CHECK(waited.jobs[0].preemptions == 0);
}

// One node, quotas 0.5 / 0.5, FIFO. Team a submits four 1 h jobs at 0, then team b four (same submit time,
// later in the file). Without quotas: a, a, a, a, b, b, b, b. With them, at each end the team above its
// share of the GPU-hours used so far goes last: 0 a (nothing used yet); 1 b (a used 1 of 1 > 0.5);
// 2 a (1 and 1: both within); 3 b; ... alternating, so after 8 h each team has 4 GPU-hours: shares 0.5.
// Team b's waits are 1, 3, 5, 7 h (mean 4 h) instead of 4, 5, 6, 7 h (mean 5.5 h).
TEST_CASE("quotas: a team over its fair share is served after the others") {
  QueueSpec s = small_cluster(1, 8, QueuePolicy::fifo);
  for (int i = 0; i < 4; ++i) s.jobs.push_back(job("a" + std::to_string(i), 0, 1, 1, 0));
  for (int i = 0; i < 4; ++i) s.jobs.push_back(job("b" + std::to_string(i), 0, 1, 1, 1));
  const QueueReport plain = simulate_queue(s);
  CHECK(plain.teams[1].mean_wait == doctest::Approx(5.5 * h));
  s.quotas = {0.5, 0.5};
  const QueueReport fair = simulate_queue(s);
  CHECK(fair.jobs[4].first_start == doctest::Approx(1 * h));
  CHECK(fair.jobs[1].first_start == doctest::Approx(2 * h));
  CHECK(fair.teams[1].mean_wait == doctest::Approx(4 * h));
  CHECK(fair.teams[0].share == doctest::Approx(0.5));
  CHECK(fair.teams[1].share == doctest::Approx(0.5));
}

// Random node failures (seeded): whatever the schedule, every node-second of the period is busy, idle or
// down, and the same seed gives the same schedule.
TEST_CASE("busy + idle + down = nodes x period, and a seed fixes the schedule") {
  QueueSpec s = small_cluster(16, 30 * 24, QueuePolicy::backfill);
  s.node_mtbf = 200 * h;
  s.repair = 6 * h;
  s.failure_seed = 11;
  for (int i = 0; i < 60; ++i) {
    QueueJob q = job("j" + std::to_string(i), i * 11.0, 1 + (i * 7) % 9, 5 + (i * 13) % 40, i % 2);
    q.checkpoint_interval = 2 * h;
    q.recovery = 0.25 * h;
    s.jobs.push_back(q);
  }
  const QueueReport r = simulate_queue(s);
  const QueueClusterResult& c = r.cluster;
  CHECK(c.node_failures > 0);
  CHECK(c.down_gpu_hours > 0);
  CHECK(c.busy_gpu_hours + c.idle_gpu_hours + c.down_gpu_hours ==
        doctest::Approx(16.0 * 30 * 24).epsilon(1e-12));
  CHECK(c.lost_gpu_hours_failures > 0);
  double jobs_gpu_hours = 0;
  for (const QueueJobResult& j : r.jobs) jobs_gpu_hours += j.gpu_hours;
  CHECK(jobs_gpu_hours == doctest::Approx(c.busy_gpu_hours).epsilon(1e-12));
  const QueueReport again = simulate_queue(s);
  REQUIRE(again.segments.size() == r.segments.size());
  for (std::size_t i = 0; i < r.segments.size(); ++i) {
    CHECK(again.segments[i].start == r.segments[i].start);
    CHECK(again.segments[i].nodes == r.segments[i].nodes);
  }
}

TEST_CASE("a job wider than the cluster is an input error") {
  QueueSpec s = small_cluster(2, 1, QueuePolicy::fifo);
  s.jobs = {job("wide", 0, 3, 1)};
  CHECK_THROWS_WITH_AS(static_cast<void>(simulate_queue(s)), doctest::Contains("asks for 3 nodes"),
                       InputError);
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// Contention with a step model given by hand: at share s of its links a job's step takes 2 - s times as
// long (1.5 at half). 5 nodes of one GPU in leaves of 2 (0-1, 2-3, 4): F (1 node, 10 h) takes node 0; A
// (2 nodes, 4 h) nodes 1-2 (leaves 0 and 1), B (2 nodes, 4 h) nodes 3-4 (leaves 1 and 2): both cross
// leaf 1's uplinks, with equal traffic: half each, so both run at 1/1.5 of their pace.
QueueSpec shared_leaf(double b_submit_h) {
  QueueSpec s = small_cluster(5, 12, QueuePolicy::fifo);
  s.nodes_per_leaf = 2;
  s.contention = true;
  s.slowdown = [](std::size_t, double share) { return 2 - share; };
  s.jobs = {job("F", 0, 1, 10), job("A", 0, 2, 4), job("B", b_submit_h, 2, 4)};
  for (QueueJob& q : s.jobs) q.traffic_per_step = 1e9;
  return s;
}

// Together from 0: 4 h of work at 1.5 ends both at 6 h; each lost 2 h x 2 GPUs = 4 GPU-hours ($4).
TEST_CASE("contention: two jobs sharing a leaf's uplinks each run at their half share's pace") {
  const QueueReport r = simulate_queue(shared_leaf(0));
  CHECK(r.jobs[1].end == doctest::Approx(6 * h));
  CHECK(r.jobs[2].end == doctest::Approx(6 * h));
  CHECK(r.jobs[0].end == doctest::Approx(10 * h));  // under one leaf: never slowed
  CHECK(r.jobs[0].contention_slowdown == 1.0);
  CHECK(r.jobs[1].contention_slowdown == doctest::Approx(1.5));
  CHECK(r.jobs[1].contention_gpu_hours == doctest::Approx(4));
  CHECK(r.jobs[2].contention_cost == doctest::Approx(4));
  CHECK(r.teams[0].contention_gpu_hours == doctest::Approx(8));
  CHECK(r.cluster.contention_gpu_hours == doctest::Approx(8));
  CHECK(r.cluster.contention_hours == doctest::Approx(6));
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].leaf == 1);
  CHECK(r.links[0].shared_s == doctest::Approx(6 * h));
  CHECK(r.links[0].most_jobs == 2);
  CHECK(r.links[0].contention_gpu_hours == doctest::Approx(8));
  // 8 GPU-hours lost over the first 6 hourly rows: 4/3 GPUs each.
  CHECK(r.samples[0].contention_gpus == doctest::Approx(4.0 / 3));
  CHECK(r.samples[6].contention_gpus == 0);
  const QueueClusterResult& c = r.cluster;
  CHECK(c.busy_gpu_hours + c.idle_gpu_hours + c.down_gpu_hours == doctest::Approx(5.0 * 12));
  CHECK(c.busy_gpu_hours == doctest::Approx(10 + 2 * 6 + 2 * 6));
}

// B arrives at 2 h: A has done 2 h of its 4 alone; the other 2 h at 1.5 end it at 5 h. B runs 2-5 at 1.5
// (2 h of work), then alone: its last 2 h end it at 7 h. Each lost 1 h x 2 GPUs.
TEST_CASE("contention: a job's remaining work is rescaled whenever the running set changes") {
  const QueueReport r = simulate_queue(shared_leaf(2));
  CHECK(r.jobs[1].end == doctest::Approx(5 * h));
  CHECK(r.jobs[2].end == doctest::Approx(7 * h));
  CHECK(r.jobs[1].contention_s == doctest::Approx(1 * h));
  CHECK(r.jobs[2].contention_s == doctest::Approx(1 * h));
  CHECK(r.jobs[2].contention_slowdown == doctest::Approx(5.0 / 4));  // 5 h of wall for 4 h of work
  CHECK(r.cluster.contention_hours == doctest::Approx(3));
}

// 10 nodes in leaves of 2, A and B of 4 nodes (two leaves each). First fit: F node 0, A nodes 1-4 (leaves
// 0-2), B nodes 5-8 (leaves 2-4): they share leaf 2 and both end at 6 h. Topology-aware: F best-fits leaf
// 0; A takes the first run of two adjacent leaves holding 4 free nodes that no job crosses, leaves 1-2
// (nodes 2-5), B leaves 3-4 (nodes 6-9): nothing shared, both end at 4 h.
TEST_CASE("topology-aware placement keeps the two jobs under their own leaves: no slowdown") {
  QueueSpec s = shared_leaf(0);
  s.nodes = 10;
  s.jobs[1].nodes = 4;
  s.jobs[2].nodes = 4;
  const QueueReport first = simulate_queue(s);
  CHECK(first.jobs[1].end == doctest::Approx(6 * h));
  CHECK(first.cluster.contention_gpu_hours == doctest::Approx(2 * 2 * 4));
  s.placement = PlacementRule::topology_aware;
  const QueueReport aware = simulate_queue(s);
  REQUIRE(aware.segments.size() == 3);
  CHECK(aware.segments[1].nodes == std::vector<std::int32_t>{2, 3, 4, 5});
  CHECK(aware.segments[2].nodes == std::vector<std::int32_t>{6, 7, 8, 9});
  CHECK(aware.jobs[1].end == doctest::Approx(4 * h));
  CHECK(aware.jobs[2].end == doctest::Approx(4 * h));
  CHECK(aware.cluster.contention_gpu_hours == 0);
  CHECK(aware.links.empty());
}

// A node failure under contention: A (checkpoint every 1 h of run) and B share leaf 1 from 0. Node 2 (A's)
// fails at some time; whatever it is, the accounting identity holds and A's kept work is whole hours.
TEST_CASE("contention keeps busy + idle + down = nodes x period through failures") {
  QueueSpec s = shared_leaf(0);
  s.node_mtbf = 20 * h;
  s.repair = 1 * h;
  s.failure_seed = 3;
  for (QueueJob& q : s.jobs) {
    q.checkpoint_interval = 1 * h;
    q.recovery = 0.1 * h;
  }
  const QueueReport r = simulate_queue(s);
  const QueueClusterResult& c = r.cluster;
  CHECK(c.node_failures > 0);
  CHECK(c.busy_gpu_hours + c.idle_gpu_hours + c.down_gpu_hours == doctest::Approx(5.0 * 12).epsilon(1e-12));
  double jobs = 0;
  for (const QueueJobResult& j : r.jobs) jobs += j.contention_gpu_hours;
  CHECK(jobs == doctest::Approx(c.contention_gpu_hours));
}

}  // namespace
}  // namespace trainsim::model
