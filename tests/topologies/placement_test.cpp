#include "topologies/placement.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "sim/error.hpp"

using namespace trainsim::topo;

TEST_CASE("tensor parallel groups stay in a node and data parallel groups take one rank per node") {
  // tp 8, cp 1, ep 1, pp 16, dp 8 on 128 nodes of 8 GPUs, 32 nodes per leaf.
  const Placement p({8, 1, 1, 16, 8}, 8, 32);
  CHECK(p.world_size() == 1024);
  const CommGroup tp = p.group(0, 13);
  CHECK(tp.size == 8);
  CHECK(tp.ranks_per_node == 8);
  CHECK(tp.nodes == 1);
  CHECK(tp.groups_sharing_nics == 1);
  const CommGroup dp = p.group(4, 13);
  CHECK(dp.size == 8);
  CHECK(dp.ranks_per_node == 1);
  CHECK(dp.nodes == 8);
  CHECK(dp.groups_sharing_nics == 8);
  // DP neighbours are 128 ranks = 16 nodes apart: 8 members over nodes 1, 17, ..., 113 span 4 leaves.
  CHECK(dp.leaves == 4);
  CHECK(p.group_members(4, 13) == std::vector<std::int64_t>{13, 141, 269, 397, 525, 653, 781, 909});
  const CommGroup pp = p.group(3, 0);
  CHECK(pp.size == 16);
  CHECK(pp.nodes == 16);
  CHECK(p.coordinates(133) == std::vector<std::int64_t>{5, 0, 0, 0, 1});
}

TEST_CASE("a tensor parallel group smaller than a node shares it with its siblings") {
  const Placement p({2, 4}, 8, 4);
  const CommGroup tp = p.group(0, 3);
  CHECK(tp.size == 2);
  CHECK(tp.nodes == 1);
  const CommGroup dp = p.group(1, 3);
  CHECK(dp.size == 4);
  CHECK(dp.nodes == 1);
  CHECK(dp.ranks_per_node == 4);
  CHECK(p.group_members(1, 3) == std::vector<std::int64_t>{1, 3, 5, 7});
}

TEST_CASE("a group spread unevenly over nodes counts the most members on one node and still has a cost") {
  // Axis of 3 with stride 4 on 8-GPU nodes (24 ranks): members 0, 4, 8 -> two on node 0, one on node 1.
  const Placement p({4, 3, 2}, 8, 1);
  const CommGroup g = p.group(1, 0);
  CHECK(g.size == 3);
  CHECK(g.nodes == 2);
  CHECK(g.ranks_per_node == 2);
  ClusterSpec c;
  c.node.intra_bytes_per_s = 100e9;
  c.node.nics_per_node = 8;
  c.node.nic_bytes_per_s = 50e9;
  c.nodes = 2;
  CHECK(collective_time(CollectiveOp::all_reduce, 1e9, g, c) > 0);
}

TEST_CASE("nodes per leaf follow the radix and oversubscription of the fabric") {
  ClusterSpec c;
  c.node.nics_per_node = 8;
  c.network.switch_radix = 64;
  c.network.oversubscription = 1;
  c.network.rail_optimized = true;
  CHECK(nodes_per_leaf(c) == 32);
  c.network.oversubscription = 3;  // 48 down, 16 up
  CHECK(nodes_per_leaf(c) == 48);
  c.network.rail_optimized = false;  // all 8 NICs of a node on one leaf
  CHECK(nodes_per_leaf(c) == 6);
  c.network.topology = FabricTopology::single_switch;
  c.nodes = 100;
  CHECK(nodes_per_leaf(c) == 100);
}

TEST_CASE("placements that do not fill whole nodes are input errors") {
  CHECK_THROWS_AS(Placement({3, 3}, 8, 1), trainsim::InputError);
  CHECK_THROWS_AS(Placement({0, 8}, 8, 1), trainsim::InputError);
  CHECK_NOTHROW(Placement({4}, 8, 1));
}

namespace {

// The group's members by brute force: every rank that shares `rank`'s coordinates off `axes`.
CommGroup listed_group(const Placement& p, const std::vector<std::size_t>& axes, std::int64_t rank,
                       std::int64_t gpus_per_node, std::int64_t nodes_per_leaf) {
  const std::vector<std::int64_t> mine = p.coordinates(rank);
  std::set<std::int64_t> nodes, leaves;
  std::int64_t size = 0;
  for (std::int64_t r = 0; r < p.world_size(); ++r) {
    const std::vector<std::int64_t> c = p.coordinates(r);
    bool same = true;
    for (std::size_t a = 0; a < c.size(); ++a) {
      const bool in_group = std::find(axes.begin(), axes.end(), a) != axes.end();
      if (!in_group && c[a] != mine[a]) same = false;
    }
    if (!same) continue;
    ++size;
    nodes.insert(r / gpus_per_node);
    leaves.insert(r / gpus_per_node / nodes_per_leaf);
  }
  CommGroup g;
  g.size = size;
  g.nodes = static_cast<std::int64_t>(nodes.size());
  g.leaves = static_cast<std::int64_t>(leaves.size());
  return g;
}

}  // namespace

TEST_CASE("node and leaf counts of every group match the members listed one by one") {
  // Axis sizes that do and do not divide a node, adjacent and separated group axes, one rank in seven.
  const std::vector<std::vector<std::int64_t>> layouts = {
      {2, 3, 4, 8},
      {3, 2, 2, 4},
      {8, 1, 2, 6},
      {4, 3, 1, 8},
      {1, 6, 4, 2},
      {2, 2, 2, 2, 2, 3},
      // long outer axes over odd strides: counted from a few periods, then extrapolated
      {3, 2, 40},
      {2, 3, 60},
      {5, 1, 48},
      {3, 80}};
  const std::vector<std::vector<std::size_t>> groups = {{0},    {1},    {2},    {3},
                                                        {0, 1}, {1, 3}, {0, 2}, {1, 2, 3}};
  for (const auto& sizes : layouts) {
    for (const std::int64_t gpn : {4, 8}) {
      for (const std::int64_t leaf : {1, 3}) {
        const Placement p(sizes, gpn, leaf);
        for (const auto& axes : groups) {
          if (axes.back() >= sizes.size()) continue;
          for (std::int64_t rank = 0; rank < p.world_size(); rank += 7) {
            CAPTURE(rank);
            CAPTURE(gpn);
            CAPTURE(leaf);
            CAPTURE(axes.size());
            CAPTURE(axes.front());
            const CommGroup want = listed_group(p, axes, rank, gpn, leaf);
            const CommGroup got = p.group(axes, rank);
            CHECK(got.size == want.size);
            CHECK(got.nodes == want.nodes);
            CHECK(got.leaves == want.leaves);
          }
        }
      }
    }
  }
}

TEST_CASE("a data-parallel group of ten million ranks is counted without listing them") {
  // tp 8 fills a node: every dp rank is on its own node. tp 2: four dp ranks per node.
  const Placement whole({8, 10'000'000}, 8, 32);
  const std::size_t dp_axis[] = {1};
  const CommGroup a = whole.group(dp_axis, 0);
  CHECK(a.nodes == 10'000'000);
  CHECK(a.leaves == 312'500);  // 32 nodes a leaf
  const Placement shared({2, 40'000'000}, 8, 32);
  const CommGroup b = shared.group(dp_axis, 0);
  CHECK(b.size == 40'000'000);
  CHECK(b.nodes == 10'000'000);
  CHECK(b.ranks_per_node == 4);
}
