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
  g.efficiency.flash2_attention_fraction = 0.4;
  g.efficiency.flash_attention_half_flops = 1e9;
  return g;
}

}  // namespace

TEST_CASE("a large matmul runs at the saturating efficiency: (F + F½) / (P·pf) + overhead") {
  // (1e12 + 1e9) / (1e15 · 0.5) = 2.002 ms; memory 1e6 / 1e12 = 1 µs is below it; + 1 µs overhead.
  const KernelCost op{OpKind::matmul, 1e12, 1e6, 0, 0};
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) == doctest::Approx(2.003e-3).epsilon(1e-12));
}

TEST_CASE("matmul efficiency is half of the peak fraction at half_flops") {
  CHECK(matmul_efficiency(1e9, round_gpu().efficiency) == doctest::Approx(0.25).scale(0));
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
  // The same bytes in 8 kernels launched from C++ (a per-expert quantize): 8 overheads of 1 µs.
  KernelCost per_expert = op;
  per_expert.groups = 8;
  CHECK(kernel_time(per_expert, round_gpu(), Precision::bf16) == doctest::Approx(1.008e-3).epsilon(1e-12));
}

TEST_CASE("fused attention is timed at its kernel's efficiency (models/workload/attention_kernel.hpp)") {
  // flash resolves to the GPU's default, flash2; forward, no mask, d 128, no sequence factor (seq 0):
  // eff = 0.4 · 1e12/1.001e12, time = 1.001e12 / (1e15 · 0.4) = 2.5025 ms, + 1 µs.
  const KernelCost op{OpKind::fused_attention, 1e12, 1e6, 128, 0, AttentionVariant{}};
  CHECK(kernel_time(op, round_gpu(), Precision::bf16) ==
        doctest::Approx(1.001e12 / 0.4e15 + 1e-6).epsilon(1e-12));
  // fp8 recipes keep attention in 16 bit: the same time under fp8 (no fp8 peak needed).
  CHECK(kernel_time(op, round_gpu(), Precision::fp8) == kernel_time(op, round_gpu(), Precision::bf16));
  // A kernel the GPU has no efficiency for is an input error, not a silent number.
  KernelCost flash3 = op;
  flash3.attention.kernel = Attention::flash3;
  CHECK_THROWS_AS((void)kernel_time(flash3, round_gpu(), Precision::bf16), trainsim::InputError);
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
  CHECK(previous ==
        doctest::Approx(0.020003).scale(0));  // (1e13 + 1e9) / 5e14 + 1 µs, far above the memory floor
}

TEST_CASE("under fp8 matmuls use the fp8 peak and fused attention stays at the bf16 peak") {
  GpuSpec g = round_gpu();
  g.peak.fp8 = 2e15;
  const KernelCost gemm{OpKind::matmul, 1e12, 0, 0, 0};
  CHECK(kernel_time(gemm, g, Precision::fp8) == doctest::Approx((1.001e12 / 1e15) + 1e-6).epsilon(1e-12));
  const KernelCost attention{OpKind::fused_attention, 1e12, 0, 128, 1920};
  CHECK(kernel_time(attention, g, Precision::fp8) == kernel_time(attention, g, Precision::bf16));
}
