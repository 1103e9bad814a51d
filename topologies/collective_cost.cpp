// Closed-form collective costs. Every algorithm is a sum of synchronous steps, each costing
// α + chunk / B on the tier it runs on, so that the flow fidelity (collective_flows.cpp) can lower the very
// same steps into flows and agree with this file on an uncontended topology.
#include "topologies/collective_cost.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>

#include "sim/error.hpp"
#include "topologies/nccl_latency.hpp"

namespace trainsim::topo {

ProtocolScale protocol_scale(CollectiveProtocol protocol, const CommEfficiency& e) {
  switch (protocol) {
    case CollectiveProtocol::ll:
      return {e.ll_bandwidth_fraction, e.ll_latency_fraction};
    case CollectiveProtocol::ll128:
      return {e.ll128_bandwidth_fraction, e.ll128_latency_fraction};
    case CollectiveProtocol::simple:
      return {1.0, 1.0};
  }
  return {};
}

double intra_node_bytes_per_s(const NodeSpec& node) {
  if (node.intra_bytes_per_s > 0) return node.intra_bytes_per_s;
  if (node.gpu.nvlink_bytes_per_s > 0) return node.gpu.nvlink_bytes_per_s;
  return std::max(0.0, node.pcie_bytes_per_s);
}

namespace {

bool is_power_of_two(std::int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

std::int64_t largest_power_of_two_at_most(std::int64_t n) {
  std::int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

/// Raw (no efficiency) per-GPU intra-node bandwidth: the preset's fabric figure, else NVLink, else PCIe.
double raw_intra_bytes_per_s(const NodeSpec& node) {
  const double b = intra_node_bytes_per_s(node);
  if (b > 0) return b;
  throw InputError("node '" + node.name + "' has no intra-node bandwidth (intra, NVLink or PCIe)");
}

void check_group(const CommGroup& g) {
  if (g.size < 1 || g.ranks_per_node < 1 || g.nodes < 1 || g.leaves < 1 || g.groups_sharing_nics < 1) {
    throw InputError("communicator group: size, ranks per node, nodes, leaves and NIC sharing must be >= 1");
  }
  if (g.size > g.ranks_per_node * g.nodes || g.nodes > g.size || g.ranks_per_node > g.size) {
    throw InputError("communicator group: " + std::to_string(g.size) + " ranks cannot sit " +
                     std::to_string(g.ranks_per_node) + " per node on " + std::to_string(g.nodes) + " nodes");
  }
  if (g.leaves > g.nodes) throw InputError("communicator group: spans more leaf switches than nodes");
}

/// Everything one evaluation needs, resolved once.
struct Setup {
  double bytes;
  std::int64_t n;
  std::int64_t per_node;
  std::int64_t nodes;
  CommTier intra;
  double intra_all_to_all_bytes_per_s;  ///< an all-to-all's NVLink rate (AllToAllKernel)
  CommTier inter;                       ///< inter_node_tier times the ring's leaf uplink share
  /// leaf_uplink_share for a ring (already in `inter`), all-to-all, and a round sent wholly off the leaf.
  double uplink_ring = 1;
  double uplink_all_to_all = 1;
  double uplink_all = 1;
  std::int64_t nodes_per_leaf = 1;  ///< the group's nodes on one leaf
  /// The tier a flat (node-oblivious) algorithm sees: each step waits for its slowest link.
  CommTier flat;
  double fixed_s;  ///< launch cost paid once
  const CommEfficiency* eff;
  double in_switch_bytes_per_s;
  bool in_switch_available;
  bool in_switch_auto;  ///< NCCL's tuner would pick NVLS at this scale
};

double step_cost(double steps, double chunk, const CommTier& tier, ProtocolScale s) {
  return steps * (tier.latency_s * s.latency + chunk / (tier.bytes_per_s * s.bandwidth));
}

/// A ring of `steps` steps of `chunk` bytes over the whole group: NCCL's latency (ring_latency_s) plus the
/// bandwidth term on the flat tier.
double ring_cost(double steps, double chunk, const Setup& st, CollectiveProtocol protocol) {
  const ProtocolScale s = protocol_scale(protocol, *st.eff);
  return ring_latency_s(steps, st.n, st.nodes, st.intra.latency_s * s.latency, st.inter.latency_s * s.latency,
                        protocol, *st.eff) +
         steps * chunk / (st.flat.bytes_per_s * s.bandwidth);
}

/// The algorithm actually run for (op, requested algo): inapplicable requests fall back to ring.
CollectiveAlgo applicable(CollectiveOp op, CollectiveAlgo algo, const Setup& st) {
  switch (algo) {
    case CollectiveAlgo::double_binary_tree:
      return op == CollectiveOp::all_reduce ? algo : CollectiveAlgo::ring;
    case CollectiveAlgo::hierarchical:
      return (st.nodes > 1 && st.per_node > 1 &&
              (op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter ||
               op == CollectiveOp::all_gather))
                 ? algo
                 : CollectiveAlgo::ring;
    case CollectiveAlgo::halving_doubling:
      return (op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter ||
              op == CollectiveOp::all_gather)
                 ? algo
                 : CollectiveAlgo::ring;
    case CollectiveAlgo::in_switch:
      return (op == CollectiveOp::all_reduce && st.in_switch_available) ? algo : CollectiveAlgo::ring;
    case CollectiveAlgo::auto_select:
    case CollectiveAlgo::ring:
      return CollectiveAlgo::ring;
  }
  return CollectiveAlgo::ring;
}

/// Time of one (op, algorithm, protocol), excluding nothing: seconds.
double evaluate(CollectiveOp op, CollectiveAlgo algo, CollectiveProtocol protocol, const Setup& st) {
  const ProtocolScale s = protocol_scale(protocol, *st.eff);
  const double size = st.bytes;
  const auto n = static_cast<double>(st.n);
  const auto k = static_cast<double>(st.per_node);
  const auto m = static_cast<double>(st.nodes);
  const CommTier& flat = st.flat;
  switch (algo) {
    case CollectiveAlgo::ring:
    case CollectiveAlgo::auto_select:
      switch (op) {
        case CollectiveOp::all_reduce:
          return st.fixed_s + ring_cost(2 * (n - 1), size / n, st, protocol);
        case CollectiveOp::reduce_scatter:
        case CollectiveOp::all_gather:
          return st.fixed_s + ring_cost(n - 1, size / n, st, protocol);
        case CollectiveOp::broadcast:
        case CollectiveOp::reduce:
          // Pipelined chain: the first chunk pays every hop's latency, the buffer crosses each link once.
          return st.fixed_s + (n - 1) * flat.latency_s * s.latency + size / (flat.bytes_per_s * s.bandwidth);
        case CollectiveOp::all_to_all: {
          // Every pair exchanges size/n at once: NVLink carries the node-local share, the NICs the rest.
          const double intra_s = (k - 1) / n * size / (st.intra_all_to_all_bytes_per_s * s.bandwidth);
          const double inter_bw = st.inter.bytes_per_s / st.uplink_ring * st.uplink_all_to_all;
          const double inter_s = st.nodes > 1 ? k * (n - k) / n * size / (inter_bw * s.bandwidth) : 0.0;
          const double alpha = st.nodes > 1 ? st.inter.latency_s : st.intra.latency_s;
          return st.fixed_s + alpha * s.latency + std::max(intra_s, inter_s);
        }
        case CollectiveOp::send_recv: {
          const CommTier& t = st.nodes > 1 ? st.inter : st.intra;
          const double per_rank = st.nodes > 1 ? t.bytes_per_s / k : t.bytes_per_s;
          return st.fixed_s + step_cost(1, size, {per_rank, t.latency_s}, s);
        }
      }
      break;
    case CollectiveAlgo::double_binary_tree: {
      // Reduce up and broadcast down, pipelined; each rank sends and receives ~2S in total (it is interior
      // in one tree and a leaf in the other). Inside a node the tree is a chain (NCCL). NCCL's latency:
      // 2 · ((k − 1) · intraLat + log2i(nodes) · interLat), interLat the tree's network latency.
      const double level_s = network_step_s(st.inter.latency_s * s.latency, protocol, *st.eff) *
                             tree_network_latency_factor(protocol);
      const double depth =
          static_cast<double>(tree_levels(st.nodes)) * level_s + (k - 1) * st.intra.latency_s * s.latency;
      return st.fixed_s + 2 * depth + 2 * size / (flat.bytes_per_s * s.bandwidth);
    }
    case CollectiveAlgo::hierarchical: {
      // Intra-node reduce-scatter, inter-node collective on 1/k of the data by k parallel rings that share
      // the node's NICs, intra-node all-gather.
      // The inter-node rings have one rank per node: NCCL's ring latency prices them at the tree's
      // network latency (ring_latency_s).
      const double inter_bytes_per_s = st.inter.bytes_per_s / k * s.bandwidth;
      const auto inter_phase = [&](double steps) {
        return ring_latency_s(steps, st.nodes, st.nodes, 0, st.inter.latency_s * s.latency, protocol,
                              *st.eff) +
               steps * size / (k * m) / inter_bytes_per_s;
      };
      const double intra_phase = step_cost(k - 1, size / k, st.intra, s);
      if (op == CollectiveOp::all_reduce) return st.fixed_s + 2 * intra_phase + inter_phase(2 * (m - 1));
      return st.fixed_s + intra_phase + inter_phase(m - 1);
    }
    case CollectiveAlgo::halving_doubling: {
      // Recursive halving then doubling (Rabenseifner) on p = the largest power of two <= n ranks: round r
      // exchanges size/2^(r+1) with the partner 2^r ranks away, so the big early rounds stay inside a node.
      // Inside a node a round runs on the intra-node tier; across nodes every local rank crosses at once,
      // each on its share of the node's NICs. The n − p other ranks first fold their buffer onto a partner
      // and get the result back at the end: one full-buffer step each way.
      const std::int64_t p = largest_power_of_two_at_most(st.n);
      const bool tiered = st.nodes > 1 && st.per_node > 1;
      // A round between nodes of different leaves sends everything off the leaf.
      const double per_rank = st.inter.bytes_per_s / st.uplink_ring / (tiered ? k : 1.0);
      const CommTier inter_per_rank{per_rank, st.inter.latency_s};
      const CommTier off_leaf_per_rank{per_rank * st.uplink_all, st.inter.latency_s};
      double half = 0;
      for (std::int64_t distance = 1; distance < p; distance *= 2) {
        const bool intra =
            st.nodes == 1 || (tiered && is_power_of_two(st.per_node) && distance < st.per_node);
        const bool off_leaf = distance >= st.nodes_per_leaf * st.per_node;
        const CommTier& tier = intra      ? (tiered ? st.intra : flat)
                               : off_leaf ? off_leaf_per_rank
                                          : inter_per_rank;
        half += step_cost(1, size / static_cast<double>(2 * distance), tier, s);
      }
      const double fold = p == st.n ? 0.0 : step_cost(1, size, st.nodes > 1 ? inter_per_rank : flat, s);
      if (op == CollectiveOp::all_reduce) return st.fixed_s + 2 * half + 2 * fold;
      return st.fixed_s + half + fold;
    }
    case CollectiveAlgo::in_switch:
      // NVLS: every GPU pushes its buffer into the switch, which reduces and multicasts the result.
      return st.fixed_s + st.eff->in_switch_latency_s * s.latency +
             size / (st.in_switch_bytes_per_s * s.bandwidth);
  }
  return st.fixed_s;
}

constexpr std::array<CollectiveProtocol, 3> kProtocols = {CollectiveProtocol::ll, CollectiveProtocol::ll128,
                                                          CollectiveProtocol::simple};

/// Protocols NCCL runs an algorithm with; NVLS is Simple-only in NCCL, but its mid-size regime (smaller
/// chunks, shorter pipeline fill) behaves like LL128's point — lower latency, lower bandwidth — and is
/// modelled as such.
bool protocol_allowed(CollectiveAlgo algo, CollectiveProtocol protocol) {
  return algo != CollectiveAlgo::in_switch || protocol != CollectiveProtocol::ll;
}

CollectiveEstimate best_protocol(CollectiveOp op, CollectiveAlgo algo, const Setup& st) {
  CollectiveEstimate best{algo, CollectiveProtocol::simple, 0, 0};
  bool first = true;
  for (CollectiveProtocol p : kProtocols) {
    if (!protocol_allowed(algo, p)) continue;
    const double t = evaluate(op, algo, p, st);
    if (first || t < best.time_s) best = {algo, p, t, 0};
    first = false;
  }
  // Every formula in evaluate is a fixed part plus a part proportional to the bytes: the fixed part is the
  // same evaluation at zero bytes.
  Setup empty = st;
  empty.bytes = 0;
  best.latency_s = std::min(best.time_s, evaluate(op, best.algo, best.protocol, empty));
  return best;
}

Setup make_setup(CollectiveOp op, double bytes, const CommGroup& group, const ClusterSpec& cluster) {
  Setup st{};
  st.bytes = bytes;
  st.n = group.size;
  st.per_node = group.ranks_per_node;
  st.nodes = group.nodes;
  st.eff = &cluster.node.comm;
  st.intra = intra_node_tier(cluster);
  st.intra_all_to_all_bytes_per_s = all_to_all_intra_bytes_per_s(cluster.node, AllToAllKernel::nccl);
  if (group.nodes > 1) {
    st.inter = inter_node_tier(group, cluster);
    const auto nodes = static_cast<double>(group.nodes);
    const auto leaves = static_cast<double>(group.leaves);
    // A pair (a pipeline's hand-over) says nothing of its siblings: the pipeline leaves each leaf once,
    // a negligible share of the leaf's traffic, so sends keep their rate.
    st.uplink_ring = op == CollectiveOp::send_recv ? 1.0 : leaf_uplink_share(group, cluster, leaves / nodes);
    st.uplink_all_to_all = leaf_uplink_share(group, cluster, 1 - 1 / leaves);
    st.uplink_all = leaf_uplink_share(group, cluster, 1);
    st.nodes_per_leaf = std::max<std::int64_t>(1, group.nodes / group.leaves);
    st.inter.bytes_per_s *= st.uplink_ring;
    st.flat = group.ranks_per_node > 1 ? CommTier{std::min(st.intra.bytes_per_s, st.inter.bytes_per_s),
                                                  std::max(st.intra.latency_s, st.inter.latency_s)}
                                       : st.inter;
  } else {
    st.inter = st.intra;
    st.flat = st.intra;
  }
  st.fixed_s =
      cluster.node.comm.base_latency_s + (group.nodes > 1 ? cluster.node.comm.net_base_latency_s : 0);
  st.in_switch_available = cluster.node.in_switch_reduction && group.nodes == 1 && group.size > 1;
  st.in_switch_auto = st.in_switch_available && group.size >= cluster.node.comm.in_switch_min_ranks;
  st.in_switch_bytes_per_s =
      raw_intra_bytes_per_s(cluster.node) * cluster.node.comm.in_switch_bandwidth_fraction;
  return st;
}

}  // namespace

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce:
      return "all-reduce";
    case CollectiveOp::reduce_scatter:
      return "reduce-scatter";
    case CollectiveOp::all_gather:
      return "all-gather";
    case CollectiveOp::broadcast:
      return "broadcast";
    case CollectiveOp::reduce:
      return "reduce";
    case CollectiveOp::all_to_all:
      return "all-to-all";
    case CollectiveOp::send_recv:
      return "send-recv";
  }
  return "all-reduce";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view text) {
  std::string t;
  for (char c : text) {
    if (c != '-' && c != '_') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (t == "allreduce") return CollectiveOp::all_reduce;
  if (t == "reducescatter") return CollectiveOp::reduce_scatter;
  if (t == "allgather") return CollectiveOp::all_gather;
  if (t == "broadcast") return CollectiveOp::broadcast;
  if (t == "reduce") return CollectiveOp::reduce;
  if (t == "alltoall") return CollectiveOp::all_to_all;
  if (t == "sendrecv" || t == "p2p") return CollectiveOp::send_recv;
  return std::nullopt;
}

std::string_view to_string(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::auto_select:
      return "auto";
    case CollectiveAlgo::ring:
      return "ring";
    case CollectiveAlgo::double_binary_tree:
      return "tree";
    case CollectiveAlgo::hierarchical:
      return "hierarchical";
    case CollectiveAlgo::halving_doubling:
      return "halving-doubling";
    case CollectiveAlgo::in_switch:
      return "nvls";
  }
  return "auto";
}

std::optional<CollectiveAlgo> parse_collective_algo(std::string_view text) {
  std::string t;
  for (char c : text) {
    if (c != '-' && c != '_') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (t == "auto") return CollectiveAlgo::auto_select;
  if (t == "ring") return CollectiveAlgo::ring;
  if (t == "tree" || t == "doublebinarytree") return CollectiveAlgo::double_binary_tree;
  if (t == "hierarchical") return CollectiveAlgo::hierarchical;
  if (t == "halvingdoubling" || t == "rabenseifner") return CollectiveAlgo::halving_doubling;
  if (t == "nvls" || t == "inswitch") return CollectiveAlgo::in_switch;
  return std::nullopt;
}

std::string_view to_string(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::ll:
      return "LL";
    case CollectiveProtocol::ll128:
      return "LL128";
    case CollectiveProtocol::simple:
      return "Simple";
  }
  return "Simple";
}

CommTier intra_node_tier(const ClusterSpec& cluster) {
  return {raw_intra_bytes_per_s(cluster.node) * cluster.node.comm.intra_bandwidth_fraction,
          cluster.node.intra_latency_s};
}

CommTier inter_node_tier(const CommGroup& group, const ClusterSpec& cluster) {
  const double nic_total = static_cast<double>(cluster.nics_per_node()) * cluster.nic_bytes_per_s();
  if (nic_total <= 0) {
    throw InputError("node '" + cluster.node.name + "' has no NICs: a group spanning nodes needs a network");
  }
  double share = nic_total / static_cast<double>(group.groups_sharing_nics);
  // A GPU drives only the NICs next to it (its rail; several when a node has more NICs than GPUs).
  const double nics_per_gpu = std::max(
      1.0, static_cast<double>(cluster.nics_per_node()) / std::max(1, cluster.gpus_in_use_per_node()));
  share =
      std::min(share, static_cast<double>(group.ranks_per_node) * nics_per_gpu * cluster.nic_bytes_per_s());
  if (cluster.node.pcie_bytes_per_s > 0) {
    share = std::min(share, cluster.node.pcie_bytes_per_s * static_cast<double>(group.ranks_per_node));
  }
  double switches = 1;
  if (group.crosses_leaf()) {
    switch (cluster.network.topology) {
      case FabricTopology::single_switch:
        switches = 1;
        break;
      case FabricTopology::fat_tree:
      case FabricTopology::dragonfly:
        switches = 3;
        break;  // leaf–spine–leaf; local–global–local
      case FabricTopology::fat_tree_3:
        switches = 5;
        break;
      case FabricTopology::torus_2d:
      case FabricTopology::torus_3d:
        switches = 1;
        break;  // ring neighbours are torus neighbours
    }
  }
  return {share * cluster.node.comm.nic_bandwidth_fraction,
          cluster.node.comm.nic_latency_s + switches * cluster.network.switch_latency_s};
}

double leaf_uplink_share(const CommGroup& group, const ClusterSpec& cluster, double leaving_fraction) {
  const FabricTopology topology = cluster.network.topology;
  const bool leaf_spine = topology == FabricTopology::fat_tree || topology == FabricTopology::fat_tree_3;
  if (!group.crosses_leaf() || !leaf_spine || !(leaving_fraction > 0)) return 1.0;
  const LeafPorts ports = leaf_ports(cluster.network);
  const double uplinks = static_cast<double>(ports.up) * (1 - cluster.background_fraction);
  return std::min(1.0, uplinks / (static_cast<double>(ports.down) * std::min(leaving_fraction, 1.0)));
}

ClusterSpec uncontended_fabric(const ClusterSpec& cluster) {
  ClusterSpec out = cluster;
  out.network.oversubscription = 1.0;
  out.background_fraction = 0;
  out.degraded.clear();
  return out;
}

namespace {

/// Checks the request and resolves its Setup; nullopt when nothing moves (a group of one, or 0 bytes).
std::optional<Setup> checked_setup(CollectiveOp op, double bytes, const CommGroup& group,
                                   const ClusterSpec& cluster) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw InputError("collective size must be a finite number >= 0");
  check_group(group);
  if (group.size == 1 || bytes == 0) return std::nullopt;
  return make_setup(op, bytes, group, cluster);
}

}  // namespace

