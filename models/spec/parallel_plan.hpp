#pragma once
// How a step is laid out over GPUs: the scenario's `parallelism:` block as plain data.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "models/spec/framework.hpp"
#include "sim/enum_names.hpp"

namespace trainsim::model {

/// Pipeline schedules (models/step/pipeline_schedule.hpp). dualpipe (DeepSeek-V3's bidirectional schedule),
/// dualpipev (its cut-in-half V shape) and zb_v (Qi et al.'s ZB-V) put two model chunks on each rank
/// (V-shaped: chunk 0 on ranks 0..pp−1, chunk 1 back on pp−1..0); dualpipe's are two copies of the
/// parameters, one per direction.
enum class Schedule { gpipe, one_f_one_b, interleaved, zero_bubble_h1, dualpipe, dualpipev, zb_v };
/// What the backward recomputes: none; selective (Megatron: the standard attention core); full (the whole
/// layer from its input); op (torchtitan's op-level selective checkpointing: every other matmul of the
/// layer, q k v o w1 w3 w2 in order, is recomputed with the element-wise work, the rest and the fused
/// attention output are kept).
enum class Recompute { none, selective, full, op };
enum class ParallelAxis { tp, cp, ep, pp, dp };
/// Megatron-Core's --recompute-modules under selective recompute (transformer_config.py,
/// recompute_modules), one bit each: the attention core (the default when none is named); the dense
/// layers' MLP (not a MoE layer's); a MoE layer's expert activation; both norms of a layer; MLA's q/kv
/// up-projections with their rotary embedding; the whole MoE layer (router, dispatch, experts, combine);
/// the shared experts. Each module runs its forward again in the backward from the input it keeps, and
/// keeps none of its inner activations.
enum class RecomputeModule : std::uint8_t {
  core_attn = 1,
  mlp = 2,
  moe_act = 4,
  layernorm = 8,
  mla_up_proj = 16,
  moe = 32,
  shared_experts = 64,
};

/// Megatron-Core's fine-grained activation offloading (--fine-grained-activation-offloading
/// --offload-modules; transformer_config.py offload_modules, pipeline_parallel/
/// fine_grained_activation_offload.py), one bit each: the module's saved input goes to pinned host memory
/// on a copy stream of its own after the module's forward, and comes back on another before the module's
/// backward, one layer ahead. attn_norm: the layer input (ln1's); qkv_linear: ln1's output; core_attn:
/// Q, K and V (and kept scores); attn_proj: the out_proj input (Megatron needs core_attn with it);
/// mlp_norm: ln2's input; expert_fc1: the routed slots' fc1 input; moe_act: the experts' activation input.
enum class OffloadModule : std::uint8_t {
  attn_norm = 1,
  qkv_linear = 2,
  core_attn = 4,
  attn_proj = 8,
  mlp_norm = 16,
  expert_fc1 = 32,
  moe_act = 64,
};

inline constexpr EnumNames<Schedule, 7> kScheduleNames{{{"gpipe", Schedule::gpipe},
                                                        {"1f1b", Schedule::one_f_one_b},
                                                        {"interleaved", Schedule::interleaved},
                                                        {"zero-bubble-h1", Schedule::zero_bubble_h1},
                                                        {"dualpipe", Schedule::dualpipe},
                                                        {"dualpipev", Schedule::dualpipev},
                                                        {"zb-v", Schedule::zb_v}}};
/// DualPipe and DualPipeV: run as DeepSeek's program runs them (pipeline_schedule.hpp).
[[nodiscard]] constexpr bool is_dualpipe(Schedule s) {
  return s == Schedule::dualpipe || s == Schedule::dualpipev;
}
/// Two chunks per rank in a V: DualPipe, DualPipeV and ZB-V.
[[nodiscard]] constexpr bool is_v_shape(Schedule s) {
  return is_dualpipe(s) || s == Schedule::zb_v;
}
inline constexpr EnumNames<Recompute, 4> kRecomputeNames{{{"none", Recompute::none},
                                                          {"selective", Recompute::selective},
                                                          {"full", Recompute::full},
                                                          {"op", Recompute::op}}};
inline constexpr EnumNames<RecomputeModule, 7> kRecomputeModuleNames{
    {{"core_attn", RecomputeModule::core_attn},
     {"mlp", RecomputeModule::mlp},
     {"moe_act", RecomputeModule::moe_act},
     {"layernorm", RecomputeModule::layernorm},
     {"mla_up_proj", RecomputeModule::mla_up_proj},
     {"moe", RecomputeModule::moe},
     {"shared_experts", RecomputeModule::shared_experts}}};
inline constexpr EnumNames<OffloadModule, 7> kOffloadModuleNames{{{"attn_norm", OffloadModule::attn_norm},
                                                                  {"qkv_linear", OffloadModule::qkv_linear},
                                                                  {"core_attn", OffloadModule::core_attn},
                                                                  {"attn_proj", OffloadModule::attn_proj},
                                                                  {"mlp_norm", OffloadModule::mlp_norm},
                                                                  {"expert_fc1", OffloadModule::expert_fc1},
                                                                  {"moe_act", OffloadModule::moe_act}}};
/// The modules `recompute` and `modules` (RecomputeModule bits) recompute: under selective recompute the
/// named ones, or the attention core when none is named; none under any other mode.
[[nodiscard]] constexpr bool recomputes(Recompute recompute, std::uint8_t modules, RecomputeModule m) {
  if (recompute != Recompute::selective) return false;
  const auto bits = modules != 0 ? modules : static_cast<std::uint8_t>(RecomputeModule::core_attn);
  return (bits & static_cast<std::uint8_t>(m)) != 0;
}
/// Whether `modules` (OffloadModule bits) offloads m.
[[nodiscard]] constexpr bool offloads(std::uint8_t modules, OffloadModule m) {
  return (modules & static_cast<std::uint8_t>(m)) != 0;
}
inline constexpr EnumNames<ParallelAxis, 5> kParallelAxisNames{{{"tp", ParallelAxis::tp},
                                                                {"cp", ParallelAxis::cp},
                                                                {"ep", ParallelAxis::ep},
                                                                {"pp", ParallelAxis::pp},
                                                                {"dp", ParallelAxis::dp}}};

constexpr std::string_view to_string(Schedule s) {
  return name_in(kScheduleNames, s);
}
constexpr std::string_view to_string(Recompute r) {
  return name_in(kRecomputeNames, r);
}
constexpr std::string_view to_string(ParallelAxis a) {
  return name_in(kParallelAxisNames, a);
}

/// What the data-parallel ranks shard (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054 §5). A scenario
/// names a stage by its number, 0–3.
enum class ZeroStage : std::uint8_t {
  none = 0,              ///< every rank holds everything (plain data parallelism)
  optimizer_states = 1,  ///< P_os: optimizer state (Megatron's distributed optimizer)
  gradients = 2,         ///< P_os+g: also the gradients
  parameters = 3,        ///< P_os+g+p: also the weights, gathered when used (FSDP FULL_SHARD)
};
[[nodiscard]] constexpr bool shards_optimizer_states(ZeroStage z) {
  return z >= ZeroStage::optimizer_states;
}
[[nodiscard]] constexpr bool shards_gradients(ZeroStage z) {
  return z >= ZeroStage::gradients;
}
[[nodiscard]] constexpr bool shards_weights(ZeroStage z) {
  return z == ZeroStage::parameters;
}
[[nodiscard]] constexpr int stage_number(ZeroStage z) {
  return static_cast<int>(z);
}
inline constexpr EnumNames<ZeroStage, 4> kZeroStageNames{{{"0", ZeroStage::none},
                                                          {"1", ZeroStage::optimizer_states},
                                                          {"2", ZeroStage::gradients},
                                                          {"3", ZeroStage::parameters}}};
/// The stage numbered `number`; std::nullopt outside 0–3.
[[nodiscard]] constexpr std::optional<ZeroStage> zero_stage_numbered(int number) {
  if (number < 0 || number >= static_cast<int>(kZeroStageNames.size())) return std::nullopt;
  return kZeroStageNames[static_cast<std::size_t>(number)].value;
}
constexpr std::string_view to_string(ZeroStage z) {
  return name_in(kZeroStageNames, z);
}

struct ParallelPlan {
  int tp = 1;
  int pp = 1;
  std::int64_t dp = 1;  ///< resolved degree (the loader resolves `auto`)
  bool dp_auto = true;  ///< the scenario said `auto`: dp = GPUs / (tp·pp·cp·ep)
  int cp = 1;
  int ep = 1;
  /// Megatron-Core's MoE parallel folding: the ep ranks of a MoE layer are context- and data-parallel
  /// ranks of the attention (the expert-parallel group is the first ep ranks of cp × dp, cp innermost), so
  /// GPUs = tp·pp·cp·dp and the experts are replicated over cp·dp / ep ranks. False: ep is an axis of its
  /// own (GPUs = tp·pp·cp·ep·dp), its ranks data replicas of the dense layers.
  bool expert_folding = false;
  /// Tensor parallelism inside each expert (Megatron-Core --expert-tensor-parallel-size): 0 = tp. Below
  /// tp (a divisor of it, with expert_folding and sequence parallelism) an expert is split over fewer ranks
  /// and the tp/expert_tp groups of them join the expert-parallel group instead: the ep group is the first
  /// ep ranks of (tp/expert_tp) × cp × dp.
  int expert_tp = 0;
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;         ///< model chunks per pipeline rank (interleaved)
  std::vector<int> stage_layers;  ///< layers per stage; empty: spread evenly, remainder on middle stages
  int micro_batch = 1;            ///< sequences per micro-batch per data-parallel rank
  bool sequence_parallel = false;
  ZeroStage zero = ZeroStage::none;
  /// ZeRO ≥ 1: data-parallel ranks that shard among themselves (HSDP / Megatron's distributed-optimizer
  /// instances): weights, gradients and optimizer state are sharded within each group of shard_group
  /// consecutive dp ranks (× cp × ep, as without it) and replicated across the dp / shard_group groups,
  /// whose gradients are all-reduced. 0: one group of all dp ranks.
  int shard_group = 0;
  Recompute recompute = Recompute::none;
  /// Recompute::selective: the RecomputeModule bits recomputed (`recompute: {modules: [...]}`); 0: the
  /// attention core alone, Megatron-Core's default.
  std::uint8_t recompute_modules = 0;
  /// The OffloadModule bits whose saved inputs go to host memory (`offload: {modules: [...]}`); 0: none.
  std::uint8_t offload_modules = 0;
  bool overlap_grad_reduce = true;
  double bucket_bytes = 40e6;  ///< gradient bucket size, bytes
  Framework framework;         ///< the software's habits (the scenario's `framework:` block)
  /// Rank placement, innermost (fastest-varying, same node) first. Megatron-Core's default order
  /// (megatron/core/parallel_state.py, initialize_model_parallel's order="tp-cp-ep-dp-pp"): the pipeline
  /// outermost, its groups strided by world size / pp, so the data- and expert-parallel groups of one stage
  /// are consecutive ranks; folded, the expert side (etp-ep-edp-pp) takes the same ranks.
  std::vector<ParallelAxis> order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::dp,
                                     ParallelAxis::pp};

