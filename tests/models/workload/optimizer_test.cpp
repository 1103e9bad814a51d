#include "models/workload/optimizer.hpp"

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/error.hpp"

using namespace trainsim::model;
using trainsim::topo::Precision;

namespace {
OptimizerSpec spec_of(OptimizerKind kind, Precision state = Precision::fp32) {
  OptimizerSpec s;
  s.kind = kind;
  s.state_precision = state;
  s.grad_clipping = false;
  return s;
}
}  // namespace

TEST_CASE("mixed-precision Adam keeps 12 bytes per parameter of optimizer state with its master weights") {
  // ZeRO paper §3.1: fp32 master (4) + momentum (4) + variance (4) = K = 12.
  const auto c = optimizer_cost_per_param(spec_of(OptimizerKind::adam), Precision::bf16);
  CHECK(c.state_bytes == doctest::Approx(8.0).scale(0));
  CHECK(c.master_bytes == doctest::Approx(4.0).scale(0));
}

TEST_CASE("training in fp32 keeps no separate master copy") {
  const auto c = optimizer_cost_per_param(spec_of(OptimizerKind::adamw), Precision::fp32);
  CHECK(c.master_bytes == 0.0);
  CHECK(c.state_bytes == doctest::Approx(8.0).scale(0));
}

TEST_CASE("Adafactor keeps 8,192 second-moment values for a 4096 x 4096 matrix") {
  // Shazeer & Stern 2018: row sums (n) + column sums (m) instead of n·m values.
  const std::array<TensorShape, 1> w{{{4096, 4096, 1, TensorRole::matrix}}};
  double values = 0;
  for (const auto& s : optimizer_state_tensors(spec_of(OptimizerKind::adafactor), w)) values += s.elements;
  CHECK(values == 8192.0);
}

TEST_CASE("Adafactor keeps a full second moment for vectors and an optional full first moment") {
  const std::array<TensorShape, 1> bias{{{4096, 1, 1, TensorRole::vector}}};
  double values = 0;
  for (const auto& s : optimizer_state_tensors(spec_of(OptimizerKind::adafactor), bias)) values += s.elements;
  CHECK(values == 4096.0);
  auto with_momentum = spec_of(OptimizerKind::adafactor);
  with_momentum.adafactor_momentum = true;
  const std::array<TensorShape, 1> w{{{4096, 4096, 1, TensorRole::matrix}}};
  values = 0;
  for (const auto& s : optimizer_state_tensors(with_momentum, w)) values += s.elements;
  CHECK(values == 8192.0 + 4096.0 * 4096.0);
}

TEST_CASE("8-bit Adam keeps 2 bytes per parameter plus one fp32 scale per block per state") {
  // Dettmers et al. 2022: m and v quantised to 1 byte each, block size 2048: 2 + 2·4/2048 bytes/param.
  const auto c = optimizer_cost_per_param(spec_of(OptimizerKind::adam8bit), Precision::bf16);
  CHECK(c.state_bytes == doctest::Approx(2.0 + 8.0 / 2048.0).scale(0));
  // A 4096 x 4096 matrix: 2 states x 8192 blocks of 2048 -> 16,384 scales.
  const std::array<TensorShape, 1> w{{{4096, 4096, 1, TensorRole::matrix}}};
  const auto cost = optimizer_cost(spec_of(OptimizerKind::adam8bit), Precision::bf16, w);
  CHECK(cost.state_bytes == doctest::Approx(2.0 * 4096 * 4096 + 4.0 * 16384).scale(0));
}

TEST_CASE("8-bit Adam keeps tensors under 4,096 elements in fp32 as bitsandbytes does") {
  const std::array<TensorShape, 1> norm{{{4000, 1, 1, TensorRole::vector}}};
  const auto cost = optimizer_cost(spec_of(OptimizerKind::adam8bit), Precision::bf16, norm);
  CHECK(cost.state_bytes == doctest::Approx(8.0 * 4000).scale(0));
}

