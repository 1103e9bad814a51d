#include "models/report/explain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "models/report/summary.hpp"
#include "models/run/checkpoint_size.hpp"
#include "models/step/memory.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/attention.hpp"
#include "models/workload/attention_kernel.hpp"
#include "models/workload/flops.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/parameters.hpp"
#include "models/workload/preconditioner.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {
namespace {

// How the model's routing sizes the busiest expert-parallel rank's slots (TransformerSpec::Routing).
std::string routing_basis(const TransformerSpec& model) {
  const std::string_view name = to_string(model.routing);
  switch (model.routing) {
    case Routing::force_balanced:
      return model.capacity_factor == 1.0
                 ? fmt::format("{}: every expert gets T·top_k/experts slots", name)
                 : fmt::format("{}, each expert's input padded to capacity_factor {}", name,
                               model.capacity_factor);
    case Routing::capacity:
      return fmt::format("{}: expert GEMMs and all-to-alls sized to capacity_factor {} (beyond: dropped)",
                         name, model.capacity_factor);
    case Routing::dropless:
      return fmt::format("{}: the busiest rank runs imbalance {} x the mean; the layer waits for it", name,
                         model.imbalance);
  }
  return {};
}

std::string sci(double v) {
  return fmt::format("{:.4g}", v);
}
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
std::string gb(double bytes) {
  if (bytes >= 1024 * kGiB) return fmt::format("{:.2f} TiB", bytes / (1024 * kGiB));
  return fmt::format("{:.2f} GiB", bytes / kGiB);
}

std::string human(double value, const std::string& unit) {
  if (unit == "B") return gb(value);
  if (unit == "s") return format_human(FieldUnit::seconds, value);
  if (unit == "FLOP") {
    if (value >= 1e12) return fmt::format("{:.3f} TFLOP", value / 1e12);
    return fmt::format("{:.3f} GFLOP", value / 1e9);
  }
  if (unit == "params") {
    if (value >= 1e9) return fmt::format("{:.3f} B params", value / 1e9);
    return fmt::format("{:.3f} M params", value / 1e6);
  }
  if (unit == "B/param") return fmt::format("{:.3f} B/param", value);
  if (unit == "FLOP/param") return fmt::format("{:.1f} FLOP/param", value);
  if (unit == "GPUs") return fmt::format("{:.6g} GPU{}", value, value == 1 ? "" : "s");
  return fmt::format("{:.6g}{}{}", value, unit.empty() ? "" : " ", unit);
}

ExplainSection model_section(const TransformerSpec& model, const ParallelPlan& plan) {
  ExplainSection s{.title = "model"};
  const ParameterBreakdown p = parameter_breakdown(model);
  const double n = p.total();
  if (model.generic_layers.empty()) {
    const std::string dense_layers =
        p.dense_layers > 0 ? fmt::format(" + {} dense layers x {}", p.dense_layers, sci(p.dense_per_layer()))
                           : "";
    s.lines.push_back(
        {"parameters",
         fmt::format("embedding {} + positions {} + {} layers x {}{} + final norm {} + LM head {}",
                     sci(p.embedding), sci(p.position), p.moe_layers(), sci(p.per_layer()), dense_layers,
                     sci(p.final_norm), sci(p.lm_head)),
         n, "params"});
    const std::string shared =
        p.layer_shared_mlp > 0 ? fmt::format(" + shared experts {}", sci(p.layer_shared_mlp)) : "";
    s.lines.push_back({"per layer",
                       fmt::format("attention{} {} + mlp {}{} + router {} + norms {}",
                                   model.is_mla() ? " (latent, MLA)" : "", sci(p.layer_attention),
                                   sci(p.layer_mlp), shared, sci(p.layer_router), sci(p.layer_norms)),
                       p.per_layer(), "params"});
    if (p.dense_layers > 0) {
      s.lines.push_back(
          {"per dense first layer",
           fmt::format("attention {} + dense mlp {} (ffn {}) + norms {}", sci(p.layer_attention),
                       sci(p.dense_layer_mlp), model.ffn_hidden_or_default(), sci(p.layer_norms)),
           p.dense_per_layer(), "params"});
    }
    if (model.is_moe()) {
      s.lines.push_back(
          {"active parameters",
           fmt::format(
               "top_k {} of {} experts per MoE layer{}{}", model.top_k, model.experts,
               model.routing_groups > 1 && model.routing_group_top_k < model.routing_groups
                   ? fmt::format(" (from {} of {} groups)", model.routing_group_top_k, model.routing_groups)
                   : "",
               model.shared_experts > 0 ? fmt::format(", + {} shared", model.shared_experts) : ""),
           active_parameter_count(model), "params"});
      s.lines.push_back(
          {"expert load (busiest rank / mean)", routing_basis(model), model.expert_load(), "x"});
    }
  } else {
    s.lines.push_back(
        {"parameters", fmt::format("sum over {} generic layers", model.generic_layers.size()), n, "params"});
  }
  const double per_token = model_flops_per_token(model);
  const double seq = model.generic_layers.empty() ? static_cast<double>(model.seq_len) : 1.0;
  s.lines.push_back({"model FLOPs per token",
                     fmt::format("3 x forward matmuls / seq_len (6·N = {}; the rest is attention scores)",
                                 sci(6 * active_parameter_count(model))),
                     per_token, "FLOP"});
  const double hw = hardware_flops_per_step(model, 1, plan.recompute) / seq;
  s.lines.push_back({"hardware FLOPs per token",
                     fmt::format("model + recomputed ({} recompute, {} attention)", to_string(plan.recompute),
                                 to_string(model.attention)),
                     hw, "FLOP"});
  return s;
}

ExplainSection attention_section(const TransformerSpec& model, const ParallelPlan& plan, Precision act,
                                 const topo::GpuSpec& gpu) {
  ExplainSection s{.title = "attention kernel"};
  const bool flash = is_fused(model.attention);
  TransformerSpec standard = model;
  standard.attention = Attention::standard;
  Shard shard = shard_of(plan, act);
  shard.recompute = Recompute::none;  // what the score tensor would cost if kept
  const double scores = layer_activation(standard, shard).scores;
  s.lines.push_back(
      {flash ? "kept scores (flash: none)" : "kept scores per layer (standard)",
       fmt::format("(2p + 1) · a/tp · b · (s/cp) · s = 5 B x {}/{} heads x {} x {}/{} x {}", model.heads,
                   plan.tp, plan.micro_batch, model.seq_len, plan.cp, model.seq_len),
       flash ? 0.0 : scores, "B"});
  if (model.is_mla()) {
    Shard kept = shard_of(plan, act);
    const double latent = layer_activation(model, kept).latent;
    s.lines.push_back(
        {"MLA latents kept per layer",
         fmt::format("p · b · s/cp · (2·q_lora {} + 2·kv_lora {} + rope {}), whole on each of tp {} ranks "
                     "(the down-projections are replicated); 0 under full recompute",
                     model.q_lora_rank, model.kv_lora_rank, model.qk_rope_head_dim, plan.tp),
         latent, "B"});
  }
  const double recomputed = recompute_flops_per_sequence(model, Recompute::none);
  if (flash) {
    s.notes.push_back(
        fmt::format("flash attention keeps no seq²-sized tensors: saves {} per layer per micro-batch "
                    "and recomputes QKᵀ in backward (+{} per sequence)",
                    gb(scores), human(recomputed, "FLOP")));
    const Attention kernel = resolve_attention(model.attention, gpu.efficiency);
    const auto d = static_cast<double>(model.qk_head_dim());
    const int ring_steps = shard.attention_ring_steps();
    const auto efficiency = [&](bool backward) {
      // Long-sequence efficiency at this shape (the grid factor left out: it depends on the micro-batch).
      return attention_kernel_efficiency(1e30, d, static_cast<double>(model.seq_len),
                                         AttentionVariant{kernel, backward, model.causal, ring_steps},
                                         gpu.efficiency, gpu.name);
    };
    // Where the kernel comes from: the GPU's default for `flash`, or the framework's model code.
    const auto framework_kernel = preset_fused_attention(plan.framework.preset);
    const std::string origin = model.attention == Attention::flash ? " (the GPU's default)"
                               : framework_kernel == model.attention
                                   ? fmt::format(" ({}'s model code)", to_string(plan.framework.preset))
                                   : std::string();
    if (attention_kernel_fraction(kernel, gpu.efficiency) > 0) {
      s.notes.push_back(fmt::format(
          "kernel {}{} on {}: forward at {:.0f} %, backward at {:.0f} % of the dense 16-bit peak (head dim "
          "{}, "
          "{}{})",
          to_string(kernel), origin, gpu.name, 100 * efficiency(false), 100 * efficiency(true), d,
          model.causal ? "causal" : "no mask",
          ring_steps > 1
              ? fmt::format(", ring of {} steps over {} keys each", ring_steps, model.seq_len / ring_steps)
          : plan.cp > 1
              ? fmt::format(", one kernel over all {} keys gathered over cp {}", model.seq_len, plan.cp)
              : ""));
      const std::int64_t windowed = model.windowed_layer_count();
      if (windowed > 0) {
        const auto window = static_cast<double>(model.sliding_window);
        const auto windowed_efficiency = [&](bool backward) {
          AttentionVariant v{kernel, backward, true, 1};
          v.window = window;
          return attention_kernel_efficiency(1e30, d, static_cast<double>(model.seq_len), v, gpu.efficiency,
                                             gpu.name);
        };
        s.notes.push_back(fmt::format(
            "{} of {} layers attend over a sliding window of {} keys: {:.0f} scores per head and sequence "
            "executed instead of {:.0f}, forward at {:.0f} %, backward at {:.0f} % (a short key loop)",
            windowed, model.layers, model.sliding_window,
            window_score_elements(static_cast<double>(model.seq_len), window),
            0.5 * static_cast<double>(model.seq_len) * static_cast<double>(model.seq_len),
            100 * windowed_efficiency(false), 100 * windowed_efficiency(true)));
      }
    }
  } else {
    s.notes.push_back(
        fmt::format("standard attention keeps the softmax output, dropout mask and output: {} per "
                    "layer per micro-batch unless recompute drops them",
                    gb(scores)));
  }
  return s;
}

ExplainSection optimizer_section(const TrainingSpec& training) {
  const OptimizerSpec& o = training.optimizer;
  const OptimizerInfo& info = optimizer_info(o.kind);
  ExplainSection s{.title = fmt::format("optimizer: {} ({})", info.name, info.description)};
  const OptimizerCost c = optimizer_cost_per_param(o, training.precision);
  s.lines.push_back(
      {"state", fmt::format("{} state precision, large-matrix asymptote", topo::to_string(o.state_precision)),
       c.state_bytes, "B/param"});
  s.lines.push_back({"master weights",
                     keeps_master_weights(o, training.precision) ? "fp32 copy under mixed precision"
                                                                 : "none (weights are fp32 or off)",
                     c.master_bytes, "B/param"});
  s.lines.push_back({"bytes moved per update",
                     "grads + weights/master + states read and written (+ clipping)", c.bytes_moved,
                     "B/param"});
  s.lines.push_back({"FLOPs per update", "elementwise", c.elementwise_flops, "FLOP/param"});
  s.lines.push_back({"hyper-parameters", "tunable", static_cast<double>(info.hyperparameters), ""});
  if (info.per_tensor_norms)
    s.notes.push_back("needs per-tensor norms: an extra all-reduce of a few values per tensor when sharded");
  if (info.needs_full_matrices && o.kind == OptimizerKind::muon)
    s.notes.push_back(
        "needs whole matrices for Newton-Schulz: under ZeRO >= 1 each matrix's owner rank gathers its "
        "momentum from the shards, orthogonalises it and scatters the update back, the matrices spread over "
        "the ranks (models/workload/distributed_update.hpp); without ZeRO every rank orthogonalises every "
        "matrix");
  if (info.needs_full_matrices && o.kind != OptimizerKind::muon)
    s.notes.push_back(fmt::format(
        "preconditioner blocks of at most {} per side, refreshed every {} steps (models/workload/"
        "preconditioner.hpp): under ZeRO >= 1 each block's owner rank gathers its gradients from the shards "
        "and the search directions are all-gathered in fp32, as Distributed Shampoo does; without ZeRO every "
        "rank preconditions every block",
        max_preconditioner_dim(o), precondition_frequency(o)));
  if (o.grad_clipping) s.notes.push_back("global-norm clipping: one scalar all-reduce per step");
  return s;
}

ExplainSection stage_section(const MemoryEstimate& e, const StageMemory& st, const ParallelPlan& plan,
                             const TrainingSpec& training, const topo::GpuSpec& gpu) {
  const bool worst = st.stage == e.worst_stage;
  ExplainSection s{.title = fmt::format("memory per GPU, stage {}{} ({} layers{}{})", st.stage,
                                        worst ? " (worst)" : "", st.layers, st.embedding ? ", embedding" : "",
                                        st.lm_head ? ", LM head" : "")};
  const OptimizerSpec& o = training.optimizer;
  const double bw = topo::bytes_per_element(weight_storage_precision(training.precision));
  const double bg = topo::bytes_per_element(gradient_precision(o, training.precision));
  const double degree = plan.dense_shard_ranks();
  auto by = [&](bool sharded) {
    return sharded && degree > 1 ? fmt::format(" / {} (ZeRO-{})", degree, stage_number(plan.zero))
                                 : std::string();
  };
  const MemoryBreakdown& m = st.memory;
  s.lines.push_back(
      {"weights",
       fmt::format("{} B x {} params on this GPU{}", bw, sci(st.params), by(shards_weights(plan.zero))),
       m.weights, "B"});
  s.lines.push_back({"grads",
                     fmt::format("{} B x {} params{}", bg, sci(st.params), by(shards_gradients(plan.zero))),
                     m.grads, "B"});
  const double k =
      st.params > 0
          ? (m.optimizer_state * (shards_optimizer_states(plan.zero) && degree > 1 ? degree : 1)) / st.params
          : 0;
  s.lines.push_back({"optimizer state",
                     fmt::format("{:.3g} B x {} params{} (master weights {})", k, sci(st.params),
                                 by(shards_optimizer_states(plan.zero)), gb(st.master_bytes)),
                     m.optimizer_state, "B"});
  const double per_mb = st.in_flight_micro_batches > 0 ? m.activations / st.in_flight_micro_batches : 0;
  s.lines.push_back(
      {"activations",
       fmt::format("{} per micro-batch x {:.3g} in flight ({}, {} recompute)", gb(per_mb),
                   st.in_flight_micro_batches, to_string(plan.schedule), to_string(plan.recompute)),
       m.activations, "B"});
  if (st.gathered_unit_params > 0) {
    const Framework& fw = plan.framework;
    s.lines.push_back(
        {"ZeRO-3 gathered",
         fw.reshard_after_forward
             ? fmt::format("({} computing + {} prefetched) x {} params x {} B + their grads {} params x {} B",
                           1, st.prefetched_units, sci(st.gathered_unit_params), bw,
                           sci(st.gathered_unit_params), bg)
             : fmt::format(
                   "every unit kept to the backward: {} B x {} params x (1 - 1/{}) + grads {} params x {} B",
                   bw, sci(st.params), degree, sci(st.gathered_unit_params), bg),
         st.gathered_bytes, "B"});
  }
  s.lines.push_back(
      {"buffers",
       fmt::format("buckets {} + ZeRO-3 gathered {} + runtime {} + allocator reserve {}", gb(st.bucket_bytes),
                   gb(st.gathered_bytes), gb(st.runtime_bytes), gb(st.allocator_bytes)),
       m.buffers, "B"});
  if (training.precision == Precision::fp8) {
    // Transformer Engine's own terms (models/step/fp8_memory.hpp), already inside the lines above.
    const Fp8Memory& f = st.fp8;
    s.lines.push_back(
        {"fp8 weight copies",
         fmt::format("2 B (fp8 W + fp8 Wᵀ) x {} GEMM weights, in weights{}", sci(f.gemm_weights),
                     shards_weights(plan.zero) && degree > 1 ? " (ZeRO-3: of the gathered units)" : ""),
         f.weight_copies, "B"});
    s.lines.push_back(
        {"fp8 amax history",
         fmt::format("{} fp8 GEMMs x 3 tensors x ({} + 2) x 4 B, in buffers", f.fp8_gemms, kAmaxHistory),
         f.amax_history, "B"});
    s.lines.push_back({"fp8 saved GEMM inputs",
                       "qkv, out_proj, fc1, fc2 inputs kept for wgrad at 1 B instead of 2, off activations",
                       -f.saved_inputs, "B"});
  }
  s.lines.push_back(
      {"total", fmt::format("of {} usable ({} HBM)", gb(e.capacity), gb(gpu.hbm_bytes)), m.total(), "B"});
  return s;
}

}  // namespace

