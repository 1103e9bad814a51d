#include "models/step/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/attention_projections.hpp"
#include "models/workload/parameters.hpp"
#include "models/workload/shard.hpp"
#include "sim/error.hpp"

namespace trainsim::model {
namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The tensors of one rank, split by how ZeRO shards them: dense ones over dp·cp·ep, experts over dp·cp
// (ParallelPlan::dense_shard_ranks, expert_shard_ranks).
struct RankTensors {
  std::vector<TensorShape> dense;
  std::vector<TensorShape> expert;
};

// One layer's MLP weights (gelu: fc1, fc2; swiglu: gate, up, down) of width f on one tp rank, `count`
// copies (experts per rank x layers).
void add_mlp(std::vector<TensorShape>& out, const TransformerSpec& m, std::int64_t f, int tp, double count) {
  const std::int64_t h = m.hidden;
  const std::int64_t f_local = ceil_div(f, tp);
  const double in_matrices = m.mlp == Mlp::swiglu ? 2 : 1;
  out.push_back({h, f_local, in_matrices * count, TensorRole::matrix});
  out.push_back({f_local, h, count, TensorRole::matrix});
  if (m.bias) {
    out.push_back({f_local, 1, in_matrices * count, TensorRole::vector});
    out.push_back({h, 1, count, TensorRole::vector});
  }
}

void add_norms(std::vector<TensorShape>& out, const TransformerSpec& m, double norms) {
  const double vectors_per_norm = m.norm == Norm::layernorm ? 2 : 1;
  out.push_back({m.hidden, 1, norms * vectors_per_norm, TensorRole::vector});
}

// `count` transformer layers on one rank, `dense` of them with a dense MLP (all of a dense model's; a MoE
// model's dense first layers). Attention: column-parallel input projections, a row-parallel output
// projection, MLA's down projections and their norms whole on every rank; the output bias is replicated.
// A MoE layer: the router (replicated), the routed experts (ep-sharded) and the shared experts (split over
// tp like a dense MLP). Two norms a layer.
void add_layer_tensors(RankTensors& r, const TransformerSpec& m, const ParallelPlan& plan, double count,
                       double dense) {
  const int tp = plan.tp;
  for (const Projection& x : attention_projections(m, tp)) {
    r.dense.push_back({x.local_in, x.local_out, count, TensorRole::matrix});
    if (x.local_bias > 0) r.dense.push_back({x.local_bias, 1, count, TensorRole::vector});
    if (x.norm > 0) r.dense.push_back({x.norm, 1, count, TensorRole::vector});
  }
  const double moe = count - dense;
  if (moe > 0) {
    const std::int64_t fe = m.mlp_width();
    r.dense.push_back({m.hidden, m.experts, moe, TensorRole::matrix});
    add_mlp(r.expert, m, fe, plan.expert_tensor_parallel(), moe * as_double(m.experts) / plan.ep);
    if (m.shared_experts > 0) add_mlp(r.dense, m, m.shared_experts * fe, tp, moe);
  }
  if (dense > 0) add_mlp(r.dense, m, m.ffn_hidden_or_default(), tp, dense);
  add_norms(r.dense, m, 2 * count);
}

RankTensors rank_tensors(const TransformerSpec& m, const ParallelPlan& plan, int stage,
                         const std::vector<int>& layers) {
  RankTensors r;
  const auto s = static_cast<std::size_t>(stage);
  const double n_layers = layers[s];
  if (!m.generic_layers.empty()) {
    // A generic layer's shape is unknown: a square matrix of its size, split over tp.
    const int first = std::accumulate(layers.begin(), layers.begin() + stage, 0);
    for (int i = first; i < first + layers[s]; ++i) {
      const double local = m.generic_layers[static_cast<std::size_t>(i)].params / plan.tp;
      const auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(local)));
      if (side > 0)
        r.dense.push_back({side, side, local / (as_double(side) * as_double(side)), TensorRole::matrix});
    }
    return r;
  }
  const std::int64_t h = m.hidden;
  const int tp = plan.tp;
  if (n_layers > 0) {
    // The dense first layers on this stage have a dense MLP.
    const int first_layer = std::accumulate(layers.begin(), layers.begin() + stage, 0);
    const double dense_here =
        m.is_moe() ? as_double(std::clamp<std::int64_t>(m.dense_layer_count() - first_layer, 0, layers[s]))
                   : n_layers;
    add_layer_tensors(r, m, plan, n_layers, dense_here);
  }
  const bool first = stage == 0;
  const bool last = stage == plan.pp - 1;
  const std::int64_t vocab_local = ceil_div(m.vocab, tp);
  if (first) {
    r.dense.push_back({vocab_local, h, 1, TensorRole::embedding});
    if (m.position == Position::learned) r.dense.push_back({m.seq_len, h, 1, TensorRole::embedding});
  }
  if (last) {
    add_norms(r.dense, m, 1);
    // The LM head; tied to the embedding it is the same tensor on a single stage, a synchronised copy on
    // the last of several.
    if (!m.tied_embeddings || !first) r.dense.push_back({vocab_local, h, 1, TensorRole::embedding});
    if (m.mtp_layers > 0) {
      // Multi-token prediction: each module's layer (a MoE layer of a MoE model), its 2h → h projection
      // (column-parallel), its two input norms and its final norm; and the embedding it looks the tokens
      // ahead up in: a copy on a later stage, unless the tied head already is one.
      const double d = as_double(m.mtp_layers);
      add_layer_tensors(r, m, plan, d, m.is_moe() ? 0.0 : d);
      add_norms(r.dense, m, 3 * d);
      r.dense.push_back({2 * h, ceil_div(h, tp), d, TensorRole::matrix});
      if (m.bias) r.dense.push_back({ceil_div(h, tp), 1, d, TensorRole::vector});
      if (!first && !m.tied_embeddings) r.dense.push_back({vocab_local, h, 1, TensorRole::embedding});
    }
  }
  return r;
}