TEST_CASE("8-bit Adam over a large matrix and a small norm keeps five states, each kind in its own format") {
  // The matrix's moments in int8 with 16,384 fp32 scales (above), the norm's moments in fp32: listed in the
  // order first met, elements added per name and format.
  const std::array<TensorShape, 3> tensors{{{4096, 4096, 1, TensorRole::matrix},
                                            {4000, 1, 1, TensorRole::vector},
                                            {4096, 4096, 1, TensorRole::matrix}}};
  const auto states = optimizer_state_tensors(spec_of(OptimizerKind::adam8bit), tensors);
  REQUIRE(states.size() == 5);
  CHECK(states[0].name == "momentum");
  CHECK(states[0].precision == Precision::int8);
  CHECK(states[0].elements == 2.0 * 4096 * 4096);
  CHECK(states[1].name == "variance");
  CHECK(states[1].precision == Precision::int8);
  CHECK(states[2].name == "scales");
  CHECK(states[2].elements == 2.0 * 16384);
  CHECK(states[3].name == "momentum");
  CHECK(states[3].precision == Precision::fp32);
  CHECK(states[3].elements == 4000.0);
  CHECK(states[4].name == "variance");
  CHECK(states[4].precision == Precision::fp32);
  const auto cost = optimizer_cost(spec_of(OptimizerKind::adam8bit), Precision::bf16, tensors);
  CHECK(cost.state_bytes == doctest::Approx(2.0 * 2 * 4096 * 4096 + 4.0 * 2 * 16384 + 8.0 * 4000).scale(0));
}

TEST_CASE("an update moves fewer bytes with SGD than Adam, and Adam fewer with bf16 than fp32 states") {
  // bf16 weights and grads, fp32 master: grad read 2 + master read/write 8 + bf16 weight write 2 = 12;
  // Adam adds 2 states read + written: 2·2·2 = 8 in bf16, 2·2·4 = 16 in fp32.
  const auto sgd = optimizer_cost_per_param(spec_of(OptimizerKind::sgd), Precision::bf16);
  const auto adam16 =
      optimizer_cost_per_param(spec_of(OptimizerKind::adam, Precision::bf16), Precision::bf16);
  const auto adam32 = optimizer_cost_per_param(spec_of(OptimizerKind::adam), Precision::bf16);
  CHECK(sgd.bytes_moved == doctest::Approx(12.0).scale(0));
  CHECK(adam16.bytes_moved == doctest::Approx(20.0).scale(0));
  CHECK(adam32.bytes_moved == doctest::Approx(28.0).scale(0));
  CHECK(sgd.flops_per_param() < adam32.flops_per_param());
}

TEST_CASE("global-norm clipping adds one gradient read for the norm and a read-write to scale") {
  auto clipped = spec_of(OptimizerKind::sgd);
  clipped.grad_clipping = true;
  const auto c = optimizer_cost_per_param(clipped, Precision::bf16);
  CHECK(c.bytes_moved == doctest::Approx(12.0 + 3 * 2.0).scale(0));
}

TEST_CASE("Newton-Schulz costs 2(2nm² + m³) FLOPs per iteration, T·m/B of training FLOPs for square layers") {
  // Jordan 2024: for an m x m layer trained on B tokens (6·m²·B FLOPs), T iterations add T·m/B.
  const double m = 4096;
  CHECK(newton_schulz_flops(4096, 4096, 5) == doctest::Approx(5 * 2 * (2 * m * m * m + m * m * m)).scale(0));
  const double tokens = 524288;
  CHECK(newton_schulz_flops(4096, 4096, 5) / (6 * m * m * tokens) ==
        doctest::Approx(5 * m / tokens).scale(0));
  // Rectangular: min dimension squared times the larger one.
  CHECK(newton_schulz_flops(1024, 4096, 1) ==
        doctest::Approx(4.0 * 1024 * 1024 * 4096 + 2.0 * 1024 * 1024 * 1024).scale(0));
}

TEST_CASE("Muon orthogonalises hidden matrices and gives embeddings and vectors AdamW state") {
  const std::array<TensorShape, 3> t{{{4096, 4096, 2, TensorRole::matrix},
                                      {50000, 4096, 1, TensorRole::embedding},
                                      {4096, 1, 4, TensorRole::vector}}};
  const auto c = optimizer_cost(spec_of(OptimizerKind::muon), Precision::bf16, t);
  const double matrix = 2.0 * 4096 * 4096, other = 50000.0 * 4096 + 4 * 4096;
  CHECK(c.state_bytes == doctest::Approx(4 * matrix + 8 * other).scale(0));
  CHECK(c.matmul_flops == doctest::Approx(2 * newton_schulz_flops(4096, 4096, 5)).scale(0));
  CHECK(c.reduction_values == doctest::Approx(2.0).scale(0));
}

