#include "scenarios/cluster_background.hpp"

namespace trainsim::scenario {

void read_cluster_background(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster) {
  MapReader r(diagnostics, value, "cluster.background", {"fraction"});
  if (!r.valid()) return;
  r.require({"fraction"});
  // Below 1: a fabric wholly taken by other jobs would leave this one no route.
  r.number("fraction", cluster.background_fraction, 0, 0.99);
}

}  // namespace trainsim::scenario
