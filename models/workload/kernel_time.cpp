#include "models/workload/kernel_time.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace trainsim::model {

double matmul_efficiency(double flops, const topo::ComputeEfficiency& e) {
  if (flops <= 0) return 0.0;
  return e.matmul_peak_fraction * flops / (flops + e.matmul_half_flops);
}

double kernel_time(const KernelCost& op, const topo::GpuSpec& gpu, Precision precision) {
  if (op.flops < 0 || op.bytes < 0) throw InputError("a kernel cannot have negative FLOPs or bytes");
  if (op.flops == 0 && op.bytes == 0) return 0.0;
  const topo::ComputeEfficiency& e = gpu.efficiency;
  const double bandwidth = gpu.hbm_bytes_per_s * e.memory_bandwidth_fraction;
  if (bandwidth <= 0) throw InputError("gpu " + gpu.name + " has no memory bandwidth");
  const double memory_time = op.bytes / bandwidth;
  if (op.kind == OpKind::memory_bound) return memory_time + e.kernel_overhead_s;

  // FP8 recipes (Transformer Engine's default) keep the attention core in 16 bit; only GEMMs run in fp8.
  const bool attention_in_bf16 = op.kind == OpKind::fused_attention && precision == Precision::fp8;
  const double peak = gpu.peak.at(attention_in_bf16 ? Precision::bf16 : precision);
  if (peak <= 0) {
    throw InputError("gpu " + gpu.name + " has no " + std::string(topo::to_string(precision)) +
                     " throughput");
  }
  double compute_time = 0;
  if (op.flops > 0) {
    if (op.kind == OpKind::matmul) {
      // F / (P · pf · F/(F + F½)) = (F + F½) / (P · pf): affine in F, no division by a tiny efficiency.
      if (e.matmul_peak_fraction <= 0) throw InputError("gpu " + gpu.name + " has no matmul efficiency");
      compute_time = (op.flops + e.matmul_half_flops) / (peak * e.matmul_peak_fraction);
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
