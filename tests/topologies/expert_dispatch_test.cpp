// Deduplicating MoE dispatch (DeepEP, HybridEP; topologies/expert_dispatch.hpp), by hand on round numbers.
#include "topologies/expert_dispatch.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::topo;

namespace {

// A 32-way expert group over 4 nodes of 8 GPUs (every GPU of a node in the group), NICs of 12.5 GB/s
// (100 Gb/s) so that the network leg, not NVLink's 100 GB/s, sets the time.
ClusterSpec slow_nics() {
  ClusterSpec c = testing::round_number_cluster(4);
  c.node.nic_bytes_per_s = 12.5e9;
  return c;
}
const CommGroup kGroup{32, 8, 4, 1, 1};

}  // namespace

TEST_CASE("a token bound for top_k experts crosses the network once per distinct remote node") {
  // 8 copies over 4 nodes: 3 · (1 − (3/4)^8) = 3 · (1 − 0.100112915) = 2.699661255 remote nodes.
  CHECK(expected_remote_nodes(8, 4) == doctest::Approx(2.699661255).epsilon(1e-9));
  CHECK(expected_remote_nodes(1, 4) == doctest::Approx(0.75).epsilon(1e-12));  // one copy: 3/4 leave the node
  CHECK(expected_remote_nodes(8, 1) == 0);
  // Per rank, of B bytes of slots (8 copies a token): B/8 · 2.6997 on the network, where the plain
  // all-to-all sends the 24/32 of its copies that live on other nodes, 0.75 · B: 0.4499 of it.
  const double bytes = 1e9;
  const double plain_network = bytes * (32.0 - 8.0) / 32.0;
  CHECK(deduplicated_network_bytes(bytes, 8, kGroup) ==
        doctest::Approx(bytes / 8 * 2.699661255).epsilon(1e-9));
  CHECK(deduplicated_network_bytes(bytes, 8, kGroup) / plain_network ==
        doctest::Approx(2.699661255 / 8 / 0.75).epsilon(1e-9));
}

TEST_CASE("deduplicated dispatch time: the network leg at the NIC's rate, latency apart") {
  // Size-dependent time per byte of slots (the difference of two sizes cancels every latency): the plain
  // all-to-all moves 0.75 of each byte over a 12.5 GB/s NIC; the deduplicated one 2.699661255/8 of it,
  // still slower than its NVLink leg (7/8 of each byte at 100 GB/s: 8.75e-12 s against 2.7e-11 s a byte).
  const ClusterSpec c = slow_nics();
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const double plain =
      slope([&](double x) { return collective_time(CollectiveOp::all_to_all, x, kGroup, c); });
  const double dedup = slope([&](double x) { return deduplicated_all_to_all(x, 8, kGroup, c).time_s; });
  CHECK(plain == doctest::Approx(0.75 / 12.5e9).epsilon(1e-9));
  CHECK(dedup == doctest::Approx(2.699661255 / 8 / 12.5e9).epsilon(1e-9));
}

TEST_CASE("inside one node, or with one copy a token, it is the plain all-to-all") {
  const ClusterSpec c = slow_nics();
  const CommGroup node{8, 8, 1, 1, 1};
  CHECK(deduplicated_all_to_all(1e8, 8, node, c).time_s ==
        collective_time(CollectiveOp::all_to_all, 1e8, node, c));
  CHECK(deduplicated_all_to_all(1e8, 1, kGroup, c).time_s ==
        collective_time(CollectiveOp::all_to_all, 1e8, kGroup, c));
}
