#pragma once
// The rules a parallel layout must satisfy to be simulated, written once. The loader places each problem
// at the key it blames in the scenario file; make_step_plan turns the first into an infeasibility reason;
// layout search lists only the layouts with none.
//
// In order: every degree >= 1; GPUs = tp·pp·cp·ep·dp (with expert_folding tp·pp·cp·dp, and ep dividing
// cp or being cp times a divisor of dp's sharding group); heads and kv_heads divisible by tp (or tp by
// kv_heads: each K/V head is then copied on tp/kv ranks); pp <= layers; virtual_stages > 1 only with the
// interleaved schedule, and a layer for each of the pp·virtual_stages virtual stages; stage_layers of pp
// (or pp·v) entries, each >= 1 (>= v per rank; of pp·v, the first and the last may be 0: the embedding or
// the LM head alone), summing to the layers; ep > 1 only on a mixture-of-experts
// model whose experts divide by it; the sequence divisible by 2·cp when cp > 1 (the causal load balance
// cuts it into 2·cp chunks, two per rank, as Megatron-Core's context parallelism does) and cp 1 when some
// layers have a sliding window shorter than the sequence (ring attention under a window is not modelled);
// the global batch by
// dp·ep·micro_batch (expert-parallel ranks are data replicas of the dense layers; folded: dp·micro_batch);
// at most
// kMaxMicroBatches micro-batches; the schedule's own constraints (pipeline_schedule.hpp). A sharding group
// (shard_group) divides dp. The all-gather MoE token dispatcher under tp > 1 needs sequence parallelism
// (each tp rank dispatches its own tokens; Megatron-Core refuses MoE with tp and no sequence parallelism).
// The fused grouped MLP needs a MoE model trained in fp8, and its activation neither recomputed nor
// offloaded on its own (it has no pass of its own).
#include <cstdint>
#include <string>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "sim/enum_names.hpp"

namespace trainsim::model {

/// Steps with more micro-batches per pipeline are refused: the schedule is simulated pass by pass, and
/// no practical layout comes near this.
inline constexpr std::int64_t kMaxMicroBatches = 65536;

/// Micro-batches per optimizer step, m = global_batch / (dp·ep·micro_batch): the count the batch rules
/// check (whole, at most kMaxMicroBatches) and the step plan and the memory estimate use. Without a global
/// batch (global_batch < 1: a layout's memory estimated alone) a full pipeline, pp; never below 1.
[[nodiscard]] std::int64_t micro_batches_per_step(const ParallelPlan& plan, const TrainingSpec& training);

/// The scenario key a problem blames (`parallelism.<key>`, or training.global_batch).
enum class LayoutKey {
  parallelism,
  tp,
  pp,
  dp,
  cp,
  ep,
  expert_tp,
  micro_batch,
  schedule,
  virtual_stages,
  stage_layers,
  shard_group,
  moe_dispatcher,
  moe_dispatcher_sms,
  delay_wgrad_compute,
  fused_grouped_mlp,
  recompute,
  offload,
  global_batch
};

inline constexpr EnumNames<LayoutKey, 19> kLayoutKeyPaths{
    {{"parallelism", LayoutKey::parallelism},
     {"parallelism.tp", LayoutKey::tp},
     {"parallelism.pp", LayoutKey::pp},
     {"parallelism.dp", LayoutKey::dp},
     {"parallelism.cp", LayoutKey::cp},
     {"parallelism.ep", LayoutKey::ep},
     {"parallelism.expert_tp", LayoutKey::expert_tp},
     {"parallelism.micro_batch", LayoutKey::micro_batch},
     {"parallelism.schedule", LayoutKey::schedule},
     {"parallelism.virtual_stages", LayoutKey::virtual_stages},
     {"parallelism.stage_layers", LayoutKey::stage_layers},
     {"parallelism.shard_group", LayoutKey::shard_group},
     {"framework.moe_dispatcher", LayoutKey::moe_dispatcher},
     {"framework.moe_dispatcher_sms", LayoutKey::moe_dispatcher_sms},
     {"framework.delay_wgrad_compute", LayoutKey::delay_wgrad_compute},
     {"framework.fused_grouped_mlp", LayoutKey::fused_grouped_mlp},
     {"parallelism.recompute", LayoutKey::recompute},
     {"parallelism.offload", LayoutKey::offload},
     {"training.global_batch", LayoutKey::global_batch}}};

static_assert(kLayoutKeyPaths.size() == static_cast<std::size_t>(LayoutKey::global_batch) + 1,
              "one path per LayoutKey, in order");

/// "parallelism.tp", "training.global_batch", … (parallelism for the layout as a whole).
[[nodiscard]] std::string key_path(LayoutKey key);

struct LayoutProblem {
  LayoutKey key;
  std::string message;  ///< what is wrong, with the numbers; the key path is not repeated in it
};

/// Every problem of `plan` for `model` on `gpus` GPUs, in the order of the file comment; empty when the
/// layout can be simulated. plan.dp is the resolved degree (plan.dp_auto only words the GPU-count problem).
/// A training.global_batch < 1 skips the batch rules (the loader reports a missing batch itself).
[[nodiscard]] std::vector<LayoutProblem> layout_rules(const TransformerSpec& model, const ParallelPlan& plan,
                                                      const TrainingSpec& training, std::int64_t gpus);

/// Whether Megatron-Core runs its expert-parallel all-to-all overlap (--overlap-moe-expert-parallel-comm,
/// framework.ep_comm_overlap) for model `m` in layout `p`: TransformerConfig.__post_init__
/// (megatron/core/transformer/transformer_config.py) asserts expert_model_parallel_size > 1, and
/// virtual_pipeline_model_parallel_size when pipeline_model_parallel_size > 1, and refuses
/// recompute_granularity 'full' and "moe" among the recompute_modules. A dense model has no all-to-all to
/// overlap: the flag changes nothing, so every layout stays; so do other frameworks', and megatron-core's
/// without the flag. `run` prices what it is told (a 1f1b pipeline with the overlap stands for frameworks
/// that overlap there, e.g. DeepSeek's); the search offers only what runs.
[[nodiscard]] bool runs_megatron_ep_overlap(const TransformerSpec& m, const ParallelPlan& p);

}  // namespace trainsim::model