double elements(const std::vector<TensorShape>& tensors) {
  double n = 0;
  for (const auto& t : tensors) n += t.elements();
  return n;
}

void check_layout(const TransformerSpec& m, const ParallelPlan& plan) {
  std::vector<Diagnostic> problems;
  auto require = [&](bool ok, const std::string& key, const std::string& message) {
    if (!ok) problems.push_back(Diagnostic{"", 0, 0, "parallelism." + key, message});
  };
  require(plan.tp >= 1, "tp", "must be at least 1");
  require(plan.pp >= 1, "pp", "must be at least 1");
  require(plan.dp >= 1, "dp", "must be at least 1");
  require(plan.cp >= 1, "cp", "must be at least 1");
  require(plan.ep >= 1, "ep", "must be at least 1");
  require(plan.micro_batch >= 1, "micro_batch", "must be at least 1");
  require(plan.virtual_stages >= 1, "virtual_stages", "must be at least 1");
  if (!problems.empty()) throw InputError(std::move(problems));
  const std::int64_t total =
      m.generic_layers.empty() ? m.layers : static_cast<std::int64_t>(m.generic_layers.size());
  if (total <= 0) throw InputError("model.layers: must be a positive count, got " + std::to_string(total));
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
std::string gib(double bytes) {
  return fmt::format("{:.1f} GiB", bytes / kGiB);
}

std::string shortfall(int stage, const MemoryBreakdown& m, double capacity) {
  std::array<std::pair<double, const char*>, 5> parts{{{m.activations, "activations"},
                                                       {m.optimizer_state, "optimizer state"},
                                                       {m.weights, "weights"},
                                                       {m.grads, "grads"},
                                                       {m.buffers, "buffers"}}};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = fmt::format("stage {} needs {} of {:.4g} GiB:", stage, gib(m.total()), capacity / kGiB);
  bool first = true;
  for (const auto& [bytes, name] : parts) {
    out += fmt::format("{} {} {}", first ? "" : ",", name, gib(bytes));
    first = false;
  }
  return out;
}

}  // namespace

std::vector<int> stage_layer_counts(const TransformerSpec& model, const ParallelPlan& plan) {
  const std::int64_t total =
      model.generic_layers.empty() ? model.layers : static_cast<std::int64_t>(model.generic_layers.size());
  if (plan.pp < 1) throw InputError("parallelism.pp: must be at least 1");
  LayerSplit split = split_pipeline_layers(total, plan);
  if (!split.reason.empty()) throw InputError("parallelism: " + split.reason);
  return split.stage_layers;
}

std::vector<TensorShape> stage_parameter_tensors(const TransformerSpec& model, const ParallelPlan& plan,
                                                 int stage) {
  check_layout(model, plan);
  const auto layers = stage_layer_counts(model, plan);
  if (stage < 0 || stage >= plan.pp)
    throw InputError(fmt::format("stage {} is not in 0..{}", stage, plan.pp - 1));
  RankTensors r = rank_tensors(model, plan, stage, layers);
  r.dense.insert(r.dense.end(), r.expert.begin(), r.expert.end());
  return r.dense;
}

