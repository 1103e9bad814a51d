#include "models/step/asymmetry.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <vector>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("pipeline ranks slowed alike share their units' copies, and each pass is the one it had alone") {
  // Every rank slowed by 1.25 at once against each rank slowed alone (its own copies, as a straggler's
  // rank gets them): the passes and optimizer updates must be equal to the bit, and the units the ranks
  // run copied once in all rather than once per rank.
  for (const Schedule schedule : {Schedule::one_f_one_b, Schedule::interleaved}) {
    CAPTURE(static_cast<int>(schedule));
    StepInput in = testing::small_gpt_on_a100(2, 2, 4, 2, 32);
    in.plan.schedule = schedule;
    in.plan.virtual_stages = schedule == Schedule::interleaved ? 2 : 1;
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    REQUIRE(plan.feasible);
    const StepCosts symmetric = step_costs(in, plan);
    const double f = 1.25;

    StepCosts together = symmetric;
    slow_stages(together, plan, std::vector<double>(static_cast<std::size_t>(plan.pp), f));
    std::set<int> run;
    for (const auto& runs : symmetric.chunk_units) {
      for (const UnitRun& r : runs) run.insert(r.unit);
    }
    CHECK(together.units.size() == symmetric.units.size() + run.size());

    for (int s = 0; s < plan.pp; ++s) {
      CAPTURE(s);
      std::vector<double> one(static_cast<std::size_t>(plan.pp), 1.0);
      one[static_cast<std::size_t>(s)] = f;
      StepCosts alone = symmetric;
      slow_stages(alone, plan, one);
      for (int c = 0; c < plan.virtual_stages; ++c) {
        const std::size_t vs = plan.virtual_stage_index(c, s);
        const PassCost& a = alone.passes[vs];
        const PassCost& t = together.passes[vs];
        CHECK(t.forward_compute == a.forward_compute);
        CHECK(t.backward_compute == a.backward_compute);
        CHECK(t.weight_compute == a.weight_compute);
        CHECK(t.forward_comm == a.forward_comm);
        CHECK(t.backward_comm == a.backward_comm);
        // Slowed at all: the kernels' time grew.
        CHECK(t.forward_compute > symmetric.passes[vs].forward_compute);
      }
      const auto k = static_cast<std::size_t>(s);
      CHECK(together.stages[k].optimizer_s == alone.stages[k].optimizer_s);
    }
  }
}
