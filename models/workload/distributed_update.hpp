#pragma once
// A whole-matrix optimizer update (Muon's Newton–Schulz, Shampoo's and SOAP's preconditioners) when the
// optimizer states are sharded (ZeRO ≥ 1) over G ranks: every piece of whole-matrix work (a Muon matrix, a
// Shampoo or SOAP block) has one owner rank, chosen so that no rank does much more of it than another
// (largest piece first, to the least-loaded rank), so the step waits for the busiest owner only. Without
// sharding (or G = 1) every rank does all of it and nothing is exchanged.
//
// Muon: the owner gathers the matrix's momentum from the G shards, orthogonalises it and scatters the update
// back, each rank keeping its own shard — the gather-to-owner / scatter pattern of samsja/muon_fsdp_2 ("we do
// gather scatter instead of all_gather", src/muon_fsdp2) and the owner-centric DMuon design. Moonlight's
// Distributed Muon (Liu et al. 2025, arXiv:2502.16982, §2.3) gathers the same shards, but every rank of the
// data-parallel group then runs Newton–Schulz on the full matrix and keeps its part: its FLOPs are
// total_flops on every rank (the unsharded price). The momentum moves in the state precision, the update in
// the Newton–Schulz precision (the weight storage precision, bf16 under mixed precision).
//
// Shampoo and SOAP: as Distributed Shampoo's data-parallel distributor runs them (Shi et al. 2023,
// arXiv:2309.06497; facebookresearch/optimizers, distributed_shampoo/distributor/shampoo_ddp_distributor.py):
// each block's states live on its owner, which computes the block's search direction from the whole reduced
// gradient, and the directions are all-gathered so that every rank has all of them, in fp32
// (DDPDistributedConfig.communication_dtype's default), each rank's buffer padded to the largest. Under ZeRO
// 1–2 the gradients are reduce-scattered, so the owner first gathers its blocks' gradients from the shards
// (in the gradient precision). (Distributed Shampoo spreads the blocks over the GPUs of one node by default,
// num_trainers_per_group = -1; here they are spread over the sharding group, as the states are.)
//
// Each exchange is one bucketed collective per step over the sharding group whose size is what the busiest
// owner moves (a gather as a reduce-scatter of G times its received bytes, a scatter as an all-gather, the
// directions as an all-gather of G owners' padded buffers), not one collective per matrix. step_costs prices
// them like every other data-parallel collective (on the fabric, routed as flows in the full cluster).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "models/spec/optimizer_spec.hpp"
#include "models/workload/optimizer.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

/// The distributed whole-matrix update of `tensors` over `ranks` owners.
struct DistributedMatrixUpdate {
  double matrices = 0;            ///< pieces of work: Muon's hidden matrices, Shampoo's or SOAP's blocks
  double elements = 0;            ///< their elements, all together
  double total_flops = 0;         ///< matmul FLOPs of all of them (what one rank runs unsharded)
  double owner_flops_max = 0;     ///< matmul FLOPs of the busiest owner
  double owner_elements_max = 0;  ///< elements of the pieces the most-loaded owner holds (by elements)
  /// owner_elements_max · (G−1)/G in the gathered precision (Muon: state; Shampoo, SOAP: gradient): received
  /// by the busiest owner.
  double gather_bytes_per_rank = 0;
  double scatter_bytes_per_rank = 0;  ///< Muon: owner_elements_max · (G−1)/G · Newton–Schulz bytes, sent
  /// Shampoo, SOAP: the directions' all-gather, its output: G · owner_elements_max · 4 bytes (fp32).
  double direction_gather_bytes = 0;
};

/// Owners assigned largest piece first (by FLOPs) to the rank with the least FLOPs so far (LPT); a
/// fractional tensor count (a per-GPU average of experts) adds one piece of that fraction of the work. All 0
/// for an optimizer without whole-matrix work. Throws InputError for ranks < 1.
[[nodiscard]] DistributedMatrixUpdate distributed_matrix_update(const OptimizerSpec& spec, Precision compute,
                                                                std::span<const TensorShape> tensors,
                                                                std::int64_t ranks);

/// One collective of the update, sized as topo::estimate_collective reads it (nccl size).
struct UpdateCollective {
  topo::CollectiveOp op = topo::CollectiveOp::all_gather;
  double bytes = 0;
  std::string_view name;  ///< "muon momentum gather", ...
};

/// What one GPU does for the whole-matrix update in one step.
struct MatrixUpdateWork {
  double matmul_flops = 0;                    ///< the busiest owner's (sharded) or all of it (not)
  Precision precision = Precision::bf16;      ///< Muon: the compute precision; Shampoo, SOAP: fp32
  std::vector<UpdateCollective> collectives;  ///< over the sharding group; none unsharded
};

/// The work of one step: all pieces on every rank when the states are whole on each (`sharded` false or a
/// group of one); else the busiest owner's pieces and the update's collectives over `ranks`.
[[nodiscard]] MatrixUpdateWork matrix_update_work(const OptimizerSpec& spec, Precision compute,
                                                  std::span<const TensorShape> tensors, bool sharded,
                                                  std::int64_t ranks);

}  // namespace trainsim::model
