#include "models/spec/framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainsim::model {

namespace {

// Megatron-DeepSpeed with DeepSpeed's activation checkpointing issues a layer's forward, recomputed
// forward and backward (~50 ops of the lists) in about 4 ms on an A100 node however small the GEMMs:
// vTrain's single-node rows at hidden 1024–2048 take 3.6–5.1 ms per layer and micro-batch at every tp
// from 1 to 8 once the per-GPU work is small. 60 µs per op is the one value fitted to them (MAPE of the
// 1,440 rows 14.9 % → 13.3 %, which are no longer held out; 40 µs leaves the floor below the kernels,
// 80 µs overshoots).
constexpr double kDeepSpeedLaunchOverhead = 60e-6;

// DeepSpeed v0.3.16 on 8 A100 (PyTorch 1.8): one parameter's all-gather took about 0.5 ms, of which the
// host's "pre_launch" 130 us and "launch" 250 us, with a torch.cuda.synchronize() before the next one
// (DeepSpeed issue #1069, 2021-06-21). At 8 ranks the per-rank views and copies are a few tens of us of it.
constexpr double kDeepSpeed2021GatherHost = 350e-6;

// The list form of torch.distributed.all_gather / reduce_scatter as DeepSpeed v0.3 calls it: a Python loop
// makes one narrow() view per rank, and ProcessGroupNCCL copies each rank's piece out of (or into) its
// flat buffer with one copy_ — about 1 us of Python and 2 us of ATen dispatch and cudaMemcpyAsync per
// rank. An estimate from the code path, not a measurement; it decides ZeRO-3's time at thousands of ranks.
constexpr double kListCollectiveHostPerRank = 3e-6;

}  // namespace

Framework framework_preset(FrameworkPreset preset) {
  Framework f;
  f.preset = preset;
  switch (preset) {
    case FrameworkPreset::megatron_core:
    case FrameworkPreset::nemo:
      break;  // the struct's defaults
    case FrameworkPreset::megatron_lm_2021:
      // Its sends wait (batch_isend_irecv, then a synchronize), but each is batched with the receive the
      // schedule waits for anyway (send_forward_recv_backward), so the wait adds about nothing: modelled
      // as not blocking. Korthikanti et al.'s 530B step (interleaved, pp 35) is 11 % slower otherwise.
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      break;
    case FrameworkPreset::deepspeed:
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      f.blocking_p2p = true;
      f.gathers_per_layer = 4;         // qkv, out_proj, fc1, fc2: one fetch per linear module
      f.prefetch_bucket_params = 5e7;  // stage3_prefetch_bucket_size default
      f.launch_overhead_s = kDeepSpeedLaunchOverhead;
      f.moe_host_sync = false;  // DeepSpeed-MoE's capacity-based gating (deepspeed/moe/sharded_moe.py)
      break;
    case FrameworkPreset::deepspeed_2021:
      // ZeRO-3 as DeepSpeed v0.3.x ran it (stage3.py, partition_parameters.py), the version Narayanan et
      // al. 2021 compared: each parameter gathered and its gradient reduce-scattered on its own, through
      // the list API, after a torch.cuda.synchronize() (DeepSpeed PR #1188: "the async version is not
      // async at all, because each all_gather calls torch.cuda.synchronize()").
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      f.blocking_p2p = true;
      f.prefetch = 0;
      f.gather_per_tensor = true;
      f.synchronous_collectives = true;
      f.gather_host_s = kDeepSpeed2021GatherHost;
      f.collective_host_per_rank_s = kListCollectiveHostPerRank;
      f.launch_overhead_s = kDeepSpeedLaunchOverhead;
      f.moe_host_sync = false;
      break;
    case FrameworkPreset::fsdp2:
    case FrameworkPreset::torchtitan:
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      f.grad_reduce_dtype = topo::Precision::fp32;
      // torchtitan's Llama runs its RMSNorm, SwiGLU, rotary embedding and loss as eager ops unless
      // compiled (training.compile false by default); FSDP2 wraps any model and leaves its kernels alone.
      f.fused_elementwise = preset != FrameworkPreset::torchtitan;
      f.gradient_staging = GradientStaging::fsdp2;
      // torchtitan's GroupedExperts run all local experts in one torch._grouped_mm.
      if (preset == FrameworkPreset::torchtitan) f.expert_launch_s = 0;
      break;
    case FrameworkPreset::fsdp1:
      // PyTorch FSDP1 around model code written as eager PyTorch ops, as most published FSDP runs train
      // (Hugging Face transformers' modelling code, Composer, Lightning): nothing fused or compiled.
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      f.grad_reduce_dtype = topo::Precision::fp32;
      f.fused_elementwise = false;
      f.gradient_staging = GradientStaging::fsdp1;
      break;
    case FrameworkPreset::llm_foundry:
      // Composer's PyTorch FSDP (FSDP1) around an MPT model, as scripts/train/benchmarking runs it: one
      // unit per MPT block; limit_all_gathers lets one all-gather run ahead of the computing unit;
      // mixed_precision DEFAULT reduces gradients in fp32; LayerNorm (LPLayerNorm), GELU, residual adds
      // and the loss are eager PyTorch ops, nothing compiled.
      f.tp_comm_overlap = false;
      f.overlap_param_gather = false;
      f.grad_reduce_dtype = topo::Precision::fp32;
      f.fused_elementwise = false;
      f.unpadded_attention = true;
      f.gradient_staging = GradientStaging::fsdp1;
      f.optimizer_tensor_ops = 8;  // Composer's DecoupledAdamW: one .item() and 8 kernels per tensor
      break;
  }
  // Only Megatron-Core's router kernels are counted (Framework::router_kernels): the other presets price
  // the router's GEMM alone.
  if (preset != FrameworkPreset::megatron_core && preset != FrameworkPreset::nemo) f.router_kernels = 1;
  return f;
}