double all_to_all_intra_bytes_per_s(const NodeSpec& node, AllToAllKernel kernel) {
  const CommEfficiency& e = node.comm;
  return raw_intra_bytes_per_s(node) *
         (kernel == AllToAllKernel::nccl ? e.nccl_all_to_all_fraction() : e.device_all_to_all_fraction());
}

CollectiveEstimate estimate_all_to_all(double bytes, const CommGroup& group, const ClusterSpec& cluster,
                                       AllToAllKernel kernel) {
  std::optional<Setup> st = checked_setup(CollectiveOp::all_to_all, bytes, group, cluster);
  if (!st) return {CollectiveAlgo::ring, CollectiveProtocol::simple, 0, 0};
  st->intra_all_to_all_bytes_per_s = all_to_all_intra_bytes_per_s(cluster.node, kernel);
  return best_protocol(CollectiveOp::all_to_all, CollectiveAlgo::ring, *st);
}

CollectiveEstimate estimate_collective(CollectiveOp op, double bytes, const CommGroup& group,
                                       const ClusterSpec& cluster, CollectiveAlgo algo) {
  const std::optional<Setup> setup = checked_setup(op, bytes, group, cluster);
  if (!setup) {
    return {algo == CollectiveAlgo::auto_select ? CollectiveAlgo::ring : algo, CollectiveProtocol::simple, 0,
            0};
  }
  const Setup& st = *setup;
  if (algo != CollectiveAlgo::auto_select) return best_protocol(op, applicable(op, algo, st), st);
  // NCCL's tuner enables ring, tree (multi-node) and NVLS (when the switch reduces) for all-reduce and
  // runs the fastest by its own latency + size/bandwidth model; other collectives run as rings.
  CollectiveEstimate best = best_protocol(op, CollectiveAlgo::ring, st);
  if (op == CollectiveOp::all_reduce) {
    for (CollectiveAlgo a : {CollectiveAlgo::double_binary_tree, CollectiveAlgo::in_switch}) {
      if (a == CollectiveAlgo::double_binary_tree && st.nodes == 1) continue;
      if (a == CollectiveAlgo::in_switch && !st.in_switch_auto) continue;
      if (applicable(op, a, st) != a) continue;
      const CollectiveEstimate e = best_protocol(op, a, st);
      if (e.time_s < best.time_s) best = e;
    }
  }
  return best;
}

