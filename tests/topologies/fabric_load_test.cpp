// The busiest link of lowered collectives and the fabric's slowdown over a non-blocking one, by hand:
// which flows cross which links is read off the cluster graph's construction (cluster_graph.hpp).
#include "topologies/fabric_load.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::topo;

namespace {

// A send of `bytes` from cluster GPU a to cluster GPU b.
CollectiveCall send(std::int64_t a, std::int64_t b, double bytes) {
  return CollectiveCall{
      CollectiveOp::send_recv, bytes, {a, b}, CollectiveAlgo::ring, CollectiveProtocol::simple};
}

constexpr double kBytes = 1e9;
constexpr double kPort = 50e9;  // round_number_cluster's NIC, efficiency 1

}  // namespace

TEST_CASE("two communicators sharing a NIC each get half of it") {
  // Two nodes of 2 GPUs and one NIC each: GPU 0 → GPU 2 and GPU 1 → GPU 3 both leave through node 0's
  // only NIC, whose link to the switch carries both: 2 GB at 50 GB/s.
  ClusterSpec c = testing::round_number_cluster(2, 2);
  c.node.nics_per_node = 1;
  const ClusterGraph g = ClusterGraph::build(c);
  const std::vector<CollectiveCall> both{send(0, 2, kBytes), send(1, 3, kBytes)};
  CHECK(busiest_link_s(g, c, both) == doctest::Approx(2 * kBytes / kPort));
  const std::vector<CollectiveCall> one{send(0, 2, kBytes)};
  CHECK(busiest_link_s(g, c, one) == doctest::Approx(kBytes / kPort));
  // The closed form says the same of each: two groups on the node split its NIC.
  CommGroup group{2, 1, 2, 1, 2};
  CHECK(inter_node_tier(group, c).bytes_per_s == doctest::Approx(kPort / 2));
  // The NIC is a port, not the fabric: on the non-blocking fabric it is shared alike.
  const FabricGraphs graphs(c);
  CHECK(fabric_slowdown(graphs, both) == doctest::Approx(1.0));
}

TEST_CASE("other jobs' traffic on the spine slows a flow that crosses it by what they leave") {
  // Not rail-optimised, 16-port leaves at 1:1: 8 ports down (one node of 8 NICs per leaf), 8 up. Node 0's
  // GPU 0 to node 1's crosses leaf–spine–leaf, whose links carry 1 − 0.75 of their 50 GB/s.
  ClusterSpec c = testing::round_number_cluster(2);
  c.network.rail_optimized = false;
  c.network.switch_radix = 16;
  c.background_fraction = 0.75;
  const FabricGraphs graphs(c);
  const std::vector<CollectiveCall> one{send(0, 8, kBytes)};
  CHECK(fabric_slowdown(graphs, one) == doctest::Approx(4.0));
}

TEST_CASE("a torus link carries a node's flows to its neighbour on a quarter of its NICs") {
  // Four nodes of 8 GPUs and 8 NICs on a 2 × 2 torus: a router per node, one link pair per neighbour of
  // 8 NICs' rate / (2 · dimensions) = 2 ports. All 8 GPUs of node 0 send to node 1's: 8 GB over the
  // 100 GB/s router link, against 1 GB per NIC port on the non-blocking fabric: 4 times as long.
  ClusterSpec c = testing::round_number_cluster(4);
  c.network.topology = FabricTopology::torus_2d;
  const FabricGraphs graphs(c);
  std::vector<CollectiveCall> sends;
  for (std::int64_t k = 0; k < 8; ++k) sends.push_back(send(k, 8 + k, kBytes));
  CHECK(busiest_link_s(graphs.real, graphs.real_cluster, sends) == doctest::Approx(8 * kBytes / (2 * kPort)));
  CHECK(fabric_slowdown(graphs, sends) == doctest::Approx(4.0));
}

TEST_CASE("on a fabric where nothing beyond the NICs is shared, the slowdown is 1") {
  // Rail-optimised, 64-port leaves: 4 nodes under one leaf per rail; a ring all-reduce over all 32 GPUs.
  const ClusterSpec c = testing::round_number_cluster(4);
  const FabricGraphs graphs(c);
  std::vector<std::int64_t> all(32);
  for (std::int64_t i = 0; i < 32; ++i) all[static_cast<std::size_t>(i)] = i;
  const std::vector<CollectiveCall> ring{CollectiveCall{CollectiveOp::all_reduce, kBytes, all,
                                                        CollectiveAlgo::ring, CollectiveProtocol::simple}};
  CHECK(fabric_slowdown(graphs, ring) == doctest::Approx(1.0));
}
