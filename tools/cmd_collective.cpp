// `trainsim collective`: time a collective like nccl-tests — one size (--size) or a sweep (-b/-e/-f), one
// line per size with nccl-tests' columns (size, count, type, time, algbw, busbw last), `#` header lines.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "scenarios/loader.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/quantity.hpp"
#include "sim/error.hpp"
#include "tools/command.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/collective_flows.hpp"
#include "topologies/comm_calibration.hpp"
#include "topologies/placement.hpp"

namespace trainsim::cli {
namespace {

/// "1GiB", "64 MB" (the scenario quantity parser), or nccl-tests' "8", "64K", "8M", "1G" (binary suffixes).
double parse_size(const std::string& text) {
  const scenario::QuantityResult q = scenario::try_parse_quantity(text, scenario::Dimension::bytes);
  if (q.ok()) return q.value;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw InputError("size \"" + text + "\": expected bytes like 8, 64K, 8M, 1G or 1GiB");
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K':
        scale = 1024.0;
        break;
      case 'M':
        scale = 1024.0 * 1024;
        break;
      case 'G':
        scale = 1024.0 * 1024 * 1024;
        break;
      case 'T':
        scale = 1024.0 * 1024 * 1024 * 1024;
        break;
      default:
        scale = 0;
    }
  } else if (!suffix.empty()) {
    scale = 0;
  }
  if (scale == 0 || !(value > 0) || !std::isfinite(value)) {
    throw InputError("size \"" + text + "\": expected bytes like 8, 64K, 8M, 1G or 1GiB");
  }
  return value * scale;
}

double type_bytes(const std::string& type) {
  if (type == "float" || type == "float32" || type == "int32") return 4;
  if (type == "half" || type == "float16" || type == "bfloat16" || type == "bf16" || type == "fp16") return 2;
  if (type == "double" || type == "float64" || type == "int64") return 8;
  if (type == "int8" || type == "uint8" || type == "fp8") return 1;
  throw InputError("--type \"" + type + "\": expected float, half, bfloat16, double or int8");
}

// The message sizes to time: --size alone, else nccl-tests' sweep from -b (default 8) to -e (default 128M,
// or -b alone when only it is given), multiplied by -f each step.
std::vector<double> message_sizes(const std::string& size, const std::string& begin, const std::string& end,
                                  double factor) {
  if (!size.empty()) return {parse_size(size)};
  const double b = parse_size(begin.empty() ? "8" : begin);
  const double e = parse_size(end.empty() ? (begin.empty() ? "128M" : begin) : end);
  if (e < b) throw InputError("-e must not be below -b");
  std::vector<double> sizes;
  for (double s = b; s <= e * (1 + 1e-12); s *= factor) sizes.push_back(std::floor(s));
  return sizes;
}

// The nccl-tests-like header: what runs where, where the collective efficiencies come from (and, for an
// all-to-all inside a node, NCCL's own share of NVLink), and the columns.
void print_header(topo::CollectiveOp op, topo::CollectiveAlgo algo, const std::string& fidelity,
                  const topo::ClusterSpec& c) {
  std::cout << fmt::format(
      "# trainsim collective: {} on {} x {} ({} GPUs, {} per node), algorithm {}, {} fidelity\n",
      topo::to_string(op), c.nodes, c.node.name, c.total_gpus(), c.gpus_in_use_per_node(),
      topo::to_string(algo), fidelity);
  std::cout << fmt::format("# collective efficiencies: {}\n",
                           topo::calibrated_comm_efficiency(c.node)
                               ? "fitted to published nccl-tests rows (topologies/comm_calibration.cpp)"
                               : "from the preset / defaults (no fit for this node type)");
  if (op == topo::CollectiveOp::all_to_all && c.gpus_in_use_per_node() > 1) {
    std::cout << fmt::format(
        "# all-to-all inside a node: NCCL's grouped sends at {:.3f} of NVLink ({}), its rings at {:.3f}, "
        "DeepEP's and HybridEP's kernels at {:.3f} ({})\n",
        c.node.comm.nccl_all_to_all_fraction(),
        c.node.comm.all_to_all_bandwidth_fraction > 0
            ? "its NVLink generation's, topologies/comm_calibration.cpp"
            : "no all-to-all data: the rings' fraction",
        c.node.comm.intra_bandwidth_fraction, c.node.comm.device_all_to_all_fraction(),
        c.node.comm.device_all_to_all_bandwidth_fraction > 0 ? "their kernels' benchmark"
                                                             : "no kernel data: the rings' fraction");
  }
  std::cout << "#\n";
  std::cout << fmt::format("# {:>12} {:>12} {:>8} {:>10} {:>8} {:>8}\n", "size", "count", "type", "time",
                           "algbw", "busbw");
  std::cout << fmt::format("# {:>12} {:>12} {:>8} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "(us)",
                           "(GB/s)", "(GB/s)");
}

}  // namespace

