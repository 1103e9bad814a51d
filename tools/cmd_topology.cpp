// `trainsim topology S.yaml [--dot FILE]`: build the scenario's cluster graph and summarise it — devices and
// links by kind, bisection bandwidth, diameter — and optionally write Graphviz DOT.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/comm_calibration.hpp"
#include "topologies/placement.hpp"

namespace trainsim::cli {
namespace {

std::string fabric_name(topo::FabricTopology t) {
  switch (t) {
    case topo::FabricTopology::single_switch:
      return "single switch";
    case topo::FabricTopology::fat_tree:
      return "2-tier fat-tree";
    case topo::FabricTopology::fat_tree_3:
      return "3-tier fat-tree";
    case topo::FabricTopology::torus_2d:
      return "2D torus";
    case topo::FabricTopology::torus_3d:
      return "3D torus";
    case topo::FabricTopology::dragonfly:
      return "dragonfly";
  }
  return "?";
}

/// Graphs beyond this many devices are not written as DOT (Graphviz cannot lay them out usefully).
constexpr std::size_t max_dot_devices = 20000;

}  // namespace

void add_topology_command(CLI::App& app, int& exit_code) {
  auto* sub =
      app.add_subcommand("topology", "summarise a scenario's cluster topology (devices, links, bisection)");
  static std::string file;
  static std::string dot;
  sub->add_option("scenario", file, "scenario YAML file")->required();
  sub->add_option("--dot", dot, "write the graph as Graphviz DOT to this file (small clusters)");
  sub->callback([&exit_code] {
    const scenario::Scenario s = scenario::load_scenario_file(file);
    topo::ClusterSpec c = s.cluster;
    topo::apply_comm_calibration(c.node);
    const topo::ClusterGraph g = topo::ClusterGraph::build(c);
    const auto& net = c.network;
    std::cout << fmt::format("cluster: {} x {} ({} GPUs), {}{}, oversubscription {}:1, {}-port switches\n",
                             c.nodes, c.node.name, c.total_gpus(), fabric_name(net.topology),
                             net.rail_optimized ? ", rail-optimized" : "", net.oversubscription,
                             net.switch_radix);
    std::cout << fmt::format("NICs: {} x {:.0f} Gb/s per node; {} nodes per leaf\n", c.nics_per_node(),
                             c.nic_bytes_per_s() * 8 / 1e9, topo::nodes_per_leaf(c));
    std::cout << fmt::format("devices: {}\n", g.device_count());
    for (auto kind : {topo::DeviceKind::gpu, topo::DeviceKind::nvswitch, topo::DeviceKind::pcie_switch,
                      topo::DeviceKind::nic, topo::DeviceKind::leaf, topo::DeviceKind::spine,
                      topo::DeviceKind::core, topo::DeviceKind::router, topo::DeviceKind::storage}) {
      const std::int64_t k = g.count(kind);
      if (k > 0) std::cout << fmt::format("  {:<12} {:>10}\n", topo::to_string(kind), k);
    }
    std::cout << fmt::format("links: {} (directed)\n", g.link_count());
    const double injection = static_cast<double>(c.nodes * c.nics_per_node()) * c.nic_bytes_per_s() / 2;
    // Across nodes the bisection is set by the fabric, so compare it with what the NICs can inject; inside
    // one node it runs through the GPU fabric (NVSwitch), and the NICs say nothing about it.
    if (c.nodes > 1 && injection > 0) {
      std::cout << fmt::format(
          "bisection bandwidth: {:.1f} GB/s per direction ({:.0f}% of half the NIC bandwidth)\n",
          g.bisection_bytes_per_s() / 1e9, 100 * g.bisection_bytes_per_s() / injection);
    } else {
      std::cout << fmt::format(
          "bisection bandwidth: {:.1f} GB/s per direction (inside one node, through its GPU fabric)\n",
          g.bisection_bytes_per_s() / 1e9);
    }
    std::cout << fmt::format("diameter: {} links between GPUs\n", g.diameter());
    if (!dot.empty()) {
      if (g.device_count() > max_dot_devices) {
        throw InputError(fmt::format("--dot: {} devices is too many to draw (at most {})", g.device_count(),
                                     max_dot_devices));
      }
      std::ostringstream text;
      g.write_dot(text);
      sim::write_file_atomically(dot, text.str());
      std::cout << "wrote " << dot << "\n";
    }
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
