#pragma once
// Collective validation cases (SPEC "Validation cases"): nccl-tests bus bandwidth on a node preset, not a
// training step, read through the same YAML reader as scenarios (exact keys, units, file:line:col errors):
//   name: …
//   collective: {node: PRESET, nodes: N, gpus_per_node: G, op: all-reduce, size: "64 MiB", algo: auto}
//   measured: {source: "…", busbw: 369.82e9, tolerance: 0.1}      # busbw in B/s
#include <string>

#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::scenario {

struct CollectiveCase {
  std::string name;           ///< defaults to the file's stem
  topo::ClusterSpec cluster;  ///< the node preset, nodes (default 1) and gpus_per_node (default: all)
  topo::CollectiveOp op = topo::CollectiveOp::all_reduce;
  topo::CollectiveAlgo algo = topo::CollectiveAlgo::auto_select;
  double bytes = 0;         ///< message size, bytes
  std::string source;       ///< where the measurement comes from
  double busbw = 0;         ///< measured bus bandwidth, B/s
  double tolerance = 0.10;  ///< relative error allowed
};

/// Whether a YAML file is a collective case (it has a top-level `collective:` key) rather than a scenario.
[[nodiscard]] bool is_collective_case_file(const std::string& path);

/// Reads a collective case. Throws InputError with every problem (file:line:col, key path, what was
/// expected): unknown or missing keys, an unknown node preset, op or algo, a size without its unit.
[[nodiscard]] CollectiveCase load_collective_case_file(const std::string& path);

}  // namespace trainsim::scenario