double gradient_staging_bytes(GradientStaging staging, double grad_bytes, double reduce_bytes) {
  switch (staging) {
    case GradientStaging::in_place:
      return 0;
    case GradientStaging::fsdp1:
      return 2 * grad_bytes + (reduce_bytes != grad_bytes ? grad_bytes + reduce_bytes : 0.0) +
             2 * reduce_bytes;
    case GradientStaging::fsdp2:
      return grad_bytes + reduce_bytes;
  }
  return 0;
}

int prefetch_units(const Framework& framework, double unit_params) {
  if (framework.synchronous_collectives) return 0;  // the host waits for each gather before the next
  if (framework.prefetch_bucket_params <= 0) return std::max(0, framework.prefetch);
  if (!(unit_params > 0)) return std::max(0, framework.prefetch);
  return static_cast<int>(std::floor(framework.prefetch_bucket_params / unit_params));
}

int moe_router_kernels(const Framework& framework) {
  const int fused = token_based(framework.moe_dispatcher) ? kFusedRouterKernels - kFlexRouterKernels : 0;
  return std::max(1, framework.router_kernels - fused);
}

int flex_dispatcher_sms(const Framework& framework) {
  if (!token_based(framework.moe_dispatcher)) return 0;
  if (framework.moe_dispatcher_sms > 0) return framework.moe_dispatcher_sms;
  return framework.moe_dispatcher == MoeDispatcher::deepep ? kDeepepDefaultSms : kHybridepDefaultSms;
}

std::string dispatcher_sms_problem(const Framework& framework, int gpu_sms, std::string_view gpu_name) {
  const int sms = flex_dispatcher_sms(framework);
  if (sms == 0 || gpu_sms <= 0 || sms < gpu_sms) return {};
  return std::string(to_string(framework.moe_dispatcher)) + " holds " + std::to_string(sms) +
         " SMs, but the GPU " + std::string(gpu_name) + " has " + std::to_string(gpu_sms) +
         ": expected fewer, leaving some for the kernels beside it";
}