  /// ep as a factor of the GPUs: 1 when it folds over cp × dp.
  [[nodiscard]] int ep_axis() const { return expert_folding ? 1 : ep; }
  /// tp·pp·cp·ep (ep folded: tp·pp·cp), or kOverflowedSize when the product does not fit in 64 bits
  /// (degrees are read up to 1e6 each, so a product of four can overflow: no real cluster matches the
  /// saturated value).
  [[nodiscard]] std::int64_t model_parallel_size() const {
    return saturating_product({tp, pp, cp, ep_axis()});
  }
  [[nodiscard]] std::int64_t world_size() const { return saturating_product({model_parallel_size(), dp}); }
  /// Ranks that take different sequences of a step's batch: dp·ep, or dp when ep folds over cp × dp.
  [[nodiscard]] std::int64_t data_replicas() const { return saturating_product({dp, ep_axis()}); }

  static constexpr std::int64_t kOverflowedSize = std::numeric_limits<std::int64_t>::max();
  /// Data-parallel ranks in one sharding group: shard_group when set, else dp.
  [[nodiscard]] std::int64_t dp_shard() const { return shard_group > 0 ? shard_group : dp; }
  /// Ranks among which ZeRO shards a dense parameter: one sharding group's dp ranks × cp × ep.
  [[nodiscard]] double dense_shard_ranks() const { return static_cast<double>(dp_shard()) * cp * ep_axis(); }
  /// ZeRO-3 / FSDP over more than one rank: each unit gathers its weights before it computes (the one
  /// predicate the step's pricer and the memory model share).
  [[nodiscard]] bool gathers_weights() const { return shards_weights(zero) && dense_shard_ranks() > 1; }
  /// Ranks that split one expert's matrices: expert_tp, or tp when unset.
  [[nodiscard]] int expert_tensor_parallel() const { return expert_tp > 0 ? expert_tp : tp; }

