#pragma once
// Group-limited routing's keys (routing_groups, routing_group_top_k), wherever a block names them: a model
// (scenarios/presets.cpp) or a dispatch case (scenarios/dispatch_case.cpp).
#include "models/spec/transformer_spec.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// Both or neither, on a MoE model, equal groups of whole experts, 1 to routing_groups groups picked, and
/// enough experts in them for top_k (Megatron-Core's group_limited_topk takes top_k / group_top_k experts
/// from each group to score it, then top_k from the picked groups). `m` carries experts, top_k and the two
/// keys as block `r` (named experts, top_k, routing_groups, routing_group_top_k) gives them; a problem is
/// placed at the first of the keys at fault that the block sets.
void check_routing_group_keys(Diagnostics& d, const MapReader& r, const model::TransformerSpec& m);

}  // namespace trainsim::scenario
