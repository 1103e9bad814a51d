// Lowering collectives into engine flows (the algorithms and why they are lowered so: the header).
#include "topologies/collective_flows.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "topologies/nccl_latency.hpp"
#include "topologies/placement.hpp"

namespace trainsim::topo {

FabricFlows::FabricFlows(const ClusterGraph& graph, sim::FlowNetwork& network, double latency_scale)
    : graph_(&graph),
      network_(&network),
      base_(static_cast<sim::LinkId>(network.link_count())),
      latency_scale_(latency_scale) {
  if (!(latency_scale > 0)) throw InputError("fabric flows: the latency scale must be > 0");
  for (std::size_t i = 0; i < graph.link_count(); ++i) {
    const Link& l = graph.link(static_cast<LinkIndex>(i));
    network.add_link(l.bytes_per_s, sim::Duration::from_seconds(l.latency_s * latency_scale));
  }
}

std::span<const sim::LinkId> FabricFlows::gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) {
  const std::span<const LinkIndex> route = graph_->route(graph_->gpu(from_gpu), graph_->gpu(to_gpu));
  scratch_.resize(route.size());
  for (std::size_t i = 0; i < route.size(); ++i) scratch_[i] = base_ + route[i];
  return scratch_;
}

double FabricFlows::gpu_latency_s(std::int64_t from_gpu, std::int64_t to_gpu) const {
  double total = 0;
  for (LinkIndex l : graph_->route(graph_->gpu(from_gpu), graph_->gpu(to_gpu)))
    total += network_->latency(base_ + l).seconds();
  return total;
}

namespace {

/// NCCL's pipeline slice for trees: a tree edge forwards its last slice only after it has received it.
constexpr double kTreeSliceBytes = 128.0 * 1024;
constexpr double kTreeMinSlices = 64;

/// The last send and the last receive of every member: what its next send waits for.
struct Frontier {
  std::vector<sim::TaskId> send;
  std::vector<sim::TaskId> recv;
  Frontier(std::size_t n, sim::TaskId start) : send(n, start), recv(n, start) {}
};

/// NCCL's binary tree over `count` ranks (ncclGetBtree): the parent of `rank`, -1 for the root (rank 0).
std::int64_t btree_parent(std::int64_t rank, std::int64_t count) {
  if (rank == 0) return -1;
  std::int64_t bit = 1;
  while (bit < count && (bit & rank) == 0) bit <<= 1;
  const std::int64_t up = (rank ^ bit) | (bit << 1);
  return up >= count ? (rank ^ bit) : up;
}

/// The second tree of NCCL's double binary tree (ncclGetDtree): the first one mirrored for an even count,
/// shifted by one for an odd count, so that the leaves of one are the interior ranks of the other.
std::int64_t dtree_parent(std::int64_t rank, std::int64_t count, int tree) {
  if (tree == 0) return btree_parent(rank, count);
  const bool mirror = count % 2 == 0;
  const std::int64_t mapped = mirror ? count - 1 - rank : (rank - 1 + count) % count;
  const std::int64_t parent = btree_parent(mapped, count);
  if (parent < 0) return -1;
  return mirror ? count - 1 - parent : (parent + 1) % count;
}

class Lowering {
 public:
  Lowering(sim::Dag& dag, GpuPaths& fabric, const ClusterSpec& cluster, std::span<const std::int64_t> members,
           std::string_view name, double byte_scale, CollectiveProtocol protocol,
           std::optional<LoweringLane> placed)
      : dag_(dag),
        fabric_(fabric),
        cluster_(cluster),
        members_(members),
        lane_(placed ? placed->lane : dag.lane(name)),
        latency_lane_(placed ? placed->lane : dag.lane(std::string(name) + " launch")),
        name_(name),
        byte_scale_(byte_scale),
        protocol_(protocol) {}

  [[nodiscard]] sim::LaneId latency_lane() const { return latency_lane_; }

  /// Whether member positions `i` and `j` are GPUs of one node.
  [[nodiscard]] bool same_node(std::size_t i, std::size_t j) const {
    const std::int64_t gpn = cluster_.gpus_in_use_per_node();
    return members_[i] / gpn == members_[j] / gpn;
  }

