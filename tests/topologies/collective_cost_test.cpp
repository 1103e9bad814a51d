#include "topologies/collective_cost.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim::topo;

namespace {

/// One tier of 100 GB/s at 1 us per step, no fixed costs, protocols that never beat Simple, and no floor
/// of NCCL's network step under the fabric's own (the tests at 1,024 and 16,384 ranks put it back), so the
/// formulas can be written by hand.
ClusterSpec uniform_cluster() {
  ClusterSpec c;
  c.node.name = "test";
  c.node.gpus_per_node = 8;
  c.node.intra_bytes_per_s = 100e9;
  c.node.intra_latency_s = 1e-6;
  c.node.comm.intra_bandwidth_fraction = 1.0;
  c.node.comm.nic_bandwidth_fraction = 1.0;
  c.node.comm.base_latency_s = 0;
  c.node.comm.ll_bandwidth_fraction = 1e-3;
  c.node.comm.ll128_bandwidth_fraction = 1e-3;
  c.node.nics_per_node = 8;
  c.node.nic_bytes_per_s = 25e9;
  c.node.comm.nic_latency_s = 4e-6;
  c.network.switch_latency_s = 1e-6;
  c.node.comm.net_ll_step_latency_s = 0;
  c.node.comm.net_ll128_step_latency_s = 0;
  c.node.comm.net_simple_step_latency_s = 0;
  return c;
}

/// NCCL's network step latencies (CommEfficiency's defaults: hwLatencies[NET][RING] LL 2.7, LL128 4.0,
/// Simple 14 us) back under `c`'s fabric steps.
void with_nccl_network_steps(ClusterSpec& c) {
  const CommEfficiency nccl;
  c.node.comm.net_ll_step_latency_s = nccl.net_ll_step_latency_s;
  c.node.comm.net_ll128_step_latency_s = nccl.net_ll128_step_latency_s;
  c.node.comm.net_simple_step_latency_s = nccl.net_simple_step_latency_s;
}

constexpr double kGiB = 1073741824.0;

}  // namespace

TEST_CASE("ring all-reduce on a uniform ring costs 2(n-1)/n S/B plus 2(n-1) alpha") {
  const ClusterSpec c = uniform_cluster();
  const CommGroup g{.size = 8, .ranks_per_node = 8, .nodes = 1};
  // 2*7/8 * 2^30 B / 1e11 B/s = 0.01879048192 s; 14 steps * 1 us = 1.4e-5 s.
  const double expected = 0.01879048192 + 1.4e-5;
  const CollectiveEstimate e =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring);
  CHECK(e.algo == CollectiveAlgo::ring);
  CHECK(e.protocol == CollectiveProtocol::simple);
  CHECK(e.time_s == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("an estimate splits its time into the size-independent latency and the bandwidth term") {
  ClusterSpec c = uniform_cluster();
  c.node.comm.base_latency_s = 5e-6;
  const CommGroup g{.size = 8, .ranks_per_node = 8, .nodes = 1};
  // Ring all-reduce: launch 5 us + 14 steps of 1 us; the rest is 2*7/8 * 2^30 B / 1e11 B/s.
  const CollectiveEstimate e =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring);
  CHECK(e.latency_s == doctest::Approx(5e-6 + 1.4e-5).epsilon(1e-12));
  CHECK(e.time_s - e.latency_s == doctest::Approx(0.01879048192).epsilon(1e-9));
  // Send-recv between two nodes: launch (+ the network's, 0 here) and one step of NIC latency + 1 switch.
  c.nodes = 2;
  const CommGroup pair{.size = 2, .ranks_per_node = 1, .nodes = 2};
  const CollectiveEstimate p = estimate_collective(CollectiveOp::send_recv, 1e8, pair, c);
  CHECK(p.latency_s == doctest::Approx(5e-6 + 4e-6 + 1e-6).epsilon(1e-12));
  CHECK(p.time_s - p.latency_s == doctest::Approx(1e8 / 25e9).epsilon(1e-9));
  // Nothing to move: nothing at all.
  CHECK(estimate_collective(CollectiveOp::all_reduce, 0, g, c).latency_s == 0);
}

