#pragma once
// What the validation cases of one component of a step (a collective: collective_case.hpp; a MoE dispatch:
// dispatch_case.hpp) share: the top-level key that tells such a file from a scenario, its YAML read through
// the scenario reader (size and type guards, file:line:col locations), and the cluster it runs on.
#include <optional>
#include <string>
#include <string_view>

#include "scenarios/yaml_tree.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

/// Whether the file has `key` as a top-level key (a line that starts with "key:"), read without loading it.
[[nodiscard]] bool has_top_level_key(const std::string& path, std::string_view key);

/// Whether the file is a component case of any kind (collective_case.hpp, dispatch_case.hpp) rather than a
/// scenario: what a study that runs steps only leaves out.
[[nodiscard]] bool is_component_case_file(const std::string& path);

/// The file's YAML tree. Throws InputError when it cannot be read or parsed.
[[nodiscard]] YamlValue read_case_tree(const std::string& path);

/// The cluster of the block `r` reads (key path `block`): `node` (a node preset; the caller requires it),
/// `nodes` (default 1) and `gpus_per_node` (default all of the preset's, at most them). Problems go to `d`.
[[nodiscard]] topo::ClusterSpec read_case_cluster(MapReader& r, Diagnostics& d, const std::string& block);

}  // namespace trainsim::scenario
