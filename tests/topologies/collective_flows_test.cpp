#include "topologies/collective_flows.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/comm_calibration.hpp"

using namespace trainsim;
using namespace trainsim::topo;

namespace {

/// The shared round-number nodes (`gpus` GPUs on an NVSwitch of 100 GB/s at 2 us per step, as many 50 GB/s
/// NICs at 4 us, 1 us per switch, efficiencies 1) with a 5 us launch cost and small-message protocols that
/// never win, and no floor of NCCL's network step under the fabric's own, so that every step below lasts a
/// whole number of picoseconds.
ClusterSpec cluster(std::int64_t nodes, int gpus = 8) {
  ClusterSpec c = trainsim::testing::round_number_cluster(nodes, gpus);
  c.node.comm.net_ll_step_latency_s = 0;
  c.node.comm.net_ll128_step_latency_s = 0;
  c.node.comm.net_simple_step_latency_s = 0;
  c.node.comm.base_latency_s = 5e-6;
  c.node.comm.ll_bandwidth_fraction = 1e-3;
  c.node.comm.ll128_bandwidth_fraction = 1e-3;
  return c;
}

sim::Duration flow_time(const ClusterSpec& c, const CollectiveCall& call) {
  const ClusterGraph g = ClusterGraph::build(c);
  return simulate_collectives(g, c, std::span<const CollectiveCall>(&call, 1)).front();
}

/// A cluster's graph registered in a fresh flow network, and a DAG to lower collectives into.
struct Lowered {
  explicit Lowered(const ClusterSpec& c)
      : graph(ClusterGraph::build(c)), network(engine), fabric(graph, network) {}
  ClusterGraph graph;
  sim::Engine engine;
  sim::FlowNetwork network;
  FabricFlows fabric;
  sim::Dag dag;
  sim::DagResult run() { return sim::execute(dag, engine, &network); }
};

std::vector<std::int64_t> iota(std::int64_t first, std::int64_t count, std::int64_t stride) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

}  // namespace

