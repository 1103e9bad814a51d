#pragma once
// Cluster files (SPEC "Shared clusters"): a shared cluster, its scheduler, its jobs and arrival streams, to
// plain structs. The same discipline as scenario files (loader.hpp): exact key sets, units on quantities,
// every problem collected and thrown as one InputError with file:line:col and the key path.
//
// Contract: scenario paths are resolved against the cluster file's folder and must name files; every
// job's and mix entry's node count fits the cluster; quotas, when given, name every team and sum to at
// most 1; preemption needs the priority policy; the period is at most 100 d (the event clock's range).
// The job scenarios themselves are loaded later, at their node counts (scenarios/studies/cluster_queue),
// and a problem there is reported at the `scenario` key that named the file (`where`).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/cluster/queue_spec.hpp"
#include "sim/error.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

/// Larger cluster files are refused (a cluster file is a page or two of text).
inline constexpr std::size_t max_cluster_file_bytes = 1 << 20;

struct ClusterJobEntry {
  std::string name;      ///< `name`, or "<team>-<index>"
  std::string scenario;  ///< resolved path
  std::string team;
  double submit = 0;  ///< s
  std::int64_t nodes = 1;
  int priority = 0;
  Diagnostic where;  ///< the `scenario` key's location (message empty)
};

struct ArrivalChoice {
  std::string scenario;  ///< resolved path
  double weight = 1;
  std::vector<std::int64_t> nodes;  ///< drawn uniformly
  Diagnostic where;
};

/// A Poisson stream of one team's jobs: exponential gaps of mean 1 / rate from `seed`.
struct ArrivalStream {
  std::string team;
  double rate = 0;  ///< jobs per second
  std::vector<ArrivalChoice> mix;
  std::uint64_t seed = 1;
  int priority = 0;
};

struct ClusterFile {
  std::string file;          ///< as given
  std::string node_yaml;     ///< the node, written out in full: it replaces every job scenario's node
  std::string network_yaml;  ///< `cluster.network` as YAML text ("" when absent): replaces the jobs'
  topo::NodeSpec node;
  std::int64_t nodes = 0;
  /// `cluster.contention`: running jobs share the leaf uplinks they cross (model::QueueSpec::contention).
  bool contention = false;
  Diagnostic contention_where;  ///< the key's location, for a fabric it cannot be modelled on
  double period = 0;            ///< s
  model::QueuePolicy policy = model::QueuePolicy::fifo;
  model::PlacementRule placement = model::PlacementRule::first_fit;
  bool preemption = false;
  std::vector<std::pair<std::string, double>> quotas;  ///< in file order
  std::vector<ClusterJobEntry> jobs;
  std::vector<ArrivalStream> arrivals;
  double node_mtbf = 0;  ///< s (0: no failures)
  double repair = 0;     ///< s
  std::uint64_t failure_seed = 1;
  double gpu_hour_usd = 0;
};

/// Reads a cluster file; throws InputError with every problem.
[[nodiscard]] ClusterFile load_cluster_file(const std::string& path);
/// Reads cluster text; `file_label` names it in messages and its folder resolves the scenario paths.
[[nodiscard]] ClusterFile load_cluster_text(std::string_view yaml, const std::string& file_label);

}  // namespace trainsim::scenario