  /// `steps` pipelined steps of rings over member positions (each ring sends `chunk` bytes per step from
  /// every rank to the next), all after `after`: a busy task of the rings' step latencies (ring_latency_s
  /// over the slowest hop inside a node and the slowest between nodes) but the one their flows carry, then
  /// one flow per ring edge of steps · chunk. Returns the task that every flow of the phase precedes.
  sim::TaskId rings(const std::vector<std::vector<std::size_t>>& rings, std::int64_t steps, double chunk,
                    sim::TaskId after) {
    double slowest = 0;
    double latency = 0;
    // Every hop's links, routed once: hop j's are hop_links_[hop_ends_[j - 1] .. hop_ends_[j]).
    hop_links_.clear();
    hop_ends_.clear();
    for (const auto& ring : rings) {
      double intra = 0;
      double inter = 0;
      std::int64_t crossings = 0;
      for (std::size_t i = 0; ring.size() > 1 && i < ring.size(); ++i) {
        const std::size_t from = ring[i];
        const std::size_t to = ring[(i + 1) % ring.size()];
        const double hop = ring_hop(from, to, hop_links_);
        hop_ends_.push_back(hop_links_.size());
        slowest = std::max(slowest, hop);
        if (same_node(from, to)) {
          intra = std::max(intra, hop);
        } else {
          inter = std::max(inter, hop);
          ++crossings;
        }
      }
      const auto ranks = static_cast<std::int64_t>(ring.size());
      latency = std::max(
          latency, ring_latency_s(static_cast<double>(steps), ranks, std::max<std::int64_t>(1, crossings),
                                  intra, inter, protocol_, cluster_.node.comm));
    }
    sim::TaskId start = after;
    if (slowest > 0 && latency > slowest) {
      start = dag_.busy(latency_lane_, sim::Duration::from_seconds(latency - slowest),
                        std::string(name_) + " ring steps");
      dag_.depend(after, start);
    }
    const sim::TaskId done = dag_.join(lane_, std::string(name_) + " phase");
    dag_.depend(start, done);
    std::size_t hop_begin = 0;
    for (const std::size_t hop_end : hop_ends_) {
      const std::span<const sim::LinkId> path(hop_links_.data() + hop_begin, hop_end - hop_begin);
      hop_begin = hop_end;
      const sim::TaskId t =
          dag_.transfer(lane_, path, static_cast<double>(steps) * chunk * byte_scale_, name_);
      ++transfers_;
      dag_.depend(start, t);
      dag_.depend(t, done);
    }
    return done;
  }

  /// NCCL prices a tree's levels between nodes above a ring's network step (network_step_s times
  /// tree_network_latency_factor): a busy task, after `after`, of that excess over the link latency between
  /// member positions `from` and `to` (on two nodes), for `levels` levels up and as many down. `after` itself
  /// when there is none.
  sim::TaskId tree_network_excess(std::int64_t levels, std::size_t from, std::size_t to, sim::TaskId after) {
    const double hop = fabric_.gpu_latency_s(members_[from], members_[to]);
    const double level =
        network_step_s(hop, protocol_, cluster_.node.comm) * tree_network_latency_factor(protocol_);
    const double excess = 2 * static_cast<double>(levels) * (level - hop);
    if (!(excess > 0)) return after;
    const sim::TaskId t =
        dag_.busy(latency_lane_, sim::Duration::from_seconds(excess), std::string(name_) + " tree levels");
    dag_.depend(after, t);
    return t;
  }