UnitParameters unit_parameters(const TransformerSpec& model, const ParallelPlan& plan) {
  check_layout(model, plan);
  UnitParameters u;
  if (!model.generic_layers.empty()) {
    for (const auto& g : model.generic_layers) u.layer = std::max(u.layer, g.params / plan.tp);
    return u;
  }
  // A three-stage pipeline of the same shards: its middle stage holds one layer and nothing else (a MoE
  // layer, past any dense first layers), its first the embedding alone, its last the final norm and the LM
  // head (a copy when tied).
  ParallelPlan three = plan;
  three.pp = 3;
  three.stage_layers.clear();
  const int before = model.moe_layer_count() > 0 ? static_cast<int>(model.dense_layer_count()) : 0;
  RankTensors layer = rank_tensors(model, three, 1, {before, 1, 0});
  u.layer_tensors = std::move(layer.dense);
  u.layer_tensors.insert(u.layer_tensors.end(), layer.expert.begin(), layer.expert.end());
  u.embedding_tensors = rank_tensors(model, three, 0, {0, 0, 0}).dense;
  // The multi-token-prediction modules run as units of their own (their layers gather as layers do).
  TransformerSpec without_mtp = model;
  without_mtp.mtp_layers = 0;
  u.head_tensors = rank_tensors(without_mtp, three, 2, {0, 0, 0}).dense;
  // On a single stage a tied head is the embedding itself.
  if (plan.pp == 1 && model.tied_embeddings) {
    std::erase_if(u.head_tensors, [](const TensorShape& t) { return t.role == TensorRole::embedding; });
  }
  u.layer = elements(u.layer_tensors);
  u.embedding = elements(u.embedding_tensors);
  u.head = elements(u.head_tensors);
  return u;
}

MemoryBreakdown model_state_bytes(double params, double shard_degree, ZeroStage zero,
                                  const OptimizerSpec& spec, Precision compute) {
  const OptimizerCost per = optimizer_cost_per_param(spec, compute);
  const double n = std::max(1.0, shard_degree);
  MemoryBreakdown m;
  m.weights =
      params * topo::bytes_per_element(weight_storage_precision(compute)) / (shards_weights(zero) ? n : 1);
  m.grads =
      params * topo::bytes_per_element(gradient_precision(spec, compute)) / (shards_gradients(zero) ? n : 1);
  m.optimizer_state = params * (per.state_bytes + per.master_bytes) / (shards_optimizer_states(zero) ? n : 1);
  return m;
}

