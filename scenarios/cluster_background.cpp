#include "scenarios/cluster_background.hpp"

#include <algorithm>
#include <string>

namespace trainsim::scenario {

void read_cluster_background(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  MapReader r(diagnostics, value, "cluster.background", {"fraction"});
  if (!r.valid()) return;
  r.require({"fraction"});
  // Below 1: a fabric wholly taken by other jobs would leave this one no route.
  r.number("fraction", cluster.background_fraction, 0, 0.99);
}

void read_cluster_stragglers(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  const std::string path = "cluster.stragglers";
  if (!value.is_sequence()) {
    diagnostics.add(value, path, "expected a list of {node, slowdown}, e.g. [{node: 17, slowdown: 1.15}]");
    return;
  }
  for (std::size_t i = 0; i < value.items.size(); ++i) {
    const YamlValue& item = value.items[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    MapReader r(diagnostics, item, item_path, {"node", "slowdown"});
    if (!r.valid() || !r.require({"node", "slowdown"})) continue;
    topo::Straggler s;
    const auto errors = diagnostics.size();
    r.count("node", s.node, 0, static_cast<double>(cluster.nodes - 1));
    // A node at most 100 times slower: beyond that it is down, which failures: prices.
    r.number("slowdown", s.slowdown, 1, 100);
    if (diagnostics.size() != errors) continue;
    const bool again = std::any_of(cluster.stragglers.begin(), cluster.stragglers.end(),
                                   [&](const topo::Straggler& o) { return o.node == s.node; });
    if (again) {
      diagnostics.add(*r.get("node"), item_path + ".node",
                      "node " + std::to_string(s.node) + " is listed twice");
      continue;
    }
    cluster.stragglers.push_back(s);
  }
}

void read_cluster_degraded(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  const std::string path = "cluster.degraded";
  if (!value.is_sequence()) {
    diagnostics.add(
        value, path,
        "expected a list of {node, nic, bandwidth}, e.g. [{node: 3, nic: 2, bandwidth: \"100 Gb/s\"}]");
    return;
  }
  const int nics = std::max(cluster.nics_per_node(), 1);
  for (std::size_t i = 0; i < value.items.size(); ++i) {
    const YamlValue& item = value.items[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    MapReader r(diagnostics, item, item_path, {"node", "nic", "bandwidth"});
    if (!r.valid() || !r.require({"node", "nic", "bandwidth"})) continue;
    topo::DegradedNic d;
    const auto errors = diagnostics.size();
    r.count("node", d.node, 0, static_cast<double>(cluster.nodes - 1));
    r.count("nic", d.nic, 0, nics - 1);
    r.quantity("bandwidth", d.bytes_per_s, Dimension::bytes_per_s);
    if (diagnostics.size() != errors) continue;
    const bool again =
        std::any_of(cluster.degraded.begin(), cluster.degraded.end(),
                    [&](const topo::DegradedNic& o) { return o.node == d.node && o.nic == d.nic; });
    if (again) {
      diagnostics.add(
          item, item_path,
          "NIC " + std::to_string(d.nic) + " of node " + std::to_string(d.node) + " is listed twice");
      continue;
    }
    cluster.degraded.push_back(d);
  }
}

}  // namespace trainsim::scenario
