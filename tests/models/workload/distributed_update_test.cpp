// Whole-matrix updates under ZeRO, by hand: distributed Muon's owners' Newton–Schulz FLOPs and gathered and
// scattered bytes, Distributed Shampoo's blocks, gathered gradients and all-gathered directions, and the work
// and collectives one step hands to step_costs.
#include "models/workload/distributed_update.hpp"

#include <doctest/doctest.h>

#include <array>

#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

OptimizerSpec muon() {
  OptimizerSpec s;
  s.kind = OptimizerKind::muon;
  s.state_precision = Precision::fp32;
  s.muon_ns_iterations = 5;
  return s;
}

// Newton–Schulz on a 1024 x 4096 matrix, k = 1024, l = 4096: per iteration 4·k²·l + 2·k³ =
// 17,179,869,184 + 2,147,483,648 = 19,327,352,832 FLOPs; five iterations 96,636,764,160.
constexpr double kSmallFlops = 96'636'764'160.0;
// 4096 x 4096: 6·4096³ = 412,316,860,416 per iteration, 2,061,584,302,080 for five.
constexpr double kSquareFlops = 2'061'584'302'080.0;

}  // namespace

TEST_CASE("one 1024 x 4096 matrix over 4 ranks: its owner gathers 3/4 of it in fp32, scatters 3/4 in bf16") {
  const std::array<TensorShape, 1> one{{{1024, 4096, 1, TensorRole::matrix}}};
  const DistributedMatrixUpdate d = distributed_matrix_update(muon(), Precision::bf16, one, 4);
  CHECK(d.matrices == 1);
  CHECK(d.elements == 4'194'304);
  CHECK(d.total_flops == kSmallFlops);
  CHECK(d.owner_flops_max == kSmallFlops);
  CHECK(d.owner_elements_max == 4'194'304);
  CHECK(d.gather_bytes_per_rank == 4'194'304.0 * 3 / 4 * 4);   // 12,582,912 B
  CHECK(d.scatter_bytes_per_rank == 4'194'304.0 * 3 / 4 * 2);  // 6,291,456 B
}

TEST_CASE("owners share the matrices: 8 alike on 4 ranks, two each; largest first to the least loaded") {
  const std::array<TensorShape, 1> eight{{{1024, 4096, 8, TensorRole::matrix}}};
  const DistributedMatrixUpdate d = distributed_matrix_update(muon(), Precision::bf16, eight, 4);
  CHECK(d.total_flops == 8 * kSmallFlops);
  CHECK(d.owner_flops_max == 2 * kSmallFlops);
  CHECK(d.owner_elements_max == 2 * 4'194'304.0);
  // A 4096² matrix and two 1024 x 4096 on 2 ranks: the square alone on one, the pair on the other.
  const std::array<TensorShape, 2> mixed{
      {{1024, 4096, 2, TensorRole::matrix}, {4096, 4096, 1, TensorRole::matrix}}};
  const DistributedMatrixUpdate m = distributed_matrix_update(muon(), Precision::bf16, mixed, 2);
  CHECK(m.owner_flops_max == kSquareFlops);
  CHECK(m.owner_elements_max == 16'777'216);
  // 2.5 matrices (a per-GPU average of experts) on 4 ranks: the half goes to a third owner.
  const std::array<TensorShape, 1> part{{{1024, 4096, 2.5, TensorRole::matrix}}};
  CHECK(distributed_matrix_update(muon(), Precision::bf16, part, 4).owner_flops_max == kSmallFlops);
  CHECK(distributed_matrix_update(muon(), Precision::bf16, part, 4).total_flops == 2.5 * kSmallFlops);
}

TEST_CASE("Llama-3 8B's 224 matrices over 256 owners: the busiest owner orthogonalises one MLP matrix") {
  // Per layer: q and o 4096², k and v 1024 x 4096, gate, up and down 4096 x 14336; 32 layers.
  // Newton–Schulz, 5 iterations: 4096 x 14336 (k = 4096, l = 14336): 5·(4·4096²·14336 + 2·4096³) =
  // 5,497,558,138,880; a layer 2·2,061,584,302,080 + 2·96,636,764,160 + 3·5,497,558,138,880 =
  // 20,809,116,549,120; the model 665,891,729,571,840.
  const std::array<TensorShape, 3> layers{{{4096, 4096, 64, TensorRole::matrix},
                                           {1024, 4096, 64, TensorRole::matrix},
                                           {4096, 14336, 96, TensorRole::matrix}}};
  const DistributedMatrixUpdate d = distributed_matrix_update(muon(), Precision::bf16, layers, 256);
  CHECK(d.matrices == 224);
  CHECK(d.total_flops == 665'891'729'571'840.0);
  CHECK(d.owner_flops_max == 5'497'558'138'880.0);
  // Its owner gathers 4096·14336 = 58,720,256 elements less its own 1/256, in fp32.
  CHECK(d.gather_bytes_per_rank == doctest::Approx(58'720'256.0 * 255 / 256 * 4));
}