MemoryEstimate estimate_memory(const TransformerSpec& model, const ParallelPlan& plan,
                               const TrainingSpec& training, const topo::GpuSpec& gpu,
                               const MemoryOptions& options) {
  check_layout(model, plan);
  const std::vector<int> layers = stage_layer_counts(model, plan);
  MemoryEstimate est;
  est.capacity = gpu.hbm_bytes * (1.0 - options.headroom_fraction);

  const Precision compute = training.precision;
  const Precision act_precision = weight_storage_precision(compute);
  if (model.generic_layers.empty()) {
    // Degrees that do not divide the model make the plan infeasible, not the input bad.
    try {
      check_shard(model, shard_of(plan, act_precision));
    } catch (const InputError& e) {
      est.fits = false;
      est.reason = e.what();
      return est;
    }
  }
  const OptimizerSpec& opt = training.optimizer;
  const double bw = topo::bytes_per_element(weight_storage_precision(compute));
  const double bg = topo::bytes_per_element(gradient_precision(opt, compute));
  const double dense_degree = plan.dense_shard_ranks();
  const double expert_degree = plan.expert_shard_ranks();
  const ZeroStage zero = plan.zero;
  auto shard = [&](double bytes, double degree, bool sharded) { return sharded ? bytes / degree : bytes; };
  const bool weights_sharded = shards_weights(zero), grads_sharded = shards_gradients(zero),
             states_sharded = shards_optimizer_states(zero);

  // Micro-batches per step; without a global batch the pipeline is assumed full (pp of them).
  std::int64_t micro_batches = plan.pp;
  if (training.global_batch > 0) {
    micro_batches =
        std::max<std::int64_t>(1, training.global_batch / (plan.micro_batch * plan.data_replicas()));
  }

  // ZeRO-3's collectives: a layer's share (one of gathers_per_layer, or its largest tensor when gathered
  // tensor by tensor), or the embedding / LM head whole.
  const UnitParameters units = unit_parameters(model, plan);
  const Framework& fw = plan.framework;
  double layer_piece = units.layer / std::max(1, fw.gathers_per_layer);
  if (fw.gather_per_tensor) {
    layer_piece = 0;
    for (const TensorShape& t : units.layer_tensors)
      layer_piece = std::max(layer_piece, as_double(t.rows) * as_double(t.cols));
  }

  int first_layer = 0;
  for (int s = 0; s < plan.pp; ++s) {
    const auto si = static_cast<std::size_t>(s);
    StageMemory st;
    st.stage = s;
    st.layers = layers[si];
    st.embedding = s == 0 && model.generic_layers.empty();
    st.lm_head = s == plan.pp - 1 && model.generic_layers.empty();
    const RankTensors r = rank_tensors(model, plan, s, layers);
    const double dense = elements(r.dense), expert = elements(r.expert);
    st.params = dense + expert;
    const OptimizerCost od = optimizer_cost(opt, compute, r.dense);
    const OptimizerCost oe = optimizer_cost(opt, compute, r.expert);

    MemoryBreakdown& m = st.memory;
    m.weights =
        shard(bw * dense, dense_degree, weights_sharded) + shard(bw * expert, expert_degree, weights_sharded);
    m.grads =
        shard(bg * dense, dense_degree, grads_sharded) + shard(bg * expert, expert_degree, grads_sharded);
    st.master_bytes = shard(od.master_bytes, dense_degree, states_sharded) +
                      shard(oe.master_bytes, expert_degree, states_sharded);
    m.optimizer_state = st.master_bytes + shard(od.state_bytes, dense_degree, states_sharded) +
                        shard(oe.state_bytes, expert_degree, states_sharded);

    const StageActivation act =
        stage_activation(model, plan, act_precision, s, layers[si], micro_batches, first_layer);
    m.activations = act.total();
    st.in_flight_micro_batches = act.micro_batches_in_flight;
    if (compute == Precision::fp8) {
      // A MoE model's dense first layers on this stage have the dense layer's GEMMs (under ZeRO-3 each kind
      // keeps its own gathered copies: a slight over-count on the one stage that holds both).
      const int dense_here =
          model.generic_layers.empty() && model.is_moe()
              ? std::clamp(static_cast<int>(model.dense_layer_count()) - first_layer, 0, layers[si])
              : 0;
      st.fp8 = fp8_stage_memory(model, plan, layers[si] - dense_here, act.micro_batches_in_flight);
      if (dense_here > 0) {
        const Fp8Memory d =
            fp8_stage_memory(model.as_dense_layer(), plan, dense_here, act.micro_batches_in_flight);
        st.fp8.weight_copies += d.weight_copies;
        st.fp8.amax_history += d.amax_history;
        st.fp8.saved_inputs += d.saved_inputs;
        st.fp8.gemm_weights += d.gemm_weights;
        st.fp8.fp8_gemms += d.fp8_gemms;
      }
      m.weights += st.fp8.weight_copies;
      m.activations = std::max(0.0, m.activations - st.fp8.saved_inputs);
    }

    // ZeRO-2 reduces gradients through buckets (two in flight); ZeRO-3 reduce-scatters each unit's own
    // gradients, counted with the unit below.
    const bool sharded_grads = grads_sharded && !weights_sharded && dense_degree > 1;
    st.bucket_bytes = sharded_grads ? std::min(2 * plan.bucket_bytes, bg * st.params) : 0;
    if (weights_sharded && dense_degree > 1) {
      double unit = layers[si] > 0 ? layer_piece : 0;
      if (st.embedding) unit = std::max(unit, units.embedding);
      if (st.lm_head) unit = std::max(unit, units.head);
      const int ahead = prefetch_units(fw, layer_piece);
      st.gathered_unit_params = unit;
      st.prefetched_units = ahead;
      // The computing unit and the ones prefetched gathered, plus the computing one's unsharded gradients
      // before their reduce-scatter; kept to the backward (no reshard), every unit of the rank stays whole.
      st.gathered_bytes = fw.reshard_after_forward ? unit * ((1 + ahead) * bw + bg)
                                                   : bw * st.params * (1 - 1 / dense_degree) + unit * bg;
    }
    if (optimizer_info(opt.kind).needs_full_matrices && states_sharded && dense_degree > 1) {
      double largest = 0;
      for (const auto* list : {&r.dense, &r.expert}) {
        for (const TensorShape& t : *list) {
          if (t.role == TensorRole::matrix && t.rows > 1 && t.cols > 1) {
            largest = std::max(largest, as_double(t.rows) * as_double(t.cols));
          }
        }
      }
      st.gathered_bytes += 2 * largest * topo::bytes_per_element(opt.state_precision);
    }
    st.runtime_bytes = options.runtime_bytes;
    const double before_reserve = m.weights + m.grads + m.optimizer_state + m.activations + st.bucket_bytes +
                                  st.gathered_bytes + st.runtime_bytes + st.fp8.amax_history;
    st.allocator_bytes = options.allocator_fraction * before_reserve;
    m.buffers =
        st.bucket_bytes + st.gathered_bytes + st.runtime_bytes + st.fp8.amax_history + st.allocator_bytes;

    if (est.stages.empty() ||
        m.total() > est.stages[static_cast<std::size_t>(est.worst_stage)].memory.total()) {
      est.worst_stage = s;
    }
    est.stages.push_back(st);
    first_layer += layers[si];
  }
  est.memory = est.stages[static_cast<std::size_t>(est.worst_stage)].memory;
  est.per_gpu = est.memory.total();
  est.fits = est.per_gpu <= est.capacity;
  if (!est.fits) est.reason = shortfall(est.worst_stage, est.memory, est.capacity);
  return est;
}

}  // namespace trainsim::model
