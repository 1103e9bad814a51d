#include "scenarios/cluster_background.hpp"

#include <algorithm>
#include <string>

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

void read_cluster_background(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  MapReader r(diagnostics, value, "cluster.background", {"fraction"});
  if (!r.valid()) return;
  r.require({"fraction"});
  // Below 1: a fabric wholly taken by other jobs would leave this one no route.
  r.number("fraction", cluster.background_fraction, 0, 0.99);
}

void read_cluster_stragglers(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  read_list(diagnostics, value, "cluster.stragglers",
            "a list of {node, slowdown}, e.g. [{node: 17, slowdown: 1.15}]",
            [&](const YamlValue& item, const std::string& item_path) {
              MapReader r(diagnostics, item, item_path, {"node", "slowdown"});
              if (!r.valid() || !r.require({"node", "slowdown"})) return;
              topo::Straggler s;
              const auto errors = diagnostics.size();
              r.count("node", s.node, 0, static_cast<double>(cluster.nodes - 1));
              // A node at most 100 times slower: beyond that it is down, which failures: prices.
              r.number("slowdown", s.slowdown, 1, 100);
              if (diagnostics.size() != errors) return;
              const bool again = std::any_of(cluster.stragglers.begin(), cluster.stragglers.end(),
                                             [&](const topo::Straggler& o) { return o.node == s.node; });
              if (again) {
                diagnostics.add(*r.get("node"), item_path + ".node",
                                "node " + std::to_string(s.node) + " is listed twice");
                return;
              }
              cluster.stragglers.push_back(s);
            });
}

void read_cluster_variability(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  MapReader r(diagnostics, value, "cluster.variability", {"spread", "seed"});
  if (!r.valid()) return;
  // σ of a GPU's kernel time over the mean: beyond 0.5 a tenth of the GPUs would run at twice the mean
  // time or at none, which is failures', not variability's.
  r.number("spread", cluster.variability, 0, 0.5);
  std::int64_t seed = 0;
  r.count("seed", seed, 0, 9.0e15);  // exact in the double the reader compares with
  cluster.variability_seed = static_cast<std::uint64_t>(seed);
}

void read_cluster_degraded(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  const int nics = std::max(cluster.nics_per_node(), 1);
  read_list(
      diagnostics, value, "cluster.degraded",
      "a list of {node, nic, bandwidth}, e.g. [{node: 3, nic: 2, bandwidth: \"100 Gb/s\"}]",
      [&](const YamlValue& item, const std::string& item_path) {
        MapReader r(diagnostics, item, item_path, {"node", "nic", "bandwidth"});
        if (!r.valid() || !r.require({"node", "nic", "bandwidth"})) return;
        topo::DegradedNic d;
        const auto errors = diagnostics.size();
        r.count("node", d.node, 0, static_cast<double>(cluster.nodes - 1));
        r.count("nic", d.nic, 0, nics - 1);
        r.quantity("bandwidth", d.bytes_per_s, Dimension::bytes_per_s);
        if (diagnostics.size() != errors) return;
        // Degraded means below the rating; a faster NIC is a different network (network.nic).
        if (d.bytes_per_s > cluster.nic_bytes_per_s()) {
          const auto gbps = [](double bytes_per_s) { return format_number(bytes_per_s * 8 / 1e9) + " Gb/s"; };
          diagnostics.add(*r.get("bandwidth"), item_path + ".bandwidth",
                          gbps(d.bytes_per_s) + " is faster than the NIC's rating of " +
                              gbps(cluster.nic_bytes_per_s()) +
                              ": a degraded NIC carries less than its rating; to give every NIC more, "
                              "set cluster.network.nic");
          return;
        }
        const bool again =
            std::any_of(cluster.degraded.begin(), cluster.degraded.end(),
                        [&](const topo::DegradedNic& o) { return o.node == d.node && o.nic == d.nic; });
        if (again) {
          diagnostics.add(
              item, item_path,
              "NIC " + std::to_string(d.nic) + " of node " + std::to_string(d.node) + " is listed twice");
          return;
        }
        cluster.degraded.push_back(d);
      });
}

}  // namespace trainsim::scenario
