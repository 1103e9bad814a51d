#pragma once
// Asymmetries of a layout whose ranks are otherwise alike: cluster.stragglers (slower kernels on some nodes)
// and cluster.degraded (slower NICs), found through the placement and applied to the symmetric step's costs.
// The collapsed step applies the slowest one (a synchronous step waits for it); the full cluster slows each
// replica by its own.
#include <cstdint>
#include <map>
#include <vector>

#include "models/step/step_costs.hpp"

namespace trainsim::model {

/// cluster.stragglers as compute slowdowns per pipeline rank of each data-parallel replica that holds a
/// straggler's GPUs (keyed by the replica's number in full_cluster_gpus; a factor ≥ 1 per rank); empty
/// without stragglers. The full-cluster step slows each replica by its own.
[[nodiscard]] std::map<std::int64_t, std::vector<double>> replica_slowdowns(const ParallelPlan& plan,
                                                                            const topo::ClusterSpec& cluster);

/// replica_slowdowns' distinct vectors: one per distinct way the stragglers slow a replica.
/// A synchronous step waits for its slowest replica at the data-parallel collectives, so the step of the
/// slowest of these replicas is the step (simulate_step takes the longest).
[[nodiscard]] std::vector<std::vector<double>> straggler_slowdowns(const ParallelPlan& plan,
                                                                   const topo::ClusterSpec& cluster);

/// cluster.degraded as slowdowns of each pipeline rank's data-parallel traffic: NIC bandwidth over the
/// degraded NIC's, for the ranks whose GPUs on that node send through it (GPU g uses NIC g·nics/gpus per
/// node), 1 elsewhere; empty without degraded NICs or when the data-parallel group stays in a node. A
/// ring through the NIC runs at its pace, and every replica's ring of that rank goes through it.
[[nodiscard]] std::vector<double> degraded_nic_slowdowns(const ParallelPlan& plan,
                                                         const topo::ClusterSpec& cluster,
                                                         const StepCosts& costs);

/// Slows the size-dependent part of pipeline rank s's data-parallel collectives (buckets, the parameter
/// all-gather, ZeRO-3's unit gathers and reduce-scatters) by slowdown[s]; their latency stays.
void slow_data_parallel(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown);

/// Slows every kernel of pipeline rank s — its passes' compute, wgrad included, and its optimizer update —
/// by slowdown[s]; collectives keep their time. Units shared with other ranks are copied first.
void slow_stages(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown);

}  // namespace trainsim::model