TEST_CASE("reduce-scatter and all-gather cost half a ring all-reduce") {
  const ClusterSpec c = uniform_cluster();
  const CommGroup g{.size = 4, .ranks_per_node = 4, .nodes = 1};
  // 3 steps of (1 us + 2^30/4 B / 1e11 B/s).
  const double expected = 3 * (1e-6 + kGiB / 4 / 100e9);
  CHECK(collective_time(CollectiveOp::reduce_scatter, kGiB, g, c, CollectiveAlgo::ring) ==
        doctest::Approx(expected).epsilon(1e-12));
  CHECK(collective_time(CollectiveOp::all_gather, kGiB, g, c, CollectiveAlgo::ring) ==
        doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a ring spanning nodes runs at the slower of NVLink and the node's NIC share, NCCL's steps") {
  ClusterSpec c = uniform_cluster();
  c.nodes = 4;
  const CommGroup g{.size = 32, .ranks_per_node = 8, .nodes = 4, .leaves = 1};
  // NICs: 8 x 25 GB/s = 200 GB/s per node > 100 GB/s NVLink, so NVLink bounds. NCCL's ring latency
  // (src/graph/tuning.cc): of 2 · 31 = 62 steps, 2 · (4 − 1) = 6 cross nodes at 4 us NIC + 1 switch = 5 us;
  // the other 56 at NVLink's 1 us, but no less than NCCL's per-step network overhead (Simple 3 us).
  // 1 GiB: Simple, 56 · 3 + 6 · 5 = 198 us, plus 62 steps of S/32 at 100 GB/s.
  const double expected = 198e-6 + 62 * kGiB / 32 / 100e9;
  const CollectiveEstimate big =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring);
  CHECK(big.protocol == CollectiveProtocol::simple);
  CHECK(big.time_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(big.latency_s == doctest::Approx(198e-6).epsilon(1e-12));
  // 64 KiB with LL at half of Simple's bandwidth and 0.35 of its step latency: the 56 steps inside nodes
  // cost max(0.35 us, 1 us overhead) = 1 us, the 6 across 0.35 · 5 = 1.75 us: 56 + 10.5 = 66.5 us, plus
  // 62 · 2,048 B / 50 GB/s = 2.53952 us. Simple would take 198 + 1.27 us.
  c.node.comm.ll_bandwidth_fraction = 0.5;
  c.node.comm.ll_latency_fraction = 0.35;
  const CollectiveEstimate small =
      estimate_collective(CollectiveOp::all_reduce, 65536, g, c, CollectiveAlgo::ring);
  CHECK(small.protocol == CollectiveProtocol::ll);
  CHECK(small.latency_s == doctest::Approx(66.5e-6).epsilon(1e-12));
  CHECK(small.time_s == doctest::Approx(66.5e-6 + 2.53952e-6).epsilon(1e-12));
}

TEST_CASE("hierarchical all-reduce beats a flat ring when the inter-node link is the bottleneck") {
  ClusterSpec c = uniform_cluster();
  c.nodes = 4;
  c.node.intra_bytes_per_s = 400e9;
  c.node.nics_per_node = 1;  // one 25 GB/s NIC per node: NVLink is 16x faster
  const CommGroup g{.size = 32, .ranks_per_node = 8, .nodes = 4};
  // Flat: 62 steps of S/32 / 25 GB/s; latency 6 steps across nodes of 5 us and 56 inside of max(1 us, 3 us
  // Simple network overhead)                                       = 1.98e-4 + 1.9375 S / 25e9.
  // Hierarchical: 2 x 7 steps of (1 us + S/8 / 400 GB/s) intra, then 6 steps of (5 us + S/32 / (25/8) GB/s)
  //               = 1.4e-5 + 1.75 S / 400e9 + 3.0e-5 + 1.5 S / 25e9.
  const double flat = 198e-6 + 1.9375 * kGiB / 25e9;
  const double hier = 14e-6 + 1.75 * kGiB / 400e9 + 30e-6 + 1.5 * kGiB / 25e9;
  const double t_flat = collective_time(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring);
  const double t_hier = collective_time(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::hierarchical);
  CHECK(t_flat == doctest::Approx(flat).epsilon(1e-12));
  CHECK(t_hier == doctest::Approx(hier).epsilon(1e-12));
  CHECK(t_hier < 0.85 * t_flat);
  // With NVLink only as fast as the node's NICs (4 x 25 GB/s) the flat ring is the better plan.
  c.node.intra_bytes_per_s = 100e9;
  c.node.nics_per_node = 4;
  CHECK(collective_time(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring) <
        collective_time(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::hierarchical));
}

TEST_CASE("a group crosses nodes at its NICs' rate, shared with sibling groups on the same node") {
  ClusterSpec c = uniform_cluster();
  c.nodes = 8;
  // 8 ranks per node spread their channels over all 8 NICs of 25 GB/s.
  const CommGroup full{.size = 64, .ranks_per_node = 8, .nodes = 8, .leaves = 1};
  CHECK(inter_node_tier(full, c).bytes_per_s == doctest::Approx(200e9).scale(0));
  // A data-parallel group has one rank per node: its GPU's own NIC, whether or not siblings run too.
  const CommGroup alone{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 1, .groups_sharing_nics = 1};
  const CommGroup shared{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 1, .groups_sharing_nics = 8};
  CHECK(inter_node_tier(alone, c).bytes_per_s == doctest::Approx(25e9).scale(0));
  CHECK(inter_node_tier(shared, c).bytes_per_s == doctest::Approx(25e9).scale(0));
  // Two groups of 4 ranks per node split the node's NICs.
  const CommGroup half{.size = 32, .ranks_per_node = 4, .nodes = 8, .leaves = 1, .groups_sharing_nics = 2};
  CHECK(inter_node_tier(half, c).bytes_per_s == doctest::Approx(100e9).scale(0));
  CHECK(inter_node_tier(shared, c).latency_s == doctest::Approx(5e-6).scale(0));
  const CommGroup across{.size = 8, .ranks_per_node = 1, .nodes = 8, .leaves = 2, .groups_sharing_nics = 8};
  CHECK(inter_node_tier(across, c).latency_s == doctest::Approx(7e-6).scale(0));  // leaf, spine, leaf
}

TEST_CASE(
    "NCCL's all-to-all in a node runs at its own fraction of NVLink, device-initiated kernels at theirs, "
    "else at the ring's") {
  // 8 GPUs of one node, 100 GB/s raw, the ring at 1.0 of it and NCCL's all-to-all at 0.6: each rank sends
  // 7/8 of its 1 GB buffer, so 0.875 GB / 60 GB/s + one 1 us hop; the device-initiated kernels (DeepEP,
  // HybridEP), with no fraction of their own, 0.875 GB / 100 GB/s + 1 us.
  ClusterSpec c = uniform_cluster();
  c.node.comm.all_to_all_bandwidth_fraction = 0.6;
  const CommGroup node{8, 8, 1, 1, 1};
  const double bytes = 1e9;
  CHECK(collective_time(CollectiveOp::all_to_all, bytes, node, c) ==
        doctest::Approx(1e-6 + 0.875e9 / 60e9).epsilon(1e-12));
  CHECK(estimate_all_to_all(bytes, node, c, AllToAllKernel::nccl).time_s ==
        collective_time(CollectiveOp::all_to_all, bytes, node, c));
  CHECK(estimate_all_to_all(bytes, node, c, AllToAllKernel::device_initiated).time_s ==
        doctest::Approx(1e-6 + 0.875e9 / 100e9).epsilon(1e-12));
  // Their own fraction, 0.7: 0.875 GB / 70 GB/s + 1 us; NCCL's all-to-all keeps its 0.6.
  c.node.comm.device_all_to_all_bandwidth_fraction = 0.7;
  CHECK(estimate_all_to_all(bytes, node, c, AllToAllKernel::device_initiated).time_s ==
        doctest::Approx(1e-6 + 0.875e9 / 70e9).epsilon(1e-12));
  CHECK(collective_time(CollectiveOp::all_to_all, bytes, node, c) ==
        doctest::Approx(1e-6 + 0.875e9 / 60e9).epsilon(1e-12));
  // The rings do not change.
  CHECK(collective_time(CollectiveOp::all_gather, bytes, node, c, CollectiveAlgo::ring) ==
        doctest::Approx(7 * (1e-6 + bytes / 8 / 100e9)).epsilon(1e-12));
  // 0 leaves the all-to-all at the ring's fraction.
  c.node.comm.all_to_all_bandwidth_fraction = 0;
  CHECK(collective_time(CollectiveOp::all_to_all, bytes, node, c) ==
        doctest::Approx(1e-6 + 0.875e9 / 100e9).epsilon(1e-12));
}

TEST_CASE("bus bandwidth factors are the ones nccl-tests uses") {
  CHECK(bus_bandwidth_factor(CollectiveOp::all_reduce, 8) == doctest::Approx(1.75).scale(0));
  CHECK(bus_bandwidth_factor(CollectiveOp::reduce_scatter, 8) == doctest::Approx(0.875).scale(0));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_gather, 4) == doctest::Approx(0.75).scale(0));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_to_all, 2) == doctest::Approx(0.5).scale(0));
  CHECK(bus_bandwidth_factor(CollectiveOp::broadcast, 8) == doctest::Approx(1.0).scale(0));
  CHECK(bus_bandwidth_factor(CollectiveOp::send_recv, 2) == doctest::Approx(1.0).scale(0));
  CHECK(bus_bandwidth(CollectiveOp::all_reduce, 1e9, 8, 0.01) == doctest::Approx(175e9).scale(0));
}

