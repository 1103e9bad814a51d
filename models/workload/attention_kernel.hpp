#pragma once
// Throughput of a fused attention kernel (FlashAttention-2, FlashAttention-3, cuDNN's fused flash
// attention) as a closed form in the pass, causal mask, head dimension and key length, calibrated on the
// kernel benchmarks of the FlashAttention-3 paper (Shah et al. 2024, arXiv:2407.08608, Figures 5 and 6;
// the transcribed points are scenarios/validation/kernels/attention-*.csv and
// tests/models/workload/attention_kernel_test.cpp checks the form against each of them).
//
// Achieved fraction of the dense 16-bit peak, for F executed FLOPs (masked blocks not counted):
//   eff = E_gpu(kernel) · pass(kernel) · head(kernel, pass, d) · mask(kernel) · L/(L + L½(kernel))
//         · F/(F + gpu.flash_attention_half_flops)
//  - E_gpu: gpu.efficiency.<kernel>_attention_fraction, the long-sequence forward efficiency at head dim
//    128 without a mask (per GPU preset, with its source);
//  - pass: 1 forward, backward_ratio backward (the backward's five matmuls, dQ accumulation and the
//    recomputed softmax run slower than the forward's two);
//  - head: 1 at d = 128, head_64 / head_256 at 64 / 256 (backward at 64 has its own), interpolated in
//    log2(d) in between and held constant outside [64, 256];
//  - L: the mean key-loop length of one query block. A query block of a kernel over s keys loops over s
//    keys, under a causal mask over s/2 on average, so the per-block fixed cost (loading Q, writing O and
//    the softmax statistics, the pipeline's fill and drain) weighs twice as much: causal masking halves
//    the work and lowers the efficiency. mask: the remaining long-sequence loss of masking (the diagonal
//    blocks and the imbalance between query blocks);
//  - the last factor: small grids that leave SMs idle (tp-split heads on short sequences).
// A sliding window of W keys (causal, W < s): L is the mean keys a query loops over,
// window_score_elements(s, W) / s (about W), the mask factor as for a causal mask; a short window is a
// short loop and runs at a low efficiency (the kernel's per-block cost against a loop of W keys).
// Grouped-query attention (kv_heads < heads) does not change the executed FLOPs or this efficiency: the
// kernels are compute bound and share each K/V tile among its query heads; it lowers K/V bytes only.
//
// Context parallelism (ring attention, cp > 1): each rank runs one kernel per ring step on its s/cp
// queries against one rank's s/cp keys. Under a causal mask with Megatron-LM's load balancing (each rank
// holds sequence chunks i and 2cp-1-i) one step of cp is the causal diagonal, the other cp-1 are unmasked
// and split evenly into (s/cp queries x s/2cp keys) and (s/2cp queries x s/cp keys) blocks. The steps are
// timed as one kernel at the work-weighted harmonic mean of their efficiencies.
#include "models/spec/transformer_spec.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::model {

/// Which fused attention kernel runs and how, beyond its FLOPs, head dim and sequence length.
struct AttentionVariant {
  Attention kernel = Attention::flash;  ///< flash: the GPU's default kernel
  bool backward = false;
  bool causal = false;
  int ring_steps = 1;  ///< cp: kernels over s/cp keys each (ring attention)
  double window = 0;   ///< a sliding window of this many keys per query (< seq_len, causal, one ring step)
};

/// Calibrated shape of one kernel implementation (the factors of the form above).
struct AttentionKernelShape {
  double backward_ratio = 1;    ///< backward / forward efficiency
  double half_key_len = 0;      ///< L½, keys
  double head_64 = 1;           ///< forward efficiency at d = 64 / at d = 128
  double head_64_backward = 1;  ///< the same for the backward
  double head_256 = 1;          ///< at d = 256 / at d = 128 (both passes)
  double mask = 1;              ///< long-sequence efficiency with / without a causal mask
};

/// The kernel `attention` runs on a GPU with efficiency `e`: flash resolves to e.attention_kernel.
/// Requires is_fused(attention).
[[nodiscard]] Attention resolve_attention(Attention attention, const topo::ComputeEfficiency& e);

/// The calibrated shape of a fused kernel (flash2 | flash3 | cudnn; InputError otherwise) on a GPU of
/// efficiency `e`: the H100 fit's, with the GPU's own cuDNN key length and backward ratio where it gives
/// them.
[[nodiscard]] AttentionKernelShape attention_kernel_shape(Attention kernel, const topo::ComputeEfficiency& e);

/// E_gpu of a resolved fused kernel (0 when it does not run on that GPU).
[[nodiscard]] double attention_kernel_fraction(Attention kernel, const topo::ComputeEfficiency& e);

/// Achieved fraction of the dense 16-bit peak of a fused attention kernel executing `flops` FLOPs over a
/// sequence of `seq_len` keys (0: long, no sequence factor) at head dim `head_dim` (0: taken as 128), form
/// above. Throws InputError naming `gpu_name` when the kernel does not run on that GPU.
[[nodiscard]] double attention_kernel_efficiency(double flops, double head_dim, double seq_len,
                                                 const AttentionVariant& shape,
                                                 const topo::ComputeEfficiency& e,
                                                 const std::string& gpu_name);

}  // namespace trainsim::model
