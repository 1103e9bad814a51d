#include "models/step/layout_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "models/step/pipeline_schedule.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/rank_tensors.hpp"

namespace trainsim::model {

std::int64_t micro_batches_per_step(const ParallelPlan& plan, const TrainingSpec& training) {
  if (training.global_batch < 1) return plan.pp;
  return std::max<std::int64_t>(1, training.global_batch / (plan.data_replicas() * plan.micro_batch));
}

std::string key_path(LayoutKey key) {
  return std::string(name_in(kLayoutKeyPaths, key));
}

namespace {

// Appends a problem to the layout's list: problem(key, message).
class ProblemList {
 public:
  explicit ProblemList(std::vector<LayoutProblem>& out) : out_(out) {}
  void operator()(LayoutKey key, std::string message) const { out_.push_back({key, std::move(message)}); }

 private:
  std::vector<LayoutProblem>& out_;
};

// Every degree at least 1 and their product within 64 bits; false (with the problem listed) when not, as
// no other rule can be checked then.
bool degrees_countable(const ParallelPlan& p, std::int64_t gpus, const ProblemList& problem) {
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.micro_batch < 1 || p.virtual_stages < 1) {
    problem(LayoutKey::parallelism,
            "every parallel degree, the micro-batch and virtual_stages must be at least 1");
    return false;
  }
  const std::int64_t mp = p.model_parallel_size();
  if (mp == ParallelPlan::kOverflowedSize || p.world_size() == ParallelPlan::kOverflowedSize) {
    problem(LayoutKey::parallelism,
            fmt::format("tp·pp·cp·ep·dp = {}·{}·{}·{}·{} is more GPUs than any cluster "
                        "has (the product overflows 64 bits); the cluster has {}",
                        p.tp, p.pp, p.cp, p.ep, p.dp, gpus));
    return false;
  }
  return true;
}

// The product of the degrees against the cluster's GPUs, and the sharding group against dp.
void gpu_count_rules(const ParallelPlan& p, std::int64_t gpus, const ProblemList& problem) {
  const std::int64_t mp = p.model_parallel_size();
  if (p.world_size() != gpus) {
    const std::string mp_text =
        p.expert_folding
            ? fmt::format("tp·pp·cp = {}·{}·{} = {} (ep folded over cp·dp)", p.tp, p.pp, p.cp, mp)
            : fmt::format("tp·pp·cp·ep = {}·{}·{}·{} = {}", p.tp, p.pp, p.cp, p.ep, mp);
    if (p.dp_auto && gpus % mp != 0) {
      problem(LayoutKey::parallelism,
              fmt::format("the cluster's {} GPUs are not divisible by {} (dp: auto)", gpus, mp_text));
    } else {
      problem(LayoutKey::dp, fmt::format("{} times dp = {} is {} GPUs, but the cluster has {} (use dp: auto)",
                                         mp_text, p.dp, p.world_size(), gpus));
    }
  }
  if (p.shard_group > 0 && p.zero == ZeroStage::none) {
    problem(LayoutKey::shard_group,
            "applies to ZeRO 1-3 (HSDP shards within each group); with zero: 0 "
            "nothing is sharded");
  } else if (p.shard_group > 0 && p.dp % p.shard_group != 0) {
    problem(LayoutKey::shard_group, fmt::format("must divide dp ({}), found {}", p.dp, p.shard_group));
  }
}

// expert_tp against tp, and the folded expert-parallel group against cp and dp.
void expert_layout_rules(const ParallelPlan& p, const ProblemList& problem) {
  // Folded, the expert-parallel group is the first ep ranks of cp × (one sharding group of) dp, cp
  // innermost: within cp, or all of cp and a part of dp.
  // With expert_tp below tp the tp ranks outside an expert's split come first in the ep group.
  const int etp = p.expert_tensor_parallel();
  if (etp < 1 || p.tp % etp != 0) {
    problem(LayoutKey::expert_tp, fmt::format("must divide tp ({}), found {}", p.tp, etp));
  } else if (etp != p.tp && !p.expert_folding) {
    problem(LayoutKey::expert_tp,
            "below tp needs expert_folding: true (the other tp ranks join the ep group)");
  } else if (etp != p.tp && !p.sequence_parallel) {
    problem(LayoutKey::expert_tp,
            "below tp needs sequence_parallel: true (each rank dispatches its own share of the tokens)");
  } else if (p.expert_folding && !p.folded_experts().valid) {
    const int tp_part = p.tp / etp;
    if (p.ep % tp_part != 0) {
      problem(LayoutKey::ep,
              fmt::format("folded, ep ({}) must be a multiple of tp/expert_tp ({})", p.ep, tp_part));
    } else {
      problem(LayoutKey::ep,
              fmt::format("folded over {}cp·dp, ep ({}) must be {}a divisor of cp ({}), or cp times a "
                          "divisor of dp{} ({})",
                          tp_part > 1 ? "tp/expert_tp·" : "", p.ep,
                          tp_part > 1 ? fmt::format("tp/expert_tp = {} times ", tp_part) : std::string(),
                          p.cp, p.shard_group > 0 ? "'s sharding group" : "", p.dp_shard()));
    }
  }
}

// The attention heads and kv heads against tp (transformer models).
void head_rules(const TransformerSpec& m, const ParallelPlan& p, const ProblemList& problem) {
  if (m.heads % p.tp != 0) {
    problem(LayoutKey::tp, fmt::format("the model's heads ({}) must be divisible by tp ({})", m.heads, p.tp));
  } else if (m.kv_heads_or_heads() % p.tp != 0 && p.tp % m.kv_heads_or_heads() != 0) {
    problem(LayoutKey::tp,
            fmt::format("the model's kv_heads ({}) must be divisible by tp ({}), or tp by kv_heads",
                        m.kv_heads_or_heads(), p.tp));
  }
}

// The pipeline's stages and virtual stages against the model's layers, and stage_layers' split.
void pipeline_split_rules(const ParallelPlan& p, std::int64_t layers, const ProblemList& problem) {
  const bool interleaved = p.schedule == Schedule::interleaved;
  bool split_checked = true;
  if (p.pp > layers) {
    problem(LayoutKey::pp, fmt::format("pp ({}) is larger than the model's layers ({})", p.pp, layers));
    split_checked = false;
  }
  if (p.virtual_stages > 1 && !interleaved) {
    problem(LayoutKey::virtual_stages, "virtual_stages > 1 needs schedule: interleaved");
    split_checked = false;
  } else if (p.schedule == Schedule::dualpipe && p.pp % 2 != 0) {
    problem(LayoutKey::schedule, fmt::format("dualpipe needs an even pp (its two directions meet in the "
                                             "middle); pp is {}",
                                             p.pp));
    split_checked = false;
  } else if (is_v_shape(p.schedule) && p.schedule != Schedule::dualpipe &&
             layers < 2 * static_cast<std::int64_t>(p.pp)) {
    problem(LayoutKey::schedule,
            fmt::format("{} runs 2·pp = {} virtual stages, each needing a layer; the model has {}",
                        to_string(p.schedule), 2 * p.pp, layers));
    split_checked = false;
  } else if (interleaved && p.virtual_stages > 1 &&
             layers <
                 static_cast<std::int64_t>(p.pp) * p.virtual_stages -
                     (p.stage_layers.size() == static_cast<std::size_t>(p.pp) * p.virtual_stages ? 2 : 0)) {
    problem(
        LayoutKey::virtual_stages,
        fmt::format("with schedule: interleaved every one of the pp·virtual_stages = {}·{} virtual stages "
                    "needs a layer (but the first and the last, given a stage_layers entry each); the model "
                    "has {}",
                    p.pp, p.virtual_stages, layers));
    split_checked = false;
  }
  if (split_checked && !p.stage_layers.empty()) {
    // A given list is checked as given: tail slots shape only the automatic split.
    if (LayerSplit split = split_pipeline_layers(layers, p, 0); !split.reason.empty())
      problem(LayoutKey::stage_layers, std::move(split.reason));
  }
}

// The features of a transformer model a layout must suit: experts, MLA, the MoE dispatcher, context
// parallelism's sequence split and sliding windows.
void model_feature_rules(const TransformerSpec& m, const ParallelPlan& p, const ProblemList& problem) {
  if (p.ep > 1 && !m.is_moe()) {
    problem(LayoutKey::ep, "ep > 1 needs a mixture-of-experts model (experts > 0)");
  } else if (m.is_moe() && m.experts % p.ep != 0) {
    problem(LayoutKey::ep,
            fmt::format("the model's experts ({}) must be divisible by ep ({})", m.experts, p.ep));
  }
  const auto recomputed = [&](RecomputeModule x) { return recomputes(p.recompute, p.recompute_modules, x); };
  if (!m.is_mla() && recomputed(RecomputeModule::mla_up_proj)) {
    problem(LayoutKey::recompute,
            "module mla_up_proj needs a model with multi-head latent attention (Megatron-Core refuses it "
            "otherwise)");
  }
  if (!m.is_moe() && (recomputed(RecomputeModule::moe) || recomputed(RecomputeModule::moe_act) ||
                      recomputed(RecomputeModule::shared_experts))) {
    problem(LayoutKey::recompute, "modules moe, moe_act and shared_experts need a mixture-of-experts model");
  } else if (m.shared_experts == 0 && recomputed(RecomputeModule::shared_experts)) {
    problem(LayoutKey::recompute,
            "module shared_experts needs a model with shared experts (model.shared_experts)");
  }
  // Megatron-Core's checks of offload_modules (transformer_config.py __post_init__).
  const auto offloads = [&](OffloadModule x) { return model::offloads(p.offload_modules, x); };
  if (p.offload_modules != 0 && (p.recompute == Recompute::full || p.recompute == Recompute::op)) {
    problem(LayoutKey::offload, fmt::format("offloads module inputs, which {} recompute does not keep: use "
                                            "recompute none or selective (modules)",
                                            to_string(p.recompute)));
  }
  if (!m.is_moe() && (offloads(OffloadModule::expert_fc1) || offloads(OffloadModule::moe_act))) {
    problem(LayoutKey::offload, "modules expert_fc1 and moe_act need a mixture-of-experts model");
  }
  if (offloads(OffloadModule::attn_proj) && !offloads(OffloadModule::core_attn)) {
    problem(LayoutKey::offload,
            "module attn_proj needs core_attn offloaded too (Megatron-Core refuses it alone)");
  }
  if (m.is_moe() && p.framework.moe_dispatcher == MoeDispatcher::all_gather && p.tp > 1 &&
      !p.sequence_parallel) {
    problem(LayoutKey::moe_dispatcher,
            fmt::format("allgather with tp {} needs parallelism.sequence_parallel: true (each tp rank "
                        "dispatches its own tokens, as Megatron-Core requires of MoE under tp)",
                        p.tp));
  }
  if (p.cp > 1 && m.seq_len % (2 * static_cast<std::int64_t>(p.cp)) != 0) {
    problem(
        LayoutKey::cp,
        fmt::format("the model's seq_len ({}) must be divisible by 2·cp = {} (the causal load balance cuts "
                    "the sequence into two chunks per context-parallel rank)",
                    m.seq_len, 2 * p.cp));
  }
  if (p.cp > 1 && m.windowed_layer_count() > 0) {
    problem(LayoutKey::cp,
            fmt::format("context parallelism with sliding-window layers (model.sliding_window {} < seq_len "
                        "{}) is not modelled: the ring steps a window skips are not priced; use cp: 1",
                        m.sliding_window, m.seq_len));
  }
}

// The framework's MoE settings against the layout: moe_dispatcher_sms belongs to a flex dispatcher;
// ep_comm_overlap runs with the alltoall or flex dispatchers only, whose all-to-alls it overlaps
// (Megatron-Core asserts "overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher";
// the allgather dispatcher's gathers stay blocking); delay_wgrad_compute needs ep_comm_overlap, as
// Megatron-Core asserts (TransformerConfig.__post_init__), and a schedule whose backward passes hold their
// weight gradients (1f1b, interleaved: the ones Megatron-Core merges layers in; zero-bubble and the V and
// DualPipe schedules run them as passes of their own); DeepEP needs tp·ep > 1, as
// MoEFlexTokenDispatcher asserts. The dispatcher's SMs against the GPU's are the scenario reader's
// (dispatcher_sms_problem).
void framework_rules(const ParallelPlan& p, const ProblemList& problem) {
  const Framework& f = p.framework;
  if (f.ep_comm_overlap && f.moe_dispatcher == MoeDispatcher::all_gather) {
    problem(
        LayoutKey::moe_dispatcher,
        "allgather does not run with framework.ep_comm_overlap: true (Megatron-Core overlaps the alltoall "
        "and flex dispatchers' all-to-alls only): name another dispatcher, or set ep_comm_overlap: false");
  }
  if (f.delay_wgrad_compute && !f.ep_comm_overlap) {
    problem(LayoutKey::delay_wgrad_compute,
            "needs framework.ep_comm_overlap: true (Megatron-Core's --delay-wgrad-compute needs "
            "--overlap-moe-expert-parallel-comm)");
  } else if (f.delay_wgrad_compute && p.schedule != Schedule::one_f_one_b &&
             p.schedule != Schedule::interleaved) {
    problem(LayoutKey::delay_wgrad_compute,
            fmt::format("needs the 1f1b or interleaved schedule, found {} (it runs the weight gradients as "
                        "passes of their own)",
                        to_string(p.schedule)));
  }
  if (f.moe_dispatcher_sms > 0 && !token_based(f.moe_dispatcher)) {
    problem(LayoutKey::moe_dispatcher_sms,
            fmt::format("applies to the flex dispatcher's backends (moe_dispatcher: deepep or hybridep), "
                        "found {}",
                        to_string(f.moe_dispatcher)));
  }
  if (f.moe_dispatcher == MoeDispatcher::deepep && static_cast<std::int64_t>(p.tp) * p.ep <= 1) {
    problem(LayoutKey::moe_dispatcher,
            "deepep needs tp·ep > 1 (Megatron-Core's flex dispatcher asserts \"DeepEP dispatcher requires "
            "TPxEP > 1\"): raise parallelism.ep, or use alltoall");
  }
}

// The global batch against the data replicas and micro-batch, the micro-batch count against the
// simulator's limit and the schedule's constraints. The caller checks that the GPU count works out.
void batch_rules(const ParallelPlan& p, const TrainingSpec& training, const ProblemList& problem) {
  const bool interleaved = p.schedule == Schedule::interleaved;
  const std::int64_t per_step = p.data_replicas() * p.micro_batch;
  if (training.global_batch % per_step != 0) {
    const std::string factors = p.ep_axis() > 1
                                    ? fmt::format("dp·ep·micro_batch = {}·{}·{}", p.dp, p.ep, p.micro_batch)
                                    : fmt::format("dp·micro_batch = {}·{}", p.dp, p.micro_batch);
    problem(LayoutKey::global_batch, fmt::format("global_batch ({}) must be divisible by {} = {}",
                                                 training.global_batch, factors, per_step));
    return;
  }
  const std::int64_t micro_batches = micro_batches_per_step(p, training);
  if (micro_batches > kMaxMicroBatches) {
    problem(LayoutKey::micro_batch,
            fmt::format(
                "{} micro-batches per step (global batch / (dp·ep·micro_batch)) is more than the {} a step "
                "is simulated with; raise micro_batch or dp",
                micro_batches, kMaxMicroBatches));
    return;
  }
  const int v = chunks_per_rank(p);
  if (p.schedule == Schedule::dualpipe) {
    // Timed as DualPipeV over pp/2 ranks with half the micro-batches (step_plan.hpp).
    if (micro_batches % 2 != 0 || micro_batches < 2 * static_cast<std::int64_t>(p.pp)) {
      problem(LayoutKey::schedule,
              fmt::format("dualpipe needs an even micro-batch count of at least 2·pp = {} (DeepSeek's "
                          "DualPipe asserts it); global_batch / (dp·micro_batch) is {}",
                          2 * p.pp, micro_batches));
    }
  } else if (p.virtual_stages == 1 || interleaved) {
    if (const auto why = schedule_constraint_error(p.schedule, p.pp, static_cast<int>(micro_batches), v);
        !why.empty())
      problem(LayoutKey::schedule, std::string(why));
  }
}

// TransformerEngine's fused grouped MLP (framework.fused_grouped_mlp): its kernels are MXFP8 grouped GEMMs
// with the activation in their epilogues (TE's ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8), so it needs a MoE
// model trained in fp8; the activation as a module of its own (recompute or offload moe_act) has no place
// in it. Experts' biases keep their eager passes (models/workload/layer_ops.cpp).
void fused_mlp_rules(const TransformerSpec& m, const ParallelPlan& p, const TrainingSpec& training,
                     const ProblemList& problem) {
  if (!p.framework.fused_grouped_mlp) return;
  const auto refuse = [&](std::string_view why) { problem(LayoutKey::fused_grouped_mlp, std::string(why)); };
  if (!m.is_moe()) {
    refuse("needs a mixture-of-experts model (it fuses the experts' grouped GEMMs)");
    return;
  }
  if (training.precision != topo::Precision::fp8) {
    refuse(fmt::format("needs training.precision: fp8 (its grouped GEMMs run in MXFP8), found {}",
                       topo::to_string(training.precision)));
  }
  if (recomputes(p.recompute, p.recompute_modules, RecomputeModule::moe_act) ||
      offloads(p.offload_modules, OffloadModule::moe_act)) {
    refuse(
        "runs the activation inside fc1's GEMM: module moe_act cannot be recomputed or offloaded on its "
        "own (recompute module moe instead)");
  }
}

}  // namespace

