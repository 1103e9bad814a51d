#pragma once
// Shampoo's and SOAP's Kronecker-factored preconditioners: which factors a parameter tensor gets, their
// elements, and the matmul FLOPs of one step and of one refresh (inverse roots or eigenbases).
//
// Shampoo (Gupta et al. 2018, arXiv:1802.09568) as Distributed Shampoo runs it (Shi et al. 2023,
// arXiv:2309.06497; facebookresearch/optimizers, distributed_shampoo/distributed_shampoo.py): every tensor is
// cut into blocks of at most max_preconditioner_dim per side (its default, 1024; the README's recipes use
// 8192). A block of r x c keeps L (r x r) and R (c x c), accumulated every step (L += G·Gᵀ, R += Gᵀ·G), and
// their inverse roots, recomputed every precondition_frequency steps (its default, 1; the recipes use 100) by
// a symmetric eigendecomposition; the search direction is L^(-1/4)·G·R^(-1/4). A vector's block keeps one
// factor. Per element it also keeps the filtered gradient (betas[0] = 0.9 by default) and its grafting
// optimizer's second moment (Adam grafting, as in the README's AdamW recipe).
//
// SOAP (Vyas et al. 2024, arXiv:2409.11321; nikhilvyas/SOAP, soap.py) keeps, per factor, L and R and their
// eigenvectors Q_L, Q_R, and Adam's two moments per element in the rotated basis. Each step rotates the
// gradient in (Q_Lᵀ·G·Q_R), rotates the first moment in, rotates Adam's direction back and accumulates L and
// R: four two-sided products. Every precondition_frequency steps (10, the SOAP README's usage) each
// eigenbasis is refreshed by one power iteration (L·Q_L) and a QR decomposition. Distributed, SOAP runs as
// Distributed Shampoo's eigenvalue-corrected Shampoo (its README: "replacing Adam(W) by eigenvalue-corrected
// Shampoo (SOAP)"), so its tensors are cut into the same blocks (max_preconditioner_dim, default 1024); the
// reference soap.py, single-GPU, instead leaves a side longer than max_precond_dim (10000) unpreconditioned.
//
// FLOPs (one add or one multiply each). One two-sided product of an r x c block with its factors is
// 2·r·c·(a + b), a = r and b = c where that side has a factor, else 0. A refresh of one d x d factor:
//  - Shampoo: a symmetric eigendecomposition with its eigenvectors, 9·d³ (Golub & Van Loan, Matrix
//    Computations, 4th ed., §8.3, the symmetric QR algorithm with Q accumulated), then Q·Λ^(-1/4)·Qᵀ, 2·d³:
//    11·d³;
//  - SOAP: L·Q, 2·d³, and a Householder QR with Q formed, 4/3·d³ + 4/3·d³ (ibid. §5.2): 14/3·d³.
// The refresh is amortised over the frequency: per step it costs refresh / precondition_frequency.
#include <cstdint>
#include <vector>

#include "models/spec/optimizer_spec.hpp"
#include "models/workload/optimizer.hpp"

namespace trainsim::model {

/// True for the optimizers that keep Kronecker-factored preconditioners (shampoo, soap).
[[nodiscard]] bool keeps_preconditioners(OptimizerKind kind);
/// spec.max_preconditioner_dim, or Distributed Shampoo's default, 1024.
[[nodiscard]] int max_preconditioner_dim(const OptimizerSpec& spec);
/// spec.precondition_frequency, or the kind's default: 1 (Shampoo), 10 (SOAP).
[[nodiscard]] int precondition_frequency(const OptimizerSpec& spec);

/// `count` blocks of rows x cols with a left factor of side `left` and a right one of side `right` (0: that
/// side has none).
struct PreconditionedBlock {
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  double count = 0;
  std::int64_t left = 0;
  std::int64_t right = 0;

  [[nodiscard]] double elements() const {
    return static_cast<double>(rows) * static_cast<double>(cols) * count;
  }
  /// Elements of one block's factors, L and R: left² + right².
  [[nodiscard]] double factor_elements() const {
    return static_cast<double>(left) * static_cast<double>(left) +
           static_cast<double>(right) * static_cast<double>(right);
  }
};

/// The blocks `spec` cuts `tensor` into (all of its `count` tensors): each side in pieces of at most
/// max_preconditioner_dim, a vector as one side; empty for an optimizer without preconditioners.
[[nodiscard]] std::vector<PreconditionedBlock> preconditioned_blocks(const OptimizerSpec& spec,
                                                                     const TensorShape& tensor);

/// One block's matmul FLOPs of one step, the refresh aside: 2 products (Shampoo: accumulate, precondition)
/// or 4 (SOAP: rotate the gradient, the moment, back; accumulate) of 2·r·c·(left + right) each.
[[nodiscard]] double preconditioner_step_flops(const OptimizerSpec& spec, const PreconditionedBlock& block);
/// One block's FLOPs of one refresh: c·(left³ + right³), c = 11 (Shampoo) or 14/3 (SOAP).
[[nodiscard]] double preconditioner_refresh_flops(const OptimizerSpec& spec,
                                                  const PreconditionedBlock& block);
/// Per step, the refresh amortised: step + refresh / precondition_frequency, for one block.
[[nodiscard]] double preconditioner_flops_per_step(const OptimizerSpec& spec,
                                                   const PreconditionedBlock& block);

}  // namespace trainsim::model
