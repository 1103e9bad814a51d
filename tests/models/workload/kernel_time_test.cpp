// The roofline kernel-time model, by hand numbers on a made-up GPU with round parameters.
#include "models/workload/kernel_time.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim::model;
using trainsim::topo::GpuSpec;

namespace {

// 1 PFLOP/s bf16, 2 TB/s HBM; half of each roof is achievable at large sizes; 1 µs per kernel.
GpuSpec round_gpu() {
  GpuSpec g;
  g.name = "round";
  g.peak.bf16 = 1e15;
  g.hbm_bytes_per_s = 2e12;
  g.efficiency.matmul_peak_fraction = 0.5;
  g.efficiency.matmul_half_flops = 1e9;
  g.efficiency.memory_bandwidth_fraction = 0.5;
  g.efficiency.kernel_overhead_s = 1e-6;
  g.efficiency.flash_attention_peak_fraction = 0.4;
  g.efficiency.flash_attention_half_flops = 1e9;
  g.efficiency.flash_attention_half_seq = 128;
  g.efficiency.flash_attention_half_head_dim = 16;
  return g;
}

}  // namespace

TEST_CASE("a large matmul runs at the saturating efficiency: (F + F½) / (P·pf) + overhead") {
  // (1e12 + 1e9) / (1e15 · 0.5) = 2.002 ms; memory 1e6 / 1e12 = 1 µs is below it; + 1 µs overhead.
  const KernelCost op{OpKind::matmul, 1e12, 1e6, 0, 0};
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) == doctest::Approx(2.003e-3).epsilon(1e-12));
}

TEST_CASE("matmul efficiency is half of the peak fraction at half_flops") {
  CHECK(matmul_efficiency(1e9, round_gpu().efficiency) == doctest::Approx(0.25));
  CHECK(matmul_efficiency(0, round_gpu().efficiency) == 0.0);
}

TEST_CASE("a matmul with little work and much traffic is bound by memory") {
  // max((1e6 + 1e9) / 5e14 = 2.002 µs, 1e9 / 1e12 = 1 ms) + 1 µs.
  const KernelCost op{OpKind::matmul, 1e6, 1e9, 0, 0};
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) == doctest::Approx(1.001e-3).epsilon(1e-12));
}

TEST_CASE("memory-bound kernels cost their traffic at the achieved bandwidth") {
  const KernelCost op{OpKind::memory_bound, 5e9, 1e9, 0, 0};  // FLOPs ignored
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) == doctest::Approx(1.001e-3).epsilon(1e-12));
}

TEST_CASE("fused attention follows its own curve in work, sequence length and head dimension") {
  // F 1e12, s 1920 (factor 1920/2048 = 0.9375), d 128 (factor 1): eff = 0.4 · (1e12/1.001e12) · 0.9375,
  // time = 1.001e12 / (1e15 · 0.375) = 2.669333… ms, + 1 µs.
  const KernelCost op{OpKind::fused_attention, 1e12, 1e6, 128, 1920};
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) ==
        doctest::Approx(1.001e12 / 0.375e15 + 1e-6).epsilon(1e-12));
  const auto& e = round_gpu().efficiency;
  // Head 64: (64/80) / (128/144) = 0.9 of head 128; head 256 is capped at head 128's efficiency.
  CHECK(flash_attention_efficiency(1e12, 1920, 64, e) / flash_attention_efficiency(1e12, 1920, 128, e) ==
        doctest::Approx(0.9));
  CHECK(flash_attention_efficiency(1e12, 1920, 256, e) == flash_attention_efficiency(1e12, 1920, 128, e));
  // Shorter sequences are slower per FLOP: 512 tokens give 0.8, 16384 give 0.992 of the asymptote.
  CHECK(flash_attention_efficiency(1e15, 512, 128, e) < flash_attention_efficiency(1e15, 16384, 128, e));
  CHECK(flash_attention_efficiency(1e12, 128, 128, e) == doctest::Approx(0.4 * (1e12 / 1.001e12) * 0.5));
}

TEST_CASE("no work costs no time, and a precision the GPU lacks is an input error") {
  CHECK(kernel_time(KernelCost{}, round_gpu(), Precision::bf16) == 0.0);
  const KernelCost op{OpKind::matmul, 1e9, 1e6, 0, 0};
  CHECK_THROWS_AS((void)kernel_time(op, round_gpu(), Precision::fp8), trainsim::InputError);
}

TEST_CASE("kernel time never decreases as FLOPs grow, and grows once compute-bound") {
  const GpuSpec g = round_gpu();
  double previous = 0;
  for (double f = 1e6; f < 1e14; f *= 10) {
    const double t = kernel_time(KernelCost{OpKind::matmul, f, 1e7, 0, 0}, g, Precision::bf16);
    CHECK(t >= previous);
    previous = t;
  }
  CHECK(previous == doctest::Approx(0.020003));  // (1e13 + 1e9) / 5e14 + 1 µs, far above the memory floor
}

TEST_CASE("under fp8 matmuls use the fp8 peak and fused attention stays at the bf16 peak") {
  GpuSpec g = round_gpu();
  g.peak.fp8 = 2e15;
  const KernelCost gemm{OpKind::matmul, 1e12, 0, 0, 0};
  CHECK(kernel_time(gemm, g, Precision::fp8) == doctest::Approx((1.001e12 / 1e15) + 1e-6).epsilon(1e-12));
  const KernelCost attention{OpKind::fused_attention, 1e12, 0, 128, 1920};
  CHECK(kernel_time(attention, g, Precision::fp8) == kernel_time(attention, g, Precision::bf16));
}
