#include "models/workload/kernel_time.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// Head dimension at which the head factor is normalised to 1 (FlashAttention's tuned case).
constexpr double kReferenceHeadDim = 128.0;

}  // namespace

double matmul_efficiency(double flops, const topo::ComputeEfficiency& e) {
  if (flops <= 0) return 0.0;
  return e.matmul_peak_fraction * flops / (flops + e.matmul_half_flops);
}

double flash_attention_efficiency(double flops, double seq_len, double head_dim,
                                  const topo::ComputeEfficiency& e) {
  if (flops <= 0) return 0.0;
  const double work = flops / (flops + e.flash_attention_half_flops);
  const double seq = seq_len > 0 ? seq_len / (seq_len + e.flash_attention_half_seq) : 1.0;
  double head = 1.0;
  if (head_dim > 0) {
    const double dh = e.flash_attention_half_head_dim;
    head = std::min(1.0, (head_dim / (head_dim + dh)) / (kReferenceHeadDim / (kReferenceHeadDim + dh)));
  }
  return e.flash_attention_peak_fraction * work * seq * head;
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
      const double efficiency = flash_attention_efficiency(op.flops, op.seq_len, op.head_dim, e);
      if (efficiency <= 0) throw InputError("gpu " + gpu.name + " has no fused-attention efficiency");
      compute_time = op.flops / (peak * efficiency);
    }
  }
  return std::max(compute_time, memory_time) + e.kernel_overhead_s;
}

}  // namespace trainsim::model
