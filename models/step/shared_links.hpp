#pragma once
// The collapsed step's price of the fabric beyond the NICs: each data-parallel collective and pipeline
// send on the links it really crosses, with the sibling groups that cross them at the same moment.
//
// The closed form (topologies/collective_cost.hpp) prices a communicator on its GPUs' ports: NVLink, PCIe
// and its share of the node's NICs. What lies beyond them — leaf and spine tiers, oversubscription, rails,
// torus and dragonfly links and their hops, other jobs' background traffic, ECMP's collisions — is
// shared by every group of the same axis that communicates at once: one pipeline rank's data-parallel
// rings (one per tensor-parallel index, and per sharding group), its pipeline sends (one per
// model-parallel rank of every replica), its context- and expert-parallel collectives that leave the
// node (one per group of every replica). concurrent_groups lists those groups from the plan's placement
// (pipeline rank 0's, the representative the collapsed step simulates), lowers them as the full-cluster
// step does (topo::lower_collective) and takes topo::fabric_slowdown of the lot: the closed form's
// bandwidth term on the uncontended fabric times that slowdown is what the busiest link of the real fabric
// allows, so the collapsed step and `--full-cluster` see the same bottleneck.
//
// Cost: the graphs and the slowdowns are memoised for the process (keyed by the fabric, the placement and
// the call). A layout's first pricing routes its groups: at 4,096 GPUs that is several times the closed
// form's own pricing, so the analytic fidelity (search's ranking) keeps FabricPricing::closed_form and only
// the event fidelity's collapsed step (FabricPricing::shared_links) pays it.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/step/step_costs.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

/// Which concurrent transfers a price is for.
enum class FabricTraffic : std::uint8_t {
  gradient,         ///< DataGroup::gradient's collectives
  shard,            ///< DataGroup::shard's
  replicas,         ///< DataGroup::replicas'
  pipeline_send,    ///< the activation hand-over from pipeline rank 0 to rank 1
  context,          ///< a context-parallel collective over each cp group
  context_ring,     ///< the cp ring exchange: every member of each cp group sends to its successor
  expert,           ///< an expert-parallel collective over each ep group (not folded)
  expert_dispatch,  ///< the all-gather dispatcher's tp × ep groups (not folded)
};

/// The member lists (cluster GPUs, ascending: the full cluster's ring order) of every group of `traffic`
/// on pipeline rank 0: for a pipeline send, each GPU of rank 0 and its peer on rank 1; for the cp ring
/// exchange, each cp group (its sends are lowered from it).
[[nodiscard]] std::vector<std::vector<std::int64_t>> concurrent_groups(const ParallelPlan& plan,
                                                                       const topo::ClusterSpec& cluster,
                                                                       FabricTraffic traffic);

/// How many times as long `op` of `bytes` with `e`'s algorithm and protocol takes to move its bytes over
/// the cluster's fabric as over a non-blocking one, run by every group of `traffic` at once
/// (topo::fabric_slowdown; memoised). 1 when the groups stay inside their nodes; nullopt when the cluster
/// has more GPUs than one flow-lowered collective takes (topo::kMaxFlowCollectiveGpus, 32,768) or its
/// graph cannot be built (the closed form's own shares then stand).
[[nodiscard]] std::optional<double> fabric_slowdown(const ParallelPlan& plan,
                                                    const topo::ClusterSpec& cluster, FabricTraffic traffic,
                                                    topo::CollectiveOp op, double bytes,
                                                    const topo::CollectiveEstimate& e);

/// A collective of the step on the links its groups share (FabricPricing::shared_links): `op` of `bytes`
/// over `group` priced on `open` (topo::uncontended_fabric of `cluster`), its bandwidth term times the
/// fabric_slowdown of every group of `traffic` at once; the closed form on `cluster` where that slowdown is
/// unknown. The one rule for the data-parallel collectives, the pipeline sends and the context- and
/// expert-parallel collectives that leave the node.
[[nodiscard]] topo::CollectiveEstimate shared_links_estimate(const ParallelPlan& plan,
                                                             const topo::ClusterSpec& cluster,
                                                             const topo::ClusterSpec& open,
                                                             FabricTraffic traffic, topo::CollectiveOp op,
                                                             double bytes, const topo::CommGroup& group);

}  // namespace trainsim::model
