#pragma once
// MoE dispatch validation cases (SPEC "Validation cases"): the measured time of one expert-parallel dispatch
// or combine, not a training step, read through the same YAML reader as scenarios (exact keys, units,
// file:line:col errors):
//   name: …
//   dispatch: {node: dgx-h100, nodes: 2, gpus_per_node: 8, ep: 16, dispatcher: hybridep, op: dispatch,
//              tokens: 4096, hidden: 7168, top_k: 8, experts: 256, bytes_per_element: 2,
//              routing_groups: 8, routing_group_top_k: 4}
//   measured: {source: "…", time: "1485 us", tolerance: 0.25}
// The expert group is the case's whole cluster; each rank dispatches `tokens` tokens of `hidden` elements,
// each routed to `top_k` of the `experts` (spread evenly over the ep ranks), from `routing_group_top_k` of
// `routing_groups` groups of consecutive experts where both are given (group-limited routing, as a model
// names it; neither: every expert may be picked).
#include <cstdint>
#include <string>

#include "models/spec/framework.hpp"
#include "sim/enum_names.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/expert_dispatch.hpp"

namespace trainsim::scenario {

/// Which half of the MoE block's exchange was measured. Both move the same bytes: the combine sends back
/// what the dispatch delivered (one row a slot under the all-to-all, one reduced row per token and
/// destination GPU under the token-based backends).
enum class DispatchOp : std::uint8_t { dispatch, combine };
inline constexpr EnumNames<DispatchOp, 2> kDispatchOpNames{
    {{"dispatch", DispatchOp::dispatch}, {"combine", DispatchOp::combine}}};

struct DispatchCase {
  std::string name;           ///< defaults to the file's stem
  topo::ClusterSpec cluster;  ///< the node preset, nodes (default 1) and gpus_per_node (default: all)
  std::int64_t ep = 0;        ///< expert-parallel ranks: every GPU of the cluster
  model::MoeDispatcher dispatcher = model::MoeDispatcher::all_to_all;  ///< alltoall, deepep or hybridep
  DispatchOp op = DispatchOp::dispatch;
  std::int64_t tokens = 0;  ///< tokens each rank dispatches
  std::int64_t hidden = 0;  ///< elements of a token's row
  std::int64_t top_k = 0;   ///< experts each token is routed to
  std::int64_t experts = 0;
  std::int64_t routing_groups = 0;       ///< group-limited routing's groups; 0: none
  std::int64_t routing_group_top_k = 0;  ///< the groups a token's experts come from
  double bytes_per_element = 0;
  std::string source;       ///< where the measurement comes from
  double time = 0;          ///< measured seconds of one dispatch (or combine)
  double tolerance = 0.10;  ///< relative error allowed

  /// What one rank's all-to-all of every slot sends (the step's MoE all-to-all bytes, layer_ops.cpp's
  /// a2a_bytes at tensor-parallel 1 and a routing load of 1): tokens · top_k · hidden · bytes_per_element.
  [[nodiscard]] double slot_bytes() const {
    return static_cast<double>(tokens) * static_cast<double>(top_k) * static_cast<double>(hidden) *
           bytes_per_element;
  }

  /// Where each token's top_k copies go, as the step's MoE all-to-all routes a model's slots.
  [[nodiscard]] topo::TokenRouting routing() const {
    return {static_cast<double>(top_k), routing_groups, routing_group_top_k};
  }
};

/// Whether a YAML file is a dispatch case (it has a top-level `dispatch:` key) rather than a scenario.
[[nodiscard]] bool is_dispatch_case_file(const std::string& path);

/// Reads a dispatch case. Throws InputError with every problem (file:line:col, key path, what was
/// expected): unknown or missing keys, an unknown node preset, dispatcher or op, the all-gather dispatcher
/// (no all-to-all), an ep other than the cluster's GPUs, experts that do not split evenly over the ep ranks,
/// top_k above the experts, group-limited routing a model could not have (routing_group_keys.hpp), a time
/// without its unit.
[[nodiscard]] DispatchCase load_dispatch_case_file(const std::string& path);

}  // namespace trainsim::scenario