std::string framework_flags(const Framework& f, bool overlap_grad_reduce) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  std::string out;
  out.reserve(512);  // one allocation: a search writes this for every layout
  out += to_string(f.preset);
  out += ':';
  out += " tp_comm_overlap=";
  out += flag(f.tp_comm_overlap);
  out += " overlap_param_gather=";
  out += flag(f.overlap_param_gather);
  if (f.ep_comm_overlap) out += " ep_comm_overlap=true";
  if (f.delay_wgrad_compute) out += " delay_wgrad_compute=true";
  if (f.fused_grouped_mlp) out += " fused_grouped_mlp=true";
  if (f.moe_dispatcher != MoeDispatcher::all_to_all)
    out += " moe_dispatcher=" + std::string(to_string(f.moe_dispatcher));
  if (token_based(f.moe_dispatcher)) out += " moe_dispatcher_sms=" + std::to_string(flex_dispatcher_sms(f));
  if (f.router_kernels != kFusedRouterKernels) out += " router_kernels=" + std::to_string(f.router_kernels);
  out += " overlap_grad_reduce=";
  out += flag(overlap_grad_reduce);
  out += " blocking_p2p=";
  out += flag(f.blocking_p2p);
  out += " prefetch=" + std::to_string(f.prefetch);
  if (f.prefetch_bucket_params > 0)
    out += " prefetch_bucket_params=" + std::to_string(static_cast<long long>(f.prefetch_bucket_params));
  out += " reshard_after_forward=";
  out += flag(f.reshard_after_forward);
  if (f.gather_per_tensor) {
    out += " gather_per_tensor=true";
  } else {
    out += " gathers_per_layer=" + std::to_string(f.gathers_per_layer);
  }
  if (f.synchronous_collectives) out += " synchronous_collectives=true";
  if (f.gather_host_s > 0) out += " gather_host_us=" + std::to_string(std::lround(f.gather_host_s * 1e6));
  if (f.collective_host_per_rank_s > 0)
    out += " collective_host_per_rank_us=" + fmt::format("{:g}", f.collective_host_per_rank_s * 1e6);
  out += " fused_elementwise=";
  out += flag(f.fused_elementwise);
  if (f.unpadded_attention) out += " unpadded_attention=true";
  if (f.gradient_staging != GradientStaging::in_place)
    out += " gradient_staging=" + std::string(to_string(f.gradient_staging));
  if (f.cp_kv_all_gather) out += " cp_kv_all_gather=true";
  out += " cuda_graphs=";
  out += flag(f.cuda_graphs);
  if (!f.cuda_graphs) out += " launch_overhead_us=" + std::to_string(std::lround(f.launch_overhead_s * 1e6));
  if (!f.moe_host_sync) out += " moe_host_sync=false";
  if (f.expert_launch_s != kDriverLaunchOverhead)
    out += " expert_launch_us=" + std::to_string(std::lround(f.expert_launch_s * 1e6));
  if (f.optimizer_tensor_ops > 0) out += " optimizer_tensor_ops=" + std::to_string(f.optimizer_tensor_ops);
  if (f.grad_reduce_dtype) out += " grad_reduce_dtype=" + std::string(topo::to_string(*f.grad_reduce_dtype));
  if (f.memory_reserve > 0) out += " memory_reserve=" + std::to_string(f.memory_reserve);
  return out;
}

std::optional<Attention> preset_fused_attention(FrameworkPreset preset) {
  switch (preset) {
    case FrameworkPreset::torchtitan:
    case FrameworkPreset::llm_foundry:
    case FrameworkPreset::fsdp1:
      return Attention::flash2;
    case FrameworkPreset::deepspeed:
    case FrameworkPreset::deepspeed_2021:
    case FrameworkPreset::fsdp2:
    case FrameworkPreset::megatron_core:
    case FrameworkPreset::megatron_lm_2021:
    case FrameworkPreset::nemo:
      return std::nullopt;
  }
  return std::nullopt;
}

bool preset_overlaps_grad_reduce(FrameworkPreset preset) {
  // Megatron-LM of 2021 all-reduced every gradient after the backward pass; DeepSpeed's overlap_comm
  // defaults to false for ZeRO stages 0–2.
  return preset != FrameworkPreset::megatron_lm_2021 && preset != FrameworkPreset::deepspeed &&
         preset != FrameworkPreset::deepspeed_2021;
}

