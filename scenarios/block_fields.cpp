#include "scenarios/block_fields.hpp"

#include <initializer_list>
#include <utility>

#include "models/workload/optimizer.hpp"
#include "models/workload/preconditioner.hpp"
#include "scenarios/model_fields.hpp"
#include "scenarios/parallelism_fields.hpp"
#include "scenarios/scenario_reader.hpp"

namespace trainsim::scenario {

using D = Dimension;

namespace {

/// The precisions a key accepts, spelled as topo::kPrecisionNames spells them.
std::vector<std::pair<std::string, topo::Precision>> precision_choices(
    std::initializer_list<topo::Precision> accepted) {
  std::vector<std::pair<std::string, topo::Precision>> t;
  for (const topo::Precision p : accepted) t.emplace_back(topo::to_string(p), p);
  return t;
}

const std::vector<std::pair<std::string, topo::Precision>>& compute_precision_names() {
  using P = topo::Precision;
  static const auto kTable = precision_choices({P::fp32, P::fp16, P::bf16, P::fp8});
  return kTable;
}

const std::vector<std::pair<std::string, topo::Precision>>& state_precision_names() {
  using P = topo::Precision;
  static const auto kTable = precision_choices({P::fp32, P::fp16, P::bf16, P::fp8, P::int8});
  return kTable;
}

// Shampoo's and SOAP's preconditioners (models/workload/preconditioner.hpp): no other kind has them, so
// the row first refuses its key for any other kind (read after kind, which the table reads first).
Field<model::OptimizerSpec> preconditioner_row(Field<model::OptimizerSpec> row) {
  row.read = [read = row.read, key = row.info.key](MapReader& r, model::OptimizerSpec& o) {
    const YamlValue* at = r.get(key);
    if (at != nullptr && !model::keeps_preconditioners(o.kind)) {
      r.diagnostics().add(*at, r.child_path(key),
                          "only shampoo and soap keep preconditioners; " +
                              std::string(model::optimizer_info(o.kind).name) +
                              " has none: remove it or set kind: shampoo");
    }
    read(r, o);
  };
  return row;
}

}  // namespace

const FieldTable<topo::ClusterSpec>& cluster_fields() {
  using C = topo::ClusterSpec;
  static const FieldTable<C> kTable{
      required(structured_field<C>("node", "name or mapping",
                                   "a node preset (`trainsim list nodes`), or one with keys overridden")),
      required(count_field("nodes", &C::nodes, 1, 1e7, "nodes in the cluster")),
      count_field("gpus_per_node", &C::gpus_per_node, 1, 1024,
                  "GPUs in use on each node, at most the preset's; default all", Written::unless_zero),
      structured_field<C>("network", "mapping", "the fabric between the nodes"),
      structured_field<C>("storage", "mapping", "the storage checkpoints are written to"),
      structured_field<C>("background", "mapping", "other jobs' share of the switch-to-switch links"),
      structured_field<C>("stragglers", "list", "nodes whose kernels run slower than their peers'"),
      structured_field<C>("degraded", "list", "NICs running below their rated bandwidth"),
      structured_field<C>("variability", "mapping",
                          "the spread of the GPUs' speeds and its seed: a step waits for the slowest"),
  };
  return kTable;
}

const FieldTable<topo::NetworkSpec>& cluster_network_fields() {
  using N = topo::NetworkSpec;
  static const FieldTable<N> kTable{
      choice_field("topology", &N::topology, topo::kFabricTopologyNames,
                   "the fabric's shape; default fat-tree"),
      quantity_field("nic", &N::nic_bytes_per_s, D::bytes_per_s, Bound::positive,
                     "one NIC's bandwidth; default the node preset's", Written::unless_zero),
      count_field("nics_per_node", &N::nics_per_node, 1, 1024, "NICs per node; default the node preset's",
                  Written::unless_zero),
      number_field("oversubscription", &N::oversubscription, 1, 1024,
                   "a leaf's down/up bandwidth ratio (2 means 2:1); default 1"),
      flag_field("rail_optimized", &N::rail_optimized, "GPU i of every node on rail switch i; default true"),
      quantity_field("switch_latency", &N::switch_latency_s, D::seconds, Bound::non_negative,
                     "one switch hop's latency; default 600 ns"),
      count_field("switch_radix", &N::switch_radix, 2, 65536, "ports per switch; default 64"),
      structured_field<N>("torus_dims", "list",
                          "a torus's size in each dimension (2 for torus-2d, 3 for torus-3d), multiplying to "
                          "the nodes"),
  };
  return kTable;
}

const FieldTable<topo::StorageSpec>& cluster_storage_fields() {
  using S = topo::StorageSpec;
  static const FieldTable<S> kTable{
      quantity_field("write", &S::write_bytes_per_s, D::bytes_per_s, Bound::positive,
                     "the storage's aggregate write bandwidth", Written::unless_zero),
      quantity_field("read", &S::read_bytes_per_s, D::bytes_per_s, Bound::positive,
                     "the storage's aggregate read bandwidth", Written::unless_zero),
      quantity_field("per_node", &S::per_node_bytes_per_s, D::bytes_per_s, Bound::positive,
                     "each node's link to storage; default its NICs", Written::unless_zero),
      quantity_field("latency", &S::latency_s, D::seconds, Bound::non_negative,
                     "the latency of one storage operation; default 1 ms"),
  };
  return kTable;
}

const FieldTable<model::TrainingSpec>& training_fields() {
  using T = model::TrainingSpec;
  static const FieldTable<T> kTable = [] {
    // epochs: a number of passes, more than none (0 is refused after it is read, as its own problem).
    Field<T> epochs = number_field("epochs", &T::epochs, 0, 1e6,
                                   "passes over dataset_tokens, above 0; or tokens, or steps");
    epochs.read = [](MapReader& r, T& t) {
      const YamlValue* e = r.get("epochs");
      if (e == nullptr) return;
      if (auto x = read_number(r.diagnostics(), *e, r.child_path("epochs"), 0, 1e6)) {
        if (*x == 0)
          r.diagnostics().add(*e, r.child_path("epochs"),
                              "must be greater than zero, found \"" + e->scalar + "\"");
        t.epochs = *x;
      }
    };
    return FieldTable<T>{
        required(count_field("global_batch", &T::global_batch, 1, 1e9, "sequences per optimizer step")),
        choice_field("precision", &T::precision, compute_precision_names(),
                     "the precision of the matmuls and activations; default bf16"),
        choice_field("fp8_recipe", &T::fp8_recipe, model::kFp8RecipeNames,
                     "fp8: how GEMM inputs are scaled (Megatron-Core's --fp8-recipe); default delayed"),
        structured_field<T>("optimizer", "name or mapping",
                            "the optimizer (`trainsim list optimizers`), or its kind with keys set; default "
                            "adamw"),
        number_field("tokens", &T::tokens, 1, 1e18, "tokens the run trains; or steps, or epochs"),
        count_field("steps", &T::steps, 1, 1e12, "optimizer steps the run takes; or tokens, or epochs"),
        std::move(epochs),
        number_field("dataset_tokens", &T::dataset_tokens, 1, 1e18, "the dataset's tokens, with epochs only"),
        number_field("instability", &T::instability, 0, 1e6,
                     "expected rollbacks to the last checkpoint per 1e12 tokens; default 0",
                     Written::unless_zero),
        structured_field<T>("schedule", "name or mapping",
                            "the learning-rate schedule: cosine (default), wsd, or its kind with keys set"),
    };
  }();
  return kTable;
}

const FieldTable<model::OptimizerSpec>& training_optimizer_fields() {
  using O = model::OptimizerSpec;
  static const FieldTable<O> kTable = [] {
    Field<O> kind = choice_field("kind", &O::kind, optimizer_names(),
                                 "the optimizer (`trainsim list optimizers`), a name or an alias");
    kind.read = [](MapReader& r, O& o) {
      if (const YamlValue* k = r.get("kind"))
        read_optimizer_kind(r.diagnostics(), *k, r.child_path("kind"), o);
    };
    return FieldTable<O>{
        required(std::move(kind)),
        choice_field("state_precision", &O::state_precision, state_precision_names(),
                     "the moments' element size; default fp32, adam-8bit's int8"),
        flag_field("master_weights", &O::master_weights,
                   "an fp32 master copy of the weights under mixed precision; default true"),
        count_field("quantization_block", &O::quantization_block, 1, 1 << 24,
                    "adam-8bit: elements per quantisation block, each with one fp32 scale; default 2048"),
        flag_field("grad_clipping", &O::grad_clipping,
                   "global-norm clipping, one all-reduce of a scalar; default true"),
        preconditioner_row(count_field("max_preconditioner_dim", &O::max_preconditioner_dim, 2, 1 << 20,
                                       "shampoo, soap: the largest side of a preconditioner block; default "
                                       "1024",
                                       Written::unless_zero)),
        preconditioner_row(count_field("precondition_frequency", &O::precondition_frequency, 1, 1e9,
                                       "shampoo, soap: steps between two refreshes of the preconditioners; "
                                       "default shampoo 1, soap 10",
                                       Written::unless_zero)),
    };
  }();
  return kTable;
}

void read_optimizer_kind(Diagnostics& d, const YamlValue& v, const std::string& path,
                         model::OptimizerSpec& o) {
  if (auto i = read_choice(d, v, path, names_of(optimizer_names()))) {
    o.kind = optimizer_names()[*i].second;
    if (o.kind == model::OptimizerKind::adam8bit) o.state_precision = topo::Precision::int8;
  }
}

const FieldTable<model::TrainingSpec>& training_schedule_fields() {
  using T = model::TrainingSpec;
  static const FieldTable<T> kTable = [] {
    // decay_fraction belongs to wsd alone: written only for it (its reader refuses it for the others).
    Field<T> decay = number_field("decay_fraction", &T::wsd_decay_fraction, 1e-6, 1 - 1e-6,
                                  "wsd only: the share of the run's tokens in its final decay; default 0.2");
    decay.text = [written = decay.text](const T& t) {
      return t.schedule == model::LrSchedule::wsd ? written(t) : std::nullopt;
    };
    return FieldTable<T>{
        required(choice_field("kind", &T::schedule, model::kLrScheduleNames, "cosine or wsd")),
        std::move(decay),
    };
  }();
  return kTable;
}

const FieldTable<model::Framework>& framework_fields() {
  using F = model::Framework;
  static const FieldTable<F> kTable = [] {
    Field<F> preset = choice_field("preset", &F::preset, model::kFrameworkPresetNames,
                                   "the framework whose flags the other keys override (each defaults to "
                                   "the preset's); default: the one the layout implies");
    preset.read = {};  // read first, by the block's own code: the other flags' defaults are the preset's
    // Gradients are reduced in a floating-point type of at least 16 bits; unset, in their own precision.
    static constexpr EnumNames<topo::Precision, 3> kReduceDtypeNames{
        {{"fp32", topo::Precision::fp32}, {"bf16", topo::Precision::bf16}, {"fp16", topo::Precision::fp16}}};
    Field<F> reduce_dtype = choice_field("grad_reduce_dtype", &F::grad_reduce_dtype, kReduceDtypeNames,
                                         "the precision gradients are reduced in; default their own");
    // overlap_grad_reduce is the plan's (parallelism.overlap_grad_reduce, when given, wins), so the row
    // has neither read nor text: the block's reader sets it, parallelism's dump writes it.
    Field<F> overlap_grad_reduce = info_only<F>(
        FieldInfo{.key = "overlap_grad_reduce",
                  .kind = FieldKind::flag,
                  .help = "gradient buckets reduced during the backward; parallelism.overlap_grad_reduce, "
                          "when given, wins"});
    return FieldTable<F>{
        std::move(preset),
        flag_field("tp_comm_overlap", &F::tp_comm_overlap,
                   "sequence-parallel tp all-gathers and reduce-scatters run under the GEMM after or before "
                   "them"),
        number_field("tp_comm_overlap_slowdown", &F::tp_comm_overlap_slowdown, 0, 1,
                     "the fraction that overlap adds to those GEMMs"),
        flag_field("overlap_param_gather", &F::overlap_param_gather,
                   "ZeRO 1-2: the updated weights' all-gather under the next forward"),
        std::move(overlap_grad_reduce),
        flag_field("ep_comm_overlap", &F::ep_comm_overlap,
                   "expert all-to-alls beside another micro-batch's compute"),
        flag_field("delay_wgrad_compute", &F::delay_wgrad_compute,
                   "ep_comm_overlap: the experts' weight gradient beside the backward's dispatch, the "
                   "attention's and shared experts' beside the next layer's combine backward"),
        flag_field("fused_grouped_mlp", &F::fused_grouped_mlp,
                   "fp8, MoE: the experts' activation and casts in their grouped GEMMs' epilogues "
                   "(TransformerEngine's fused grouped MLP)"),
        choice_field("moe_dispatcher", &F::moe_dispatcher, model::kMoeDispatcherNames,
                     "how tokens reach their experts (Megatron-Core's token dispatcher)"),
        count_field("moe_dispatcher_sms", &F::moe_dispatcher_sms, 0, 1e4,
                    "deepep, hybridep: SMs their kernels hold while they run (0: the backend's default, "
                    "20 and 16)"),
        count_field("router_kernels", &F::router_kernels, 1, 1e4,
                    "MoE: kernels of the router and the dispatch's preprocessing in a layer's forward, its "
                    "GEMM among them (megatron-core: 31 with --moe-router-fusion, 72 without; the flex "
                    "dispatchers 14 fewer)"),
        flag_field("blocking_p2p", &F::blocking_p2p,
                   "the sender of a pipeline hand-over waits for it to arrive"),
        count_field("prefetch", &F::prefetch, 0, 1e4,
                    "ZeRO-3: units gathered ahead of the computing one (0: on demand)"),
        number_field("prefetch_bucket_params", &F::prefetch_bucket_params, 0, 1e15,
                     "ZeRO-3: parameters fetched ahead; above 0 it replaces prefetch"),
        flag_field("reshard_after_forward", &F::reshard_after_forward,
                   "ZeRO-3: gather again for the backward (false: SHARD_GRAD_OP)"),
        count_field("gathers_per_layer", &F::gathers_per_layer, 1, 1e3, "ZeRO-3: collectives per layer"),
        flag_field("gather_per_tensor", &F::gather_per_tensor,
                   "ZeRO-3: one collective per parameter tensor instead"),
        flag_field("synchronous_collectives", &F::synchronous_collectives,
                   "ZeRO-3: the host waits for the device before each gather"),
        quantity_field("gather_host", &F::gather_host_s, D::seconds, Bound::non_negative,
                       "ZeRO-3: host time to issue one all-gather"),
        quantity_field("collective_host_per_rank", &F::collective_host_per_rank_s, D::seconds,
                       Bound::non_negative, "ZeRO-3: host time per communicator rank per collective"),
        std::move(reduce_dtype),
        quantity_field("launch_overhead", &F::launch_overhead_s, D::seconds, Bound::non_negative,
                       "host time to issue one op of the step in eager mode"),
        flag_field("cuda_graphs", &F::cuda_graphs,
                   "the step is captured as CUDA graphs: the host no longer bounds it, but after a MoE "
                   "layer's host wait"),
        flag_field("moe_host_sync", &F::moe_host_sync,
                   "a MoE layer's forward waits on the host for its token counts (default true; deepspeed "
                   "presets false)"),
        quantity_field(
            "expert_launch", &F::expert_launch_s, D::seconds, Bound::non_negative,
            "host time per local expert of a grouped expert GEMM, beyond launch_overhead (default 5 us)"),
        count_field("optimizer_tensor_ops", &F::optimizer_tensor_ops, 0, 1e3,
                    "the update tensor by tensor: a host wait, then this many eager kernels (default 0: "
                    "multi-tensor)"),
        flag_field("fused_elementwise", &F::fused_elementwise,
                   "norms, SwiGLU, rotary embedding and loss in fused kernels; false: eager ops"),
        flag_field("unpadded_attention", &F::unpadded_attention,
                   "copies that unpad q, k, v and pad the output around the fused attention"),
        flag_field("cp_kv_all_gather", &F::cp_kv_all_gather,
                   "cp > 1: K and V all-gathered over the cp group; false: passed round a ring"),
        choice_field("gradient_staging", &F::gradient_staging, model::kGradientStagingNames,
                     "ZeRO-3: the copies of a unit's gradients before its reduce-scatter"),
    };
  }();
  return kTable;
}

const FieldTable<model::Framework>& memory_fields() {
  using F = model::Framework;
  static const FieldTable<F> kTable{
      number_field("reserve", &F::memory_reserve, 0, 1,
                   "the caching allocator's reserve, a fraction of all other memory; default 0 (published "
                   "figures are max_memory_allocated, which excludes it)"),
  };
  return kTable;
}

const FieldTable<model::CheckpointSpec>& checkpoint_fields() {
  using C = model::CheckpointSpec;
  static const FieldTable<C> kTable{
      quantity_field("interval", &C::interval_s, D::seconds, Bound::positive,
                     "a checkpoint every this much training time, at most 1e9 s; or every_steps"),
      count_field("every_steps", &C::every_steps, 1, 1e12, "a checkpoint every this many steps; or interval"),
      choice_field("mode", &C::mode, model::kCheckpointModeNames,
                   "what training stops for: sync the copy to host memory and the write, async (default) "
                   "the copy and any wait for the previous write"),
      count_field("keep", &C::keep, 1, 1e6, "checkpoints kept in storage, default 1"),
  };
  return kTable;
}

const FieldTable<model::FailureSpec>& failures_fields() {
  using F = model::FailureSpec;
  static const FieldTable<F> kTable{
      quantity_field("node_mtbf", &F::node_mtbf_s, D::seconds, Bound::positive,
                     "mean time between failures of one node; node_mtbf or gpu_mtbf or both",
                     Written::unless_zero),
      quantity_field("gpu_mtbf", &F::gpu_mtbf_s, D::seconds, Bound::positive,
                     "mean time between failures of one GPU, on top of the node's", Written::unless_zero),
      quantity_field("restart", &F::restart_s, D::seconds, Bound::non_negative,
                     "time to detect, reschedule and restart, before the checkpoint's restore; default 0"),
      count_field("seed", &F::seed, 0, 9e15, "seed of the failure draws with trials, default 1"),
      count_field("trials", &F::trials, 0, 1e7,
                  "0 (default): expected values; N: a seeded Monte-Carlo over N runs"),
  };
  return kTable;
}

const FieldTable<model::PricingSpec>& pricing_fields() {
  using P = model::PricingSpec;
  static const FieldTable<P> kTable{
      structured_field<P>("region", "name",
                          "a region's price table (`trainsim list regions`); keys written beside it win"),
      structured_field<P>("gpu_hour", "quantity or mapping",
                          "the on-demand price per GPU-hour, or one per node or GPU preset"),
      structured_field<P>("spot", "mapping", "spot capacity: its price and its preemption rate"),
      structured_field<P>("storage", "mapping", "the price of keeping checkpoints"),
      quantity_field("egress", &P::egress_usd_per_gb, D::usd_per_gb, Bound::non_negative,
                     "the price of data moved across the priced boundary"),
      quantity_field("egress_data", &P::egress_bytes, D::bytes, Bound::non_negative,
                     "the data moved across the priced boundary over the run"),
      structured_field<P>("energy", "mapping", "the energy price, the PUE and the grid's carbon intensity"),
      structured_field<P>("commitment", "mapping",
                          "reserved capacity: GPUs for a term at a fixed rate, paid whether used or not"),
  };
  return kTable;
}

const FieldTable<model::SpotPricing>& pricing_spot_fields() {
  using S = model::SpotPricing;
  static const FieldTable<S> kTable{
      required(quantity_field("gpu_hour", &S::gpu_hour_usd, D::usd_per_hour, Bound::non_negative,
                              "the spot price per GPU-hour")),
      quantity_field("preemptions", &S::preemptions_per_s, D::rate_per_s, Bound::non_negative,
                     "preemptions of the whole allocation per unit of time"),
  };
  return kTable;
}

const FieldTable<model::StoragePricing>& pricing_storage_fields() {
  using S = model::StoragePricing;
  static const FieldTable<S> kTable{
      quantity_field("hot", &S::hot_usd_per_gb_month, D::usd_per_gb_month, Bound::non_negative,
                     "the price of a checkpoint in hot storage"),
      quantity_field("cold", &S::cold_usd_per_gb_month, D::usd_per_gb_month, Bound::non_negative,
                     "the price of a checkpoint once moved to cold storage"),
      quantity_field(
          "cold_after", &S::cold_after_s, D::seconds, Bound::non_negative,
          "how long a checkpoint stays hot before it moves to cold storage; default: it stays hot"),
  };
  return kTable;
}

const FieldTable<model::EnergyPricing>& pricing_energy_fields() {
  using E = model::EnergyPricing;
  static const FieldTable<E> kTable{
      quantity_field("price", &E::usd_per_kwh, D::usd_per_kwh, Bound::non_negative, "the price of energy"),
      number_field("pue", &E::pue, 1, 10, "power usage effectiveness: the facility's energy per IT energy"),
      quantity_field("carbon", &E::carbon_g_per_kwh, D::grams_per_kwh, Bound::non_negative,
                     "the grid's carbon intensity"),
  };
  return kTable;
}

const FieldTable<model::Commitment>& pricing_commitment_fields() {
  using C = model::Commitment;
  static const FieldTable<C> kTable{
      required(number_field("gpus", &C::gpus, 1, 1e9, "GPUs reserved")),
      required(quantity_field("term", &C::term_s, D::seconds, Bound::positive, "the term, paid whole")),
      required(quantity_field("gpu_hour", &C::gpu_hour_usd, D::usd_per_hour, Bound::non_negative,
                              "the committed price per GPU-hour")),
  };
  return kTable;
}

const FieldTable<model::BudgetSpec>& budget_fields() {
  using B = model::BudgetSpec;
  static const FieldTable<B> kTable{
      quantity_field("max_cost", &B::max_cost_usd, D::usd, Bound::positive,
                     "the most the campaign may cost; above it is a budget violation"),
      quantity_field("deadline", &B::deadline_s, D::seconds, Bound::positive,
                     "the longest the campaign may take; past it is a budget violation"),
      structured_field<B>("memory_headroom", "number or quantity",
                          "HBM that must stay free on each GPU: a fraction from 0 to 0.95, or a size"),
      structured_field<B>("alerts", "list",
                          "fractions of max_cost (> 0, each once) at which the spend is reported"),
  };
  return kTable;
}

const FieldTable<model::ConvergenceSpec>& convergence_fields() {
  using C = model::ConvergenceSpec;
  static const FieldTable<C> kTable{
      required(number_field("target_loss", &C::target_loss, 1e-6, 100,
                            "the loss the run trains to, in nats per token; sets the run's length")),
      structured_field<C>("law", "name or mapping",
                          "the loss law: chinchilla (default), besiroglu-2024, or its constants"),
      structured_field<C>("batch", "mapping", "the critical batch"),
      structured_field<C>("optimizer_efficiency", "name or number",
                          "the optimizer's speedup over AdamW in tokens to the target: fair-tuned "
                          "(default), optimistic, or a number from 0.001 to 1000"),
      number_field("next_target_loss", &C::next_target_loss, 1e-6, 100,
                   "a lower loss the target moves to once the run reaches target_loss"),
  };
  return kTable;
}

const FieldTable<model::ConvergenceSpec>& convergence_law_fields() {
  using C = model::ConvergenceSpec;
  static const FieldTable<C> kTable{
      required(number_field("E", &C::e, 0, 100, "the irreducible loss in L = E + A/N^alpha + B/D^beta")),
      required(number_field("A", &C::a, 0, 1e12, "the parameters' term's scale")),
      required(number_field("B", &C::b, 0, 1e12, "the tokens' term's scale")),
      required(number_field("alpha", &C::alpha, 1e-3, 10, "the parameters' exponent")),
      required(number_field("beta", &C::beta, 1e-3, 10, "the tokens' exponent")),
  };
  return kTable;
}

const FieldTable<model::ConvergenceSpec>& convergence_batch_fields() {
  using C = model::ConvergenceSpec;
  static const FieldTable<C> kTable{
      structured_field<C>("critical", "number or auto",
                          "the critical batch in tokens, 1 to 1e15; auto (default): from the target loss "
                          "(Kaplan et al. 2020)"),
  };
  return kTable;
}

const FieldTable<model::TuningSpec>& tuning_fields() {
  using T = model::TuningSpec;
  static const FieldTable<T> kTable{
      count_field("trials", &T::trials, 1, 1e6,
                  "trials started; default: one coordinate-descent pass over the optimizer's published grid"),
      structured_field<T>("trial", "mapping", "what one trial trains"),
      structured_field<T>("early_stopping", "mapping", "the policy that stops trials early"),
      count_field("concurrent", &T::concurrent, 1, 1e6,
                  "trials at once, each on 1/concurrent of the nodes; at most cluster.nodes; default 1"),
  };
  return kTable;
}

const FieldTable<model::TuningSpec>& tuning_trial_fields() {
  using T = model::TuningSpec;
  static const FieldTable<T> kTable{
      number_field("fraction", &T::fraction, 1e-9, 1,
                   "the fraction of the final run's steps a trial trains; default 0.01"),
  };
  return kTable;
}

const FieldTable<model::TuningSpec>& tuning_early_stopping_fields() {
  using T = model::TuningSpec;
  static const FieldTable<T> kTable{
      required(choice_field("policy", &T::early_stopping, model::kEarlyStoppingNames,
                            "none, successive halving, or ASHA as its synchronous equivalent")),
      number_field("eta", &T::eta, 1.0 + 1e-9, 1e3, "1/eta of a rung's trials go on to the next; default 3"),
      number_field("min_fraction", &T::min_fraction, 1e-9, 1,
                   "the fraction of a trial the first rung trains; default 0.05"),
  };
  return kTable;
}

const FieldTable<model::DataSpec>& data_fields() {
  using S = model::DataSpec;
  static const FieldTable<S> kTable{
      quantity_field("raw", &S::raw_bytes, D::bytes, Bound::non_negative, "the raw corpus"),
      structured_field<S>("preprocessing", "mapping", "filtering, dedup and tokenising, in CPU core-hours"),
      structured_field<S>("storage", "mapping", "keeping the raw corpus"),
      structured_field<S>("transfer", "mapping", "moving the data into the training region"),
  };
  return kTable;
}

const FieldTable<model::DataSpec>& data_preprocessing_fields() {
  using S = model::DataSpec;
  static const FieldTable<S> kTable{
      required(number_field("core_hours_per_tb", &S::core_hours_per_tb, 0, 1e9,
                            "CPU core-hours per decimal TB of raw data")),
      required(quantity_field("core_hour", &S::core_hour_usd, D::usd_per_hour, Bound::non_negative,
                              "the price of one CPU core-hour")),
  };
  return kTable;
}

const FieldTable<model::DataSpec>& data_storage_fields() {
  using S = model::DataSpec;
  static const FieldTable<S> kTable{
      required(quantity_field("price", &S::storage_usd_per_gb_month, D::usd_per_gb_month, Bound::non_negative,
                              "the price of keeping the raw corpus")),
      required(number_field("months", &S::storage_months, 0, 1200, "how long it is kept")),
  };
  return kTable;
}

const FieldTable<model::DataSpec>& data_transfer_fields() {
  using S = model::DataSpec;
  static const FieldTable<S> kTable{
      required(quantity_field("volume", &S::transfer_bytes, D::bytes, Bound::non_negative,
                              "the data moved into the training region")),
      required(quantity_field("price", &S::transfer_usd_per_gb, D::usd_per_gb, Bound::non_negative,
                              "the price of moving it")),
  };
  return kTable;
}

const FieldTable<model::PersonSpec>& person_fields() {
  using P = model::PersonSpec;
  static const FieldTable<P> kTable = [] {
    // hours_per_week is not written for a role covered round the clock, which writes coverage instead.
    Field<P> hours =
        number_field("hours_per_week", &P::hours_per_week, 0, 168, "paid hours a week; default 40");
    hours.text = [written = hours.text](const P& p) { return p.round_the_clock ? std::nullopt : written(p); };
    // coverage: 24x7, every hour of the campaign; the item gives it or hours_per_week, not both.
    static const std::string kRoundTheClock = "24x7";
    static constexpr std::string_view kCoverage = "coverage";
    Field<P> coverage{FieldInfo{.key = kCoverage,
                                .kind = FieldKind::choice,
                                .choices = {kRoundTheClock},
                                .help = "every hour of the campaign; instead of hours_per_week"},
                      [hours_key = hours.info.key](MapReader& r, P& p) {
                        const YamlValue* c = r.get(kCoverage);
                        if (c == nullptr) return;
                        if (read_choice(r.diagnostics(), *c, r.child_path(kCoverage), {kRoundTheClock}))
                          p.round_the_clock = true;
                        if (r.has(hours_key))
                          r.diagnostics().add(*c, r.child_path(kCoverage),
                                              "give coverage or hours_per_week, not both");
                      },
                      [](const P& p) {
                        return p.round_the_clock ? std::optional(yaml_quote(kRoundTheClock)) : std::nullopt;
                      }};
    return FieldTable<P>{
        required(text_field("role", &P::role, "the role's name")),
        count_field("count", &P::count, 1, 1e6, "people in the role; default 1"),
        required(quantity_field("rate", &P::rate_usd_per_hour, D::usd_per_hour, Bound::non_negative,
                                "the price of one person's hour")),
        std::move(hours),
        std::move(coverage),
    };
  }();
  return kTable;
}

const FieldTable<SweepSpec>& sweep_fields() {
  static const FieldTable<SweepSpec> kTable{
      choice_field("mode", &SweepSpec::mode, kSweepModeNames,
                   "grid (default): every combination, the first key varying slowest; zip: the lists in "
                   "lock-step. Every other key is a dotted key path with its list of values"),
  };
  return kTable;
}

const FieldTable<MeasuredSpec>& measured_fields() {
  static const FieldTable<MeasuredSpec> kTable{
      required(text_field("source", &MeasuredSpec::source, "where the measurement was published")),
      structured_field<MeasuredSpec>("tolerance", "number or mapping",
                                     "the relative error allowed, 0 to 100, default 0.1; or one per metric. "
                                     "Every other key is a summary field with its measured value"),
  };
  return kTable;
}

std::vector<DocumentedBlock> documented_blocks() {
  return {
      {"model", field_infos(model_fields())},
      {"cluster", field_infos(cluster_fields())},
      {"cluster.network", field_infos(cluster_network_fields())},
      {"cluster.storage", field_infos(cluster_storage_fields())},
      {"parallelism", field_infos(parallelism_fields())},
      {"parallelism.recompute", field_infos(parallelism_recompute_fields())},
      {"parallelism.offload", field_infos(parallelism_offload_fields())},
      {"training", field_infos(training_fields())},
      {"training.optimizer", field_infos(training_optimizer_fields())},
      {"training.schedule", field_infos(training_schedule_fields())},
      {"framework", field_infos(framework_fields())},
      {"memory", field_infos(memory_fields())},
      {"checkpoint", field_infos(checkpoint_fields())},
      {"failures", field_infos(failures_fields())},
      {"budget", field_infos(budget_fields())},
      {"pricing", field_infos(pricing_fields())},
      {"pricing.spot", field_infos(pricing_spot_fields())},
      {"pricing.storage", field_infos(pricing_storage_fields())},
      {"pricing.energy", field_infos(pricing_energy_fields())},
      {"pricing.commitment", field_infos(pricing_commitment_fields())},
      {"convergence", field_infos(convergence_fields())},
      {"convergence.law", field_infos(convergence_law_fields())},
      {"convergence.batch", field_infos(convergence_batch_fields())},
      {"tuning", field_infos(tuning_fields())},
      {"tuning.trial", field_infos(tuning_trial_fields())},
      {"tuning.early_stopping", field_infos(tuning_early_stopping_fields())},
      {"data", field_infos(data_fields())},
      {"data.preprocessing", field_infos(data_preprocessing_fields())},
      {"data.storage", field_infos(data_storage_fields())},
      {"data.transfer", field_infos(data_transfer_fields())},
      {"people[]", field_infos(person_fields())},
      {"sweep", field_infos(sweep_fields())},
      {"measured", field_infos(measured_fields())},
  };
}

}  // namespace trainsim::scenario
