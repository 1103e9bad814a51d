#include "models/step/step_network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/step/step_lowering.hpp"
#include "models/step/step_plan.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

using testing::dgx_a100;  // 8 GPUs, 8 NICs of 25 GB/s (one per GPU), NVSwitch at 300 GB/s per GPU

struct Run {
  sim::DagResult result;
  std::vector<double> carried;  // per port link, bytes
};

Run run(const sim::Dag& dag, const StepNetwork& net) {
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  net.install(network);
  Run r{sim::execute(dag, engine, &network), {}};
  for (sim::LinkId l = 0; l < network.link_count(); ++l) r.carried.push_back(network.bytes_carried(l));
  return r;
}

double seconds(const sim::DagResult& r, LoweredTransfer t) {
  return (r.tasks[t.last].end - r.tasks[t.first].start).seconds();
}

// The fixtures' small GPT at width 2,048 (ZeRO-1, sequence parallel): enough gradient and activation bytes
// for data-parallel and pipeline traffic to overlap.
StepInput gpt_on(std::int64_t nodes, int tp, int pp, std::int64_t dp, std::int64_t global_batch,
                 std::int64_t seq_len = 2048) {
  return testing::small_gpt_on_a100(nodes, tp, pp, dp, global_batch, 2048, seq_len);
}

}  // namespace

TEST_CASE("a GPU's ports run at its share of the NICs and at the NVLink rate, efficiencies applied") {
  topo::ClusterSpec c = dgx_a100(2);
  const StepNetwork one_nic_each(c, 4);
  CHECK(one_nic_each.port_bandwidth(Fabric::network) ==
        doctest::Approx(25e9 * c.node.comm.nic_bandwidth_fraction).scale(0));
  CHECK(one_nic_each.port_bandwidth(Fabric::nvlink) ==
        doctest::Approx(300e9 * c.node.comm.intra_bandwidth_fraction).scale(0));
  c.node.nics_per_node = 4;  // two GPUs per NIC: half a NIC each
  CHECK(StepNetwork(c, 4).port_bandwidth(Fabric::network) ==
        doctest::Approx(12.5e9 * c.node.comm.nic_bandwidth_fraction).scale(0));
  c.node.nics_per_node = 16;  // two NICs per GPU, but PCIe (32 GB/s) in front of them
  CHECK(StepNetwork(c, 4).port_bandwidth(Fabric::network) ==
        doctest::Approx(32e9 * c.node.comm.nic_bandwidth_fraction).scale(0));
}

TEST_CASE("alone, a lowered transfer takes exactly its closed-form time: latency, then the bandwidth term") {
  const StepNetwork proto(dgx_a100(2), 2);
  for (const Fabric f : {Fabric::network, Fabric::nvlink}) {
    StepNetwork net(dgx_a100(2), 2);
    sim::Dag dag;
    const LoweredTransfer t = net.lower(dag, dag.lane("gpu 0 / dp"), 0, 1, f, 3.5e-3, 0.4e-3, "bucket", "dp");
    CHECK(dag.kind(t.first) == sim::TaskKind::busy);
    CHECK(dag.kind(t.last) == sim::TaskKind::transfer);
    CHECK(dag.work(t.first).seconds() == doctest::Approx(0.4e-3).scale(0));
    CHECK(dag.bytes(t.last) == doctest::Approx(3.1e-3 * proto.port_bandwidth(f)).scale(0));
    const Run r = run(dag, net);
    CHECK(seconds(r.result, t) == doctest::Approx(3.5e-3).epsilon(1e-9));
  }
}

TEST_CASE("no bandwidth term, or contention off, is one busy task of the closed-form time") {
  StepNetwork net(dgx_a100(2), 2);
  StepNetwork off(dgx_a100(2), 2, false);
  sim::Dag dag;
  const sim::LaneId lane = dag.lane("gpu 0 / dp");
  const LoweredTransfer latency_only = net.lower(dag, lane, 0, 1, Fabric::network, 1e-5, 1e-5, "norm", "dp");
  const LoweredTransfer busy = off.lower(dag, lane, 0, 1, Fabric::network, 2e-3, 1e-4, "bucket", "dp");
  CHECK(latency_only.first == latency_only.last);
  CHECK(busy.first == busy.last);
  CHECK(dag.kind(busy.first) == sim::TaskKind::busy);
  CHECK(dag.work(busy.first).seconds() == doctest::Approx(2e-3).scale(0));
  CHECK(net.link_count() == 0);
  CHECK(off.link_count() == 0);
}

