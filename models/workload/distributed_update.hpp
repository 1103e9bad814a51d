#pragma once
// A whole-matrix optimizer update (Muon's Newton–Schulz) when the optimizer states are sharded (ZeRO ≥ 1)
// over G ranks, as distributed Muon implementations run it: every hidden matrix has one owner rank; the
// owner gathers the matrix's momentum from the G shards, orthogonalises it, and scatters the update back,
// each rank keeping its own shard. Owners are chosen so that no rank does much more Newton–Schulz work than
// another (largest matrix first, to the least-loaded rank), so the step waits for the busiest owner only.
//
// Implementations this follows: the gather-to-owner / scatter pattern of samsja/muon_fsdp_2 ("we do
// gather scatter instead of all_gather", src/muon_fsdp2) and the owner-centric DMuon design; Moonlight's
// Distributed Muon (Liu et al. 2025, arXiv:2502.16982, §2.3) gathers the same shards, but every rank of
// the data-parallel group then runs Newton–Schulz on the full matrix and keeps its part: its FLOPs are
// total_flops on every rank (the unsharded price, which trainsim keeps without ZeRO).
//
// Bytes: the momentum is gathered in the state precision (the owner receives (G−1)/G of each matrix it
// owns), the orthogonalised update scattered in the Newton–Schulz precision (the weight storage precision,
// bf16 under mixed precision). Priced as one bucketed gather and one scatter per step, each as a
// collective that moves the busiest owner's bytes through every rank's links (a reduce-scatter and an
// all-gather of that size), not as one collective per matrix.
#include <cstdint>
#include <span>

#include "models/spec/optimizer_spec.hpp"
#include "models/workload/optimizer.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

/// The distributed update of the Muon matrices among `tensors` over `ranks` owners.
struct DistributedMatrixUpdate {
  double matrices = 0;                ///< matrices orthogonalised (Muon's hidden matrices)
  double elements = 0;                ///< their elements, all together
  double total_flops = 0;             ///< Newton–Schulz FLOPs of all of them (what one rank runs unsharded)
  double owner_flops_max = 0;         ///< Newton–Schulz FLOPs of the busiest owner
  double owner_elements_max = 0;      ///< elements of the matrices the most-loaded owner holds (by elements)
  double gather_bytes_per_rank = 0;   ///< owner_elements_max · (G−1)/G · state bytes: received by it
  double scatter_bytes_per_rank = 0;  ///< owner_elements_max · (G−1)/G · Newton–Schulz bytes: sent by it
};

/// Owners assigned largest matrix first (by FLOPs) to the rank with the least FLOPs so far (LPT); a
/// fractional tensor count (a per-GPU average of experts) adds one matrix of that fraction of the work.
[[nodiscard]] DistributedMatrixUpdate distributed_muon_update(const OptimizerSpec& spec, Precision compute,
                                                              std::span<const TensorShape> tensors,
                                                              std::int64_t ranks);

/// Seconds of one step's whole-matrix work on one GPU: 0 for an optimizer without it; Newton–Schulz on
/// every matrix when the states are whole on each rank (`sharded` false or a group of one); else the
/// busiest owner's Newton–Schulz plus the gather and the scatter over `shard` on `cluster`.
[[nodiscard]] double matrix_update_time(const OptimizerSpec& spec, Precision compute,
                                        std::span<const TensorShape> tensors, bool sharded,
                                        const topo::CommGroup& shard, const topo::ClusterSpec& cluster);

}  // namespace trainsim::model