std::vector<LayoutProblem> layout_rules(const TransformerSpec& m, const ParallelPlan& p,
                                        const TrainingSpec& training, std::int64_t gpus) {
  std::vector<LayoutProblem> out;
  const ProblemList problem(out);
  if (!degrees_countable(p, gpus, problem)) return out;
  gpu_count_rules(p, gpus, problem);
  expert_layout_rules(p, problem);
  const bool generic = !m.generic_layers.empty();
  const std::int64_t layers = stack_layer_count(m);
  if (!generic) head_rules(m, p, problem);
  pipeline_split_rules(p, layers, problem);
  if (!generic) model_feature_rules(m, p, problem);
  if (!generic) fused_mlp_rules(m, p, training, problem);
  framework_rules(p, problem);
  // The batch rules need the data-parallel degree, which is known only once the GPU count works out.
  if (training.global_batch < 1 || p.world_size() != gpus) return out;
  batch_rules(p, training, problem);
  return out;
}

bool runs_megatron_ep_overlap(const TransformerSpec& m, const ParallelPlan& p) {
  const Framework& f = p.framework;
  if (!m.is_moe() || f.preset != FrameworkPreset::megatron_core || !f.ep_comm_overlap) return true;
  return p.ep > 1 && (p.pp == 1 || p.schedule == Schedule::interleaved) && p.recompute != Recompute::full &&
         !recomputes(p.recompute, p.recompute_modules, RecomputeModule::moe);
}

}  // namespace trainsim::model