TEST_CASE("a gradient bucket and a pipeline send through one NIC share its rate, never exceeding it") {
  // GPU 0 (stage 0) reduces a bucket over the network (to its own in port: the collapsed ring) while it
  // sends an activation to GPU 1 (stage 1, another node). Bucket: 1 s closed form, 0.1 s of it latency;
  // send: 0.5 s, 0.05 s latency. By hand, with R the port rate: the send's flow runs alone from 0.05 to
  // 0.1 (0.05R), then both at R/2 until the send's remaining 0.4R are done at 0.9 s; the bucket has moved
  // 0.4R by then and moves its last 0.5R alone at R: done at 1.4 s. Each takes longer than alone, and the
  // out port carries 0.9R + 0.45R = 1.35R in the 1.35 s from 0.05 to 1.4: exactly its capacity.
  StepNetwork net(dgx_a100(2), 2);
  const double rate = net.port_bandwidth(Fabric::network);
  sim::Dag dag;
  const LoweredTransfer bucket =
      net.lower(dag, dag.lane("stage 0 / dp comm"), 0, 0, Fabric::network, 1.0, 0.1, "bucket", "dp");
  const LoweredTransfer send =
      net.lower(dag, dag.lane("stage 0 / pp comm"), 0, 1, Fabric::network, 0.5, 0.05, "send", "pp");
  const Run r = run(dag, net);
  const double tb = seconds(r.result, bucket);
  const double ts = seconds(r.result, send);
  CHECK(tb > 1.0);
  CHECK(ts > 0.5);
  CHECK(tb == doctest::Approx(1.4).epsilon(1e-9));
  CHECK(ts == doctest::Approx(0.9).epsilon(1e-9));
  // Links: 0 = GPU 0 network out (both flows), 1 = GPU 0 network in (the bucket), 2 = GPU 1 network in.
  REQUIRE(net.link_count() == 3);
  CHECK(net.link_name(0) == "gpu 0 network out");
  const double busy_from = r.result.tasks[send.last].start.seconds();
  const double busy_to = r.result.tasks[bucket.last].end.seconds();
  CHECK(r.carried[0] == doctest::Approx(dag.bytes(bucket.last) + dag.bytes(send.last)).scale(0));
  CHECK(r.carried[0] / (busy_to - busy_from) <= rate * (1 + 1e-9));
}

