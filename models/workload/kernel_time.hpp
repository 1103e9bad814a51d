#pragma once
// The time of one GPU kernel: a roofline whose compute roof saturates with the size of the work.
// Pure function of (FLOPs, bytes, GPU parameters); its parameters (topo::ComputeEfficiency) are the ones
// calibration fits.
//
// Form (F = executed FLOPs, B = bytes read + written, P = dense peak FLOP/s at the precision,
// W = peak HBM bandwidth, e = gpu.efficiency):
//   matmul with a shape (m, n, k > 0) on a GPU with sm_count > 0:
//                     t = max(gemm_compute_time(m, n, k, groups, P·c), B / (W · e.memory_bandwidth_fraction))
//                         + e.kernel_overhead_s           (tile and wave quantisation:
//                         models/workload/gemm_time.hpp)
//   matmul otherwise: t = max((F + e.matmul_half_flops) / (P · c · e.matmul_peak_fraction),
//                             B / (W · e.memory_bandwidth_fraction)) + e.kernel_overhead_s
//     i.e. achieved throughput is P · peak_fraction · F / (F + half_flops): half of the large-GEMM
//     efficiency at F = half_flops, saturating to peak_fraction for large F. The compute time is affine
//     in F, which keeps the fit linear-ish and smooth.
//   fused_attention:  t = max(F / (P · eff_attn), B / (W · mem_fraction)) + overhead, with eff_attn the
//     kernel's efficiency in pass, mask, head dim and sequence (models/workload/attention_kernel.hpp);
//     under ring attention (cp > 1) the overhead is paid once per ring step.
//   memory_bound:     t = B / (W · e.elementwise_fraction()) + overhead  (FLOPs ignored: these
//                     element-wise kernels never approach the compute roof; their own bandwidth share,
//                     memory_bandwidth_fraction unless the GPU sets elementwise_bandwidth_fraction).
// P is the dense peak at the precision the kernel runs at, scaled by the clock factor c =
// compute_clock_factor(gpu) (the sustained clock under load and the power limit; HBM bandwidth is not
// scaled). Zero work costs zero time (no overhead): an op that is absent costs nothing. Under fp8 only
// GEMMs run at the fp8 peak; the fused attention kernel and GEMMs marked keeps_16bit (the LM head, the
// MoE router, the standard attention core) run at the bf16 peak, as Transformer Engine's recipes do.
#include "models/workload/attention_kernel.hpp"
#include "topologies/hardware.hpp"
#include "topologies/precision.hpp"

namespace trainsim::model {

using topo::Precision;

enum class OpKind { matmul, fused_attention, memory_bound };

/// What one kernel executes. flops are the FLOPs actually executed (causal blocks skipped by the kernel
/// are not counted here), bytes the device-memory traffic (read + written).
struct KernelCost {
  OpKind kind = OpKind::matmul;
  double flops = 0;     ///< executed FLOPs
  double bytes = 0;     ///< bytes read + written to HBM
  double head_dim = 0;  ///< fused_attention only: head dimension d
  double seq_len = 0;   ///< fused_attention only: keys of the whole sequence (each ring step sees seq_len/cp)
  AttentionVariant attention;  ///< fused_attention only: kernel, pass, mask, ring steps
  double m = 0;                ///< matmul only: output rows (0: no shape, priced by FLOPs alone)
  double n = 0;                ///< matmul only: output columns
  double k = 0;                ///< matmul only: reduction length
  /// matmul: GEMMs of this shape in one grouped launch (MoE experts on a rank); memory_bound: the kernels
  /// each of its host calls launches from C++ (TransformerEngine's quantize: three under current scaling,
  /// one an expert for a grouped GEMM's inputs), each paying the GPU's kernel_overhead.
  double groups = 1;
  bool keeps_16bit = false;  ///< matmul: runs at bf16 even when the step's GEMMs run at fp8
  /// memory_bound only: the kernels the op stands for, run one after another (bytes is their sum); each
  /// pays the GPU's kernel_overhead and, in eager mode, the host's launch (models/step/host_issue.hpp).
  int kernels = 1;
};

/// Factor on every compute peak: gpu.efficiency.sustained_clock_fraction, times, under a power limit P
/// below the TDP, the clock the limit sustains: ((P - idle) / (TDP - idle))^(1/3) (dynamic power ~ f·V²
/// with the voltage following the clock, so f ~ P^(1/3) above idle).
[[nodiscard]] double compute_clock_factor(const topo::GpuSpec& gpu);

/// Seconds the kernel takes on `gpu` at `precision` (formula above). Throws InputError when the GPU has
/// no throughput at that precision (e.g. bf16 on a V100).
[[nodiscard]] double kernel_time(const KernelCost& op, const topo::GpuSpec& gpu, Precision precision);

/// Achieved fraction of dense peak of a matmul of `flops` FLOPs: peak_fraction · F / (F + half_flops).
[[nodiscard]] double matmul_efficiency(double flops, const topo::ComputeEfficiency& e);

}  // namespace trainsim::model