TEST_CASE("auto selection uses a low-latency protocol for small messages and NVLS for large ones") {
  ClusterSpec c = uniform_cluster();
  c.node.in_switch_reduction = true;
  c.node.comm = CommEfficiency{};  // defaults: LL and LL128 are real options again
  const CommGroup node8{.size = 8, .ranks_per_node = 8, .nodes = 1};
  const CollectiveEstimate small = estimate_collective(CollectiveOp::all_reduce, 32768, node8, c);
  CHECK(small.algo == CollectiveAlgo::ring);
  CHECK(small.protocol == CollectiveProtocol::ll);
  const CollectiveEstimate large = estimate_collective(CollectiveOp::all_reduce, 8 * kGiB, node8, c);
  CHECK(large.algo == CollectiveAlgo::in_switch);
  CHECK(large.protocol == CollectiveProtocol::simple);
  // Below in_switch_min_ranks NCCL keeps the ring; across nodes NVLS does not apply.
  const CommGroup node4{.size = 4, .ranks_per_node = 4, .nodes = 1};
  CHECK(select_algorithm(CollectiveOp::all_reduce, 8 * kGiB, node4, c) == CollectiveAlgo::ring);
  c.nodes = 2;
  const CommGroup two_nodes{.size = 16, .ranks_per_node = 8, .nodes = 2};
  CHECK(select_algorithm(CollectiveOp::all_reduce, 8 * kGiB, two_nodes, c) != CollectiveAlgo::in_switch);
}

