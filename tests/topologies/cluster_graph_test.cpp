#include "topologies/cluster_graph.hpp"

#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <vector>

#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::topo;

namespace {

/// The shared round-number nodes (8 GPUs, 100 GB/s NVSwitch at 2 us, 8 NICs of 50 GB/s, efficiency 1, 4 us
/// NIC latency, 1 us per switch, 64-port switches) on the given fabric.
ClusterSpec dgx(std::int64_t nodes, FabricTopology topology = FabricTopology::fat_tree) {
  ClusterSpec c = trainsim::testing::round_number_cluster(nodes);
  c.network.topology = topology;
  return c;
}

}  // namespace

TEST_CASE("a two-node rail-optimized fat-tree has the expected devices and links") {
  const ClusterGraph g = ClusterGraph::build(dgx(2));
  CHECK(g.count(DeviceKind::gpu) == 16);
  CHECK(g.count(DeviceKind::nvswitch) == 2);
  CHECK(g.count(DeviceKind::nic) == 16);
  CHECK(g.count(DeviceKind::leaf) == 8);    // one per rail
  CHECK(g.count(DeviceKind::spine) == 32);  // 64 ports: 32 down, 32 up
  // Per node 8 GPU-NVSwitch + 8 GPU-NIC + 8 NIC-leaf pairs; 8 leaves x 32 spines; two directions each.
  CHECK(g.link_count() == 2 * (2 * 24 + 8 * 32));
  CHECK(g.diameter() == 6);
  // Bisection: 16 NICs x 50 GB/s / 2 (the spine layer has more).
  CHECK(g.bisection_bytes_per_s() == doctest::Approx(400e9).scale(0));
}

TEST_CASE("routes take the NVSwitch inside a node, the rail leaf between nodes, and the spine across rails") {
  const ClusterGraph g = ClusterGraph::build(dgx(2));
  CHECK(g.route(g.gpu(0), g.gpu(3)).size() == 2);
  CHECK(g.route_latency_s(g.gpu(0), g.gpu(3)) == doctest::Approx(2e-6).scale(0));
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(0), g.gpu(3)) == doctest::Approx(100e9).scale(0));
  // GPU 0 of node 0 to GPU 0 of node 1: GPU, NIC, rail-0 leaf, NIC, GPU.
  CHECK(g.route(g.gpu(0), g.gpu(8)).size() == 4);
  CHECK(g.route_latency_s(g.gpu(0), g.gpu(8)) == doctest::Approx(4e-6 + 1e-6).scale(0));
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(0), g.gpu(8)) == doctest::Approx(50e9).scale(0));
  // Different rails: leaf, spine, leaf.
  CHECK(g.route(g.gpu(0), g.gpu(9)).size() == 6);
  CHECK(g.route_latency_s(g.gpu(0), g.gpu(9)) == doctest::Approx(4e-6 + 3e-6).scale(0));
  CHECK(g.route(g.gpu(5), g.gpu(5)).empty());
}

TEST_CASE("a degraded NIC links to its leaf at its own rate, both ways; the other NICs keep theirs") {
  ClusterSpec c = dgx(2);
  c.degraded.push_back({1, 2, 12.5e9});
  const ClusterGraph g = ClusterGraph::build(c);
  // GPU 2 of node 0 to GPU 2 of node 1 (rail 2): into node 1's NIC 2 at 12.5 GB/s; and back out of it.
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(2), g.gpu(10)) == doctest::Approx(12.5e9).scale(0));
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(10), g.gpu(2)) == doctest::Approx(12.5e9).scale(0));
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(1), g.gpu(9)) == doctest::Approx(50e9).scale(0));
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(3), g.gpu(11)) == doctest::Approx(50e9).scale(0));
}

TEST_CASE("routes are deterministic and ECMP spreads pairs over the spines") {
  const ClusterGraph a = ClusterGraph::build(dgx(64));
  const ClusterGraph b = ClusterGraph::build(dgx(64));
  std::set<DeviceId> spines;
  for (std::int64_t i = 0; i < 64; ++i) {
    const DeviceId from = a.gpu(i * 8);
    const DeviceId to = a.gpu(((i + 7) % 64) * 8 + 1);
    const auto ra = a.route(from, to);
    const auto rb = b.route(from, to);
    REQUIRE(ra.size() == rb.size());
    for (std::size_t k = 0; k < ra.size(); ++k) CHECK(ra[k] == rb[k]);
    const auto again = a.route(from, to);
    CHECK(again.data() == ra.data());  // memoised
    for (LinkIndex l : ra) {
      if (a.device(a.link(l).to).kind == DeviceKind::spine) spines.insert(a.link(l).to);
    }
  }
  CHECK(spines.size() > 16);
}

