#include "models/workload/optimizer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "models/workload/preconditioner.hpp"
#include "sim/error.hpp"
#include "sim/recent_results.hpp"

namespace trainsim::model {
namespace {

// Hyper-parameters counted as the knobs practitioners tune: SGD (lr, weight decay), +momentum, Adagrad
// (lr, eps, wd), RMSprop (lr, alpha, eps, wd), Adam (lr, β1, β2, eps), AdamW (+ decoupled wd), Adafactor
// (lr/relative step, ε1, ε2, clip threshold d, decay exponent, wd), Lion (lr, β1, β2, wd), LAMB (lr, β1,
// β2, eps, wd), 8-bit Adam (AdamW's + block size), Muon (lr, momentum, wd, Newton–Schulz steps, and the
// AdamW learning rate of its non-matrix parameters), Shampoo (lr, β1, β2, ε, wd, grafting ε,
// max_preconditioner_dim, precondition_frequency, start_preconditioning_step: the knobs Distributed
// Shampoo's README tunes), SOAP (AdamW's five and the preconditioning frequency, "only one additional
// hyperparameter" over Adam, Vyas et al. 2024).
constexpr std::array<OptimizerInfo, 14> kInfos{{
    {OptimizerKind::sgd, "sgd", "plain stochastic gradient descent", 2, 0, false, false},
    {OptimizerKind::sgd_momentum, "sgd-momentum", "SGD with heavy-ball momentum", 3, 1, false, false},
    {OptimizerKind::nesterov, "nesterov", "SGD with Nesterov momentum", 3, 1, false, false},
    {OptimizerKind::adagrad, "adagrad", "sum of squared gradients per parameter", 3, 1, false, false},
    {OptimizerKind::rmsprop, "rmsprop", "moving average of squared gradients", 4, 1, false, false},
    {OptimizerKind::adam, "adam", "first and second moments, L2 weight decay", 4, 2, false, false},
    {OptimizerKind::adamw, "adamw", "Adam with decoupled weight decay", 5, 2, false, false},
    {OptimizerKind::adafactor, "adafactor", "factored second moment: row + column statistics", 6, 0, false,
     false},
    {OptimizerKind::lion, "lion", "sign of interpolated momentum, one state", 4, 1, false, false},
    {OptimizerKind::lamb, "lamb", "Adam with a per-layer trust ratio", 5, 2, true, false},
    {OptimizerKind::adam8bit, "adam-8bit", "AdamW with block-wise 8-bit quantised moments", 6, 2, false,
     false},
    {OptimizerKind::muon, "muon", "momentum orthogonalised by Newton-Schulz; AdamW for non-matrices", 5, 1,
     true, true},
    {OptimizerKind::shampoo, "shampoo", "Kronecker-factored preconditioners per block, Adam grafting", 9, 2,
     false, true},
    {OptimizerKind::soap, "soap", "Adam in the eigenbasis of Shampoo's preconditioners", 6, 2, false, true},
}};

constexpr std::array<OptimizerAlias, 8> kAliases{{
    {"momentum", OptimizerKind::sgd_momentum},
    {"sgdm", OptimizerKind::sgd_momentum},
    {"sgd-nesterov", OptimizerKind::nesterov},
    {"adam8bit", OptimizerKind::adam8bit},
    {"8bit-adam", OptimizerKind::adam8bit},
    {"adamw-8bit", OptimizerKind::adam8bit},
    {"adamw8bit", OptimizerKind::adam8bit},
    {"adam-8-bit", OptimizerKind::adam8bit},
}};

// bitsandbytes keeps tensors below this many elements in 32-bit state (min_8bit_size = 4096).
constexpr double kMin8bitElements = 4096;

std::string normalise(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '_' || c == ' ') {
      out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

bool is_vector(const TensorShape& t) {
  return t.is_vector();
}

// Muon orthogonalises hidden matrices only; everything else gets AdamW.
bool muon_matrix(const TensorShape& t) {
  return t.role == TensorRole::matrix && !is_vector(t);
}

// Elementwise FLOPs per parameter of one update, counted operation by operation:
//  sgd        g+wd·w (2), w−lr·g (2)                                         = 4
//  momentum   + m = μm + g (2)                                               = 6
//  nesterov   + g + μm (2)                                                   = 8
//  adagrad    g+wd·w (2), s += g² (2), w −= lr·g/(√s+ε) (5)                  = 9
//  rmsprop    g+wd·w (2), v = αv + (1−α)g² (4), update (5)                   = 11
//  adam(w)    m (3), v (4), bias corrections (2), update (5), weight decay (2) = 16
//  adafactor  matrix: g²+ε (2), row/col sums (2), v̂ = RᵢCⱼ/ΣR (2), u = g/√v̂ (2), RMS clip (3), w −= lr·u + wd
//  (4)
//             = 15; vector: v (4) + ε (1), u (2), clip (3), update (4) = 14; momentum adds 3
//  lion       c = β1m + (1−β1)g (3), sign (1), w −= lr(sign + wd·w) (4), m update (3) = 11
//  lamb       adam without decay (14), + wd·w into u (2), ‖w‖², ‖u‖² (4), trust ratio (1) = 21
//  adam-8bit  adam (16), dequantise m, v (2 each), quantise m, v: absmax, scale, round (3 each) = 26
//  muon       m = μm + g (2), nesterov g + μm (2), X = G/‖G‖F (3), w −= lr(s·O + wd·w) (4) = 11
//  shampoo    filtered gradient (3), Adam grafting v (4) and its direction (3), the two directions' norms
//             (4) and the rescale (1), w −= lr(d + wd·w) (4) = 19
//  soap       adam(w)'s 16, in the rotated basis
double flops_per_element(const OptimizerSpec& spec, const TensorShape& t) {
  switch (spec.kind) {
    case OptimizerKind::sgd:
      return 4;
    case OptimizerKind::sgd_momentum:
      return 6;
    case OptimizerKind::nesterov:
      return 8;
    case OptimizerKind::adagrad:
      return 9;
    case OptimizerKind::rmsprop:
      return 11;
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
      return 16;
    case OptimizerKind::adafactor:
      return (is_vector(t) ? 14 : 15) + (spec.adafactor_momentum ? 3 : 0);
    case OptimizerKind::lion:
      return 11;
    case OptimizerKind::lamb:
      return 21;
    case OptimizerKind::adam8bit:
      return 26;
    case OptimizerKind::muon:
      return muon_matrix(t) ? 11 : 16;
    case OptimizerKind::shampoo:
      return 19;
    case OptimizerKind::soap:
      return 16;
  }
  return 0;
}

// The names of the state tensors (StateTensor::name), so that a tally compares small integers, not text.
enum class StateName : std::uint8_t {
  momentum,
  variance,
  sum_of_squares,
  square_average,
  row_stats,
  col_stats,
  scales,
  grafting_variance,
  preconditioners,
  inverse_roots,
  eigenbases,
};
constexpr std::array<std::string_view, 11> kStateNames{
    "momentum", "variance",          "sum_of_squares",  "square_average", "row_stats", "col_stats",
    "scales",   "grafting_variance", "preconditioners", "inverse_roots",  "eigenbases"};

// The state elements of a set of tensors, one entry per (name, precision) in the order first met, without
// allocating: an optimizer keeps at most five kinds (8-bit Adam: fp32 moments for small tensors, int8 ones
// and their fp32 scales).
class StateTally {
 public:
  struct Entry {
    StateName name;
    Precision precision;
    double elements;
  };

  void add(StateName name, Precision precision, double elements) {
    if (elements <= 0) return;
    for (std::size_t i = 0; i < size_; ++i) {
      if (entries_[i].name == name && entries_[i].precision == precision) {
        entries_[i].elements += elements;
        return;
      }
    }
    TRAINSIM_CHECK(size_ < entries_.size(), "optimizer state tally: more kinds than it holds");
    entries_[size_++] = Entry{name, precision, elements};
  }
  [[nodiscard]] std::span<const Entry> entries() const { return {entries_.data(), size_}; }

 private:
  std::array<Entry, 8> entries_{};
  std::size_t size_ = 0;
};

void add_tensor_states(StateTally& states, const OptimizerSpec& spec, const TensorShape& t) {
  const double n = t.elements();
  const Precision p = spec.state_precision;
  switch (spec.kind) {
    case OptimizerKind::sgd:
      return;
    case OptimizerKind::sgd_momentum:
    case OptimizerKind::nesterov:
    case OptimizerKind::lion:
      states.add(StateName::momentum, p, n);
      return;
    case OptimizerKind::adagrad:
      states.add(StateName::sum_of_squares, p, n);
      return;
    case OptimizerKind::rmsprop:
      states.add(StateName::square_average, p, n);
      return;
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
    case OptimizerKind::lamb:
      states.add(StateName::momentum, p, n);
      states.add(StateName::variance, p, n);
      return;
    case OptimizerKind::adafactor:
      if (is_vector(t)) {
        states.add(StateName::variance, p, n);
      } else {
        states.add(StateName::row_stats, p, static_cast<double>(t.rows) * t.count);
        states.add(StateName::col_stats, p, static_cast<double>(t.cols) * t.count);
      }
      if (spec.adafactor_momentum) states.add(StateName::momentum, p, n);
      return;
    case OptimizerKind::adam8bit: {
      const double per_tensor = static_cast<double>(t.rows) * static_cast<double>(t.cols);
      if (per_tensor < kMin8bitElements) {
        states.add(StateName::momentum, Precision::fp32, n);
        states.add(StateName::variance, Precision::fp32, n);
        return;
      }
      const double blocks = std::ceil(per_tensor / std::max(1, spec.quantization_block)) * t.count;
      states.add(StateName::momentum, Precision::int8, n);
      states.add(StateName::variance, Precision::int8, n);
      states.add(StateName::scales, Precision::fp32, 2 * blocks);
      return;
    }
    case OptimizerKind::muon:
      states.add(StateName::momentum, p, n);
      if (!muon_matrix(t)) states.add(StateName::variance, p, n);
      return;
    case OptimizerKind::shampoo:
    case OptimizerKind::soap: {
      const bool shampoo = spec.kind == OptimizerKind::shampoo;
      states.add(StateName::momentum, p, n);
      states.add(shampoo ? StateName::grafting_variance : StateName::variance, p, n);
      double factors = 0;
      for (const PreconditionedBlock& b : preconditioned_blocks(spec, t))
        factors += b.count * b.factor_elements();
      states.add(StateName::preconditioners, p, factors);
      states.add(shampoo ? StateName::inverse_roots : StateName::eigenbases, p, factors);
      return;
    }
  }
}

StateTally state_tally(const OptimizerSpec& spec, std::span<const TensorShape> tensors) {
  StateTally tally;
  for (const auto& t : tensors) add_tensor_states(tally, spec, t);
  return tally;
}

}  // namespace

std::span<const OptimizerInfo> all_optimizers() {
  return kInfos;
}

const OptimizerInfo& optimizer_info(OptimizerKind kind) {
  const auto index = static_cast<std::size_t>(kind);
  TRAINSIM_CHECK(index < kInfos.size() && kInfos[index].kind == kind, "optimizer table out of order");
  return kInfos[index];
}

std::span<const OptimizerAlias> optimizer_aliases() {
  return kAliases;
}

std::string_view optimizer_name(OptimizerKind kind) {
  return optimizer_info(kind).name;
}

OptimizerKind parse_optimizer(std::string_view name) {
  const std::string key = normalise(name);
  for (const auto& info : kInfos) {
    if (key == info.name) return info.kind;
  }
  for (const auto& [alias, kind] : kAliases) {
    if (key == alias) return kind;
  }
  std::string valid;
  for (const auto& info : kInfos) {
    if (!valid.empty()) valid += ", ";
    valid += info.name;
  }
  throw InputError("unknown optimizer '" + std::string(name) + "'; expected one of: " + valid);
}

Precision weight_storage_precision(Precision compute) {
  return topo::activation_precision(compute);
}

Precision gradient_precision(const OptimizerSpec& spec, Precision compute) {
  const Precision w = weight_storage_precision(compute);
  return spec.fp32_grads ? Precision::fp32 : w;
}

bool keeps_master_weights(const OptimizerSpec& spec, Precision compute) {
  return spec.master_weights && topo::bytes_per_element(weight_storage_precision(compute)) < 4.0;
}

std::vector<StateTensor> optimizer_state_tensors(const OptimizerSpec& spec,
                                                 std::span<const TensorShape> tensors) {
  const StateTally tally = state_tally(spec, tensors);
  std::vector<StateTensor> states;
  for (const StateTally::Entry& e : tally.entries())
    states.push_back({std::string(kStateNames[static_cast<std::size_t>(e.name)]), e.precision, e.elements});
  return states;
}

double newton_schulz_flops(std::int64_t rows, std::int64_t cols, int iterations) {
  const double k = static_cast<double>(std::min(rows, cols));
  const double l = static_cast<double>(std::max(rows, cols));
  return iterations * (4 * k * k * l + 2 * k * k * k);
}

namespace {

OptimizerCost priced_optimizer_cost(const OptimizerSpec& spec, Precision compute,
                                    std::span<const TensorShape> tensors) {
  const double bw = topo::bytes_per_element(weight_storage_precision(compute));
  const double bg = topo::bytes_per_element(gradient_precision(spec, compute));
  const bool master = keeps_master_weights(spec, compute);
  // A matmul operand of Newton–Schulz is kept in the compute precision (bf16 in Jordan's implementation).
  const double bns = topo::bytes_per_element(weight_storage_precision(compute));

  OptimizerCost cost;
  for (const auto& t : tensors) {
    const double n = t.elements();
    cost.params += n;
    // Weights: with a master copy, read and write fp32 master and write the low-precision weights;
    // without, read and write the weights in place.
    double moved = master ? n * (4 + 4 + bw) : n * 2 * bw;
    // The gradient is read once by the update itself.
    moved += n * bg;
    // Global-norm clipping reads every gradient for the norm, then scales it in place (read + write).
    if (spec.grad_clipping) moved += 3 * n * bg;
    // fp16 needs the loss-scale unscale and inf/nan check: one read + write of the gradients.
    if (compute == Precision::fp16) moved += 2 * n * bg;
    double flops = flops_per_element(spec, t) * n;
    if (spec.grad_clipping) flops += 3 * n;
    if (compute == Precision::fp16) flops += 2 * n;
    switch (spec.kind) {
      case OptimizerKind::adafactor:
        // Second pass over the gradient after the statistics, and the update tensor written and read
        // back for its RMS clipping (fp32), as in the reference implementation.
        if (!is_vector(t)) moved += n * bg;
        moved += n * 8;
        break;
      case OptimizerKind::lamb:
        // Stage 1 writes the fp32 update, stage 2 reads it and the weights again after the norms.
        moved += n * (8 + (master ? 4 : bw));
        cost.reduction_values += 2 * t.count;
        break;
      case OptimizerKind::muon:
        if (muon_matrix(t)) {
          const double k = static_cast<double>(std::min(t.rows, t.cols));
          const double k2 = k * k * t.count;
          // Per iteration: read X, write A (k²); read A, write B (k²·2); read B, X, write X.
          moved += spec.muon_ns_iterations * bns * (3 * n + 4 * k2) + 2 * n * bns;
          cost.matmul_flops += t.count * newton_schulz_flops(t.rows, t.cols, spec.muon_ns_iterations);
          cost.reduction_values += t.count;
        }
        break;
      case OptimizerKind::shampoo:
      case OptimizerKind::soap:
        for (const PreconditionedBlock& b : preconditioned_blocks(spec, t))
          cost.matmul_flops += b.count * preconditioner_flops_per_step(spec, b);
        break;
      default:
        break;
    }
    cost.elementwise_flops += flops;
    cost.bytes_moved += moved;
    if (master) cost.master_bytes += 4 * n;
  }
  const StateTally states = state_tally(spec, tensors);
  for (const StateTally::Entry& e : states.entries()) {
    const double bytes = e.elements * topo::bytes_per_element(e.precision);  // StateTensor::bytes
    cost.state_bytes += bytes;
    cost.bytes_moved += 2 * bytes;  // every state is read and written once per update
  }
  if (spec.grad_clipping && !tensors.empty()) cost.reduction_values += 1;
  return cost;
}

// What an optimizer_cost was computed from.
struct OptimizerCostInputs {
  OptimizerSpec spec;
  Precision compute = Precision::bf16;
  std::vector<TensorShape> tensors;
};

}  // namespace

OptimizerCost optimizer_cost(const OptimizerSpec& spec, Precision compute,
                             std::span<const TensorShape> tensors) {
  // A search asks for the same ranks' tensors over and over (every micro-batch, schedule, ZeRO stage and
  // recompute choice of one split): the calling thread keeps its last few answers with their inputs, and
  // equal inputs get the kept answer.
  thread_local sim::RecentResults<OptimizerCostInputs, OptimizerCost, 8> kept;
  const OptimizerCost* cost = kept.find([&](const OptimizerCostInputs& k) {
    return k.compute == compute && std::ranges::equal(k.tensors, tensors) && k.spec == spec;
  });
  if (cost != nullptr) return *cost;
  return kept.insert(OptimizerCostInputs{spec, compute, {tensors.begin(), tensors.end()}},
                     priced_optimizer_cost(spec, compute, tensors));
}

OptimizerCost optimizer_cost_per_param(const OptimizerSpec& spec, Precision compute) {
  // A 2^20 x 2^20 matrix: factored and per-block terms are at their asymptote (Adafactor's row + column
  // statistics are 2^-19 values per parameter), and the result is divided down to one parameter.
  constexpr std::int64_t kSide = std::int64_t{1} << 20;
  const std::array<TensorShape, 1> big{{{kSide, kSide, 1, TensorRole::matrix}}};
  OptimizerCost total = optimizer_cost(spec, compute, big);
  const double n = total.params;
  return {.params = 1,
          .state_bytes = total.state_bytes / n,
          .master_bytes = total.master_bytes / n,
          .bytes_moved = total.bytes_moved / n,
          .elementwise_flops = total.elementwise_flops / n,
          .matmul_flops = 0,
          .reduction_values = 0};
}

}  // namespace trainsim::model
