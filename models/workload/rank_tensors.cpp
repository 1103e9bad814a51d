// The parameter tensors one rank holds (see rank_tensors.hpp).
#include "models/workload/rank_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>

#include "models/workload/attention_projections.hpp"
#include "sim/error.hpp"

namespace trainsim::model {
namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

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

}  // namespace

namespace {

// A MoE model's dense layers among rank `stage`'s: the layers rank_tensors gives a dense MLP.
double dense_layers_on(const TransformerSpec& m, const std::vector<int>& layers, int stage) {
  const auto s = static_cast<std::size_t>(stage);
  if (!m.is_moe()) return layers[s];
  const int first_layer = std::accumulate(layers.begin(), layers.begin() + stage, 0);
  return as_double(m.dense_layers_in(first_layer, layers[s]));
}

}  // namespace

bool same_rank_tensors(const TransformerSpec& m, const ParallelPlan& plan, const std::vector<int>& layers,
                       int a, int b) {
  if (a == b) return true;
  if (!m.generic_layers.empty()) return false;
  const auto ends = [&](int s) { return std::pair(s == 0, s == plan.pp - 1); };
  return layers[static_cast<std::size_t>(a)] == layers[static_cast<std::size_t>(b)] && ends(a) == ends(b) &&
         dense_layers_on(m, layers, a) == dense_layers_on(m, layers, b);
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
    add_layer_tensors(r, m, plan, n_layers, dense_layers_on(m, layers, stage));
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

std::int64_t stack_layer_count(const TransformerSpec& model) {
  return model.generic_layers.empty() ? model.layers : static_cast<std::int64_t>(model.generic_layers.size());
}

void check_layout_counts(const TransformerSpec& m, const ParallelPlan& plan) {
  std::vector<Diagnostic> problems;
  // Texts built only for a problem: the check runs several times for every layout a search prices.
  auto require = [&](bool ok, std::string_view key, std::string_view message) {
    if (!ok)
      problems.push_back(Diagnostic{"", 0, 0, "parallelism." + std::string(key), std::string(message)});
  };
  require(plan.tp >= 1, "tp", "must be at least 1");
  require(plan.pp >= 1, "pp", "must be at least 1");
  require(plan.dp >= 1, "dp", "must be at least 1");
  require(plan.cp >= 1, "cp", "must be at least 1");
  require(plan.ep >= 1, "ep", "must be at least 1");
  require(plan.micro_batch >= 1, "micro_batch", "must be at least 1");
  require(plan.virtual_stages >= 1, "virtual_stages", "must be at least 1");
  if (!problems.empty()) throw InputError(std::move(problems));
  const std::int64_t total = stack_layer_count(m);
  if (total <= 0) throw InputError("model.layers: must be a positive count, got " + std::to_string(total));
}

UnitParameters unit_parameters(const TransformerSpec& model, const ParallelPlan& plan) {
  check_layout_counts(model, plan);
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
  const int before = model.moe_layer_count() > 0 ? static_cast<int>(model.first_moe_layer()) : 0;
  RankTensors layer = rank_tensors(model, three, 1, {before, 1, 0});
  u.layer_expert = elements(layer.expert);
  u.layer_expert_tensors = layer.expert.size();
  u.layer_tensors = std::move(layer.dense);
  u.layer_tensors.insert(u.layer_tensors.end(), layer.expert.begin(), layer.expert.end());
  u.embedding_tensors = rank_tensors(model, three, 0, {0, 0, 0}).dense;
  // The multi-token-prediction modules run as units of their own (their layers gather as layers do).
  if (model.mtp_layers == 0) {
    u.head_tensors = rank_tensors(model, three, 2, {0, 0, 0}).dense;
  } else {
    TransformerSpec without_mtp = model;
    without_mtp.mtp_layers = 0;
    u.head_tensors = rank_tensors(without_mtp, three, 2, {0, 0, 0}).dense;
  }
  // On a single stage a tied head is the embedding itself.
  if (plan.pp == 1 && model.tied_embeddings) {
    std::erase_if(u.head_tensors, [](const TensorShape& t) { return t.role == TensorRole::embedding; });
  }
  u.layer = elements(u.layer_tensors);
  u.embedding = elements(u.embedding_tensors);
  u.head = elements(u.head_tensors);
  return u;
}

}  // namespace trainsim::model