TEST_CASE("oversubscription leaves fewer uplinks per leaf and less bisection bandwidth") {
  ClusterSpec c = dgx(64);
  c.network.oversubscription = 3;  // 48 down, 16 up
  c.network.rail_optimized = false;
  const ClusterGraph g = ClusterGraph::build(c);
  // 6 nodes (48 NICs) per leaf -> 11 leaves, 16 spines.
  CHECK(g.count(DeviceKind::leaf) == 11);
  CHECK(g.count(DeviceKind::spine) == 16);
  CHECK(g.bisection_bytes_per_s() == doctest::Approx(11 * 16 * 50e9 / 2).scale(0));
}

TEST_CASE("a three-tier fat-tree routes across pods through the core") {
  ClusterSpec c = dgx(128, FabricTopology::fat_tree_3);
  c.network.switch_radix = 8;  // 4 down, 4 up: 32 leaves per rail, pods of 4 leaves
  const ClusterGraph g = ClusterGraph::build(c);
  CHECK(g.count(DeviceKind::core) == 4 * 4);
  CHECK(g.diameter() == 8);
  CHECK(g.route(g.gpu(0), g.gpu(127 * 8)).size() == 8);
  CHECK(g.route_latency_s(g.gpu(0), g.gpu(127 * 8)) == doctest::Approx(4e-6 + 5e-6).scale(0));
}

TEST_CASE("a 4x4 torus has wrap-around neighbours and a BFS diameter of 4 router hops") {
  const ClusterGraph g = ClusterGraph::build(dgx(16, FabricTopology::torus_2d));
  CHECK(g.count(DeviceKind::router) == 16);
  CHECK(g.diameter() == 4 + 4);  // GPU-NIC-router at both ends, 2 + 2 router hops
  // Each neighbour link carries the node's 400 GB/s of NICs over 4 directions: 100 GB/s. Cut: 2 x 4 links.
  CHECK(g.bisection_bytes_per_s() == doctest::Approx(2 * 4 * 100e9).scale(0));
  CHECK(g.route(g.gpu(0), g.gpu(8 * 15)).size() == 4 + 2);  // node 15 is a wrap-around neighbour pair away
}

TEST_CASE("storage is reached through the fabric and dragonfly groups are connected") {
  ClusterSpec c = dgx(4);
  c.storage.write_bytes_per_s = 320e9;
  const ClusterGraph g = ClusterGraph::build(c);
  const auto to_storage = g.route(g.gpu(3), g.storage());
  CHECK(to_storage.size() == 4);  // GPU, NIC, leaf, spine, storage
  CHECK(g.route_bottleneck_bytes_per_s(g.gpu(3), g.storage()) ==
        doctest::Approx(10e9).scale(0));  // 320 / 32 spines
  CHECK(g.route(g.storage(), g.gpu(3)).size() == 4);
  CHECK_THROWS_AS((void)ClusterGraph::build(dgx(4)).storage(), trainsim::InputError);

  ClusterSpec d = dgx(32, FabricTopology::dragonfly);
  d.network.rail_optimized = false;
  const ClusterGraph dg = ClusterGraph::build(d);
  CHECK(dg.count(DeviceKind::router) == 8);
  CHECK_FALSE(dg.route(dg.gpu(0), dg.gpu(31 * 8)).empty());
  std::ostringstream dot;
  dg.write_dot(dot);
  CHECK(dot.str().rfind("graph cluster {", 0) == 0);
}

TEST_CASE("clusters that cannot be built are input errors") {
  ClusterSpec c = dgx(2);
  c.node.nics_per_node = 0;
  CHECK_THROWS_AS((void)ClusterGraph::build(c), trainsim::InputError);
  ClusterSpec t = dgx(6, FabricTopology::torus_2d);
  t.network.torus_dims = {4, 4};
  CHECK_THROWS_AS((void)ClusterGraph::build(t), trainsim::InputError);
}