std::string_view preset_citation(FrameworkPreset preset) {
  switch (preset) {
    case FrameworkPreset::megatron_core:
      return "Megatron-Core (2024+) performance flags: --overlap-grad-reduce, --overlap-param-gather with "
             "the distributed optimizer, --tp-comm-overlap (TransformerEngine userbuffers), async p2p "
             "(megatron/training/arguments.py; docs 'Distributed Optimizer', 'Communication overlap')";
    case FrameworkPreset::megatron_lm_2021:
      return "Megatron-LM as in Narayanan et al. 2021 (arXiv:2104.04473): gradients all-reduced after the "
             "backward pass, no tensor-parallel or parameter-gather overlap; sends batched with the "
             "receives the schedule waits for (p2p_communication.py)";
    case FrameworkPreset::deepspeed:
      return "DeepSpeed ZeRO config defaults (deepspeed.ai/docs/config-json): overlap_comm false for stages "
             "0-2, stage3_prefetch_bucket_size 5e7 parameters, parameters fetched per submodule; pipeline "
             "engine sends activations with blocking p2p.send (deepspeed/runtime/pipe/engine.py)";
    case FrameworkPreset::deepspeed_2021:
      return "DeepSpeed v0.3.x ZeRO-3 (2021; Narayanan et al. 2021's comparison): one all-gather and one "
             "reduce-scatter per parameter through the list API after torch.cuda.synchronize() "
             "(partition_parameters.py _allgather_param; PR #1188), ~0.38 ms of host time per gather "
             "(issue #1069)";
    case FrameworkPreset::fsdp2:
    case FrameworkPreset::torchtitan:
      return "PyTorch FSDP2 as torchtitan applies it (torchtitan/parallelisms/parallelize_llama.py): one "
             "fully_shard unit per transformer block, implicit prefetch of the next unit, "
             "reshard_after_forward true, reduce in float32 (mixed_precision_reduce), async TP off; "
             "foreach_reduce copies each unit's gradients into the reduce-scatter buffer "
             "(_fsdp_collectives.py)";
    case FrameworkPreset::llm_foundry:
      return "MosaicML llm-foundry (Composer + PyTorch FSDP) as scripts/train/benchmarking/"
             "submit_benchmarks.py runs MPT: attn_impl flash (flash-attn FlashAttention-2, the gpu-flash2 "
             "extra), fsdp_config limit_all_gathers true, mixed_precision DEFAULT (fp32 reduce_dtype, "
             "Composer PR #2628), low_precision_layernorm and GELU as eager ops, no torch.compile; "
             "flash_attn_fn unpads q, k, v "
             "and pads the output around flash_attn_unpadded_func even without padding "
             "(llmfoundry/models/layers/attention.py); FSDP1's post-backward hook concatenates, casts to "
             "fp32 "
             "and pre-divides each unit's gradient before its reduce-scatter (_runtime_utils.py, "
             "default_hooks.py)";
    case FrameworkPreset::fsdp1:
      return "PyTorch FSDP1 (torch.distributed.fsdp.FullyShardedDataParallel) around eager model code: one "
             "unit per transformer block, the next unit's all-gather issued ahead (BACKWARD_PRE prefetch, "
             "limit_all_gathers), gradients reduced in float32 as Composer's mixed_precision DEFAULT and "
             "torchtitan set it (PyTorch's own default reduces in param_dtype: set grad_reduce_dtype), "
             "norms, activations, rotary and loss as eager ops, attention through flash-attn or SDPA's "
             "FlashAttention-2; the post-backward hook concatenates, casts and pre-divides each unit's "
             "gradient (_runtime_utils.py, default_hooks.py)";
    case FrameworkPreset::nemo:
      return "NeMo 2.0 performance recipes (nemo/collections/llm/recipes): Megatron-Core with "
             "tp_comm_overlap, overlap_param_gather and overlap_grad_reduce on";
  }
  return "";
}

}  // namespace trainsim::model