  /// A pipelined reduce up the tree given by `parent` (member positions, -1 at the root) and broadcast
  /// down it, of `bytes` per edge, after `after`; every flow precedes `done`.
  void tree(const std::vector<std::int64_t>& parent, double bytes, sim::TaskId after, sim::TaskId done) {
    const std::size_t n = parent.size();
    const double slice = std::min(kTreeSliceBytes, bytes / kTreeMinSlices);
    const double body = bytes - slice;
    // up[i]: last slice from i to its parent; children's last slices come first (a child has a higher
    // depth, so order by depth).
    std::vector<int> depth(n, 0);
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) {
      order[i] = i;
      for (std::int64_t p = parent[i]; p >= 0; p = parent[static_cast<std::size_t>(p)]) ++depth[i];
    }
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
    std::vector<std::vector<sim::TaskId>> into(n);  // last slices arriving at each member, going up
    std::size_t root = 0;
    for (std::size_t i : order) {
      if (parent[i] < 0) {
        root = i;
        continue;
      }
      const auto p = static_cast<std::size_t>(parent[i]);
      into[p].push_back(piece(i, p, body, slice, after, into[i], done));
    }
    // Down: from the root in increasing depth; a member forwards its last slice once it has it.
    std::vector<sim::TaskId> have(n, after);
    const sim::TaskId reduced = dag_.join(lane_, std::string(name_) + " reduced");
    dag_.depend(after, reduced);
    for (sim::TaskId t : into[root]) dag_.depend(t, reduced);
    have[root] = reduced;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const std::size_t i = *it;
      if (parent[i] < 0) continue;
      const auto p = static_cast<std::size_t>(parent[i]);
      have[i] = piece(p, i, body, slice, after, std::span<const sim::TaskId>(&have[p], 1), done);
    }
  }

  /// One pairwise exchange round: every position i < partners.size() with partners[i] != i sends `bytes`
  /// to it, after its previous send and receive.
  void exchange(const std::vector<std::size_t>& partner, double bytes, Frontier& f) {
    std::vector<sim::TaskId> sent(partner.size());
    for (std::size_t i = 0; i < partner.size(); ++i) {
      if (partner[i] != i) sent[i] = transfer(i, partner[i], bytes, f.send[i], f.recv[i]);
    }
    for (std::size_t i = 0; i < partner.size(); ++i) {
      if (partner[i] == i) continue;
      f.send[i] = sent[i];
      f.recv[partner[i]] = sent[i];
    }
  }

  /// A flow of `bytes` (times the protocol's byte scale) from member position `from` to `to`, after both
  /// `after_a` and `after_b`.
  sim::TaskId transfer(std::size_t from, std::size_t to, double bytes, sim::TaskId after_a,
                       sim::TaskId after_b) {
    const sim::TaskId t =
        dag_.transfer(lane_, fabric_.gpu_path(members_[from], members_[to]), bytes * byte_scale_, name_);
    dag_.depend(after_a, t);
    if (after_b != after_a) dag_.depend(after_b, t);
    ++transfers_;
    return t;
  }

  void finish(const Frontier& f, sim::TaskId done) {
    for (std::size_t i = 0; i < f.send.size(); ++i) {
      dag_.depend(f.send[i], done);
      if (f.recv[i] != f.send[i]) dag_.depend(f.recv[i], done);
    }
  }

  [[nodiscard]] std::size_t transfers() const { return transfers_; }

 private:
  /// The ring hop from member position `from` to `to`: appends its links to `path` and returns its per-step
  /// latency. Crossing to a GPU on another rail of a rail-optimized fabric, NCCL sends through PXN: over
  /// NVLink to the local GPU on the receiver's rail, then out of its NIC, so the network part stays on one
  /// rail; the two hops are pipelined stages, so a step waits for the slower one.
  double ring_hop(std::size_t from, std::size_t to, std::vector<sim::LinkId>& path) {
    const std::int64_t a = members_[from];
    const std::int64_t b = members_[to];
    const std::int64_t gpn = cluster_.gpus_in_use_per_node();
    const std::int64_t nics = cluster_.nics_per_node();
    const auto rail = [&](std::int64_t gpu) { return cluster_.nic_of_gpu(gpu % gpn); };
    if (cluster_.network.rail_optimized && nics > 1 && a / gpn != b / gpn && rail(a) != rail(b)) {
      const std::int64_t relay = a / gpn * gpn + b % gpn;
      const std::span<const sim::LinkId> first = fabric_.gpu_path(a, relay);
      path.insert(path.end(), first.begin(), first.end());
      const std::span<const sim::LinkId> second = fabric_.gpu_path(relay, b);
      path.insert(path.end(), second.begin(), second.end());
      return std::max(fabric_.gpu_latency_s(a, relay), fabric_.gpu_latency_s(relay, b));
    }
    const std::span<const sim::LinkId> direct = fabric_.gpu_path(a, b);
    path.insert(path.end(), direct.begin(), direct.end());
    return fabric_.gpu_latency_s(a, b);
  }

  /// A tree edge: its body from `after` on, then its last slice once the body and `inputs` are done.
  sim::TaskId piece(std::size_t from, std::size_t to, double body, double slice, sim::TaskId after,
                    std::span<const sim::TaskId> inputs, sim::TaskId done) {
    const sim::TaskId last_after = body > 0 ? transfer(from, to, body, after, after) : after;
    if (body > 0) dag_.depend(last_after, done);
    const sim::TaskId last = transfer(from, to, slice, last_after, last_after);
    for (sim::TaskId t : inputs) dag_.depend(t, last);
    dag_.depend(last, done);
    return last;
  }

  sim::Dag& dag_;
  GpuPaths& fabric_;
  const ClusterSpec& cluster_;
  std::span<const std::int64_t> members_;
  sim::LaneId lane_;
  sim::LaneId latency_lane_;
  std::string_view name_;
  double byte_scale_;
  CollectiveProtocol protocol_;
  std::size_t transfers_ = 0;
  std::vector<sim::LinkId> hop_links_;  // rings(): the links of its hops, one after another
  std::vector<std::size_t> hop_ends_;   // rings(): where each hop's links end in hop_links_
};

