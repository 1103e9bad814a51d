#pragma once
// What each optimizer costs: the state it keeps (and in what precision), the bytes one update reads and
// writes, its FLOPs (elementwise, plus Muon's Newton–Schulz matmuls), the reductions it needs beyond the
// gradient all-reduce, and its number of tunable hyper-parameters. Pure functions of plain structs.
//
// Conventions. One FLOP is one add, multiply, divide, square root or compare on one element. Bytes are HBM
// bytes. "Master weights" are the fp32 copy kept when the compute precision is below fp32 (mixed
// precision); they are reported apart from the optimizer state but, as in the ZeRO paper, they are sharded
// with it and MemoryBreakdown counts them under `optimizer_state`.
//
// Sources: ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054) §3.1 for the 16 bytes/param of mixed-precision
// Adam; Adafactor (Shazeer & Stern 2018, arXiv:1804.04235) for the factored second moment; 8-bit optimizers
// (Dettmers et al. 2022, arXiv:2110.02861) for block-wise quantised states; Lion (Chen et al. 2023,
// arXiv:2302.06675); LAMB (You et al. 2020, arXiv:1904.00962); Muon (K. Jordan, "Muon: An optimizer for
// hidden layers in neural networks", 2024, kellerjordan.github.io/posts/muon) and its distributed form
// (Liu et al. 2025, "Muon is Scalable for LLM Training" — Moonlight, arXiv:2502.16982); Shampoo and SOAP's
// preconditioners in preconditioner.hpp.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/optimizer_spec.hpp"

namespace trainsim::model {

/// What a parameter tensor is, as far as the optimizer cares. Muon orthogonalises only hidden matrices;
/// embeddings, the LM head and vectors (norms, biases) get AdamW, as in Jordan's write-up and Moonlight.
enum class TensorRole { matrix, embedding, vector };

/// A group of `count` parameter tensors of the same shape (rows x cols; a vector has cols == 1), as held by
/// one GPU (i.e. the local shard under tensor/expert parallelism).
struct TensorShape {
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  double count = 1;  ///< tensors of this shape (double: may be a per-GPU average, e.g. experts / ep)
  TensorRole role = TensorRole::matrix;

  [[nodiscard]] double elements() const {
    return static_cast<double>(rows) * static_cast<double>(cols) * count;
  }
  /// A norm's scale, a bias: role vector, or one side of length 1.
  [[nodiscard]] bool is_vector() const { return role == TensorRole::vector || rows == 1 || cols == 1; }
  friend bool operator==(const TensorShape&, const TensorShape&) = default;
};

/// One state tensor an optimizer keeps per parameter tensor.
struct StateTensor {
  std::string name;     ///< "momentum", "variance", "row_stats", "scales", ...
  Precision precision;  ///< element format
  double elements = 0;  ///< elements for the tensors it was asked about
  [[nodiscard]] double bytes() const { return elements * topo::bytes_per_element(precision); }
};

/// Fixed facts about an optimizer kind.
struct OptimizerInfo {
  OptimizerKind kind;
  std::string_view name;         ///< canonical spelling in scenarios and outputs, e.g. "adamw", "adam-8bit"
  std::string_view description;  ///< one line
  int hyperparameters;           ///< tunable: learning rate, betas, epsilon, weight decay, ...
  double full_size_states;       ///< state tensors of parameter size for a matrix (adafactor: 0, factored)
  bool per_tensor_norms;         ///< needs norms per tensor (LAMB trust ratio, Muon's normalisation)
  bool needs_full_matrices;  ///< update needs whole matrices (Muon, Shampoo, SOAP): sharded states gathered
};

/// All optimizer kinds, in the order of OptimizerKind.
[[nodiscard]] std::span<const OptimizerInfo> all_optimizers();
[[nodiscard]] const OptimizerInfo& optimizer_info(OptimizerKind kind);
[[nodiscard]] std::string_view optimizer_name(OptimizerKind kind);
/// The other spellings an optimizer is known by (canonical form: lower case, '-' for '_' and ' ').
struct OptimizerAlias {
  std::string_view alias;
  OptimizerKind kind;
};
[[nodiscard]] std::span<const OptimizerAlias> optimizer_aliases();
/// Parses a canonical name or a common alias ("sgd_momentum", "adam8bit", "8bit-adam", "momentum").
/// Case-insensitive; '_' and '-' are the same. Throws InputError listing the valid names otherwise.
[[nodiscard]] OptimizerKind parse_optimizer(std::string_view name);

/// Precision the trainable weights are stored in for a compute precision: fp8 training keeps bf16 weights
/// (fp8 copies are transient casts, as in Transformer Engine); every other precision is stored as itself.
[[nodiscard]] Precision weight_storage_precision(Precision compute);
/// Precision of the gradients: fp32 when spec.fp32_grads or compute is fp32, else the weight storage
/// precision.
[[nodiscard]] Precision gradient_precision(const OptimizerSpec& spec, Precision compute);
/// True when an fp32 master copy is kept: spec.master_weights and weights stored below fp32.
[[nodiscard]] bool keeps_master_weights(const OptimizerSpec& spec, Precision compute);

/// The state tensors the optimizer keeps for the given parameter tensors (master weights not included).
[[nodiscard]] std::vector<StateTensor> optimizer_state_tensors(const OptimizerSpec& spec,
                                                               std::span<const TensorShape> tensors);

/// The cost of one optimizer update over a set of parameter tensors on one GPU.
struct OptimizerCost {
  double params = 0;        ///< parameters updated
  double state_bytes = 0;   ///< optimizer state (momentum, variance, factored stats, quantisation scales)
  double master_bytes = 0;  ///< fp32 master weights (0 without mixed precision)
  double bytes_moved = 0;   ///< HBM bytes read + written by the update (grads, weights, master, states)
  double elementwise_flops = 0;  ///< vector FLOPs of the update
  double matmul_flops = 0;  ///< Muon's Newton–Schulz (in the compute precision), or Shampoo's and SOAP's
                            ///< preconditioner products and amortised refresh (fp32, preconditioner.hpp)
  double reduction_values =
      0;  ///< fp32 values all-reduced across the shards for norms (clipping, LAMB, Muon)

  [[nodiscard]] double state_bytes_per_param() const { return params > 0 ? state_bytes / params : 0; }
  [[nodiscard]] double bytes_moved_per_param() const { return params > 0 ? bytes_moved / params : 0; }
  [[nodiscard]] double flops_per_param() const { return params > 0 ? elementwise_flops / params : 0; }
};

/// Cost of one update of `tensors` trained in `compute` precision.
[[nodiscard]] OptimizerCost optimizer_cost(const OptimizerSpec& spec, Precision compute,
                                           std::span<const TensorShape> tensors);
/// Cost per parameter of a large square hidden matrix (the asymptote shape-dependent optimizers approach;
/// exact for every elementwise optimizer). `params` is 1; matmul_flops is 0 (it depends on the shape).
[[nodiscard]] OptimizerCost optimizer_cost_per_param(const OptimizerSpec& spec, Precision compute);

/// Muon's Newton–Schulz FLOPs for one m x n matrix: with k = min(m, n), l = max(m, n), each iteration forms
/// A = X·Xᵀ (2·k²·l), B = b·A + c·A·A (2·k³) and X = a·X + B·X (2·k²·l): iterations · (4·k²·l + 2·k³),
/// the count in Jordan's write-up ("2(2nm² + m³)" per iteration).
[[nodiscard]] double newton_schulz_flops(std::int64_t rows, std::int64_t cols, int iterations);

}  // namespace trainsim::model