TEST_CASE("transfers on different fabrics or different GPUs' ports do not slow each other") {
  StepNetwork net(dgx_a100(2), 3);
  sim::Dag dag;
  const LoweredTransfer a = net.lower(dag, dag.lane("a"), 0, 0, Fabric::network, 1.0, 0.1, "a", "dp");
  const LoweredTransfer b = net.lower(dag, dag.lane("b"), 0, 1, Fabric::nvlink, 0.5, 0.05, "b", "pp");
  const LoweredTransfer c = net.lower(dag, dag.lane("c"), 2, 2, Fabric::network, 0.7, 0.0, "c", "dp");
  const Run r = run(dag, net);
  CHECK(seconds(r.result, a) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(seconds(r.result, b) == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(seconds(r.result, c) == doctest::Approx(0.7).epsilon(1e-9));
}

TEST_CASE("installing into a flow network that already has links is refused") {
  StepNetwork net(dgx_a100(1), 1);
  sim::Dag dag;
  (void)net.lower(dag, dag.lane("a"), 0, 0, Fabric::nvlink, 1.0, 0.5, "a", "dp");
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  network.add_link(1e9, sim::Duration{});
  CHECK_THROWS_AS(net.install(network), InputError);
}

TEST_CASE("in a lowered step, gradient buckets and pipeline sends that overlap on a NIC slow each other") {
  // tp 8 fills each node, so pipeline neighbours and data-parallel replicas are on other nodes and both
  // kinds of traffic leave a GPU through its one NIC. Short sequences make a backward shorter than its
  // gradients' reduction, so the buckets are still being reduced when the last backward's gradients are
  // sent to the previous stage.
  const StepInput in = gpt_on(16, 8, 4, 4, 64, 512);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  REQUIRE(costs.dp_crosses_nodes);
  REQUIRE(costs.stage_node[0] != costs.stage_node[1]);
  const StepGraph g = lower_step(in, plan, costs);
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  g.network.install(network);
  const sim::DagResult r = sim::execute(g.dag, engine, &network);

  const double rate = g.network.port_bandwidth(Fabric::network);
  const double bucket_alone = costs.stages[1].bucket_s - costs.stages[1].bucket_latency_s;
  const double send_alone = costs.p2p_s - costs.p2p_latency_s;
  REQUIRE(bucket_alone > 0);
  REQUIRE(send_alone > 0);
  // Stage 1's transfers over the network: each alone would take exactly its bandwidth term.
  struct Interval {
    double from, to, bytes;
    bool dp;
    bool bucket_or_send;  // not the parameter all-gather after the update
  };
  std::vector<Interval> out;
  for (sim::TaskId t = 0; t < g.dag.size(); ++t) {
    if (g.dag.kind(t) != sim::TaskKind::transfer) continue;
    const std::string lane = g.dag.lane_name(g.dag.lane_of(t));
    if (lane != "stage 1 / dp comm" && lane != "stage 1 / pp comm") continue;
    const std::string_view name = g.dag.name(t);
    out.push_back({r.tasks[t].start.seconds(), r.tasks[t].end.seconds(), g.dag.bytes(t),
                   lane == "stage 1 / dp comm", name.starts_with("grad bucket") || name.starts_with("send")});
  }
  REQUIRE(!out.empty());
  int slowed_buckets = 0, slowed_sends = 0;
  for (const Interval& a : out) {
    if (!a.bucket_or_send) continue;
    const double alone = a.dp ? bucket_alone : send_alone;
    CHECK(a.to - a.from >= alone * (1 - 1e-9));  // never faster than alone
    bool overlaps = false;
    for (const Interval& b : out) overlaps |= b.dp != a.dp && b.from < a.to && a.from < b.to;
    if (overlaps && a.to - a.from > alone * 1.01) ++(a.dp ? slowed_buckets : slowed_sends);
  }
  CHECK(slowed_buckets > 0);
  CHECK(slowed_sends > 0);
  // The port never carries more than its capacity: over any window from one transfer's start to
  // another's end, the bytes of the transfers inside it fit in rate × window.
  for (const Interval& a : out) {
    for (const Interval& b : out) {
      if (b.to <= a.from) continue;
      double bytes = 0;
      for (const Interval& c : out) {
        if (c.from >= a.from && c.to <= b.to) bytes += c.bytes;
      }
      CHECK(bytes <= rate * (b.to - a.from) * (1 + 1e-9));
    }
  }
}

TEST_CASE("contention only ever lengthens a step") {
  // Same graph with each transfer as if alone (contention off) and with shared ports.
  for (const StepInput& in : {gpt_on(16, 8, 4, 4, 64, 512), gpt_on(16, 8, 4, 4, 64), gpt_on(2, 2, 2, 4, 64),
                              gpt_on(1, 2, 4, 1, 16)}) {
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    REQUIRE(plan.feasible);
    const StepCosts costs = step_costs(in, plan);
    const StepTiming alone =
        run_step_graph(lower_step(in, plan, costs, LoweringOptions{.contention = false}), in, plan, costs);
    const StepTiming shared = run_step_graph(lower_step(in, plan, costs), in, plan, costs);
    CAPTURE(in.cluster.nodes);
    CHECK(shared.iteration_time >= alone.iteration_time * (1 - 1e-12));
  }
  // Where the sends and the buckets meet on the NIC (the layout of the test above), strictly.
  const StepInput in = gpt_on(16, 8, 4, 4, 64, 512);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StepTiming alone =
      run_step_graph(lower_step(in, plan, costs, LoweringOptions{.contention = false}), in, plan, costs);
  const StepTiming shared = run_step_graph(lower_step(in, plan, costs), in, plan, costs);
  CHECK(shared.iteration_time > alone.iteration_time);
}

TEST_CASE("with contention, the collapsed simulation still equals the per-GPU simulation") {
  // The layout where buckets and sends share NICs (128 GPUs): every GPU simulated, each ring flow into the
  // next replica's in port, gives the same step as one GPU per stage standing for its replicas.
  const StepInput in = gpt_on(16, 8, 4, 4, 64, 512);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StepTiming alone =
      run_step_graph(lower_step(in, plan, costs, LoweringOptions{.contention = false}), in, plan, costs);
  const StepTiming collapsed = run_step_graph(lower_step(in, plan, costs), in, plan, costs);
  const StepGraph full = lower_step(in, plan, costs, LoweringOptions{.full_cluster = true});
  CHECK(full.instances == 32);
  const StepTiming every = run_step_graph(full, in, plan, costs);
  REQUIRE(collapsed.iteration_time > alone.iteration_time);
  CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-12));
}