void add_collective_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("collective", "time a collective like nccl-tests (closed form or flows)");
  struct Options {
    std::string scenario, cluster, op = "all-reduce", algo = "auto", size, begin, end, type = "float",
                                   fidelity = "closed";
    std::int64_t nodes = 1;
    int gpus = 0;
    double factor = 2;
  };
  static Options o;
  auto* scenario_file =
      sub->add_option("scenario", o.scenario,
                      "time it on this scenario's cluster (nodes, network, fabric) instead of --cluster");
  sub->add_option("--cluster", o.cluster, "node preset, e.g. hgx-h200 (trainsim list clusters)")
      ->excludes(scenario_file);
  sub->add_option("--nodes", o.nodes, "nodes (default 1, or the scenario's)")->check(CLI::PositiveNumber);
  sub->add_option("--gpus", o.gpus, "GPUs used per node (default: all of the preset's)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--op", o.op,
                  "all-reduce | reduce-scatter | all-gather | broadcast | reduce | all-to-all | send-recv");
  sub->add_option(
      "--algo", o.algo,
      "auto | ring | tree | hierarchical | halving-doubling | nvls (a named one must run the op on "
      "the group, else an error)");
  auto* size = sub->add_option("--size", o.size, "one message size, e.g. 1GiB or 8M");
  // One size or a sweep, never both: a --size given with -b/-e would silently win.
  sub->add_option("-b,--minbytes", o.begin, "sweep start (nccl-tests -b), e.g. 8")->excludes(size);
  sub->add_option("-e,--maxbytes", o.end, "sweep end (nccl-tests -e), e.g. 8G")->excludes(size);
  sub->add_option("-f,--stepfactor", o.factor, "sweep multiplication factor (nccl-tests -f)")
      ->check(CLI::Range(1.01, 1e6));
  sub->add_option("--type", o.type, "element type for the count column (default float)");
  sub->add_option("--fidelity", o.fidelity,
                  "closed (alpha-beta, default) | flow (engine flows over the fabric)");
  sub->callback([&exit_code, sub] {
    const auto op = topo::parse_collective_op(o.op);
    if (!op)
      throw InputError("--op \"" + o.op +
                       "\": expected all-reduce, reduce-scatter, all-gather, broadcast, "
                       "reduce, all-to-all or send-recv");
    const auto algo = topo::parse_collective_algo(o.algo);
    if (!algo)
      throw InputError("--algo \"" + o.algo +
                       "\": expected auto, ring, tree, hierarchical, "
                       "halving-doubling or nvls");
    if (o.fidelity != "closed" && o.fidelity != "flow")
      throw InputError("--fidelity: expected closed or flow");
    if (o.fidelity == "flow" && (*op == topo::CollectiveOp::broadcast || *op == topo::CollectiveOp::reduce)) {
      throw InputError("--fidelity flow: broadcast and reduce are not lowered into flows yet; use closed");
    }
    const std::vector<double> sizes = message_sizes(o.size, o.begin, o.end, o.factor);
    topo::ClusterSpec c;
    if (!o.scenario.empty()) {
      c = scenario::load_scenario_file(o.scenario).cluster;
      if (sub->count("--nodes") > 0) c.nodes = o.nodes;
    } else {
      if (o.cluster.empty()) throw InputError("collective: give a scenario file or --cluster NODE_PRESET");
      c.node = scenario::node_preset(o.cluster);
      c.nodes = o.nodes;
    }
    if (o.gpus > 0) {
      if (o.gpus > c.node.gpus_per_node) throw InputError("--gpus exceeds the preset's GPUs per node");
      c.gpus_per_node = o.gpus;
    }
    // The preset reader has applied a node type's fit already (a scenario's node too); the header says
    // whether one exists.
    (void)topo::apply_comm_calibration(c.node);
    const std::int64_t n = c.total_gpus();
    if (*op == topo::CollectiveOp::send_recv && n != 2) {
      throw InputError("send-recv runs between two GPUs: use --nodes 2 --gpus 1, or --gpus 2");
    }
    if (n < 2)
      throw InputError("a collective runs between at least two GPUs: use --gpus or --nodes for more");
    const topo::Placement placement({n}, c);
    const topo::CommGroup group = placement.group(0, 0);
    const double elem = type_bytes(o.type);
    if (const std::string problem = topo::forced_algorithm_problem(*op, *algo, group, c); !problem.empty())
      throw InputError("--algo " + problem);

    print_header(*op, *algo, o.fidelity, c);
    std::vector<std::string> used;
    std::unique_ptr<topo::ClusterGraph> graph;
    if (o.fidelity == "flow") graph = std::make_unique<topo::ClusterGraph>(topo::ClusterGraph::build(c));
    for (double bytes : sizes) {
      const topo::CollectiveEstimate e = topo::estimate_collective(*op, bytes, group, c, *algo);
      double t = e.time_s;
      if (graph) {
        topo::CollectiveCall call{*op, bytes, std::vector<std::int64_t>(static_cast<std::size_t>(n)), e.algo,
                                  e.protocol};
        std::iota(call.members.begin(), call.members.end(), 0);
        t = topo::simulate_collectives(*graph, c, std::span(&call, 1)).front().seconds();
      }
      const std::string choice = fmt::format("{}/{}", topo::to_string(e.algo), topo::to_string(e.protocol));
      if (std::find(used.begin(), used.end(), choice) == used.end()) used.push_back(choice);
      std::cout << fmt::format("  {:>12.0f} {:>12.0f} {:>8} {:>10.2f} {:>8.2f} {:>8.2f}\n", bytes,
                               std::floor(bytes / elem), o.type, t * 1e6,
                               topo::algorithm_bandwidth(bytes, t) / 1e9,
                               topo::bus_bandwidth(*op, bytes, n, t) / 1e9);
    }
    std::string list;
    for (const auto& u : used) list += (list.empty() ? "" : ", ") + u;
    std::cout << fmt::format("# algorithm/protocol used: {}\n", list);
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