/// Member positions grouped by node, nodes in order of first appearance; empty when nodes hold different
/// numbers of members (no hierarchy or channels then).
std::vector<std::vector<std::size_t>> by_node(std::span<const std::int64_t> members,
                                              std::int64_t gpus_per_node) {
  std::vector<std::vector<std::size_t>> groups;
  const bool ascending = std::ranges::is_sorted(members);       // the step's groups are: no map needed
  std::unordered_map<std::int64_t, std::size_t> group_of_node;  // node → its index in groups
  if (!ascending) group_of_node.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::int64_t node = members[i] / gpus_per_node;
    if (ascending) {
      if (i == 0 || node != members[i - 1] / gpus_per_node) groups.emplace_back();
      groups.back().push_back(i);
      continue;
    }
    const auto [it, added] = group_of_node.try_emplace(node, groups.size());
    if (added) {
      groups.push_back({i});
    } else {
      groups[it->second].push_back(i);
    }
  }
  for (const auto& g : groups) {
    if (g.size() != groups.front().size()) return {};
  }
  return groups;
}

/// The communicator group `members` form on `cluster`, as the closed form sees it (alone on its NICs).
CommGroup group_of(std::span<const std::int64_t> members, const ClusterSpec& cluster) {
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  const std::int64_t per_leaf = nodes_per_leaf(cluster);
  std::vector<std::int64_t> nodes;
  std::vector<std::int64_t> leaves;
  for (std::int64_t g : members) {
    nodes.push_back(g / gpn);
    leaves.push_back(g / gpn / per_leaf);
  }
  auto distinct = [](std::vector<std::int64_t>& v) {
    std::sort(v.begin(), v.end());
    return static_cast<std::int64_t>(std::unique(v.begin(), v.end()) - v.begin());
  };
  CommGroup group;
  group.size = static_cast<std::int64_t>(members.size());
  group.nodes = distinct(nodes);
  group.leaves = std::min(distinct(leaves), group.nodes);
  group.ranks_per_node = (group.size + group.nodes - 1) / group.nodes;
  return group;
}

/// Channel c's ring order over `nodes` (each k member positions): enters node j at local rank c·k/channels
/// and leaves it at the one before; odd nodes run backwards, so each crossing joins equal local ranks.
std::vector<std::size_t> channel_ring(const std::vector<std::vector<std::size_t>>& nodes, std::size_t c,
                                      std::size_t channels) {
  const std::size_t k = nodes.front().size();
  const std::size_t shift = c * k / channels;
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    for (std::size_t i = 0; i < k; ++i) {
      const std::size_t local = j % 2 == 0 ? (shift + i) % k : (shift + 2 * k - 1 - i) % k;
      order.push_back(nodes[j][local]);
    }
  }
  return order;
}

/// Throws InputError for what the flow fidelity does not lower (lower_collective's contract).
void check_lowerable(CollectiveOp op, double bytes, std::span<const std::int64_t> members,
                     std::string_view name) {
  if (members.empty()) throw InputError("collective '" + std::string(name) + "' has no members");
  if (!(bytes >= 0)) throw InputError("collective size must be >= 0");
  if (static_cast<std::int64_t>(members.size()) > kMaxFlowCollectiveGpus) {
    throw InputError("the flow fidelity runs every member's flows and is limited to " +
                     std::to_string(kMaxFlowCollectiveGpus) + " GPUs; this collective spans " +
                     std::to_string(members.size()) + " (use the closed form)");
  }
  if (op == CollectiveOp::broadcast || op == CollectiveOp::reduce) {
    throw InputError("the flow fidelity does not lower broadcast/reduce yet; use the closed form");
  }
}