std::string forced_algorithm_problem(CollectiveOp op, CollectiveAlgo algo, const CommGroup& group,
                                     const ClusterSpec& cluster) {
  if (algo == CollectiveAlgo::auto_select) return "";
  const CollectiveAlgo used = estimate_collective(op, 1.0, group, cluster, algo).algo;
  if (used == algo) return "";
  return std::string(to_string(algo)) + " does not run " + std::string(to_string(op)) + " on this group (" +
         std::to_string(group.size) + " GPUs): " + std::string(to_string(used)) +
         " would; name that one or none";
}

double collective_time(CollectiveOp op, double bytes, const CommGroup& group, const ClusterSpec& cluster,
                       CollectiveAlgo algo) {
  return estimate_collective(op, bytes, group, cluster, algo).time_s;
}

CollectiveAlgo select_algorithm(CollectiveOp op, double bytes, const CommGroup& group,
                                const ClusterSpec& cluster) {
  return estimate_collective(op, bytes, group, cluster, CollectiveAlgo::auto_select).algo;
}

double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks) {
  if (ranks < 1) throw InputError("bus bandwidth: ranks must be >= 1");
  const auto n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::all_reduce:
      return 2 * (n - 1) / n;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all:
      return (n - 1) / n;
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce:
    case CollectiveOp::send_recv:
      return 1.0;
  }
  return 1.0;
}

double algorithm_bandwidth(double bytes, double time_s) {
  return time_s > 0 ? bytes / time_s : 0.0;
}

double bus_bandwidth(CollectiveOp op, double bytes, std::int64_t ranks, double time_s) {
  return algorithm_bandwidth(bytes, time_s) * bus_bandwidth_factor(op, ranks);
}

}  // namespace trainsim::topo
