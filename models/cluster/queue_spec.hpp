#pragma once
// What the shared-cluster queue simulator (queue_simulator.hpp) is given: the cluster's nodes, the
// scheduler's rules and the jobs, each with its run time already known as a plain number. Where the run
// times come from (the step model, per scenario and node count) is the caller's business
// (scenarios/studies/cluster_queue.hpp); tests give them by hand. Units: seconds, US dollars.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/enum_names.hpp"

namespace trainsim::model {

/// The order in which waiting jobs are started (SPEC "Shared clusters").
enum class QueuePolicy {
  fifo,      ///< submit order; the first job that cannot start blocks every later one
  backfill,  ///< EASY: submit order; the blocked head gets a reservation, later jobs may start if they
             ///< do not delay it
  priority,  ///< higher `priority` first (ties: submit order), strict like fifo; with preemption
};

/// Which nodes a starting job is given.
enum class PlacementRule {
  first_fit,   ///< the lowest-numbered free nodes; any job fits when enough nodes are free
  leaf_aware,  ///< the fewest leaves possible (ceil(nodes / nodes_per_leaf)); a job that cannot get that
               ///< few waits, even when enough nodes are free in total (fragmentation)
  /// leaf_aware's leaf count where it can get it, a job wider than a leaf in a run of adjacent leaves (its
  /// pipeline stages' hand-overs stay near) whose uplinks the fewest running jobs cross (uplink_shares.hpp);
  /// where it cannot, more leaves, the least crossed first: it never waits while enough nodes are free
  topology_aware,
};

/// The names scenario files and the outputs use (sim/enum_names.hpp).
inline constexpr EnumNames<QueuePolicy, 3> kQueuePolicyNames{
    {{"fifo", QueuePolicy::fifo}, {"backfill", QueuePolicy::backfill}, {"priority", QueuePolicy::priority}}};
inline constexpr EnumNames<PlacementRule, 3> kPlacementRuleNames{
    {{"first_fit", PlacementRule::first_fit},
     {"leaf_aware", PlacementRule::leaf_aware},
     {"topology_aware", PlacementRule::topology_aware}}};

/// One job as the queue sees it.
struct QueueJob {
  std::string name;      ///< shown in outputs
  std::string scenario;  ///< the scenario's name, shown in outputs
  std::size_t team = 0;  ///< index into QueueSpec::teams
  double submit = 0;     ///< s after the period starts
  std::int64_t nodes = 1;
  int priority = 0;  ///< higher first under QueuePolicy::priority; preempts strictly lower ones
  /// s from start to end when never interrupted (its own checkpoint stalls and expected failure losses
  /// included); > 0.
  double duration = 1;
  /// s of run between two checkpoints; 0: none, so an interruption loses all progress.
  double checkpoint_interval = 0;
  /// s from an interruption's restart to training again (restart + restore), paid on every resume.
  double recovery = 0;
  /// Its inter-node traffic per step (bytes per GPU): its weight on the fabric links it shares with other
  /// jobs under QueueSpec::contention (uplink_shares.hpp). 0: it sends nothing between nodes.
  double traffic_per_step = 0;
};

/// A job's step time with `share` of the links it crosses over its step time with the whole fabric (>= 1);
/// `share` is a share_bucket value in (0, 1). The caller's step model, memoised there.
using FabricSlowdown = std::function<double(std::size_t job, double share)>;

struct QueueSpec {
  std::int64_t nodes = 1;
  int gpus_per_node = 8;
  std::int64_t nodes_per_leaf = 1;  ///< for PlacementRule::leaf_aware and topology_aware, and contention
  double period = 0;                ///< s simulated; jobs still running or waiting then are unfinished
  QueuePolicy policy = QueuePolicy::fifo;
  PlacementRule placement = PlacementRule::first_fit;
  bool preemption = false;  ///< only with QueuePolicy::priority
  std::vector<std::string> teams;
  /// Fair shares of GPU-hours, one per team, or empty for none. A team whose GPU-hours so far exceed its
  /// share of all teams' GPU-hours so far is served after every team that does not (within a pass).
  std::vector<double> quotas;
  double node_mtbf = 0;  ///< s between failures of one node (0: none)
  double repair = 0;     ///< s a failed node is down
  std::uint64_t failure_seed = 1;
  double gpu_hour_usd = 0;
  double sample_interval = 3600;  ///< s per row of the utilisation time series
  /// Running jobs share the leaf uplinks their placements cross (uplink_shares.hpp): whenever the running
  /// set changes each job's share is recomputed, its step repriced by `slowdown` and its remaining work
  /// rescaled. false: every job runs at its own step model's speed (contention-free).
  bool contention = false;
  FabricSlowdown slowdown;  ///< required with contention
  std::vector<QueueJob> jobs;
};

}  // namespace trainsim::model