/// What every algorithm's lowering reads: the collective, its members grouped by node (by_node), and the
/// task its transfers start after (`first`) and the one they all finish before (`done`).
struct LoweringFrame {
  sim::Dag& dag;
  Lowering& low;
  const ClusterSpec& cluster;
  CollectiveOp op;
  double bytes;
  std::size_t n;                                       ///< members
  const std::vector<std::vector<std::size_t>>& nodes;  ///< member positions by node; empty if unequal
  sim::TaskId first;
  sim::TaskId done;

  [[nodiscard]] std::size_t k() const { return nodes.empty() ? 0 : nodes.front().size(); }
  [[nodiscard]] std::int64_t m() const { return static_cast<std::int64_t>(nodes.size()); }
  /// Channels over the nodes: one per NIC up to the ranks on a node when the collective crosses nodes.
  [[nodiscard]] std::size_t channels() const {
    return std::min<std::size_t>(k(), static_cast<std::size_t>(std::max(cluster.nics_per_node(), 1)));
  }
};

/// Every member sends 1/n of the buffer to every other one. NCCL's sends between GPUs of a node reach
/// comm.all_to_all_bandwidth_fraction of NVLink, not the links' ring rate: lowered as the bytes that take
/// that long at the ring rate, as the in-switch lowering does (the trace's bytes show them so scaled).
void lower_all_to_all(const LoweringFrame& f) {
  const double share = f.bytes / static_cast<double>(f.n);
  const CommEfficiency& eff = f.cluster.node.comm;
  const double nccl = eff.nccl_all_to_all_fraction();
  const double nvlink_share = nccl > 0 ? share * eff.intra_bandwidth_fraction / nccl : share;
  for (std::size_t i = 0; i < f.n; ++i) {
    for (std::size_t j = 0; j < f.n; ++j) {
      if (i == j) continue;
      const double sent = f.low.same_node(i, j) ? nvlink_share : share;
      f.dag.depend(f.low.transfer(i, j, sent, f.first, f.first), f.done);
    }
  }
}

/// NVLS: every member pushes its buffer into the NVSwitch, which reduces it and multicasts the sum back,
/// so each GPU's link into the switch carries the buffer once and its link out of it once. Lowered as
/// one flow per member through the switch to the next member (that same load on every switch link), of
/// the bytes that make the links' rate the in-switch bandwidth (comm.in_switch_bandwidth_fraction of the
/// raw intra-node rate), after the switch's own latency (comm.in_switch_latency_s) beyond the route's;
/// no such latency task when the caller places the tasks.
void lower_in_switch(const LoweringFrame& f, GpuPaths& fabric, std::span<const std::int64_t> members,
                     double latency_scale, bool placed, const std::string& label) {
  const CommEfficiency& eff = f.cluster.node.comm;
  const double in_switch = intra_node_bytes_per_s(f.cluster.node) * eff.in_switch_bandwidth_fraction;
  const ClusterGraph& graph = fabric.graph();
  const double link = graph.route_bottleneck_bytes_per_s(graph.gpu(members[0]), graph.gpu(members[1]));
  sim::TaskId at_switch = f.first;
  const double extra = eff.in_switch_latency_s * latency_scale - fabric.gpu_latency_s(members[0], members[1]);
  if (!placed && extra > 0) {
    at_switch = f.dag.busy(f.low.latency_lane(), sim::Duration::from_seconds(extra), label + " in-switch");
    f.dag.depend(f.first, at_switch);
  }
  for (std::size_t i = 0; i < f.n; ++i) {
    f.dag.depend(f.low.transfer(i, (i + 1) % f.n, f.bytes * link / in_switch, at_switch, at_switch), f.done);
  }
}

