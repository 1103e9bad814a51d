// Distributed Muon under ZeRO: the owners' Newton–Schulz FLOPs and the gathered and scattered bytes, by
// hand for one matrix shape, and the step's time as the busiest owner's work plus the two collectives.
#include "models/workload/distributed_update.hpp"

#include <doctest/doctest.h>

#include <array>

#include "models/workload/kernel_time.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

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
  const DistributedMatrixUpdate d = distributed_muon_update(muon(), Precision::bf16, one, 4);
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
  const DistributedMatrixUpdate d = distributed_muon_update(muon(), Precision::bf16, eight, 4);
  CHECK(d.total_flops == 8 * kSmallFlops);
  CHECK(d.owner_flops_max == 2 * kSmallFlops);
  CHECK(d.owner_elements_max == 2 * 4'194'304.0);
  // A 4096² matrix and two 1024 x 4096 on 2 ranks: the square alone on one, the pair on the other.
  const std::array<TensorShape, 2> mixed{
      {{1024, 4096, 2, TensorRole::matrix}, {4096, 4096, 1, TensorRole::matrix}}};
  const DistributedMatrixUpdate m = distributed_muon_update(muon(), Precision::bf16, mixed, 2);
  CHECK(m.owner_flops_max == kSquareFlops);
  CHECK(m.owner_elements_max == 16'777'216);
  // 2.5 matrices (a per-GPU average of experts) on 4 ranks: the half goes to a third owner.
  const std::array<TensorShape, 1> part{{{1024, 4096, 2.5, TensorRole::matrix}}};
  CHECK(distributed_muon_update(muon(), Precision::bf16, part, 4).owner_flops_max == kSmallFlops);
  CHECK(distributed_muon_update(muon(), Precision::bf16, part, 4).total_flops == 2.5 * kSmallFlops);
}

TEST_CASE("Llama-3 8B's 224 matrices over 256 owners: the busiest owner orthogonalises one MLP matrix") {
  // Per layer: q and o 4096², k and v 1024 x 4096, gate, up and down 4096 x 14336; 32 layers.
  // Newton–Schulz, 5 iterations: 4096 x 14336 (k = 4096, l = 14336): 5·(4·4096²·14336 + 2·4096³) =
  // 5,497,558,138,880; a layer 2·2,061,584,302,080 + 2·96,636,764,160 + 3·5,497,558,138,880 =
  // 20,809,116,549,120; the model 665,891,729,571,840.
  const std::array<TensorShape, 3> layers{{{4096, 4096, 64, TensorRole::matrix},
                                           {1024, 4096, 64, TensorRole::matrix},
                                           {4096, 14336, 96, TensorRole::matrix}}};
  const DistributedMatrixUpdate d = distributed_muon_update(muon(), Precision::bf16, layers, 256);
  CHECK(d.matrices == 224);
  CHECK(d.total_flops == 665'891'729'571'840.0);
  CHECK(d.owner_flops_max == 5'497'558'138'880.0);
  // Its owner gathers 4096·14336 = 58,720,256 elements less its own 1/256, in fp32.
  CHECK(d.gather_bytes_per_rank == doctest::Approx(58'720'256.0 * 255 / 256 * 4));
}

TEST_CASE("only Muon's hidden matrices are orthogonalised; other optimizers have no whole-matrix work") {
  const std::array<TensorShape, 3> t{{{50257, 1024, 1, TensorRole::embedding},
                                      {1024, 1, 4, TensorRole::vector},
                                      {1024, 4096, 1, TensorRole::matrix}}};
  CHECK(distributed_muon_update(muon(), Precision::bf16, t, 4).matrices == 1);
  OptimizerSpec adamw;
  adamw.kind = OptimizerKind::adamw;
  CHECK(distributed_muon_update(adamw, Precision::bf16, t, 4).total_flops == 0);
  const topo::ClusterSpec c = testing::round_number_cluster(1);
  CHECK(matrix_update_time(adamw, Precision::bf16, t, true, {.size = 8, .ranks_per_node = 8}, c) == 0);
  CHECK_THROWS_AS((void)distributed_muon_update(muon(), Precision::bf16, t, 0), InputError);
}

TEST_CASE("the step's time: the busiest owner's Newton–Schulz plus a gather and a scatter of its bytes") {
  topo::ClusterSpec c = testing::round_number_cluster(1);
  c.node.gpu.peak.bf16 = 1e15;  // 1 PFLOP/s, 2 TB/s, half of each achievable
  c.node.gpu.hbm_bytes_per_s = 2e12;
  c.node.gpu.efficiency.matmul_peak_fraction = 0.5;
  c.node.gpu.efficiency.memory_bandwidth_fraction = 0.5;
  const topo::CommGroup shard{.size = 8, .ranks_per_node = 8, .nodes = 1};
  const std::array<TensorShape, 1> eight{{{1024, 4096, 16, TensorRole::matrix}}};
  auto ns = [&](double flops) {
    return kernel_time(KernelCost{OpKind::matmul, flops, 0, 0, 0}, c.node.gpu, Precision::bf16);
  };
  // Whole states on each rank: Newton–Schulz on all 16 matrices, no collective.
  CHECK(matrix_update_time(muon(), Precision::bf16, eight, false, shard, c) ==
        doctest::Approx(ns(16 * kSmallFlops)));
  // Sharded over 8: each owner orthogonalises 2 and moves 2 matrices' bytes (the whole of each buffer
  // estimate_collective is given: 2 · 4,194,304 elements, in fp32 gathered and bf16 scattered).
  const double gather =
      topo::estimate_collective(topo::CollectiveOp::reduce_scatter, 2 * 4'194'304.0 * 4, shard, c).time_s;
  const double scatter =
      topo::estimate_collective(topo::CollectiveOp::all_gather, 2 * 4'194'304.0 * 2, shard, c).time_s;
  const double sharded = matrix_update_time(muon(), Precision::bf16, eight, true, shard, c);
  CHECK(sharded == doctest::Approx(ns(2 * kSmallFlops) + gather + scatter));
  CHECK(sharded < matrix_update_time(muon(), Precision::bf16, eight, false, shard, c));
}