  /// Folded, the expert-parallel group is the first ep ranks of (tp/expert_tp) × cp × dp's sharding part,
  /// in that order: how many it takes of each. `valid` when ep is tp/expert_tp times a divisor of cp, or of
  /// cp times a divisor of the sharding part.
  struct FoldedExperts {
    std::int64_t tp_part = 1, cp_part = 1, dp_part = 1;
    bool valid = false;
  };
  [[nodiscard]] FoldedExperts folded_experts() const {
    FoldedExperts f;
    const int etp = expert_tensor_parallel();
    if (etp < 1 || tp % etp != 0) return f;
    f.tp_part = tp / etp;
    if (ep % f.tp_part != 0) return f;
    const std::int64_t rest = ep / f.tp_part;  // the group's ranks over cp × dp
    if (cp % rest == 0) {
      f.cp_part = rest;
    } else if (rest % cp == 0 && dp_shard() % (rest / cp) == 0) {
      f.cp_part = cp;
      f.dp_part = rest / cp;
    } else {
      return f;
    }
    f.valid = true;
    return f;
  }
  /// Ranks among which ZeRO shards an expert's parameter: those holding the same expert shard, dp × cp of
  /// one sharding group (× the tp ranks outside the expert's own split), less the ep ranks folded into them.
  [[nodiscard]] double expert_shard_ranks() const {
    const double tp_outside = static_cast<double>(tp) / expert_tensor_parallel();
    return static_cast<double>(dp_shard()) * cp * tp_outside / (expert_folding ? ep : 1);
  }
  bool operator==(const ParallelPlan&) const = default;

 private:
  static std::int64_t saturating_product(std::initializer_list<std::int64_t> factors) {
    std::int64_t product = 1;
    for (const std::int64_t f : factors) {
      if (f == kOverflowedSize || __builtin_mul_overflow(product, f, &product)) return kOverflowedSize;
    }
    return product;
  }
};

/// The framework whose habits price a scenario that names none (scenarios/framework_choice.hpp applies
/// it): gradients or weights sharded (ZeRO 2–3) with neither tensor, pipeline nor context parallelism is
/// the layout PyTorch FSDP trains, and its most published form is FSDP1 around eager model code
/// (Hugging Face transformers, Composer, Lightning); every other layout is Megatron-Core's.
[[nodiscard]] inline FrameworkPreset unnamed_framework_preset(const ParallelPlan& plan) {
  const bool fsdp_layout = shards_gradients(plan.zero) && plan.tp == 1 && plan.pp == 1 && plan.cp == 1;
  return fsdp_layout ? FrameworkPreset::fsdp1 : FrameworkPreset::megatron_core;
}

}  // namespace trainsim::model