/// Intra-node reduce-scatter, k inter-node rings on 1/k of the data, intra-node all-gather (an all-gather
/// skips the first stage, a reduce-scatter the last).
void lower_hierarchical(const LoweringFrame& f) {
  const std::size_t k = f.k();
  const std::int64_t m = f.m();
  const double intra_chunk = f.bytes / static_cast<double>(k);
  const double inter_chunk = intra_chunk / static_cast<double>(m);
  std::vector<std::vector<std::size_t>> rails(k);
  for (std::size_t l = 0; l < k; ++l) {
    for (const auto& node : f.nodes) rails[l].push_back(node[l]);
  }
  sim::TaskId at = f.first;
  if (f.op != CollectiveOp::all_gather)
    at = f.low.rings(f.nodes, static_cast<std::int64_t>(k) - 1, intra_chunk, at);
  at = f.low.rings(rails, f.op == CollectiveOp::all_reduce ? 2 * (m - 1) : m - 1, inter_chunk, at);
  if (f.op != CollectiveOp::reduce_scatter)
    at = f.low.rings(f.nodes, static_cast<std::int64_t>(k) - 1, intra_chunk, at);
  f.dag.depend(at, f.done);
}

/// Two trees of nodes per channel, each on half the buffer; a chain inside every node from the channel's
/// head GPU.
void lower_double_binary_tree(const LoweringFrame& f) {
  if (f.nodes.empty()) throw InputError("the flow fidelity lowers a tree only over equal ranks per node");
  const std::size_t k = f.k();
  const std::int64_t m = f.m();
  const std::size_t channels = m > 1 ? f.channels() : 1;
  const double per_tree = f.bytes / 2.0 / static_cast<double>(channels);
  const std::int64_t levels = tree_levels(m);
  const sim::TaskId first =
      m > 1 ? f.low.tree_network_excess(levels, f.nodes[0].front(), f.nodes[1].front(), f.first) : f.first;
  for (std::size_t c = 0; c < channels; ++c) {
    const std::size_t head = c * k / channels;
    for (int t = 0; t < 2; ++t) {
      std::vector<std::int64_t> parent(f.n, -1);
      for (std::int64_t j = 0; j < m; ++j) {
        const auto& node = f.nodes[static_cast<std::size_t>(j)];
        for (std::size_t i = 1; i < k; ++i)
          parent[node[(head + i) % k]] = static_cast<std::int64_t>(node[(head + i - 1) % k]);
        const std::int64_t up = dtree_parent(j, m, t);
        if (up >= 0)
          parent[node[head]] = static_cast<std::int64_t>(f.nodes[static_cast<std::size_t>(up)][head]);
      }
      f.low.tree(parent, per_tree, first, f.done);
    }
  }
}

/// Rabenseifner on the largest power of two p <= n; the n − p others fold onto partners first (and are
/// unfolded last).
void lower_halving_doubling(const LoweringFrame& f) {
  const std::size_t n = f.n;
  std::size_t p = 1;
  while (p * 2 <= n) p *= 2;
  Frontier frontier(n, f.first);
  std::vector<std::size_t> fold(n);
  for (std::size_t i = 0; i < n; ++i) fold[i] = i >= p ? i - p : i;
  if (p < n && f.op != CollectiveOp::all_gather) f.low.exchange(fold, f.bytes, frontier);
  std::vector<std::size_t> partner(n);
  auto round = [&](std::size_t distance) {
    for (std::size_t i = 0; i < n; ++i) partner[i] = i < p ? i ^ distance : i;
    f.low.exchange(partner, f.bytes / static_cast<double>(2 * distance), frontier);
  };
  if (f.op != CollectiveOp::all_gather) {
    for (std::size_t d = 1; d < p; d *= 2) round(d);
  }
  if (f.op != CollectiveOp::reduce_scatter) {
    for (std::size_t d = p / 2; d >= 1; d /= 2) round(d);
  }
  if (p < n && f.op != CollectiveOp::reduce_scatter) {
    std::vector<std::size_t> unfold(n);
    for (std::size_t i = 0; i < n; ++i) unfold[i] = i;
    for (std::size_t i = p; i < n; ++i) unfold[i - p] = i;
    f.low.exchange(unfold, f.bytes, frontier);
  }
  f.low.finish(frontier, f.done);
}