Explanation explain(const TransformerSpec& model, const ParallelPlan& plan, const TrainingSpec& training,
                    const topo::GpuSpec& gpu, double memory_headroom) {
  Explanation out;
  const Precision act = weight_storage_precision(training.precision);
  out.sections.push_back(model_section(model, plan));
  const MemoryEstimate e = estimate_memory(
      model, plan, training, gpu,
      {.allocator_fraction = plan.framework.memory_reserve, .headroom_fraction = memory_headroom});
  out.fits = e.fits;
  out.reason = e.reason;
  out.memory_per_gpu = e.per_gpu;
  if (e.stages.empty()) {  // the layout does not divide the model
    out.sections.push_back({.title = "memory per GPU", .notes = {"not computed: " + e.reason}});
    return out;
  }
  if (model.generic_layers.empty()) out.sections.push_back(attention_section(model, plan, act, gpu));
  out.sections.push_back(optimizer_section(training));
  ExplainSection fw{.title = "framework"};
  fw.notes.push_back(framework_flags(plan.framework, plan.overlap_grad_reduce));
  fw.notes.emplace_back(preset_citation(plan.framework.preset));
  const topo::ComputeEfficiency& eff = gpu.efficiency;
  if (eff.elementwise_bandwidth_fraction > 0) {
    const double tb_per_s = gpu.hbm_bytes_per_s / 1e12;
    fw.notes.push_back(fmt::format(
        "element-wise kernels (norms, activations, casts, permutes, the optimizer's update) on {} at "
        "{:.3f} of its {:.2f} TB/s = {:.2f} TB/s (elementwise_bandwidth_fraction: Hopper's bandwidth per "
        "SM, topologies/README.md); GEMMs' and fused attention's memory roof at {:.2f}",
        gpu.name, eff.elementwise_bandwidth_fraction, tb_per_s, eff.elementwise_bandwidth_fraction * tb_per_s,
        eff.memory_bandwidth_fraction));
  }
  if (model.is_moe()) {
    const int router = moe_router_kernels(plan.framework);
    fw.notes.push_back(fmt::format(
        "a MoE layer's router and dispatch preprocessing: {} kernel{} in its forward, the GEMM among them, "
        "each at least {:.0f} us of GPU{} (framework.router_kernels {}{})",
        router, router == 1 ? "" : "s", eff.kernel_overhead_s * 1e6,
        plan.framework.cuda_graphs
            ? ""
            : fmt::format(" and {:.0f} us of host", plan.framework.launch_overhead_s * 1e6),
        plan.framework.router_kernels,
        router != plan.framework.router_kernels
            ? fmt::format(", {} fewer under {}'s fused preprocessing", plan.framework.router_kernels - router,
                          to_string(plan.framework.moe_dispatcher))
            : ""));
  }
  if (plan.shard_group > 0) {
    fw.notes.push_back(fmt::format("HSDP: sharded over {} dp ranks, replicated over {}", plan.shard_group,
                                   plan.dp / plan.shard_group));
  }
  out.sections.push_back(std::move(fw));
  const StageMemory& worst = e.stages[static_cast<std::size_t>(e.worst_stage)];
  ExplainSection w = stage_section(e, worst, plan, training, gpu);
  if (e.fits) {
    w.notes.push_back(fmt::format("fits: {} free", gb(e.capacity - e.per_gpu)));
  } else {
    w.notes.push_back("does not fit: " + e.reason);
    const MemoryBreakdown& m = e.memory;
    if (m.optimizer_state >= m.activations && !shards_optimizer_states(plan.zero)) {
      const double degree = plan.dense_shard_ranks();
      w.notes.push_back(
          degree > 1
              ? fmt::format("optimizer state is the largest part: ZeRO-1 would divide it by {}", degree)
              : std::string("optimizer state is the largest part: ZeRO-1 shards it over "
                            "data-parallel ranks, and dp is 1; more tp or pp divides it"));
    } else if (m.activations > m.optimizer_state && plan.recompute != Recompute::full) {
      w.notes.push_back(
          "activations are the largest part: more recompute, sequence parallelism or a smaller "
          "micro-batch would shrink them");
    }
  }
  out.sections.push_back(std::move(w));
  ExplainSection all{.title = "memory per GPU, every stage"};
  for (const StageMemory& st : e.stages) {
    all.lines.push_back(
        {fmt::format("stage {}", st.stage),
         fmt::format("{} layers: weights {} + grads {} + optimizer {} + activations {} + buffers {}",
                     st.layers, gb(st.memory.weights), gb(st.memory.grads), gb(st.memory.optimizer_state),
                     gb(st.memory.activations), gb(st.memory.buffers)),
         st.memory.total(), "B"});
  }
  out.sections.push_back(std::move(all));
  const CheckpointSize c = checkpoint_size(model, plan, training);
  ExplainSection ck{.title = "checkpoint"};
  ck.lines.push_back({"size",
                      fmt::format("weights {} + master {} + optimizer state {}", gb(c.weights),
                                  gb(c.master_weights), gb(c.optimizer_state)),
                      c.total(), "B"});
  ck.lines.push_back(
      {"busiest writer", fmt::format("of {} writing ranks", c.writing_ranks), c.bytes_per_rank_max, "B"});
  out.sections.push_back(std::move(ck));
  return out;
}

std::string to_text(const Explanation& explanation) {
  std::string out;
  for (const ExplainSection& s : explanation.sections) {
    if (!out.empty()) out += '\n';
    out += s.title + '\n';
    std::size_t width = 0;
    for (const ExplainLine& l : s.lines) width = std::max(width, l.label.size());
    for (const ExplainLine& l : s.lines) {
      out += fmt::format("  {:<{}}  {:>16}  = {}\n", l.label, width, human(l.value, l.unit), l.formula);
    }
    for (const std::string& n : s.notes) out += "  " + n + '\n';
  }
  return out;
}

}  // namespace trainsim::model
