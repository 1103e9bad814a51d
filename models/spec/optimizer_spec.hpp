#pragma once
// Which optimizer, and in what precision its state is kept. Costs per optimizer are in optimizer.hpp.
#include "topologies/precision.hpp"

namespace trainsim::model {

using topo::Precision;

enum class OptimizerKind {
  sgd,
  sgd_momentum,
  nesterov,
  adagrad,
  rmsprop,
  adam,
  adamw,
  adafactor,
  lion,
  lamb,
  adam8bit,
  muon,
  shampoo,
  soap
};

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adamw;
  Precision state_precision = Precision::fp32;  ///< precision of momentum/variance (adam8bit: int8)
  bool master_weights = true;                   ///< fp32 master copy under mixed precision
  int quantization_block = 2048;  ///< adam8bit: elements per quantisation block (one fp32 scale)
  bool grad_clipping = true;      ///< global-norm clipping: one extra all-reduce of a scalar
  bool fp32_grads = false;        ///< gradients kept in fp32 (Megatron main_grad); false: in the compute
                                  ///< precision, as the ZeRO paper counts them
  bool adafactor_momentum =
      false;                   ///< adafactor: keep a full-size first moment (off by default, as in the paper)
  int muon_ns_iterations = 5;  ///< muon: Newton–Schulz iterations per step
  /// shampoo, soap: the largest side of a preconditioner factor; 0 = the kind's default
  /// (preconditioner.hpp: each tensor cut into blocks of at most this per side)
  int max_preconditioner_dim = 0;
  /// shampoo, soap: steps between two eigendecompositions (inverse roots, eigenbases); 0 = the kind's default
  int precondition_frequency = 0;
  bool operator==(const OptimizerSpec&) const = default;
};

}  // namespace trainsim::model