TEST_CASE("double binary tree wins over ring for mid-size messages across nodes and ring for large ones") {
  ClusterSpec c = uniform_cluster();
  c.node.comm = CommEfficiency{};
  c.nodes = 8;
  const CommGroup g{.size = 64, .ranks_per_node = 8, .nodes = 8, .leaves = 2};
  CHECK(select_algorithm(CollectiveOp::all_reduce, 1 << 20, g, c) == CollectiveAlgo::double_binary_tree);
  CHECK(select_algorithm(CollectiveOp::all_reduce, 16 * kGiB, g, c) == CollectiveAlgo::ring);
}

TEST_CASE("a tree all-reduce's latency term at 1,024 ranks is NCCL's 2((k - 1) intra + log2(nodes) inter)") {
  // NCCL's tuner (src/graph/tuning.cc, ncclTopoTuneModel, NVIDIA/nccl 5067397c) prices a tree all-reduce's
  // latency as baseLat + 2 · ((nRanks/nNodes − 1) · intraLat + log2i(nNodes) · interLat): a chain of k ranks
  // inside each node and a binary tree of nodes, up and down, interLat the tree's network latency
  // (hwLatencies[NET][TREE]: LL 5.0, LL128 8.5, Simple 14 us). 1,024 ranks on 128 nodes of 8, spread over 4
  // leaves (so each tree hop between nodes crosses leaf, spine and leaf): intraLat = 1 us (the NVLink step),
  // the fabric's own step 4 us of NIC + 3 switches of 1 us = 7 us, under NCCL's Simple 14 us, so a level
  // costs 14 us; log2(128) = 7, and the latency term is 2 · (7 · 1 + 7 · 14) = 210 us, plus the launch
  // (base_latency_s) and crossing-nodes (net_base_latency_s) costs paid once. Forced to the tree, a 1 GiB
  // buffer runs Simple (whose latency fraction is 1).
  ClusterSpec c = uniform_cluster();
  with_nccl_network_steps(c);
  c.nodes = 128;
  c.node.comm.base_latency_s = 5e-6;
  c.node.comm.net_base_latency_s = 3e-6;
  const CommGroup g{.size = 1024, .ranks_per_node = 8, .nodes = 128, .leaves = 4};
  const CollectiveEstimate e =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::double_binary_tree);
  REQUIRE(e.algo == CollectiveAlgo::double_binary_tree);
  REQUIRE(e.protocol == CollectiveProtocol::simple);
  CHECK(e.latency_s == doctest::Approx(5e-6 + 3e-6 + 210e-6).epsilon(1e-12));
  // A ring's latency term at the same size (NCCL's ring: 2 · 127 = 254 of its 2 · 1,023 = 2,046 steps cross
  // nodes at 14 us, the other 1,792 at max(1 us, 3 us Simple network overhead)): 8 + 5,376 + 3,556 =
  // 8,940 us, which is why NCCL's tuner (and estimate_collective) takes the tree for small buffers here.
  const CollectiveEstimate ring =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::ring);
  CHECK(ring.latency_s == doctest::Approx(8940e-6).epsilon(1e-12));
  CHECK(select_algorithm(CollectiveOp::all_reduce, 1 << 20, g, c) == CollectiveAlgo::double_binary_tree);
  // On LL (half the bandwidth, 0.35 of the step latency) an 8-byte all-reduce: the fabric's LL step
  // 0.35 · 7 = 2.45 us is under NCCL's 2.7 us, and a tree level costs 5.0/2.7 of that: 5.0 us, NCCL's own
  // hwLatencies[NET][TREE][LL]. The term is 8 + 2 · (7 · 0.35 + 7 · 5.0) = 82.9 us (NCCL's own constants
  // on DGX H100: 6.8 + 2 · (7 · 0.6 + 7 · 5.0) = 85.2 us, the gap its 0.6 us NVLink step).
  c.node.comm.ll_bandwidth_fraction = 0.5;
  c.node.comm.ll_latency_fraction = 0.35;
  const CollectiveEstimate ll =
      estimate_collective(CollectiveOp::all_reduce, 8, g, c, CollectiveAlgo::double_binary_tree);
  REQUIRE(ll.protocol == CollectiveProtocol::ll);
  CHECK(ll.latency_s == doctest::Approx(8e-6 + 2 * (7 * 0.35e-6 + 7 * 5.0e-6)).epsilon(1e-12));
  CHECK(ll.latency_s == doctest::Approx(82.9e-6).epsilon(1e-9));
  // A fabric slower than NCCL's constant pays its own: 20 us of NIC makes the Simple step 23 us.
  c.node.comm.nic_latency_s = 20e-6;
  const CollectiveEstimate slow =
      estimate_collective(CollectiveOp::all_reduce, kGiB, g, c, CollectiveAlgo::double_binary_tree);
  CHECK(slow.latency_s == doctest::Approx(8e-6 + 2 * (7 * 1e-6 + 7 * 23e-6)).epsilon(1e-12));
}