TEST_CASE("only Muon's hidden matrices are orthogonalised; other optimizers have no whole-matrix work") {
  const std::array<TensorShape, 3> t{{{4096, 4096, 1, TensorRole::matrix},
                                      {4096, 1, 1, TensorRole::vector},
                                      {128256, 4096, 1, TensorRole::embedding}}};
  CHECK(distributed_matrix_update(muon(), Precision::bf16, t, 4).matrices == 1);
  OptimizerSpec adamw;
  adamw.kind = OptimizerKind::adamw;
  CHECK(distributed_matrix_update(adamw, Precision::bf16, t, 4).total_flops == 0);
  const MatrixUpdateWork none = matrix_update_work(adamw, Precision::bf16, t, true, 8);
  CHECK(none.matmul_flops == 0);
  CHECK(none.collectives.empty());
  CHECK_THROWS_AS((void)distributed_matrix_update(muon(), Precision::bf16, t, 0), InputError);
}

TEST_CASE("Muon's step: the busiest owner's Newton–Schulz, then a gather and a scatter of its bytes") {
  const std::array<TensorShape, 1> eight{{{1024, 4096, 16, TensorRole::matrix}}};
  // Whole states on each rank: Newton–Schulz on all 16 matrices, no collective.
  const MatrixUpdateWork whole = matrix_update_work(muon(), Precision::bf16, eight, false, 8);
  CHECK(whole.matmul_flops == 16 * kSmallFlops);
  CHECK(whole.precision == Precision::bf16);
  CHECK(whole.collectives.empty());
  // Sharded over 8: each owner orthogonalises 2 and moves 2 matrices' bytes (the whole of each buffer
  // the collective is given: 2 · 4,194,304 elements, in fp32 gathered and bf16 scattered).
  const MatrixUpdateWork sharded = matrix_update_work(muon(), Precision::bf16, eight, true, 8);
  CHECK(sharded.matmul_flops == 2 * kSmallFlops);
  REQUIRE(sharded.collectives.size() == 2);
  CHECK(sharded.collectives[0].op == topo::CollectiveOp::reduce_scatter);
  CHECK(sharded.collectives[0].bytes == doctest::Approx(2 * 4'194'304.0 * 4));
  CHECK(sharded.collectives[1].op == topo::CollectiveOp::all_gather);
  CHECK(sharded.collectives[1].bytes == doctest::Approx(2 * 4'194'304.0 * 2));
}

TEST_CASE(
    "Shampoo over 8 ranks: 8 matrices of 4096² in 128 blocks, each owner's gradients gathered and "
    "every direction all-gathered in fp32") {
  OptimizerSpec shampoo;
  shampoo.kind = OptimizerKind::shampoo;  // blocks of 1024, refreshed every step
  const std::array<TensorShape, 1> eight{{{4096, 4096, 8, TensorRole::matrix}}};
  const DistributedMatrixUpdate d = distributed_matrix_update(shampoo, Precision::bf16, eight, 8);
  // 4 x 4 blocks of 1024² per matrix. A block's step: 2 products of 2·1024²·(1024 + 1024) =
  // 4,294,967,296 each; its refresh 11·(1024³ + 1024³) = 23,622,320,128: 32,212,254,720 a step.
  CHECK(d.matrices == 128);
  CHECK(d.total_flops == 128 * 32'212'254'720.0);
  // Alike blocks: 16 to each owner, 16,777,216 elements.
  CHECK(d.owner_flops_max == 16 * 32'212'254'720.0);
  CHECK(d.owner_elements_max == 16'777'216);
  // Its blocks' bf16 gradients less its own eighth: 16,777,216 · 7/8 · 2 = 29,360,128 B received; the
  // directions' all-gather 8 owners · 16,777,216 · 4 B = 536,870,912 B (its output).
  CHECK(d.gather_bytes_per_rank == 29'360'128);
  CHECK(d.scatter_bytes_per_rank == 0);
  CHECK(d.direction_gather_bytes == 536'870'912);
  const MatrixUpdateWork w = matrix_update_work(shampoo, Precision::bf16, eight, true, 8);
  CHECK(w.precision == Precision::fp32);
  REQUIRE(w.collectives.size() == 2);
  CHECK(w.collectives[0].op == topo::CollectiveOp::reduce_scatter);
  CHECK(w.collectives[0].bytes == doctest::Approx(33'554'432));  // 29,360,128 · 8/7: the input size
  CHECK(w.collectives[1].op == topo::CollectiveOp::all_gather);
  CHECK(w.collectives[1].bytes == 536'870'912);
}
