#include "models/workload/attention_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/workload/attention.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// Fitted (minimax relative error over each kernel's points) to the H100 bars of FlashAttention-3
// (arXiv:2407.08608) Figure 5 (forward; head dim 64, 128, 256; with and without causal mask) and Figure 6
// (backward; head dim 64, 128; no mask), sequence 512 to 16k, with E_gpu of the h100-sxm preset.
// scenarios/validation/kernels/attention-h100-fa3-paper.csv holds the points; the worst point of each
// kernel is within 10 % (tests/models/workload/attention_kernel_test.cpp). Backward at head dim 256 has no
// published bars: it takes the forward's head_256.
constexpr AttentionKernelShape kFlash2{.backward_ratio = 0.781,
                                       .half_key_len = 136,
                                       .head_64 = 0.908,
                                       .head_64_backward = 0.911,
                                       .head_256 = 0.928,
                                       .mask = 0.921};
constexpr AttentionKernelShape kFlash3{.backward_ratio = 0.758,
                                       .half_key_len = 281,
                                       .head_64 = 0.724,
                                       .head_64_backward = 0.843,
                                       .head_256 = 1.099,
                                       .mask = 0.907};
constexpr AttentionKernelShape kCudnn{.backward_ratio = 0.723,
                                      .half_key_len = 204,
                                      .head_64 = 0.690,
                                      .head_64_backward = 0.862,
                                      .head_256 = 0.954,
                                      .mask = 0.904};

constexpr double kReferenceHeadDim = 128.0;

// Head factor: 1 at d = 128, interpolated in log2(d) towards the 64 and 256 points, constant beyond.
double head_factor(const AttentionKernelShape& k, bool backward, double d) {
  if (d <= 0) return 1.0;
  const double x = std::clamp(std::log2(d / kReferenceHeadDim), -1.0, 1.0);  // -1 at 64, +1 at 256
  const double end = x < 0 ? (backward ? k.head_64_backward : k.head_64) : k.head_256;
  return 1.0 + std::abs(x) * (end - 1.0);
}

// Efficiency (before the grid factor) of kernels whose query blocks loop over `loop` keys on average.
double mean_loop_efficiency(const AttentionKernelShape& k, double base, double loop, bool causal) {
  return base * (causal ? k.mask : 1.0) * loop / (loop + k.half_key_len);
}

// Efficiency (before the grid factor) of kernels whose query blocks loop over `keys` keys.
double loop_efficiency(const AttentionKernelShape& k, double base, double keys, bool causal) {
  if (keys <= 0) return base * (causal ? k.mask : 1.0);
  return mean_loop_efficiency(k, base, causal ? 0.5 * keys : keys, causal);
}

}  // namespace

Attention resolve_attention(Attention attention, const topo::ComputeEfficiency& e) {
  if (attention != Attention::flash) return attention;
  switch (e.attention_kernel) {
    case topo::AttentionKernel::flash2:
      return Attention::flash2;
    case topo::AttentionKernel::flash3:
      return Attention::flash3;
    case topo::AttentionKernel::cudnn:
      return Attention::cudnn;
  }
  return Attention::flash2;
}

AttentionKernelShape attention_kernel_shape(Attention kernel, const topo::ComputeEfficiency& e) {
  switch (kernel) {
    case Attention::flash2:
      return kFlash2;
    case Attention::flash3:
      return kFlash3;
    case Attention::cudnn: {
      AttentionKernelShape k = kCudnn;
      if (e.cudnn_attention_half_key_len > 0) k.half_key_len = e.cudnn_attention_half_key_len;
      if (e.cudnn_attention_backward_ratio > 0) k.backward_ratio = e.cudnn_attention_backward_ratio;
      return k;
    }
    case Attention::flash:
    case Attention::standard:
      break;
  }
  throw InputError(std::string("no fused-kernel shape for attention '") + std::string(to_string(kernel)) +
                   "' (resolve flash against the GPU first)");
}

double attention_kernel_fraction(Attention kernel, const topo::ComputeEfficiency& e) {
  switch (kernel) {
    case Attention::flash2:
      return e.flash2_attention_fraction;
    case Attention::flash3:
      return e.flash3_attention_fraction;
    case Attention::cudnn:
      return e.cudnn_attention_fraction;
    case Attention::flash:
    case Attention::standard:
      break;
  }
  return 0.0;
}

double attention_kernel_efficiency(double flops, double head_dim, double seq_len,
                                   const AttentionVariant& shape, const topo::ComputeEfficiency& e,
                                   const std::string& gpu_name) {
  if (flops <= 0) return 0.0;
  const Attention kernel = resolve_attention(shape.kernel, e);
  const double fraction = attention_kernel_fraction(kernel, e);
  if (fraction <= 0) {
    throw InputError(std::string("gpu ") + gpu_name + " has no efficiency for attention kernel '" +
                     std::string(to_string(kernel)) + "' (it does not run there, or set gpu.efficiency." +
                     std::string(to_string(kernel)) + "_attention_fraction)");
  }
  const AttentionKernelShape k = attention_kernel_shape(kernel, e);
  const double base =
      fraction * (shape.backward ? k.backward_ratio : 1.0) * head_factor(k, shape.backward, head_dim);
  const double cp = std::max(1, shape.ring_steps);
  const double step_flops = flops / cp;
  const double grid = step_flops / (step_flops + e.flash_attention_half_flops);
  if (shape.window > 0 && seq_len > shape.window) {
    TRAINSIM_CHECK(shape.causal && cp == 1, "a sliding window is causal and on one ring step");
    return grid * mean_loop_efficiency(k, base, window_score_elements(seq_len, shape.window) / seq_len, true);
  }
  if (shape.ring_steps <= 1) return grid * loop_efficiency(k, base, seq_len, shape.causal);

  const double chunk = seq_len / cp;  // keys per ring step
  if (!shape.causal) return grid * loop_efficiency(k, base, chunk, false);
  // One causal diagonal step (1/cp of the work); the rest split evenly into blocks over chunk/2 and over
  // chunk keys. Time adds up: the combined efficiency is the work-weighted harmonic mean.
  const double diagonal = loop_efficiency(k, base, chunk, true);
  const double half_blocks = loop_efficiency(k, base, 0.5 * chunk, false);
  const double full_blocks = loop_efficiency(k, base, chunk, false);
  const double off = (cp - 1.0) / cp;
  const double inverse = (1.0 / cp) / diagonal + 0.5 * off / half_blocks + 0.5 * off / full_blocks;
  return grid / inverse;
}

}  // namespace trainsim::model
