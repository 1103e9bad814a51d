#pragma once
// Fine-grained activation offload (Megatron-Core's --fine-grained-activation-offloading with
// --offload-modules; megatron/core/pipeline_parallel/fine_grained_activation_offload.py): after a
// module's forward its saved inputs are copied to pinned host memory on a stream of their own (d2h),
// beside the compute that follows; before the layer's backward they are copied back on another (h2d),
// issued when the backward of the layer after it starts, and the compute stream waits for that copy.
// Each copy crosses the GPU's host link (node.pcie: PCIe Gen5 x16 on DGX/HGX H100 and B200, NVLink-C2C
// on GB200) at its per-direction rate; the two directions are separate lanes. So one layer's copy hides
// under one layer's pass and shows only where it is longer:
//   copy = bytes / host_bytes_per_s
//   exposed forward  = max(0, copy − the layer's forward)    (the d2h stream falls behind, the next
//                                                             reload waits for the offload to finish)
//   exposed backward = max(0, copy − the layer's backward)   (the reload ahead is late)
// Left out: Megatron keeps the last groups of a chunk on the GPU (its reload margin) and, with
// --activation-offload-fraction, offloads the first share of groups only; both offload less than this.
// Under fp8 the offloaded GEMM inputs (qkv_linear, attn_proj, expert_fc1) are copied at the activations'
// 16-bit width, though Transformer Engine may save them in fp8: the copy is then priced up to twice long.
#include "models/step/step_costs.hpp"

namespace trainsim::model {

/// One layer's offload per micro-batch, seconds and bytes.
struct OffloadCost {
  double bytes = 0;               ///< offloaded per layer per micro-batch, each way
  double copy_s = 0;              ///< bytes over the host link, one direction
  double forward_exposed_s = 0;   ///< what the d2h copy exceeds the layer's forward by
  double backward_exposed_s = 0;  ///< what the h2d copy exceeds the layer's backward by
};

/// The offload of `bytes` over a host link of `host_bytes_per_s` beside a layer whose passes take
/// `forward_s` and `backward_s`. Throws InputError when bytes > 0 and the link's rate is not positive.
[[nodiscard]] OffloadCost offload_cost(double bytes, double host_bytes_per_s, double forward_s,
                                       double backward_s);

/// Appends the exposed parts of `cost` to the unit's passes as waits on the compute stream
/// ("activation_offload.d2h_wait", "activation_offload.h2d_wait") and sums the unit again.
void add_offload_waits(UnitCost& unit, const OffloadCost& cost);

}  // namespace trainsim::model