TEST_CASE("a ring reduce-scatter's latency at 16,384 ranks is NCCL's split of inter- and intra-node steps") {
  // NCCL's tuner (src/graph/tuning.cc, ncclTopoTuneModel, NVIDIA/nccl 5067397c) prices a ring as
  // baseLat + (nsteps − nInterSteps) · intraLat + nInterSteps · interLat: for a reduce-scatter on m nodes
  // nsteps = n − 1 and nInterSteps = m − 1; intraLat is at least the proxy's per-step overhead (1 us, Simple
  // 3 us) once the ring crosses nodes. 2,048 nodes of 8 (16,384 ranks), NCCL's own constants: LL 6.6 +
  // 14,336 · max(0.6, 1.0) + 2,047 · 2.7 = 19,869.5 us; Simple 8.4 + 14,336 · 3.4 + 2,047 · 14 = 77,409 us.
  // The closed form takes the split, the overhead and NCCL's network step (the fabric's own, 3 us of NIC
  // plus 3 switches of 0.6 us = 4.8 us, LL 0.35 of it, is faster), with DGX H100-like steps of 2 us inside a
  // node. Simple: 14,336 · 3 + 2,047 · 14 = 71,666 us (93 % of NCCL's: its NVLink step is 3.4 us, the
  // fitted one 2 us under the 3 us overhead; 52.8 ms with the fabric's 4.8 us step);
  // LL: 14,336 · max(0.7, 1.0) + 2,047 · 2.7 = 19,862.9 us (NCCL's less its 6.6 us launch).
  ClusterSpec c = uniform_cluster();
  with_nccl_network_steps(c);
  c.nodes = 2048;
  c.node.intra_latency_s = 2e-6;
  c.node.comm.nic_latency_s = 3e-6;
  c.network.switch_latency_s = 0.6e-6;
  const CommGroup g{.size = 16384, .ranks_per_node = 8, .nodes = 2048, .leaves = 64};
  const CollectiveEstimate e = estimate_collective(CollectiveOp::reduce_scatter, kGiB, g, c);
  REQUIRE(e.algo == CollectiveAlgo::ring);
  REQUIRE(e.protocol == CollectiveProtocol::simple);
  CHECK(e.latency_s == doctest::Approx(71666e-6).epsilon(1e-9));
  c.node.comm.ll_bandwidth_fraction = 0.5;
  c.node.comm.ll_latency_fraction = 0.35;
  const CollectiveEstimate ll = estimate_collective(CollectiveOp::reduce_scatter, 1 << 20, g, c);
  REQUIRE(ll.protocol == CollectiveProtocol::ll);
  CHECK(ll.latency_s == doctest::Approx(19862.9e-6).epsilon(1e-9));
  const double nccl_ll = 6.6e-6 + 14336 * 1.0e-6 + 2047 * 2.7e-6;
  CHECK(ll.latency_s == doctest::Approx(nccl_ll - 6.6e-6).epsilon(1e-9));
}