TEST_CASE("on one node the flow fidelity and the closed form agree to the tick for a ring all-reduce") {
  const ClusterSpec c = cluster(1);
  const double bytes = 8e8;  // chunks of 1e8 B: 1 ms at 100 GB/s
  const double closed = collective_time(CollectiveOp::all_reduce, bytes, {.size = 8, .ranks_per_node = 8}, c,
                                        CollectiveAlgo::ring);
  // 5 us launch + 14 steps x (2 us + 1 ms).
  CHECK(sim::Duration::from_seconds(closed) == sim::Duration::from_ps(14'033'000'000));
  CHECK(flow_time(c, {CollectiveOp::all_reduce, bytes, iota(0, 8, 1), CollectiveAlgo::ring}) ==
        sim::Duration::from_seconds(closed));
  const double rs = collective_time(CollectiveOp::reduce_scatter, bytes, {.size = 8, .ranks_per_node = 8}, c,
                                    CollectiveAlgo::ring);
  CHECK(flow_time(c, {CollectiveOp::reduce_scatter, bytes, iota(0, 8, 1), CollectiveAlgo::ring}) ==
        sim::Duration::from_seconds(rs));
}

TEST_CASE("across nodes the flow fidelity and the closed form agree to the tick for ring and hierarchical") {
  // A data-parallel ring: GPU 0 of 8 nodes on one rail leaf. alpha = 4 us NIC + 1 switch; B = one NIC.
  const ClusterSpec c8 = cluster(8);
  const CommGroup dp{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 1};
  const double closed = collective_time(CollectiveOp::all_reduce, 4e8, dp, c8, CollectiveAlgo::ring);
  CHECK(sim::Duration::from_seconds(closed) ==
        sim::Duration::from_ps(5'000'000 + 14 * (5'000'000 + 1'000'000'000LL)));
  CHECK(flow_time(c8, {CollectiveOp::all_reduce, 4e8, iota(0, 8, 8), CollectiveAlgo::ring}) ==
        sim::Duration::from_seconds(closed));

  // Hierarchical over 2 nodes x 8 GPUs: 2 x 7 intra steps of S/8 at 100 GB/s, 2 inter steps of S/16 per rail.
  const ClusterSpec c2 = cluster(2);
  const CommGroup both{.size = 16, .ranks_per_node = 8, .nodes = 2, .leaves = 1};
  const double hier =
      collective_time(CollectiveOp::all_reduce, 1.6e9, both, c2, CollectiveAlgo::hierarchical);
  CHECK(sim::Duration::from_seconds(hier) ==
        sim::Duration::from_ps(5'000'000 + 14 * (2'000'000 + 2'000'000'000LL) +
                               2 * (5'000'000 + 2'000'000'000LL)));
  CHECK(flow_time(c2, {CollectiveOp::all_reduce, 1.6e9, iota(0, 16, 1), CollectiveAlgo::hierarchical}) ==
        sim::Duration::from_seconds(hier));
}

TEST_CASE(
    "data-parallel rings sharing 4:1 oversubscribed uplinks slow down 4x, in flows and the closed form") {
  // 8 nodes of 4 GPUs and 4 NICs; 5-port leaves with 4 ports down and 1 up (4:1), one node per leaf.
  ClusterSpec c = cluster(8, 4);
  c.network.switch_radix = 5;
  c.network.oversubscription = 4;
  c.network.rail_optimized = false;
  const ClusterGraph g = ClusterGraph::build(c);
  REQUIRE(g.count(DeviceKind::spine) == 1);
  const double bytes = 4e8;  // chunks of 5e7 B: 1 ms at 50 GB/s, 4 ms at 12.5 GB/s
  std::vector<CollectiveCall> dp;
  for (std::int64_t l = 0; l < 4; ++l)
    dp.push_back({CollectiveOp::all_reduce, bytes, iota(l, 8, 4), CollectiveAlgo::ring});
  // alpha = 4 us NIC + leaf, spine, leaf.
  const sim::Duration alone = simulate_collectives(g, c, std::span(dp).first(1)).front();
  CHECK(alone == sim::Duration::from_ps(5'000'000 + 14 * (7'000'000 + 1'000'000'000LL)));
  const std::vector<sim::Duration> together = simulate_collectives(g, c, dp);
  for (const sim::Duration& t : together) {
    CHECK(t == sim::Duration::from_ps(5'000'000 + 14 * (7'000'000 + 4'000'000'000LL)));
  }
  // The closed form sees each node's NICs shared by 4 groups (still one NIC each) and, the ring leaving
  // every leaf (one node per leaf), the leaf's 4 NIC ports sharing its 1 uplink: a quarter each.
  const CommGroup group{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 8, .groups_sharing_nics = 4};
  CHECK(leaf_uplink_share(group, c, 1.0) == 0.25);
  CHECK(sim::Duration::from_seconds(collective_time(CollectiveOp::all_reduce, bytes, group, c,
                                                    CollectiveAlgo::ring)) == together.front());

  // Rail-optimized wiring of the same switches: each ring has its own rail, nothing is shared.
  c.network.rail_optimized = true;
  const ClusterGraph rails = ClusterGraph::build(c);
  const std::vector<sim::Duration> separate = simulate_collectives(rails, c, dp);
  for (const sim::Duration& t : separate) {
    CHECK(t <= alone);
    CHECK(t.seconds() > 0.99 * alone.seconds());
  }
}

TEST_CASE("a ring crossing nodes uses one channel per NIC and all-to-all and send-recv are lowered") {
  const ClusterSpec c = cluster(2);
  Lowered l(c);
  sim::Dag& dag = l.dag;
  FabricFlows& fabric = l.fabric;
  const std::vector<std::int64_t> all = iota(0, 16, 1);
  const LoweredCollective ring =
      lower_collective(dag, fabric, c, CollectiveOp::all_reduce, 1e9, all, CollectiveAlgo::ring, "ring");
  CHECK(ring.transfers == 8 * 16);  // 8 channels x 16 ring edges, each carrying its 2(n-1) steps
  const LoweredCollective a2a = lower_collective(dag, fabric, c, CollectiveOp::all_to_all, 1e9, all,
                                                 CollectiveAlgo::auto_select, "a2a");
  CHECK(a2a.transfers == 16 * 15);
  const std::vector<std::int64_t> pair{3, 11};
  const LoweredCollective p2p = lower_collective(dag, fabric, c, CollectiveOp::send_recv, 5e8, pair,
                                                 CollectiveAlgo::auto_select, "p2p");
  CHECK(p2p.transfers == 1);
  const sim::DagResult r = l.run();
  // Alone, the send-recv would take 5 us launch + 5 us + 5e8 B / 50 GB/s = 10.01 ms; sharing NICs it is not
  // faster.
  CHECK((r.tasks[p2p.done].end - r.tasks[p2p.start].start).seconds() >= 0.01001 - 1e-12);
  CHECK_THROWS_AS(
      lower_collective(dag, fabric, c, CollectiveOp::broadcast, 1e9, all, CollectiveAlgo::ring, "b"),
      InputError);
  CHECK_THROWS_AS(lower_collective(dag, fabric, c, CollectiveOp::all_reduce, 1e9,
                                   std::vector<std::int64_t>{0, 99}, CollectiveAlgo::ring, "x"),
                  InputError);
}

TEST_CASE("every algorithm runs as its own flows within 10% of the closed form on 1-16 DGX H100 nodes") {
  // (Relative: doctest::Approx's epsilon is relative to 1 + |value|, which no time in seconds reaches.)
  // An uncontended rail-optimized fat-tree, the published NCCL fit for H100 nodes, the protocol the closed
  // form picks for each size. The flow fidelity lowers each algorithm (see collective_flows.hpp); where it
  // differs from the closed form it is in what the closed form averages: a multi-channel ring's crossing GPU
  // carries one NVLink flow less, a tree's pipeline fill, halving-doubling's per-round tiers.
  for (std::int64_t nodes = 1; nodes <= 16; ++nodes) {
    ClusterSpec c = trainsim::testing::dgx_h100(nodes);
    apply_comm_calibration(c.node);
    const ClusterGraph g = ClusterGraph::build(c);
    const std::int64_t n = nodes * 8;
    const CommGroup group{.size = n,
                          .ranks_per_node = 8,
                          .nodes = nodes,
                          .leaves = 1};  // 32 rail-leaf ports: up to 32 nodes per leaf
    for (double bytes : {1024.0 * 1024, 1024.0 * 1024 * 1024}) {
      for (CollectiveAlgo algo : {CollectiveAlgo::ring, CollectiveAlgo::double_binary_tree,
                                  CollectiveAlgo::hierarchical, CollectiveAlgo::halving_doubling}) {
        const CollectiveEstimate e = estimate_collective(CollectiveOp::all_reduce, bytes, group, c, algo);
        const CollectiveCall call{CollectiveOp::all_reduce, bytes, iota(0, n, 1), algo, e.protocol};
        const double flow = simulate_collectives(g, c, std::span(&call, 1)).front().seconds();
        INFO(nodes << " nodes, " << bytes << " B, " << to_string(algo) << "/" << to_string(e.protocol)
                   << ": closed " << e.time_s * 1e6 << " us, flow " << flow * 1e6 << " us");
        if (algo == CollectiveAlgo::double_binary_tree && bytes > 1e9 && nodes >= 2 && nodes <= 3) {
          // The closed form charges every GPU's NVLink 2S; a chain head sends its upward half over its
          // NIC instead, so the chain carries (2 − 2/channels)·S, and with 2–3 nodes the NICs carry less
          // than that: flow / closed = 1 − 1/8 (8 channels) where NVLink (370 GB/s) is the flat tier.
          CHECK(flow / e.time_s == doctest::Approx(0.875).epsilon(0.005));
        } else {
          CHECK(std::abs(flow / e.time_s - 1) <= 0.10);
        }
      }
    }
  }
}

TEST_CASE("an all-to-all in a node runs as flows at NCCL's all-to-all fraction, as the closed form does") {
  // One DGX H100 with its NCCL fit: the all-to-all at 0.745 of 450 GB/s, the rings at 0.822. Each rank
  // sends 7/8 of 1 GiB over NVLink: 0.875 GiB / 335 GB/s ≈ 2.8 ms, the closed form and the flows alike.
  ClusterSpec c = trainsim::testing::dgx_h100(1);
  apply_comm_calibration(c.node);
  REQUIRE(c.node.comm.all_to_all_bandwidth_fraction == doctest::Approx(0.745));
  const ClusterGraph g = ClusterGraph::build(c);
  const double bytes = 1024.0 * 1024 * 1024;
  const CommGroup node{.size = 8, .ranks_per_node = 8, .nodes = 1, .leaves = 1};
  const CollectiveEstimate e = estimate_collective(CollectiveOp::all_to_all, bytes, node, c);
  CHECK(e.time_s == doctest::Approx(0.875 * bytes / (450e9 * 0.745)).epsilon(0.01));
  const CollectiveCall call{CollectiveOp::all_to_all, bytes, iota(0, 8, 1), CollectiveAlgo::auto_select,
                            e.protocol};
  const double flow = simulate_collectives(g, c, std::span(&call, 1)).front().seconds();
  CHECK(std::abs(flow / e.time_s - 1) <= 0.02);
  // Two such nodes with NICs ten times faster, so that NVLink still sets the time: each rank sends 7/16 of
  // its buffer to its own node's GPUs, 0.4375 GiB / 335 GB/s, in both fidelities.
  ClusterSpec two = trainsim::testing::dgx_h100(2);
  apply_comm_calibration(two.node);
  two.node.nic_bytes_per_s *= 10;
  const ClusterGraph g2 = ClusterGraph::build(two);
  const CommGroup nodes{.size = 16, .ranks_per_node = 8, .nodes = 2, .leaves = 1};
  const CollectiveEstimate e2 = estimate_collective(CollectiveOp::all_to_all, bytes, nodes, two);
  CHECK(e2.time_s == doctest::Approx(7.0 / 16 * bytes / (450e9 * 0.745)).epsilon(0.02));
  const CollectiveCall call2{CollectiveOp::all_to_all, bytes, iota(0, 16, 1), CollectiveAlgo::auto_select,
                             e2.protocol};
  const double flow2 = simulate_collectives(g2, two, std::span(&call2, 1)).front().seconds();
  CHECK(std::abs(flow2 / e2.time_s - 1) <= 0.05);
}

TEST_CASE("the flow fidelity lowers tree and halving-doubling with their own flow counts") {
  const ClusterSpec c = cluster(4);
  Lowered l(c);
  sim::Dag& dag = l.dag;
  FabricFlows& fabric = l.fabric;
  const std::vector<std::int64_t> all = iota(0, 32, 1);
  // Tree: 8 channels x 2 trees x 31 edges x 2 directions x (body + last slice).
  const LoweredCollective tree = lower_collective(dag, fabric, c, CollectiveOp::all_reduce, 1e9, all,
                                                  CollectiveAlgo::double_binary_tree, "tree");
  CHECK(tree.transfers == 8 * 2 * 31 * 2 * 2);
  // Halving-doubling: 2 x log2(32) rounds of 32 sends.
  const LoweredCollective hd = lower_collective(dag, fabric, c, CollectiveOp::all_reduce, 1e9, all,
                                                CollectiveAlgo::halving_doubling, "hd");
  CHECK(hd.transfers == 2 * 5 * 32);
}

TEST_CASE("NVLS: one flow per GPU through the NVSwitch at the in-switch rate, the closed form's time") {
  // 8 GPUs on a 100 GB/s NVSwitch whose in-switch reduction runs at half of it, 10 us in the switch. The
  // closed form: 5 us launch + 10 us + 1 GB / 50 GB/s = 20.015 ms. The flows: each GPU's route into the
  // switch and out to the next GPU (2 us of link latency) carries the bytes that take 1 GB / 50 GB/s at the
  // links' 100 GB/s, after the 8 us of switch latency the route does not already have.
  ClusterSpec one = cluster(1);
  one.node.in_switch_reduction = true;
  one.node.comm.in_switch_bandwidth_fraction = 0.5;
  one.node.comm.in_switch_latency_s = 10e-6;
  const CommGroup node{.size = 8, .ranks_per_node = 8};
  const double closed = collective_time(CollectiveOp::all_reduce, 1e9, node, one, CollectiveAlgo::in_switch);
  CHECK(closed == doctest::Approx(5e-6 + 10e-6 + 1e9 / 50e9).epsilon(1e-12));
  const CollectiveCall nvls{CollectiveOp::all_reduce, 1e9, iota(0, 8, 1), CollectiveAlgo::in_switch};
  CHECK(flow_time(one, nvls).seconds() == doctest::Approx(closed).epsilon(1e-9));
  Lowered l(one);
  CHECK(lower_collective(l.dag, l.fabric, one, CollectiveOp::all_reduce, 1e9, iota(0, 8, 1),
                         CollectiveAlgo::in_switch, "nvls")
            .transfers == 8);
}

TEST_CASE(
    "halving-doubling across nodes: per-round tiers in the closed form, the same to the tick in flows") {
  // 2 nodes x 8 GPUs, S = 1.6 GB. Rounds at distance 1, 2, 4 stay in a node (S/2, S/4, S/8 at 100 GB/s,
  // 2 us each); the round at distance 8 crosses, every GPU on its own 50 GB/s NIC (S/16, 4 us NIC + 1 us
  // leaf). Reduce-scatter half: 3 x 2 us + 5 us + 8 + 4 + 2 + 2 ms; all-reduce: twice that plus 5 us launch.
  const ClusterSpec c = cluster(2);
  const CommGroup both{.size = 16, .ranks_per_node = 8, .nodes = 2, .leaves = 1};
  const double closed =
      collective_time(CollectiveOp::all_reduce, 1.6e9, both, c, CollectiveAlgo::halving_doubling);
  CHECK(sim::Duration::from_seconds(closed) ==
        sim::Duration::from_ps(5'000'000 + 2 * (11'000'000 + 16'000'000'000LL)));
  CHECK(flow_time(c, {CollectiveOp::all_reduce, 1.6e9, iota(0, 16, 1), CollectiveAlgo::halving_doubling}) ==
        sim::Duration::from_seconds(closed));
}

TEST_CASE("a multi-channel ring keeps every crossing on its rail; all-to-all crosses rails over the spines") {
  // 4 nodes x 8 GPUs on a rail-optimized fat-tree: one leaf per rail, 32 spines. A ring crossing from GPU i
  // to GPU j != i of the next node would climb from rail i's leaf to a spine; the lowering joins equal GPU
  // indices, so the spines carry nothing. All-to-all sends GPU i's data to every GPU j of other nodes: the
  // 7/8 of its cross-node bytes that change rails cross a spine.
  const ClusterSpec c = cluster(4);
  const ClusterGraph g = ClusterGraph::build(c);
  REQUIRE(g.count(DeviceKind::leaf) == 8);
  auto spine_bytes = [&](CollectiveOp op) {
    Lowered l(c);
    (void)lower_collective(l.dag, l.fabric, c, op, 3.2e8, iota(0, 32, 1), CollectiveAlgo::ring, "x");
    (void)l.run();
    double total = 0;
    for (std::size_t i = 0; i < g.link_count(); ++i) {
      if (g.device(g.link(static_cast<LinkIndex>(i)).to).kind == DeviceKind::spine)
        total += l.network.bytes_carried(static_cast<sim::LinkId>(i));
    }
    return total;
  };
  CHECK(spine_bytes(CollectiveOp::all_reduce) == 0.0);
  // All-to-all: 32 GPUs each send 3.2e8/32 = 1e7 B to each of 24 GPUs on other nodes, 21 of them on
  // another rail: 32 x 21 x 1e7 B climb to a spine.
  CHECK(spine_bytes(CollectiveOp::all_to_all) == doctest::Approx(32.0 * 21 * 1e7).scale(0));
}

TEST_CASE("other jobs' background traffic takes its share of the uplinks, in flows and the closed form") {
  // The 4:1 case above with half of every switch-to-switch link taken by other jobs: the 4 rings share
  // 25 GB/s of uplink, 6.25 GB/s each: 5e7 B chunks take 8 ms. The closed form: 1 uplink x 0.5 over 4 NIC
  // ports, all of whose traffic leaves the leaf: an eighth of a NIC.
  ClusterSpec c = cluster(8, 4);
  c.network.switch_radix = 5;
  c.network.oversubscription = 4;
  c.network.rail_optimized = false;
  c.background_fraction = 0.5;
  const ClusterGraph g = ClusterGraph::build(c);
  std::vector<CollectiveCall> dp;
  for (std::int64_t l = 0; l < 4; ++l)
    dp.push_back({CollectiveOp::all_reduce, 4e8, iota(l, 8, 4), CollectiveAlgo::ring});
  for (const sim::Duration& t : simulate_collectives(g, c, dp)) {
    CHECK(t == sim::Duration::from_ps(5'000'000 + 14 * (7'000'000 + 8'000'000'000LL)));
  }
  const CommGroup group{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 8, .groups_sharing_nics = 4};
  CHECK(leaf_uplink_share(group, c, 1.0) == 0.125);
  CHECK(sim::Duration::from_seconds(
            collective_time(CollectiveOp::all_reduce, 4e8, group, c, CollectiveAlgo::ring)) ==
        sim::Duration::from_ps(5'000'000 + 14 * (7'000'000 + 8'000'000'000LL)));
}