TEST_CASE("ring flows go to the next replica's in port; each GPU's dp and pp streams send one at a time") {
  // Four instances (2 replicas of 2 model-parallel ranks), 2 stages: GPU = instance·2 + stage. Stage 0 and
  // stage 1 are on different nodes; the data-parallel ring leaves the node.
  StepCosts costs;
  costs.p2p_s = 0.8;
  costs.p2p_latency_s = 0.6;
  costs.stage_node = {0, 1};
  costs.dp_crosses_nodes = true;
  StepNetwork net(dgx_a100(4), costs, StepLayout{4, 2, 2});
  sim::Dag dag;
  const sim::LaneId dp = dag.lane("dp"), pp = dag.lane("pp");
  const LoweredTransfer a = net.dp_collective(dag, dp, 0, 1, 1.0, 0.5, "bucket 0", "dp");  // GPU 1 → GPU 5
  const LoweredTransfer b = net.dp_collective(dag, dp, 0, 1, 1.0, 0.5, "bucket 1", "dp");
  const LoweredTransfer c = net.dp_collective(dag, dp, 3, 1, 1.0, 0.5, "bucket 0", "dp");  // GPU 7 → GPU 3
  const LoweredTransfer s = net.pp_send(dag, pp, 2, 0, 1, "send", "pp");                   // GPU 4 → GPU 5
  REQUIRE(net.link_count() == 5);  // out 1, in 5, out 7, in 3, out 4 (in 5 shared)
  CHECK(net.link_name(dag.path(a.last)[0]) == "gpu 1 network out");
  CHECK(net.link_name(dag.path(a.last)[1]) == "gpu 5 network in");
  CHECK(net.link_name(dag.path(c.last)[0]) == "gpu 7 network out");
  CHECK(net.link_name(dag.path(c.last)[1]) == "gpu 3 network in");
  CHECK(net.link_name(dag.path(s.last)[0]) == "gpu 4 network out");
  CHECK(net.link_name(dag.path(s.last)[1]) == "gpu 5 network in");
  const Run r = run(dag, net);
  // The send into GPU 5 (flow 0.6 → needs 0.2 R) meets bucket 0 (flow from 0.5, needs 0.5 R) on GPU 5's in
  // port: at R/2 each from 0.6, the send is done at 1.0 and the bucket, with 0.2 R left, at 1.2.
  CHECK(seconds(r.result, s) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(seconds(r.result, a) == doctest::Approx(1.2).epsilon(1e-9));
  // Bucket 1 starts when bucket 0 is done (one stream), so it never shares GPU 1's out port with it, and
  // by then it is alone.
  CHECK(r.result.tasks[b.first].start == r.result.tasks[a.last].end);
  CHECK(seconds(r.result, b) == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(seconds(r.result, c) == doctest::Approx(1.0).epsilon(1e-9));
  // Within one node a send goes over NVLink.
  costs.stage_node = {0, 0};
  StepNetwork one_node(dgx_a100(4), costs, StepLayout{1, 2, 1});
  sim::Dag d2;
  const LoweredTransfer t = one_node.pp_send(d2, d2.lane("pp"), 0, 1, 0, "send", "pp");
  CHECK(one_node.link_name(d2.path(t.last)[0]) == "gpu 1 nvlink out");
  CHECK(one_node.link_name(d2.path(t.last)[1]) == "gpu 0 nvlink in");
}

TEST_CASE("routed, the step lowers a collective as `trainsim collective --fidelity flow` does") {
  // Round-number nodes of 8 GPUs, 800 MB all-reduces: the step runs topo::lower_collective's flows without
  // link latency after the closed form's size-independent part L; the collective command runs the same
  // lowering with every link's latency and its launch. So the step's flows plus L are the command's time:
  // to the tick where the command's flows are the closed form's (a one-channel ring, hierarchical, NVLS:
  // the step's flows then take exactly the closed form's bandwidth term), and within 0.1 % for an 8-channel
  // ring and 1 % for the double binary tree, whose route latencies the command pays inside its flows (at
  // each step and each tree level) where the step pays the closed form's sum of them up front.
  auto check = [](const topo::ClusterSpec& c, topo::CollectiveAlgo algo,
                  const std::vector<std::int64_t>& members, double tolerance, bool closed_form_flows) {
    const auto n = static_cast<std::int64_t>(members.size());
    const std::int64_t gpn = c.gpus_in_use_per_node();
    const std::int64_t nodes = members.back() / gpn - members.front() / gpn + 1;
    const topo::CommGroup group{.size = n, .ranks_per_node = n / nodes, .nodes = nodes};
    const topo::CollectiveEstimate e =
        topo::estimate_collective(topo::CollectiveOp::all_reduce, 8e8, group, c, algo);
    REQUIRE(e.algo == algo);
    FabricRoutes routes;
    routes.graph = std::make_shared<const topo::ClusterGraph>(topo::ClusterGraph::build(c));
    routes.gpus = members;
    const int count = static_cast<int>(n);
    StepNetwork net(c, StepCosts{}, StepLayout{count, 1, count}, true, routes);
    sim::Dag dag;
    const sim::LaneId lane = dag.lane("dp");
    const sim::TaskId start = dag.join(lane, "start");
    const RoutedCollective flows{topo::CollectiveOp::all_reduce, 8e8, e.algo, e.protocol};
    const sim::TaskId done = net.routed_collective(dag, lane, start, flows, members, "bucket");
    const Run r = run(dag, net);
    const double step = (r.result.tasks[done].end - r.result.tasks[start].start).seconds();
    const topo::CollectiveCall call{topo::CollectiveOp::all_reduce, 8e8, members, e.algo, e.protocol};
    const double command =
        topo::simulate_collectives(*routes.graph, c, std::span(&call, 1)).front().seconds();
    CAPTURE(topo::to_string(algo));
    CAPTURE(n);
    CHECK(step + e.latency_s == doctest::Approx(command).epsilon(tolerance));
    if (closed_form_flows) CHECK(step == doctest::Approx(e.time_s - e.latency_s).epsilon(1e-9));
  };
  auto gpus = [](std::int64_t first, std::int64_t count, std::int64_t stride) {
    std::vector<std::int64_t> v;
    for (std::int64_t i = 0; i < count; ++i) v.push_back(first + i * stride);
    return v;
  };
  topo::ClusterSpec c = testing::round_number_cluster(4);
  c.node.comm.ll_bandwidth_fraction = 1e-3;  // Simple for every size: whole picoseconds per step
  c.node.comm.ll128_bandwidth_fraction = 1e-3;
  check(c, topo::CollectiveAlgo::ring, gpus(0, 4, 8), 1e-9, true);  // GPU 0 of each node: one channel
  check(c, topo::CollectiveAlgo::ring, gpus(0, 32, 1), 1e-3, false);
  check(c, topo::CollectiveAlgo::hierarchical, gpus(0, 32, 1), 1e-9, true);
  check(c, topo::CollectiveAlgo::double_binary_tree, gpus(0, 32, 1), 0.01, false);
  topo::ClusterSpec one = testing::round_number_cluster(1);
  one.node.comm.ll_bandwidth_fraction = 1e-3;
  one.node.comm.ll128_bandwidth_fraction = 1e-3;
  one.node.in_switch_reduction = true;
  one.node.comm.in_switch_bandwidth_fraction = 0.5;
  check(one, topo::CollectiveAlgo::in_switch, gpus(0, 8, 1), 1e-9, true);
}

TEST_CASE("a routed step's links are named after the graph devices they join, when asked") {
  // GPU 0 of node 0 to GPU 0 of node 1: out through its NIC, in through the other node's NIC 0 (GPU i
  // hangs off NIC i · nics / gpus).
  const topo::ClusterSpec c = testing::round_number_cluster(2);
  FabricRoutes routes;
  routes.graph = std::make_shared<const topo::ClusterGraph>(topo::ClusterGraph::build(c));
  const std::int64_t gpn = c.gpus_in_use_per_node();
  routes.gpus = {0, gpn};
  StepNetwork net(c, StepCosts{}, StepLayout{2, 1, 2}, true, routes);
  const std::vector<sim::LinkId> path = [&] {
    const std::span<const sim::LinkId> p = net.gpu_path(0, gpn);
    return std::vector<sim::LinkId>(p.begin(), p.end());
  }();
  REQUIRE(path.size() >= 4);
  CHECK(net.link_name(path.front()) == "node 0 gpu 0 -> node 0 nic 0");
  CHECK(net.link_name(path[1]).starts_with("node 0 nic 0 -> leaf "));
  CHECK(net.link_name(path.back()) == "node 1 nic 0 -> node 1 gpu 0");
}

namespace {

// A routed collective's tasks [first, end) as text: kind, lane, name, bytes and the links' names of each,
// and each task's releaser relative to `first` (or "outside").
std::vector<std::string> described(const sim::Dag& dag, const StepNetwork& net, sim::TaskId first,
                                   sim::TaskId end, const sim::DagResult* run = nullptr) {
  std::vector<std::string> out;
  for (sim::TaskId t = first; t < end; ++t) {
    std::string s = std::to_string(static_cast<int>(dag.kind(t))) + " " + dag.lane_name(dag.lane_of(t)) +
                    " " + std::string(dag.name(t));
    if (dag.kind(t) == sim::TaskKind::transfer) {
      s += " " + std::to_string(dag.bytes(t));
      for (const sim::LinkId l : dag.path(t)) s += " " + net.link_name(l);
    }
    if (run != nullptr) {
      const sim::TaskId by = run->released_by[t];
      s += " released by " + (by >= first && by < end ? std::to_string(by - first) : std::string("outside"));
      s += " for " + std::to_string((run->tasks[t].end - run->tasks[t].start).ps()) + " ps";
    }
    out.push_back(std::move(s));
  }
  return out;
}

struct Lowered {
  sim::TaskId first, end, done;
  std::size_t edges;
};

Lowered lower_on(StepNetwork& net, sim::Dag& dag, std::string_view lane, sim::TaskId after,
                 const RoutedCollective& flows, const std::vector<std::int64_t>& members,
                 std::string_view name) {
  const auto first = static_cast<sim::TaskId>(dag.size());
  const std::size_t edges = dag.edge_count();
  const sim::TaskId done = net.routed_collective(dag, dag.lane(lane), after, flows, members, name);
  return {first, static_cast<sim::TaskId>(dag.size()), done, dag.edge_count() - edges};
}

}  // namespace

TEST_CASE("a routed collective lowered again on one network is the same tasks as on a fresh network") {
  // Round-number nodes, an 800 MB ring all-reduce over GPU 0 of each of 4 nodes. Lowered twice on one
  // network (the second a repeat of the first) and once on a fresh network and Dag: the same kinds, names,
  // bytes, links, dependencies and, each run alone after the one before, the same durations.
  topo::ClusterSpec c = testing::round_number_cluster(4);
  FabricRoutes routes;
  routes.graph = std::make_shared<const topo::ClusterGraph>(topo::ClusterGraph::build(c));
  const std::vector<std::int64_t> members = {0, 8, 16, 24};
  routes.gpus = members;
  const RoutedCollective key{topo::CollectiveOp::all_reduce, 8e8, topo::CollectiveAlgo::ring,
                             topo::CollectiveProtocol::simple};
  const auto fresh = [&](const RoutedCollective& k, const std::vector<std::int64_t>& m,
                         std::string_view lane) {
    StepNetwork net(c, StepCosts{}, StepLayout{4, 1, 4}, true, routes);
    sim::Dag dag;
    const sim::TaskId start = dag.join(dag.lane("dp"), "start");
    const Lowered l = lower_on(net, dag, lane, start, k, m, "bucket 1");
    const Run r = run(dag, net);
    return std::pair{described(dag, net, l.first, l.end, &r.result), l.edges};
  };

  SUBCASE("a repeat") {
    StepNetwork net(c, StepCosts{}, StepLayout{4, 1, 4}, true, routes);
    sim::Dag dag;
    const sim::TaskId start = dag.join(dag.lane("dp"), "start");
    const Lowered once = lower_on(net, dag, "dp", start, key, members, "bucket 0");
    const Lowered again = lower_on(net, dag, "dp", once.done, key, members, "bucket 1");
    REQUIRE(once.end - once.first > 4);  // a ring's flows, not a single task
    const Run r = run(dag, net);
    const auto [want, want_edges] = fresh(key, members, "dp");
    CHECK(described(dag, net, again.first, again.end, &r.result) == want);
    CHECK(again.edges == want_edges);
    CHECK(once.edges == want_edges);
    // Its kept collectives name tasks of `dag`: another Dag is refused.
    sim::Dag other;
    const sim::TaskId other_start = other.join(other.lane("dp"), "start");
    CHECK_THROWS_AS(lower_on(net, other, "dp", other_start, key, members, "bucket 2"), InternalError);
    // Once it forgets them (the graph built), another Dag takes the collective, lowered afresh there.
    net.forget_lowered();
    const Lowered afresh = lower_on(net, other, "dp", other_start, key, members, "bucket 2");
    CHECK(afresh.end > afresh.first);
    CHECK(afresh.edges == want_edges);
  }

  SUBCASE("each field of the key tells collectives apart") {
    const std::vector<std::pair<std::string, RoutedCollective>> keys = {
        {"bytes", {topo::CollectiveOp::all_reduce, 4e8, key.algo, key.protocol}},
        {"algo",
         {topo::CollectiveOp::all_reduce, 8e8, topo::CollectiveAlgo::double_binary_tree, key.protocol}},
        {"protocol", {topo::CollectiveOp::all_reduce, 8e8, key.algo, topo::CollectiveProtocol::ll128}},
        {"op", {topo::CollectiveOp::all_gather, 8e8, key.algo, key.protocol}},
    };
    const auto [base, base_edges] = fresh(key, members, "dp");
    const auto check_second = [&](const RoutedCollective& k, const std::vector<std::int64_t>& m,
                                  std::string_view lane) {
      const auto [want, want_edges] = fresh(k, m, lane);
      REQUIRE(want != base);  // the change matters to the tasks
      StepNetwork net(c, StepCosts{}, StepLayout{4, 1, 4}, true, routes);
      sim::Dag dag;
      const sim::TaskId start = dag.join(dag.lane("dp"), "start");
      const Lowered once = lower_on(net, dag, "dp", start, key, members, "bucket 0");
      const Lowered second = lower_on(net, dag, lane, once.done, k, m, "bucket 1");
      const Run r = run(dag, net);
      CHECK(described(dag, net, second.first, second.end, &r.result) == want);
      CHECK(second.edges == want_edges);
    };
    SUBCASE("op, bytes, algorithm, protocol") {
      for (const auto& [what, k] : keys) {
        CAPTURE(what);
        check_second(k, members, "dp");
      }
    }
    SUBCASE("lane") {
      check_second(key, members, "dp 2");
    }
    SUBCASE("members") {
      check_second(key, {0, 8, 16, 25}, "dp");
    }
  }
}
