#pragma once
// The training software whose habits a step follows (the scenario's `framework:` block): when it reduces
// gradients, whether it hides tensor-parallel and parameter-gather traffic under compute, how it sends
// activations between pipeline stages, and how it gathers ZeRO-3 / FSDP weights. Plain data.
//
// Each preset is the framework's own documented default or recommended performance setting, never a
// factor fitted to measurements (framework_preset() cites them); every flag can be overridden alone.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/transformer_spec.hpp"
#include "sim/enum_names.hpp"
#include "topologies/precision.hpp"

namespace trainsim::model {

enum class FrameworkPreset : std::uint8_t {
  megatron_core,
  megatron_lm_2021,
  deepspeed,
  fsdp2,
  torchtitan,
  nemo,
  llm_foundry,
  deepspeed_2021,
  fsdp1
};

/// The scenario's names (`framework: megatron-core`).
inline constexpr EnumNames<FrameworkPreset, 9> kFrameworkPresetNames{
    {{"megatron-core", FrameworkPreset::megatron_core},
     {"megatron-lm-2021", FrameworkPreset::megatron_lm_2021},
     {"deepspeed", FrameworkPreset::deepspeed},
     {"fsdp2", FrameworkPreset::fsdp2},
     {"torchtitan", FrameworkPreset::torchtitan},
     {"nemo", FrameworkPreset::nemo},
     {"llm-foundry", FrameworkPreset::llm_foundry},
     {"deepspeed-2021", FrameworkPreset::deepspeed_2021},
     {"fsdp1", FrameworkPreset::fsdp1}}};
constexpr std::string_view to_string(FrameworkPreset preset) {
  return name_in(kFrameworkPresetNames, preset);
}

/// ZeRO-3: how a unit's gradients reach its reduce-scatter after the unit's backward. The copies run on the
/// framework's reduce stream, before the collective and beside the next unit's backward
/// (models/step/step_costs.cpp adds them to the unit's reduction).
enum class GradientStaging : std::uint8_t {
  /// The backward writes the gradients into the buffer the collective reads (Megatron-Core's contiguous
  /// grad buffer, DeepSpeed's reduction bucket).
  in_place,
  /// PyTorch FSDP1 (torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook): autograd concatenates
  /// the unit's parameter gradients into flat_param.grad (read and write in the gradient's type), the hook
  /// casts it to the reduce dtype when that differs (`flat_param.grad.to(handle._reduce_dtype)`), and
  /// reduce_scatter_hook divides it by gradient_predivide_factor in place before the collective
  /// (torch/distributed/algorithms/_comm_hooks/default_hooks.py).
  fsdp1,
  /// PyTorch FSDP2 (torch/distributed/_composable/fsdp/_fsdp_collectives.py, foreach_reduce): one copy-in
  /// of the unit's gradients into the reduce-scatter buffer, in the reduce dtype.
  fsdp2
};

inline constexpr EnumNames<GradientStaging, 3> kGradientStagingNames{{{"in-place", GradientStaging::in_place},
                                                                      {"fsdp1", GradientStaging::fsdp1},
                                                                      {"fsdp2", GradientStaging::fsdp2}}};
constexpr std::string_view to_string(GradientStaging staging) {
  return name_in(kGradientStagingNames, staging);
}

/// HBM bytes read and written per gradient element to stage it (above) when gradients are
/// `grad_bytes` wide and reduced at `reduce_bytes`: in_place 0; fsdp1 2·g for the concatenation, g + r for
/// the cast when r ≠ g, 2·r for the division; fsdp2 g + r.
[[nodiscard]] double gradient_staging_bytes(GradientStaging staging, double grad_bytes, double reduce_bytes);

/// How a MoE layer moves its tokens to the experts (Megatron-Core --moe-token-dispatcher-type).
///  - all_to_all: each rank sends each of its tokens' top_k slots to the rank holding the expert
///    (MoEAlltoAllTokenDispatcher), then gathers them over the expert's own tensor-parallel ranks;
///  - all_gather: every rank of the expert_tp × ep group all-gathers all the group's tokens with their
///    routing probabilities and expert map, runs its own experts on the tokens routed to them, and
///    reduce-scatters the outputs back (MoEAllGatherTokenDispatcher). Its traffic does not grow with top_k;
///  - deepep, hybridep: the flex dispatcher (--moe-token-dispatcher-type flex, --moe-flex-dispatcher-backend
///    deepep | hybridep): token-based, a token sent to each destination GPU once (not once per top_k
///    slot) and, across nodes, over the network once per destination node, fanned out over NVLink there
///    (topologies/expert_dispatch.hpp). DeepEP's kernels come from DeepSeek (H800/H100 nodes of 8), HybridEP
///    is NVIDIA's for NVLink domains of up to 72 GPUs; both are priced by the same transport rule.
enum class MoeDispatcher : std::uint8_t { all_to_all, all_gather, deepep, hybridep };

/// The scenario's names (`framework.moe_dispatcher: allgather`), Megatron-Core's spelling.
inline constexpr EnumNames<MoeDispatcher, 4> kMoeDispatcherNames{{{"alltoall", MoeDispatcher::all_to_all},
                                                                  {"allgather", MoeDispatcher::all_gather},
                                                                  {"deepep", MoeDispatcher::deepep},
                                                                  {"hybridep", MoeDispatcher::hybridep}}};
/// The flex dispatcher's backends: a token sent once per destination GPU and per destination node.
constexpr bool token_based(MoeDispatcher d) {
  return d == MoeDispatcher::deepep || d == MoeDispatcher::hybridep;
}
constexpr std::string_view to_string(MoeDispatcher d) {
  return name_in(kMoeDispatcherNames, d);
}

/// SMs a flex dispatcher backend holds by default while its dispatch or combine kernel runs:
///  - DeepEP: 20, Megatron-Core's when --moe-flex-dispatcher-num-sms is unset (token_dispatcher.py,
///    _DeepepManager: set_deepep_num_sms(... else 20)); the Megatron-Core MoE report (arXiv:2603.07685,
///    Sec. 4.2.3) measures those 20 SMs as "roughly 20% GEMM-efficiency overhead" on H100;
///  - HybridEP: 16 each for dispatch and combine, the default Megatron-Bridge's dispatcher guide states for
///    --moe-hybridep-num-sms (skills/nemo-mbridge-perf-moe-dispatcher-selection; "the performance harness
///    uses 32"), that DeepEP's hybrid-ep branch benchmarks with (Hybrid-EP_Implementation.md) and torchtitan
///    sets (_hybridep_num_sms_dispatch_api).
inline constexpr int kDeepepDefaultSms = 20;
inline constexpr int kHybridepDefaultSms = 16;

/// TransformerEngine's userbuffers (initialize_ub's default configuration) run tensor-parallel all-gathers
/// as a ring exchange on the copy engines and reduce-scatters as a pipelined kernel on 16 SMs; on an H100's
/// 132 SMs that takes 16/132 of the GEMM's SMs for the reduce-scatter half of the overlaps and about none
/// for the all-gather half: (16/132 + 0) / 2 of the overlapped GEMMs' time.
inline constexpr double kTeUserbufferSlowdown = 0.5 * 16.0 / 132.0;

/// TransformerEngine's userbuffers split the overlapped GEMM into chunks (initialize_ub's default
/// configuration, transformer_engine/pytorch/module/base.py): the all-gathers before qkv_fprop, fc1_fprop,
/// proj_dgrad and fc2_dgrad use the "ring_exchange" method in tp-size chunks, and the reduce-scatters after
/// proj_fprop and fc2_fprop the "pipeline" method in kTeUserbufferPipelineSplits chunks; the backward's
/// reduce-scatters run whole ("bulk") beside the weight-gradient GEMM. models/step/unit_pricing.cpp prices
/// the chunks a pipeline cannot hide.
inline constexpr int kTeUserbufferPipelineSplits = 4;

/// CPU time to issue one op of the lists from eager PyTorch (see Framework::launch_overhead_s): about
/// 5–25 µs of Python, autograd, dispatcher and cudaLaunchKernel per eager kernel, one to three kernels per
/// listed op (e.g. a norm and its cast, an activation with its bias): 20 µs, not fitted. It binds on no
/// validation case; Megatron-DeepSpeed's own, fitted to vTrain, is in framework.cpp.
inline constexpr double kEagerLaunchOverhead = 20e-6;

/// Framework::router_kernels under Megatron-Core's --moe-router-fusion and without it, and what the flex
/// dispatchers' fused preprocessing leaves of the fused count: "DeepEP uses a fused kernel for the EP
/// communication preprocess, further reducing the number of kernels in the router and preprocess parts to
/// 17" (the source named at Framework::router_kernels).
inline constexpr int kFusedRouterKernels = 31;
inline constexpr int kUnfusedRouterKernels = 72;
inline constexpr int kFlexRouterKernels = 17;

/// CPU time of one kernel launch issued from C++ through the CUDA driver: 4.9 µs measured for statically
/// compiled C (JuliaGPU/CUDAdrv.jl pull request #15, its launch_overhead perftest), of which most is spent
/// in libcuda. TransformerEngine's per-expert GEMMs are issued this way (Framework::expert_launch_s).
inline constexpr double kDriverLaunchOverhead = 5e-6;

struct Framework {
  FrameworkPreset preset = FrameworkPreset::megatron_core;
  /// Tensor-parallel all-gathers and reduce-scatters (sequence parallelism) split into chunks that run
  /// under the GEMM they feed or drain (TransformerEngine userbuffers, Megatron-Core --tp-comm-overlap).
  bool tp_comm_overlap = true;
  /// The fraction of a GEMM's time added while a tensor-parallel collective runs beside it: the
  /// communication kernels take SMs from the GEMM (see framework_preset()).
  double tp_comm_overlap_slowdown = kTeUserbufferSlowdown;
  /// Expert-parallel all-to-alls run beside the compute of another micro-batch (DeepSeek-V3's DualPipe,
  /// Megatron-Core --overlap-moe-expert-parallel-comm) instead of between a layer's kernels.
  bool ep_comm_overlap = false;
  /// ep_comm_overlap: the experts' weight gradient is computed apart from their data gradient, after the
  /// backward's dispatch has been sent, beside it (Megatron-Core --delay-wgrad-compute, which needs
  /// --overlap-moe-expert-parallel-comm; models/step/unit_pricing.hpp, pair_expert_all_to_alls).
  bool delay_wgrad_compute = false;
  /// A MoE layer's experts run as TransformerEngine's fused grouped MLP under MXFP8 (Megatron-Core
  /// --use-transformer-engine-op-fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, Blackwell; TE's
  /// ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8 and BackwardGroupedMLP_CuTeGEMMDSwiGLU_MXFP8, TE pull request
  /// #2769): fc1's grouped GEMM applies the activation, its clamps and fc2's input quantisation in its
  /// epilogue, and fc2's data-gradient GEMM the activation's backward and the quantisation of fc1's output
  /// gradient in its own, so no element-wise pass runs over the fc1 output either way
  /// (models/workload/layer_ops.cpp). Megatron-Bridge's 26.08 MXFP8 recipes switch it on. fp8 training only.
  bool fused_grouped_mlp = false;
  /// The MoE token dispatcher (see MoeDispatcher). all_to_all under every preset: Megatron-Core's
  /// documented recommendation once experts are spread over ranks (its MoE README), and what DeepSeek-V3
  /// and torchtitan run. ep_comm_overlap overlaps only the all-to-all dispatcher's collectives.
  MoeDispatcher moe_dispatcher = MoeDispatcher::all_to_all;
  /// Kernels a MoE layer's forward runs for its router and its dispatcher's preprocessing (the routing map,
  /// the probabilities, the auxiliary loss, the token counts), the router's GEMM among them, under the
  /// all-to-all or all-gather dispatcher; each costs the GPU its kernel_overhead and, in eager mode, the
  /// host a launch_overhead (each is its own eager PyTorch call). The flex dispatchers fuse the
  /// preprocessing (moe_router_kernels). The count is DeepSeek-V3's forward (sigmoid scores, group-limited
  /// top-k, bias), applied to every MoE model; the router's backward kernels beyond its GEMM's have no
  /// published count and are not priced. Megatron-Core
  /// with --moe-router-fusion, as Megatron-Bridge's recipes run it: 31; without it, 72 (NVIDIA,
  /// "Optimizing DeepSeek-V3 Training Performance on NVIDIA GB200 NVL72", Megatron-LM
  /// docs/discussions/deepseek-v3-gb200-optimization, 2025: "reducing the total number of kernels in the
  /// router part from 72 to 31"). The other presets price the GEMM alone (1): their counts are unmeasured.
  int router_kernels = kFusedRouterKernels;
  /// SMs the flex dispatcher's dispatch and combine kernels hold while they run (Megatron-Core
  /// --moe-flex-dispatcher-num-sms, formerly --moe-deepep-num-sms and --moe-hybridep-num-sms); 0: the
  /// backend's default (flex_dispatcher_sms). Only token-based dispatchers read it.
  int moe_dispatcher_sms = 0;
  /// ZeRO 1–2: the all-gather of updated weights runs under the next step's first forward, bucket by
  /// bucket (Megatron-Core --overlap-param-gather), instead of after the optimizer.
  bool overlap_param_gather = true;
  /// The sender of a pipeline hand-over waits until the transfer is done before computing again.
  bool blocking_p2p = false;
  /// ZeRO-3: units whose weights are gathered ahead of the one computing (0: gather on demand).
  int prefetch = 1;
  /// ZeRO-3, DeepSpeed: parameters fetched ahead at most (stage3_prefetch_bucket_size); when set, the
  /// units ahead are as many as fit in it, replacing `prefetch`; 0: unset (prefetch counts units).
  double prefetch_bucket_params = 0;
  /// ZeRO-3: free the gathered weights after the forward and gather them again for the backward (FSDP
  /// FULL_SHARD); false keeps them to the backward (SHARD_GRAD_OP), gathering once per micro-batch.
  bool reshard_after_forward = true;
  /// ZeRO-3: collectives per transformer layer: 1 for FSDP (one unit per wrapped block), one per linear
  /// module for DeepSpeed, which fetches each submodule's parameters as it is called.
  int gathers_per_layer = 1;
  /// ZeRO-3: one collective per parameter tensor of the unit, each of its own size (DeepSpeed v0.3's
  /// _allgather_param and _reduce_scatter_gradient); replaces gathers_per_layer.
  bool gather_per_tensor = false;
  /// ZeRO-3: the host waits for the device before issuing every collective (torch.cuda.synchronize() in
  /// DeepSpeed v0.3's _allgather_param): no gather runs ahead of the unit that needs it, and nothing the
  /// device has queued — kernels, the previous reduce-scatter — runs beside it.
  bool synchronous_collectives = false;
  /// ZeRO-3: host seconds to issue one all-gather (allocation, Python bookkeeping), during which the
  /// device waits when the collectives are synchronous.
  double gather_host_s = 0;
  /// ZeRO-3: host seconds per rank of the communicator to issue one collective: the list form of
  /// torch.distributed.all_gather / reduce_scatter takes one tensor view per rank and copies each out
  /// of (or into) NCCL's flat buffer.
  double collective_host_per_rank_s = 0;
  /// ZeRO-3: the copies that bring a unit's gradients to its reduce-scatter (GradientStaging).
  GradientStaging gradient_staging = GradientStaging::in_place;
  /// Precision in which gradients are reduced; unset: the gradients' own precision.
  std::optional<topo::Precision> grad_reduce_dtype;
  /// CPU seconds the framework spends issuing one kernel or collective of the step's op lists in eager mode
  /// (Python, autograd and the CUDA launch). The GPU cannot finish a pass before the host has issued it:
  /// a unit's forward or backward takes at least its ops × this (models/step/step_costs.hpp). Each op of
  /// the lists stands for the one to three eager kernels a framework launches for it.
  double launch_overhead_s = kEagerLaunchOverhead;
  /// Norms, activations, the rotary embedding and the loss run as fused kernels (TransformerEngine, apex
  /// and Megatron fusions, or torch.compile); false: as the eager PyTorch ops of the model's reference code,
  /// one kernel each with their fp32 upcasts (models/workload/layer_ops.cpp counts their traffic).
  bool fused_elementwise = true;
  /// The fused attention is wrapped as llm-foundry's flash_attn_fn wraps flash-attn's variable-length
  /// kernel: q, k and v are gathered into unpadded copies before it and its output scattered back into a
  /// zeroed padded tensor after it, with or without padding, and their backward scatters and gathers the
  /// gradients the same way (models/workload/layer_ops.cpp counts the copies).
  bool unpadded_attention = false;
  /// Context parallelism all-gathers K and V over the cp group before the attention, and in the backward
  /// gathers them again and reduce-scatters their gradients, each collective blocking (Megatron-Core
  /// --cp-comm-type all_gather; Llama 3's CP, arXiv:2407.21783 Sec. 3.3.2); false: K/V blocks passed round a
  /// ring under the attention kernels (--cp-comm-type p2p, ring attention).
  bool cp_kv_all_gather = false;
  /// The step is captured as CUDA graphs (Megatron-Core --enable-cuda-graph, torch.compile's
  /// mode="reduce-overhead"): one launch per graph, so the host no longer bounds a pass.
  bool cuda_graphs = false;
  /// A dropless MoE layer's forward copies its token counts to the host and waits for them before its
  /// experts run, so the host cannot run ahead of the device across it (models/step/host_issue.hpp).
  /// Megatron-Core (megatron/core/transformer/moe/token_dispatcher.py): MoEAlltoAllTokenDispatcher.preprocess
  /// sets cuda_sync_point "before_ep_alltoall" whenever ep or tp > 1 ("before_finish" otherwise), and
  /// _maybe_dtoh_and_synchronize waits on the D2H event there unless moe_pad_expert_input_to_capacity
  /// (drop and pad) is set; CUDA graphs of the moe_preprocess scope only move the copy (cuda_dtoh_point),
  /// not the wait. MoEAllGatherTokenDispatcher.dispatch_postprocess calls `.cpu()` on the counts. The flex
  /// dispatcher's HybridEP backend waits on pinned memory unless num_permuted_tokens is given
  /// (moe/fused_a2a.py); DeepEP's dispatch reads its received counts back the same way. torchtitan's
  /// expert-parallel dispatch copies its splits to the host for the all-to-all. False: a capacity-based
  /// (dropping) dispatcher, DeepSpeed-MoE's, that sizes its buffers without the counts.
  bool moe_host_sync = true;
  /// Host seconds per local expert that a grouped expert GEMM costs beyond launch_overhead_s: Megatron-Core's
  /// TEGroupedMLP runs TransformerEngine's GroupedLinear
  /// (transformer_engine/pytorch/module/grouped_linear.py, _GroupedLinear.forward and backward), which issues
  /// one cuBLAS GEMM per expert from C++ (te_general_grouped_gemm → nvte_multi_tensor_gemm,
  /// transformer_engine/pytorch/csrc/extensions/gemm.cpp), for the forward, the dgrad and the wgrad alike. 0:
  /// one grouped kernel for all experts (torch._grouped_mm, as torchtitan runs them). The FSDP presets keep
  /// one launch per expert, a lower bound for the Python loops over experts of the model code they wrap.
  double expert_launch_s = kDriverLaunchOverhead;
  /// The optimizer's update, parameter tensor by parameter tensor: the host reads the tensor's step count
  /// back (a host–device wait) and then issues this many eager kernels (models/step/host_issue.hpp's
  /// per_tensor_update_s). Composer's DecoupledAdamW.adamw (composer/optim/decoupled_weight_decay.py), as
  /// llm-foundry trains, loops over the parameters with `step = state_steps[i].item()`, then
  /// exp_avg.mul_().add_(), exp_avg_sq.mul_().addcmul_(), sqrt(), the division by the bias correction,
  /// add_(eps) and param.addcdiv_(): 8 (weight decay, when not 0, adds a ninth). 0: a multi-tensor update
  /// (torch.optim's foreach default, apex and TransformerEngine FusedAdam), a few launches per step.
  int optimizer_tensor_ops = 0;
  /// What the caching allocator holds beyond the bytes allocated, as a fraction of them (the scenario's
  /// `memory.reserve`). 0: frameworks publish torch.cuda.max_memory_allocated, which excludes it.
  double memory_reserve = 0;
  bool operator==(const Framework&) const = default;
};

/// ZeRO-3: units gathered ahead of the computing one when each collective carries `unit_params`
/// parameters: prefetch, or with prefetch_bucket_params as many whole units as fit in it (maybe 0); none
/// with synchronous_collectives.
[[nodiscard]] int prefetch_units(const Framework& framework, double unit_params);

/// Kernels of a MoE layer's router and dispatch preprocessing in the forward (Framework::router_kernels):
/// under a flex dispatcher, kFusedRouterKernels − kFlexRouterKernels fewer, at least 1 (the GEMM).
[[nodiscard]] int moe_router_kernels(const Framework& framework);

/// SMs the framework's MoE dispatcher holds while a dispatch or combine runs: moe_dispatcher_sms, or the
/// backend's default (kDeepepDefaultSms, kHybridepDefaultSms); 0 for the NCCL dispatchers (all_to_all,
/// all_gather), whose kernels the GPU's overlap_compute_slowdown prices.
[[nodiscard]] int flex_dispatcher_sms(const Framework& framework);

/// What is wrong with the flex dispatcher's SMs on a GPU of `gpu_sms` SMs (0: unknown), named `gpu_name`:
/// holding all of them leaves none to the kernels beside it. Empty when nothing is.
[[nodiscard]] std::string dispatcher_sms_problem(const Framework& framework, int gpu_sms,
                                                 std::string_view gpu_name);

/// The preset's flags (the Framework defaults are megatron-core's).
[[nodiscard]] Framework framework_preset(FrameworkPreset preset);

/// The fused kernel that `attention: flash` names under a preset whose model code picks its own rather
/// than the GPU's default (TransformerEngine's, as Megatron-Core and NeMo run it): torchtitan's models call
/// PyTorch's scaled_dot_product_attention, whose flash backend is FlashAttention-2; llm-foundry's MPT
/// (attn_impl: flash) calls the flash-attn package's FlashAttention-2; fsdp1's eager model code calls one of
/// the two. Unset for the others: FSDP2 and DeepSpeed shard whatever model they wrap and leave its
/// attention as it is.
[[nodiscard]] std::optional<Attention> preset_fused_attention(FrameworkPreset preset);

/// What overlap_grad_reduce (parallelism.overlap_grad_reduce) a preset implies: whether gradient buckets
/// are reduced during the backward pass.
[[nodiscard]] bool preset_overlaps_grad_reduce(FrameworkPreset preset);

/// Where each preset's flags come from: documentation or code, one line per preset.
[[nodiscard]] std::string_view preset_citation(FrameworkPreset preset);

/// The flags in force, one "name=value" each, e.g. "megatron-core: tp_comm_overlap=true … prefetch=1"
/// (summary.json's `framework`, explain's framework section).
[[nodiscard]] std::string framework_flags(const Framework& framework, bool overlap_grad_reduce);

}  // namespace trainsim::model