TEST_CASE("empty messages and groups of one cost nothing; bad groups are input errors") {
  const ClusterSpec c = uniform_cluster();
  CHECK(collective_time(CollectiveOp::all_reduce, 0, {.size = 8, .ranks_per_node = 8}, c) == 0.0);
  CHECK(collective_time(CollectiveOp::all_reduce, 1e9, {.size = 1, .ranks_per_node = 1}, c) == 0.0);
  // 8 ranks cannot sit 3 per node on 2 nodes; 8 nodes cannot hold 4 ranks.
  CHECK_THROWS_AS(
      (void)collective_time(CollectiveOp::all_reduce, 1e9, {.size = 8, .ranks_per_node = 3, .nodes = 2}, c),
      trainsim::InputError);
  CHECK_THROWS_AS(
      (void)collective_time(CollectiveOp::all_reduce, 1e9, {.size = 4, .ranks_per_node = 1, .nodes = 8}, c),
      trainsim::InputError);
  CHECK_THROWS_AS((void)collective_time(CollectiveOp::all_reduce, -1, {.size = 8, .ranks_per_node = 8}, c),
                  trainsim::InputError);
}

TEST_CASE("operation and algorithm names parse in nccl-tests and scenario spellings") {
  CHECK(parse_collective_op("all-reduce") == CollectiveOp::all_reduce);
  CHECK(parse_collective_op("allreduce") == CollectiveOp::all_reduce);
  CHECK(parse_collective_op("reduce_scatter") == CollectiveOp::reduce_scatter);
  CHECK(parse_collective_op("alltoall") == CollectiveOp::all_to_all);
  CHECK_FALSE(parse_collective_op("gather").has_value());
  CHECK(parse_collective_algo("nvls") == CollectiveAlgo::in_switch);
  CHECK(parse_collective_algo("tree") == CollectiveAlgo::double_binary_tree);
  CHECK(to_string(CollectiveOp::all_gather) == "all-gather");
}