/// Rings, one per channel when they cross nodes with several ranks on each.
void lower_rings(const LoweringFrame& f) {
  const std::size_t n = f.n;
  const std::int64_t steps = (f.op == CollectiveOp::all_reduce ? 2 : 1) * (static_cast<std::int64_t>(n) - 1);
  const std::size_t channels = (f.m() > 1 && f.k() > 1) ? f.channels() : 1;
  std::vector<std::vector<std::size_t>> rings;
  for (std::size_t c = 0; c < channels; ++c) {
    if (channels == 1) {
      rings.emplace_back(n);
      for (std::size_t i = 0; i < n; ++i) rings.back()[i] = i;
    } else {
      rings.push_back(channel_ring(f.nodes, c, channels));
    }
  }
  const double chunk = f.bytes / static_cast<double>(n) / static_cast<double>(channels);
  f.dag.depend(f.low.rings(rings, steps, chunk, f.first), f.done);
}

}  // namespace

LoweredCollective lower_collective(sim::Dag& dag, GpuPaths& fabric, const ClusterSpec& cluster,
                                   CollectiveOp op, double bytes, std::span<const std::int64_t> members,
                                   CollectiveAlgo algo, std::string_view name, CollectiveProtocol protocol,
                                   std::optional<LoweringLane> placed) {
  check_lowerable(op, bytes, members, name);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  for (std::int64_t g : members) (void)fabric.graph().gpu(g);  // throws for GPUs outside the cluster
  const CommGroup group = group_of(members, cluster);
  const CollectiveAlgo run = estimate_collective(op, std::max(bytes, 1.0), group, cluster, algo).algo;
  const auto nodes = by_node(members, gpn);
  LoweredCollective out;
  const std::string label(name);
  const sim::LaneId lane = placed ? placed->lane : dag.lane(label);
  out.start = dag.join(lane, label + " start");
  out.done = dag.join(lane, label + " done");
  sim::TaskId first = out.start;
  const double fixed = placed ? 0.0
                              : cluster.node.comm.base_latency_s +
                                    (group.nodes > 1 ? cluster.node.comm.net_base_latency_s : 0.0);
  if (fixed > 0) {
    first = dag.busy(dag.lane(label + " launch"), sim::Duration::from_seconds(fixed), label + " launch");
    dag.depend(out.start, first);
  }
  const std::size_t n = members.size();
  const ProtocolScale scale = protocol_scale(protocol, cluster.node.comm);
  Lowering low(dag, fabric, cluster, members, name, 1.0 / scale.bandwidth, protocol, placed);
  const LoweringFrame frame{dag, low, cluster, op, bytes, n, nodes, first, out.done};
  if (n < 2 || bytes == 0) {
    dag.depend(first, out.done);
  } else if (op == CollectiveOp::send_recv) {
    if (n != 2) throw InputError("send-recv needs exactly two members");
    dag.depend(low.transfer(0, 1, bytes, first, first), out.done);
  } else if (op == CollectiveOp::all_to_all) {
    lower_all_to_all(frame);
  } else if (run == CollectiveAlgo::in_switch) {
    lower_in_switch(frame, fabric, members, scale.latency, placed.has_value(), label);
  } else if (run == CollectiveAlgo::hierarchical && frame.m() > 1 && frame.k() > 1) {
    lower_hierarchical(frame);
  } else if (run == CollectiveAlgo::double_binary_tree) {
    lower_double_binary_tree(frame);
  } else if (run == CollectiveAlgo::halving_doubling) {
    lower_halving_doubling(frame);
  } else {
    lower_rings(frame);
  }
  out.transfers = low.transfers();
  return out;
}

std::vector<sim::Duration> simulate_collectives(const ClusterGraph& graph, const ClusterSpec& cluster,
                                                std::span<const CollectiveCall> calls) {
  for (const CollectiveCall& call : calls) {
    if (call.protocol != calls.front().protocol)
      throw InputError("collectives simulated together must share one protocol");
  }
  const double latency_scale =
      calls.empty() ? 1.0 : protocol_scale(calls.front().protocol, cluster.node.comm).latency;
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  FabricFlows fabric(graph, network, latency_scale);
  sim::Dag dag;
  std::vector<LoweredCollective> lowered;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CollectiveCall& call = calls[i];
    lowered.push_back(lower_collective(dag, fabric, cluster, call.op, call.bytes, call.members, call.algo,
                                       "collective " + std::to_string(i), call.protocol));
  }
  const sim::DagResult result = sim::execute(dag, engine, &network);
  std::vector<sim::Duration> durations;
  durations.reserve(lowered.size());
  for (const LoweredCollective& l : lowered) {
    durations.push_back(result.tasks[l.done].end - result.tasks[l.start].start);
  }
  return durations;
}

}  // namespace trainsim::topo
