#include "models/workload/kernel_time.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/workload/gemm_time.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

double matmul_efficiency(double flops, const topo::ComputeEfficiency& e) {
  if (flops <= 0) return 0.0;
  return e.matmul_peak_fraction * flops / (flops + e.matmul_half_flops);
}

double compute_clock_factor(const topo::GpuSpec& gpu) {
  double factor = gpu.efficiency.sustained_clock_fraction;
  const double limit = gpu.power_limit_w;
  if (limit > 0 && limit < gpu.tdp_w && gpu.tdp_w > gpu.idle_w) {
    factor *= std::cbrt(std::max(0.0, limit - gpu.idle_w) / (gpu.tdp_w - gpu.idle_w));
  }
  return factor;
}

double kernel_time(const KernelCost& op, const topo::GpuSpec& gpu, Precision precision) {
  if (op.flops < 0 || op.bytes < 0) throw InputError("a kernel cannot have negative FLOPs or bytes");
  if (op.flops == 0 && op.bytes == 0) return 0.0;
  const topo::ComputeEfficiency& e = gpu.efficiency;
  const double bandwidth = gpu.hbm_bytes_per_s * e.memory_bandwidth_fraction;
  if (bandwidth <= 0) throw InputError("gpu " + gpu.name + " has no memory bandwidth");
  if (op.kind == OpKind::memory_bound)
    return op.bytes / (gpu.hbm_bytes_per_s * e.elementwise_fraction()) +
           op.kernels * op.groups * e.kernel_overhead_s;
  const double memory_time = op.bytes / bandwidth;

  // FP8 recipes (Transformer Engine's default) keep the attention core in 16 bit; only GEMMs run in fp8.
  const bool in_bf16 = precision == Precision::fp8 && (op.kind == OpKind::fused_attention || op.keeps_16bit);
  const double peak = gpu.peak.at(in_bf16 ? Precision::bf16 : precision) * compute_clock_factor(gpu);
  if (peak <= 0) {
    throw InputError("gpu " + gpu.name + " has no " + std::string(topo::to_string(precision)) +
                     " throughput");
  }
  double compute_time = 0;
  if (op.flops > 0) {
    if (op.kind == OpKind::matmul) {
      // F / (P · pf · F/(F + F½)) = (F + F½) / (P · pf): affine in F, no division by a tiny efficiency.
      const bool fp8_gemm = precision == Precision::fp8 && !in_bf16 && e.fp8_matmul_peak_fraction > 0;
      const double f = fp8_gemm ? e.fp8_matmul_peak_fraction : e.matmul_peak_fraction;
      if (f <= 0) throw InputError("gpu " + gpu.name + " has no matmul efficiency");
      if (gpu.sm_count > 0 && op.m > 0 && op.n > 0 && op.k > 0) {
        compute_time = gemm_compute_time(op.m, op.n, op.k, std::max(1.0, op.groups), peak, f, gpu);
      } else {
        compute_time = (op.flops + e.matmul_half_flops) / (peak * f);
      }
    } else {
      const double efficiency =
          attention_kernel_efficiency(op.flops, op.head_dim, op.seq_len, op.attention, e, gpu.name);
      compute_time = op.flops / (peak * efficiency);
    }
  }
  // Ring attention launches one kernel per ring step.
  const double launches = op.kind == OpKind::fused_attention ? std::max(1, op.attention.ring_steps) : 1;
  return std::max(compute_time, memory_time) + launches * e.kernel_overhead_s;
}

}  // namespace trainsim::model
