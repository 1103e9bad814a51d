#pragma once
// What the validation cases of one component of a step (a collective: collective_case.hpp; a MoE dispatch:
// dispatch_case.hpp) share: the top-level key that tells such a file from a scenario, its YAML read through
// the scenario reader (size and type guards, file:line:col locations), and the cluster it runs on.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scenarios/yaml_tree.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

/// The kinds of component case, each told by its top-level key: `collective:` (collective_case.hpp),
/// `dispatch:` (dispatch_case.hpp).
enum class ComponentKind : std::uint8_t { collective, dispatch };

/// The file's component kind, from the first line that starts with one of the kinds' keys and a colon, read
/// once without loading it; empty for a scenario.
[[nodiscard]] std::optional<ComponentKind> component_case_kind(const std::string& path);

/// Whether the file is a component case of any kind rather than a scenario: what a study that runs steps
/// only leaves out.
[[nodiscard]] bool is_component_case_file(const std::string& path);

/// The file's YAML tree. Throws InputError when it cannot be read or parsed.
[[nodiscard]] YamlValue read_case_tree(const std::string& path);

/// The cluster of the block `r` reads (key path `block`): `node` (a node preset; the caller requires it),
/// `nodes` (default 1) and `gpus_per_node` (default all of the preset's, at most them). Problems go to `d`.
[[nodiscard]] topo::ClusterSpec read_case_cluster(MapReader& r, Diagnostics& d, const std::string& block);

}  // namespace trainsim::scenario
