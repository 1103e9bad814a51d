// Shares of the leaf uplinks worked out by hand from the rule in uplink_shares.hpp (weighted max-min by
// progressive filling), not read back from the code.
#include "models/cluster/uplink_shares.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "models/cluster/node_placement.hpp"

namespace trainsim::model {
namespace {

TEST_CASE("nodes hang under leaves in order, nodes_per_leaf to a leaf; 10 nodes at 4 a leaf fill 3 leaves") {
  CHECK(leaf_of_node(3, 4) == 0);
  CHECK(leaf_of_node(4, 4) == 1);
  CHECK(leaf_of_node(9, 4) == 2);
  CHECK(leaf_of_node(9, 0) == 9);  // below 1 counts as 1
  CHECK(leaf_count(10, 4) == 3);
  CHECK(leaf_count(8, 4) == 2);
  CHECK(leaf_count(0, 4) == 0);
}

TEST_CASE("a job under one leaf crosses no uplink; a wider one crosses every leaf it occupies") {
  const std::vector<std::int32_t> one_leaf = {4, 5, 7};
  CHECK(leaves_crossed(one_leaf, 4).empty());
  const std::vector<std::int32_t> three_leaves = {9, 2, 3, 4, 5};
  CHECK(leaves_crossed(three_leaves, 4) == std::vector<std::int64_t>{0, 1, 2});
}

TEST_CASE("two jobs of equal traffic on one leaf's uplinks get half each; weights split it in proportion") {
  const std::vector<FabricJob> equal = {{{0, 1}, 5.0}, {{1, 2}, 5.0}};
  const UplinkShares e = uplink_shares(equal, 3);
  CHECK(e.share == std::vector<double>{0.5, 0.5});
  CHECK(e.bottleneck == std::vector<std::int64_t>{1, 1});
  // 3:1 traffic per step: 3/4 and 1/4 of leaf 1's uplinks.
  const std::vector<FabricJob> weighted = {{{0, 1}, 3.0}, {{1, 2}, 1.0}};
  const UplinkShares w = uplink_shares(weighted, 3);
  CHECK(w.share[0] == doctest::Approx(0.75));
  CHECK(w.share[1] == doctest::Approx(0.25));
}

// X crosses leaves 0 and 1 (weight 1), Y leaves 0 and 2 (weight 2), Z leaves 1 and 3 (weight 1). Leaf 0
// fills first, at level 1/3 (weights 1 + 2): X = 1/3, Y = 2/3. Leaf 1 then has 1 - 1/3 left for Z alone:
// Z = 2/3, not the 1/2 an equal split of leaf 1 would give it (max-min hands on what X cannot use).
// W crosses leaves 4 and 5 alone: share 1. V occupies one leaf (no uplinks): share 1.
TEST_CASE("max-min: a job held back elsewhere leaves its part of a link to the others") {
  const std::vector<FabricJob> jobs = {{{0, 1}, 1.0}, {{0, 2}, 2.0}, {{1, 3}, 1.0}, {{4, 5}, 1.0}, {{}, 1.0}};
  const UplinkShares s = uplink_shares(jobs, 6);
  CHECK(s.share[0] == doctest::Approx(1.0 / 3));
  CHECK(s.share[1] == doctest::Approx(2.0 / 3));
  CHECK(s.share[2] == doctest::Approx(2.0 / 3));
  CHECK(s.share[3] == 1.0);
  CHECK(s.share[4] == 1.0);
  CHECK(s.bottleneck == std::vector<std::int64_t>{0, 0, 1, -1, -1});
}

TEST_CASE("shares are priced in twentieths, the nearest one, never 0") {
  CHECK(share_bucket(0.5) == 0.5);
  CHECK(share_bucket(0.33) == doctest::Approx(0.35));  // 6.6 twentieths: 7
  CHECK(share_bucket(0.01) == doctest::Approx(0.05));
  CHECK(share_bucket(0.99) == 1.0);
}

}  // namespace
}  // namespace trainsim::model
