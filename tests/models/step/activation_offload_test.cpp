// Fine-grained activation offload priced over the host link (models/step/activation_offload.hpp): the
// copy is bytes / link rate, hidden under the layer's pass and exposed only where it is longer.
#include "models/step/activation_offload.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

TEST_CASE("a copy over PCIe Gen5 x16 hides under a longer pass and shows what it exceeds a shorter one by") {
  // 1.28 GB over 64 GB/s per direction (DGX H100's PCIe Gen5 x16, topologies/presets/nodes/dgx-h100.yaml)
  // = 20 ms: beside a 15 ms forward 5 ms are exposed, beside a 30 ms backward none.
  const OffloadCost c = offload_cost(1.28e9, 64e9, 15e-3, 30e-3);
  CHECK(c.copy_s == doctest::Approx(20e-3));
  CHECK(c.forward_exposed_s == doctest::Approx(5e-3));
  CHECK(c.backward_exposed_s == 0);
  // GB200's NVLink-C2C at 225 GB/s per GPU per direction (gb200-nvl72.yaml): 5.69 ms, hidden under both.
  const OffloadCost c2c = offload_cost(1.28e9, 225e9, 15e-3, 30e-3);
  CHECK(c2c.copy_s == doctest::Approx(1.28e9 / 225e9));
  CHECK(c2c.forward_exposed_s == 0);
  CHECK(offload_cost(0, 0, 1, 1).copy_s == 0);  // nothing offloaded needs no link
  CHECK_THROWS_AS((void)offload_cost(1e6, 0, 1, 1), trainsim::InputError);
}

TEST_CASE("a step's layer waits for the copies its passes cannot hide") {
  // GPT-3 Medium's width on DGX A100 (tp 1, pp 1, dp 8): offloading attn_norm and mlp_norm moves the
  // two norms' inputs, 2 · p·T·h = 2 · 2 · 1,024 · 1,024 = 4,194,304 B per layer and micro-batch. Over a
  // host link slowed to 1 GB/s the copy takes 4.194 ms, far beyond the layer's passes: each pass grows by
  // exactly what the copy exceeds it by.
  trainsim::model::StepInput in = trainsim::testing::small_gpt_on_a100(1, 1, 1, 8, 64);
  in.cluster.node.pcie_bytes_per_s = 1e9;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts plain = step_costs(in, plan);
  in.plan.offload_modules = static_cast<std::uint8_t>(OffloadModule::attn_norm) |
                            static_cast<std::uint8_t>(OffloadModule::mlp_norm);
  const StepCosts offloaded = step_costs(in, plan);
  const double copy = 4194304.0 / 1e9;
  const PassCost& before = plain.units[0].total;
  const PassCost& after = offloaded.units[0].total;
  REQUIRE(before.forward() < copy);
  REQUIRE(before.backward() < copy);
  CHECK(after.forward() == doctest::Approx(copy));
  CHECK(after.backward() == doctest::Approx(copy));
  // At the node's own PCIe Gen4 x16 (32 GB/s) attn_norm's input alone, 2,097,152 B, takes 0.066 ms:
  // hidden under both passes, the layer is unchanged.
  in.cluster.node.pcie_bytes_per_s = 32e9;
  in.plan.offload_modules = static_cast<std::uint8_t>(OffloadModule::attn_norm);
  REQUIRE(before.forward() > 2097152.0 / 32e9);
  const StepCosts hidden = step_costs(in, plan);
  CHECK(hidden.units[0].total.forward() == doctest::Approx(before.forward()));
  CHECK(hidden.units[0].total.backward() == doctest::Approx(before.backward()));
}
