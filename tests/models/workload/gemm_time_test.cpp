// GEMMs by shape: tile quantisation, wave quantisation and split-K, against the closed form written out
// by hand for a toy GPU.
#include "models/workload/gemm_time.hpp"

#include <doctest/doctest.h>

#include "models/workload/kernel_time.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// 4 SMs of 1 TFLOP/s each; one tile shape (the smaller candidates are made useless), no fixed cost.
topo::GpuSpec toy_gpu() {
  topo::GpuSpec g;
  g.name = "toy";
  g.sm_count = 4;
  g.peak.bf16 = 4e12;
  g.peak.fp8 = 8e12;
  g.hbm_bytes_per_s = 1e12;
  g.tdp_w = 400;
  g.idle_w = 50;
  auto& e = g.efficiency;
  e.matmul_peak_fraction = 1.0;
  e.matmul_tile_m = 128;
  e.matmul_tile_n = 128;
  e.matmul_half_tile_efficiency = 1e-3;
  e.matmul_quarter_tile_efficiency = 1e-3;
  e.matmul_tile_k_overhead = 0;
  e.matmul_wave_quantisation = 1.0;
  e.memory_bandwidth_fraction = 1.0;
  e.kernel_overhead_s = 0;
  return g;
}

// One 128×128×k tile on one SM: 2·128·128·k FLOPs at 1 TFLOP/s.
double tile_seconds(double k) {
  return 2.0 * 128 * 128 * k / 1e12;
}

}  // namespace

TEST_CASE("a GEMM of exactly one wave of whole tiles runs at the in-tile efficiency") {
  const topo::GpuSpec g = toy_gpu();
  // 2×2 tiles = 4 = one wave.
  CHECK(gemm_compute_time(256, 256, 1024, 1, g.peak.bf16, 1.0, g) ==
        doctest::Approx(tile_seconds(1024)).scale(0));
}

TEST_CASE("tile quantisation: a row past a tile boundary costs a whole row of tiles") {
  const topo::GpuSpec g = toy_gpu();
  // 257 rows: ⌈257/128⌉ = 3 tile rows × 2 = 6 tiles, 1.5 waves → 2 waves under strict quantisation.
  CHECK(gemm_compute_time(257, 256, 1024, 1, g.peak.bf16, 1.0, g) ==
        doctest::Approx(2 * tile_seconds(1024)).scale(0));
}

TEST_CASE("wave quantisation is q times the partial last wave") {
  topo::GpuSpec g = toy_gpu();
  g.efficiency.matmul_wave_quantisation = 0.5;
  // 6 tiles on 4 SMs: x = 1.5, waves = 1.5 + 0.5·0.5 = 1.75.
  CHECK(gemm_compute_time(384, 256, 1024, 1, g.peak.bf16, 1.0, g) ==
        doctest::Approx(1.75 * tile_seconds(1024)).scale(0));
}

TEST_CASE("split-K fills idle SMs and pays for the fp32 partial sums") {
  topo::GpuSpec g = toy_gpu();
  g.efficiency.matmul_split_k_min = 256;
  // One tile, 4 SMs: split = min(4, 4096/256) = 4 pieces of k = 1024, one wave; partials 2·4·4·128·128 B.
  const double expected = tile_seconds(1024) + 2.0 * 4.0 * 4 * 128 * 128 / 1e12;
  CHECK(gemm_compute_time(128, 128, 4096, 1, g.peak.bf16, 1.0, g) == doctest::Approx(expected).scale(0));
}

TEST_CASE("a grouped GEMM schedules the tiles of all groups together") {
  const topo::GpuSpec g = toy_gpu();
  // 4 groups of one tile each: one wave, the time of one tile.
  CHECK(gemm_compute_time(128, 128, 512, 4, g.peak.bf16, 1.0, g) ==
        doctest::Approx(tile_seconds(512)).scale(0));
}

TEST_CASE("the per-tile fixed cost counts as extra K steps") {
  topo::GpuSpec g = toy_gpu();
  g.efficiency.matmul_tile_k_overhead = 256;
  CHECK(gemm_compute_time(256, 256, 768, 1, g.peak.bf16, 1.0, g) ==
        doctest::Approx(tile_seconds(1024)).scale(0));
}

TEST_CASE("kernel_time prices a shaped GEMM by its tiles, fp8 at its own fraction, 16-bit GEMMs at bf16") {
  topo::GpuSpec g = toy_gpu();
  g.efficiency.fp8_matmul_peak_fraction = 0.5;
  KernelCost c{OpKind::matmul, 2.0 * 256 * 256 * 1024, 0, 0, 0};
  c.m = 256;
  c.n = 256;
  c.k = 1024;
  CHECK(kernel_time(c, g, Precision::bf16) == doctest::Approx(tile_seconds(1024)).scale(0));
  // fp8: twice the peak at half the efficiency: the same time.
  CHECK(kernel_time(c, g, Precision::fp8) == doctest::Approx(tile_seconds(1024)).scale(0));
  c.keeps_16bit = true;
  CHECK(kernel_time(c, g, Precision::fp8) == doctest::Approx(tile_seconds(1024)).scale(0));
  g.efficiency.fp8_matmul_peak_fraction = 1.0;
  c.keeps_16bit = false;
  CHECK(kernel_time(c, g, Precision::fp8) == doctest::Approx(0.5 * tile_seconds(1024)).scale(0));
}

TEST_CASE("a power limit lowers the compute clock as the cube root of the dynamic power") {
  topo::GpuSpec g = toy_gpu();
  CHECK(compute_clock_factor(g) == 1.0);
  g.power_limit_w = 400;  // at the TDP: no change
  CHECK(compute_clock_factor(g) == 1.0);
  g.power_limit_w = 225;  // (225 − 50)/(400 − 50) = 1/2
  CHECK(compute_clock_factor(g) == doctest::Approx(0.7937005259840998).scale(0));
  g.efficiency.sustained_clock_fraction = 0.9;
  CHECK(compute_clock_factor(g) == doctest::Approx(0.9 * 0.7937005259840998).scale(0));
  KernelCost c{OpKind::matmul, 2.0 * 256 * 256 * 1024, 0, 0, 0};
  c.m = 256;
  c.n = 256;
  c.k = 1024;
  CHECK(kernel_time(c, g, Precision::bf16) ==
        doctest::Approx(tile_seconds(1024) / (0.9 * 0.7937005259840998)).scale(0));
  // Memory-bound kernels follow HBM, not the SM clock.
  const KernelCost copy{OpKind::memory_bound, 0, 1e9, 0, 0};
  CHECK(kernel_time(copy, g, Precision::bf16) == doctest::Approx(1e-3).scale(0));
}
