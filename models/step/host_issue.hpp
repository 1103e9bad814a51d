#pragma once
// The host issuing a pass in eager mode: what each op of the lists costs the CPU, where a pass makes the
// host wait for the device (a host–device synchronisation that drains the queue), and how long a stretch
// of work issued after such a drain takes when the host and the GPU each have their share of it.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "models/spec/framework.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/optimizer.hpp"

namespace trainsim::model {

/// Host seconds to issue `op`: the framework's launch_overhead_s (Python, autograd, the first launch), once
/// per kernel of a memory-bound op that stands for several (KernelCost::kernels), plus,
/// for a grouped matmul of G > 1 local experts, G × expert_launch_s (TransformerEngine's GroupedLinear
/// launches one cuBLAS GEMM per expert, see Framework::expert_launch_s), and as much for each of the G > 1
/// kernels a memory-bound op launches from C++ (TransformerEngine's fp8 quantize, KernelCost::groups).
[[nodiscard]] double op_issue_s(const LayerOp& op, const Framework& fw);

/// Where a MoE layer's forward makes the host wait for the device under `fw` (Framework::moe_host_sync):
/// the index of the first op issued after the wait — the all-to-all dispatcher's token all-to-all, or
/// the all-gather dispatcher's first op after its all-gathers, or, with neither, the experts' first GEMM.
/// Empty when the list has no router (not a MoE layer) or the framework does not wait (moe_host_sync false).
[[nodiscard]] std::optional<std::size_t> host_sync_index(const std::vector<LayerOp>& forward,
                                                         const Framework& fw);

/// Where a MoE layer's backward waits the same way: only when it runs the router and the token exchange
/// again (full recompute, or the `moe` module's), whose recomputed forward reads its token counts back as
/// the forward did (the ops kRecomputePrefix names); empty otherwise, the counts being on the host already.
[[nodiscard]] std::optional<std::size_t> recompute_sync_index(const std::vector<LayerOp>& backward,
                                                              const Framework& fw);

/// A stretch of a pass: `host` seconds for the host to issue it, `gpu` seconds for the device to run it.
struct IssuedBlock {
  double host = 0;
  double gpu = 0;
};

/// Seconds from a drained queue until the device has run `blocks`, issued one after another by the host.
/// Within a block the host runs ahead of a long kernel, so a block alone takes max(host, gpu); block i
/// starts issuing when the blocks before it are issued (s_i = Σ_{j<i} host_j) and finishes at
///   f_i = max(f_{i−1} + gpu_i, s_i + max(host_i, gpu_i)),   f_0 = 0.
/// One block gives the single-block floor max(host, gpu); a host-bound block followed by a device-bound one
/// costs their host time and device time in a row rather than overlapped.
[[nodiscard]] double drained_issue_s(std::span<const IssuedBlock> blocks);

/// The framework issues the optimizer's update tensor by tensor behind a host wait: optimizer_tensor_ops > 0
/// and no CUDA graphs.
[[nodiscard]] bool updates_tensor_by_tensor(const Framework& fw);

/// The optimizer's update of `tensors` when the framework issues it tensor by tensor behind a host wait
/// (Framework::optimizer_tensor_ops = k > 0), its kernels taking `update_s` in all, shared among the
/// tensors by their elements (g_i): each tensor is a stretch from a drained queue, the host issuing its k
/// ops at launch_overhead_s L each while the device runs g_i, so Σ_i drained_issue_s({L, 0}, {(k−1)·L, g_i})
/// = Σ_i max(k·L, L + g_i). `update_s` itself when k is 0, under CUDA graphs, or without tensors.
[[nodiscard]] double per_tensor_update_s(const std::vector<TensorShape>& tensors, double update_s,
                                         const Framework& fw);

}  // namespace trainsim::model