TEST_CASE("LAMB all-reduces two norms per tensor and clipping one global norm") {
  auto s = spec_of(OptimizerKind::lamb);
  s.grad_clipping = true;
  const std::array<TensorShape, 2> t{{{1024, 1024, 3, TensorRole::matrix}, {1024, 1, 2, TensorRole::vector}}};
  CHECK(optimizer_cost(s, Precision::bf16, t).reduction_values == doctest::Approx(2 * 5 + 1).scale(0));
  CHECK(optimizer_info(OptimizerKind::lamb).per_tensor_norms);
}

TEST_CASE("every optimizer's canonical name parses back to it, and aliases are accepted") {
  for (const auto& info : all_optimizers()) CHECK(parse_optimizer(info.name) == info.kind);
  CHECK(parse_optimizer("SGD_Momentum") == OptimizerKind::sgd_momentum);
  CHECK(parse_optimizer("adam8bit") == OptimizerKind::adam8bit);
  CHECK(optimizer_name(OptimizerKind::adam8bit) == "adam-8bit");
  CHECK(all_optimizers().size() == 14);
}

TEST_CASE("an unknown optimizer name is bad input that lists the valid names") {
  CHECK_THROWS_WITH_AS(static_cast<void>(parse_optimizer("adamx")), doctest::Contains("adafactor"),
                       trainsim::InputError);
}

TEST_CASE("state bytes per parameter order SGD < Adafactor < Lion < 8-bit Adam < Adam") {
  auto per = [](OptimizerKind k) {
    return optimizer_cost_per_param(spec_of(k), Precision::bf16).state_bytes;
  };
  CHECK(per(OptimizerKind::sgd) == 0.0);
  CHECK(per(OptimizerKind::adafactor) < 1e-4);
  CHECK(per(OptimizerKind::lion) == doctest::Approx(4.0).scale(0));
  CHECK(per(OptimizerKind::adam8bit) < per(OptimizerKind::adam));
}

TEST_CASE("an update asked for after another that differs in one input is costed for its own inputs") {
  // optimizer_cost keeps its last answers on the calling thread: each pair below differs in one thing the
  // cost depends on, and the second must get its own cost, that of a thread that kept nothing.
  const std::vector<TensorShape> matrices{{4096, 4096, 2, TensorRole::matrix},
                                          {4096, 1, 2, TensorRole::vector}};
  std::vector<TensorShape> more = matrices;
  more[0].count = 3;
  std::vector<TensorShape> other_role = matrices;
  other_role[0].role = TensorRole::embedding;
  OptimizerSpec clipped = spec_of(OptimizerKind::adamw);
  clipped.grad_clipping = true;
  struct Ask {
    OptimizerSpec spec;
    Precision compute;
    std::vector<TensorShape> tensors;
  };
  const Ask adamw{spec_of(OptimizerKind::adamw), Precision::bf16, matrices};
  const Ask muon{spec_of(OptimizerKind::muon), Precision::bf16, matrices};
  const std::vector<std::pair<Ask, Ask>> pairs = {
      {adamw, Ask{spec_of(OptimizerKind::adafactor), Precision::bf16, matrices}},
      {adamw, Ask{clipped, Precision::bf16, matrices}},
      {adamw, Ask{spec_of(OptimizerKind::adamw), Precision::fp16, matrices}},
      {adamw, Ask{spec_of(OptimizerKind::adamw), Precision::bf16, more}},
      // Only the role differs: Muon orthogonalises matrices, not embeddings (no Newton–Schulz matmuls).
      {muon, Ask{spec_of(OptimizerKind::muon), Precision::bf16, other_role}}};
  for (const auto& [first, second] : pairs) {
    OptimizerCost alone;
    std::thread([&] { alone = optimizer_cost(second.spec, second.compute, second.tensors); }).join();
    const OptimizerCost before = optimizer_cost(first.spec, first.compute, first.tensors);
    // The pair's costs differ, so a cache that took the first for the second would fail below.
    REQUIRE((before.bytes_moved != alone.bytes_moved || before.elementwise_flops != alone.elementwise_flops ||
             before.matmul_flops != alone.matmul_flops || before.state_bytes != alone.state_bytes ||
             before.reduction_values != alone.reduction_values || before.params != alone.params));
    const OptimizerCost got = optimizer_cost(second.spec, second.compute, second.tensors);
    CHECK(got.bytes_moved == alone.bytes_moved);
    CHECK(got.elementwise_flops == alone.elementwise_flops);
    CHECK(got.matmul_flops == alone.matmul_flops);
    CHECK(got.state_bytes == alone.state_bytes);
    CHECK(got.reduction_values == alone.reduction_values);
    CHECK(got.params == alone.params);
  }
}
