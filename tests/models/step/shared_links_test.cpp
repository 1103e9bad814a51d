// The collapsed step prices each data-parallel collective and pipeline send on the links it really
// crosses with the sibling groups that cross them at once (shared_links.hpp): its sibling groups as the
// placement gives them, and the fabric grid where the collapsed step and `--full-cluster` agree.
#include "models/step/shared_links.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

using Groups = std::vector<std::vector<std::int64_t>>;

StepInput layout(std::int64_t nodes, int tp, int pp, std::int64_t dp) {
  StepInput in = testing::small_gpt_on_a100(nodes, tp, pp, dp, 2 * dp);
  return in;
}

}  // namespace

TEST_CASE("the concurrent groups are pipeline rank 0's, as the placement orders the ranks") {
  SUBCASE("tp 8 inside each node, dp 2 across: one ring per tensor-parallel index") {
    const StepInput in = layout(2, 8, 1, 2);
    Groups expected;
    for (std::int64_t k = 0; k < 8; ++k) expected.push_back({k, 8 + k});
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::gradient) == expected);
  }
  SUBCASE("data parallel only: one group of every GPU") {
    const StepInput in = layout(2, 1, 1, 16);
    Groups expected(1);
    for (std::int64_t r = 0; r < 16; ++r) expected[0].push_back(r);  // ranks 0..15 of both nodes, in order
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::gradient) == expected);
  }
  SUBCASE("pp outermost (tp-cp-ep-dp-pp): rank 0 is the first 16 GPUs, each sends to the GPU 16 on") {
    const StepInput in = layout(4, 8, 2, 2);
    Groups expected;
    for (std::int64_t r = 0; r < 16; ++r) expected.push_back({r, r + 16});
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::pipeline_send) == expected);
    Groups dp;
    for (std::int64_t k = 0; k < 8; ++k) dp.push_back({k, 8 + k});
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::gradient) == dp);
  }
  SUBCASE("tp 2, cp 4 on one node: a cp group per tensor-parallel index, tp × ep for the dispatcher") {
    StepInput in = layout(1, 2, 1, 1);
    in.plan.cp = 4;
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::context) ==
          Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::expert_dispatch) ==
          Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  }
  SUBCASE("HSDP: sharding groups of 2 inside their replicas, replicas across them") {
    StepInput in = layout(1, 1, 1, 8);
    in.plan.shard_group = 2;
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::shard) ==
          Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
    CHECK(concurrent_groups(in.plan, in.cluster, FabricTraffic::replicas) ==
          Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
  }
}

namespace {

struct Fabric {
  std::string name;
  topo::FabricTopology topology = topo::FabricTopology::fat_tree;
  double oversubscription = 1;
  bool rails = false;
  double background = 0;
};

// 16 DGX H100 (128 GPUs), data parallel only, ZeRO 0, buckets reduced after the backward (nothing hides
// them), on 16-port switches so that even rail-optimised leaves hold fewer nodes than the cluster.
StepInput on_fabric(const Fabric& f) {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16, 1024);
  in.cluster = testing::dgx_h100(16);
  in.cluster.network.topology = f.topology;
  in.cluster.network.oversubscription = f.oversubscription;
  in.cluster.network.rail_optimized = f.rails;
  in.cluster.network.switch_radix = 16;
  in.cluster.background_fraction = f.background;
  in.plan.dp = 128;
  in.plan.zero = ZeroStage::none;
  in.plan.overlap_grad_reduce = false;
  in.training.global_batch = 128;
  return in;
}

double step_s(const StepInput& in, StepMode mode) {
  StepOptions o;
  o.mode = mode;
  return simulate_step(in, Fidelity::event, o).iteration_time;
}

}  // namespace

TEST_CASE("the fabric grid: the collapsed step is within 5 % of the full cluster and ranks fabrics alike") {
  using T = topo::FabricTopology;
  const std::vector<Fabric> grid{
      {"fat-tree 1:1", T::fat_tree, 1, false, 0},      {"fat-tree 4:1", T::fat_tree, 4, false, 0},
      {"fat-tree 16:1", T::fat_tree, 16, false, 0},    {"fat-tree 1:1 rails", T::fat_tree, 1, true, 0},
      {"fat-tree 4:1 rails", T::fat_tree, 4, true, 0}, {"fat-tree 16:1 rails", T::fat_tree, 16, true, 0},
      {"torus-2d", T::torus_2d, 1, false, 0},          {"torus-3d", T::torus_3d, 1, false, 0},
      {"dragonfly 1:1", T::dragonfly, 1, false, 0},    {"dragonfly 16:1", T::dragonfly, 16, false, 0},
      {"background 0.5", T::fat_tree, 1, false, 0.5},  {"background 0.9", T::fat_tree, 1, false, 0.9},
  };
  std::vector<double> collapsed, full;
  for (const Fabric& f : grid) {
    CAPTURE(f.name);
    const StepInput in = on_fabric(f);
    collapsed.push_back(step_s(in, StepMode::collapsed));
    full.push_back(step_s(in, StepMode::full_cluster));
    MESSAGE(f.name << ": collapsed " << collapsed.back() << " s, full cluster " << full.back() << " s");
    CHECK(collapsed.back() == doctest::Approx(full.back()).epsilon(0.05));
  }
  // The same ranking: wherever the full cluster tells two fabrics apart by more than 5 %, so does the
  // collapsed step, the same way round. Some pairs must differ that much (16:1 leaves against 1:1, a
  // 0.9 background against none), or this would check nothing.
  int told_apart = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    for (std::size_t j = 0; j < grid.size(); ++j) {
      if (full[i] > 1.05 * full[j]) {
        CAPTURE(grid[i].name);
        CAPTURE(grid[j].name);
        CHECK(collapsed[i] > collapsed[j]);
        ++told_apart;
      }
    }
  }
  CHECK(told_apart > 0);
}
