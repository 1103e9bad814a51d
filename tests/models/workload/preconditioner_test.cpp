// Shampoo's and SOAP's preconditioners by hand: the blocks a tensor is cut into, the state bytes per
// parameter of one matrix shape, and the matmul FLOPs of one step at one refresh frequency.
#include "models/workload/preconditioner.hpp"

#include <doctest/doctest.h>

#include <array>

#include "models/workload/optimizer.hpp"

using namespace trainsim::model;
using trainsim::topo::Precision;

namespace {

OptimizerSpec spec_of(OptimizerKind kind, int block = 0, int frequency = 0) {
  OptimizerSpec s;
  s.kind = kind;
  s.grad_clipping = false;
  s.max_preconditioner_dim = block;
  s.precondition_frequency = frequency;
  return s;
}

double state_bytes(const OptimizerSpec& spec, const TensorShape& t) {
  const std::array<TensorShape, 1> one{{t}};
  return optimizer_cost(spec, Precision::bf16, one).state_bytes;
}

}  // namespace

TEST_CASE("defaults: Distributed Shampoo's blocks of 1024 refreshed every step; SOAP every 10 steps") {
  CHECK(max_preconditioner_dim(spec_of(OptimizerKind::shampoo)) == 1024);
  CHECK(precondition_frequency(spec_of(OptimizerKind::shampoo)) == 1);
  CHECK(max_preconditioner_dim(spec_of(OptimizerKind::soap)) == 1024);
  CHECK(precondition_frequency(spec_of(OptimizerKind::soap)) == 10);
  CHECK(precondition_frequency(spec_of(OptimizerKind::soap, 0, 100)) == 100);
  CHECK(keeps_preconditioners(OptimizerKind::shampoo));
  CHECK_FALSE(keeps_preconditioners(OptimizerKind::muon));
  CHECK(preconditioned_blocks(spec_of(OptimizerKind::adamw), {4096, 4096, 1, TensorRole::matrix}).empty());
}

TEST_CASE("a 4096 x 1500 matrix in blocks of 1024: 4 of 1024² and 4 of 1024 x 476; a vector one side") {
  const auto blocks =
      preconditioned_blocks(spec_of(OptimizerKind::shampoo), {4096, 1500, 1, TensorRole::matrix});
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].rows == 1024);
  CHECK(blocks[0].cols == 1024);
  CHECK(blocks[0].count == 4);
  CHECK(blocks[1].cols == 476);
  CHECK(blocks[1].count == 4);
  CHECK(blocks[1].left == 1024);
  CHECK(blocks[1].right == 476);
  CHECK(blocks[1].factor_elements() == 1'048'576 + 226'576);
  // A 4096 vector: 4 blocks of 1024 x 1, a left factor only.
  const auto v = preconditioned_blocks(spec_of(OptimizerKind::soap), {4096, 1, 2, TensorRole::vector});
  REQUIRE(v.size() == 1);
  CHECK(v[0].count == 8);
  CHECK(v[0].left == 1024);
  CHECK(v[0].right == 0);
}

TEST_CASE("state of a 4096 x 14336 matrix: 24 B/param for Shampoo and SOAP in blocks of 1024") {
  // 4 x 14 = 56 blocks of 1024², each with L and R of 1024² (2,097,152 values): 2 values per parameter.
  // Shampoo: L, R and their inverse roots (4) + filtered gradient + grafting variance (2) = 6 fp32 values;
  // SOAP: L, R and their eigenvectors (4) + Adam's two moments (2) = 6: 24 bytes per parameter.
  const TensorShape mlp{4096, 14336, 1, TensorRole::matrix};
  const double params = 4096.0 * 14336;
  CHECK(state_bytes(spec_of(OptimizerKind::shampoo), mlp) / params == doctest::Approx(24.0).scale(0));
  CHECK(state_bytes(spec_of(OptimizerKind::soap), mlp) / params == doctest::Approx(24.0).scale(0));
  // Blocks of 8192: 4096 x 8192 and 4096 x 6144, factors 4096² + 8192² + 4096² + 6144² = 138,412,032 values
  // (2.357 per parameter): 4 · (2 + 2 · 138,412,032 / 58,720,256) = 26.857 B/param.
  CHECK(state_bytes(spec_of(OptimizerKind::soap, 8192), mlp) / params ==
        doctest::Approx(4 * (2 + 2 * 138'412'032.0 / 58'720'256.0)));
  // Adam for comparison: 8 bytes per parameter of state.
  CHECK(state_bytes(spec_of(OptimizerKind::adamw), mlp) / params == doctest::Approx(8.0).scale(0));
}

TEST_CASE("matmul FLOPs of one step of a 4096² matrix, the refresh amortised over its frequency") {
  const std::array<TensorShape, 1> square{{{4096, 4096, 1, TensorRole::matrix}}};
  // 16 blocks of 1024². A two-sided product of one: 2·1024·1024·(1024 + 1024) = 4,294,967,296.
  // Shampoo, refreshed every 100 steps: 2 products (8,589,934,592) + 11·2·1024³ / 100 (236,223,201.28) =
  // 8,826,157,793.28 per block; 141,218,524,692.48 for the matrix.
  CHECK(optimizer_cost(spec_of(OptimizerKind::shampoo, 0, 100), Precision::bf16, square).matmul_flops ==
        doctest::Approx(141'218'524'692.48).epsilon(1e-12));
  // SOAP, every 10 steps: 4 products (17,179,869,184) + (14/3)·2·1024³ / 10 (1,002,159,035.73) =
  // 18,182,028,219.73 per block; 290,912,451,515.73 for the matrix.
  const double soap_block = 4 * 4'294'967'296.0 + 14.0 / 3 * 2 * 1'073'741'824.0 / 10;
  CHECK(optimizer_cost(spec_of(OptimizerKind::soap), Precision::bf16, square).matmul_flops ==
        doctest::Approx(16 * soap_block).epsilon(1e-12));
  // The refresh alone, once: an eigendecomposition and a root (11·d³) per factor, or a power step and a
  // QR (14/3·d³).
  const PreconditionedBlock b{1024, 1024, 1, 1024, 1024};
  CHECK(preconditioner_refresh_flops(spec_of(OptimizerKind::shampoo), b) == 23'622'320'128.0);
  CHECK(preconditioner_refresh_flops(spec_of(OptimizerKind::soap), b) ==
        doctest::Approx(14.0 / 3 * 2 * 1'073'741'824.0));
}
