// Lowering collectives into engine flows. Every ring step is one transfer per sending rank; dependencies
// carry the ring's data flow (a rank forwards only what it has received), so contention on one link delays
// exactly the ranks downstream of it.
#include "topologies/collective_flows.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace trainsim::topo {

FabricFlows::FabricFlows(const ClusterGraph& graph, sim::FlowNetwork& network)
    : graph_(&graph), network_(&network), base_(static_cast<sim::LinkId>(network.link_count())) {
  for (std::size_t i = 0; i < graph.link_count(); ++i) {
    const Link& l = graph.link(static_cast<LinkIndex>(i));
    network.add_link(l.bytes_per_s, sim::Duration::from_seconds(l.latency_s));
  }
}

std::span<const sim::LinkId> FabricFlows::gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) {
  const std::span<const LinkIndex> route = graph_->route(graph_->gpu(from_gpu), graph_->gpu(to_gpu));
  scratch_.resize(route.size());
  for (std::size_t i = 0; i < route.size(); ++i) scratch_[i] = base_ + route[i];
  return scratch_;
}

namespace {

/// The last send and the last receive of every member: what its next send waits for.
struct Frontier {
  std::vector<sim::TaskId> send;
  std::vector<sim::TaskId> recv;
  Frontier(std::size_t n, sim::TaskId start) : send(n, start), recv(n, start) {}
};

class Lowering {
 public:
  Lowering(sim::Dag& dag, FabricFlows& fabric, std::span<const std::int64_t> members, std::string_view name)
      : dag_(dag), fabric_(fabric), members_(members), lane_(dag.lane(name)), name_(name) {}

  /// `steps` steps of a ring over member positions `ring`, each rank sending `chunk` bytes to the next.
  void ring(const std::vector<std::size_t>& ring, std::int64_t steps, double chunk, Frontier& f) {
    const std::size_t r = ring.size();
    if (r < 2) return;
    std::vector<sim::TaskId> sent(r);
    for (std::int64_t s = 0; s < steps; ++s) {
      for (std::size_t i = 0; i < r; ++i) {
        const std::size_t from = ring[i];
        const std::size_t to = ring[(i + 1) % r];
        sent[i] = transfer(from, to, chunk, f.send[from], f.recv[from]);
      }
      for (std::size_t i = 0; i < r; ++i) {
        f.send[ring[i]] = sent[i];
        f.recv[ring[(i + 1) % r]] = sent[i];
      }
    }
  }

  sim::TaskId transfer(std::size_t from, std::size_t to, double bytes, sim::TaskId after_a,
                       sim::TaskId after_b) {
    const sim::TaskId t = dag_.transfer(lane_, fabric_.gpu_path(members_[from], members_[to]), bytes, name_);
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
  sim::Dag& dag_;
  FabricFlows& fabric_;
  std::span<const std::int64_t> members_;
  sim::LaneId lane_;
  std::string_view name_;
  std::size_t transfers_ = 0;
};

/// Member positions grouped by node, nodes in order of first appearance; empty when nodes hold different
/// numbers of members (no hierarchy or channels then).
std::vector<std::vector<std::size_t>> by_node(std::span<const std::int64_t> members,
                                              std::int64_t gpus_per_node) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::int64_t> node_ids;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::int64_t node = members[i] / gpus_per_node;
    const auto it = std::find(node_ids.begin(), node_ids.end(), node);
    if (it == node_ids.end()) {
      node_ids.push_back(node);
      groups.push_back({i});
    } else {
      groups[static_cast<std::size_t>(it - node_ids.begin())].push_back(i);
    }
  }
  for (const auto& g : groups) {
    if (g.size() != groups.front().size()) return {};
  }
  return groups;
}

}  // namespace

LoweredCollective lower_collective(sim::Dag& dag, FabricFlows& fabric, const ClusterSpec& cluster,
                                   CollectiveOp op, double bytes, std::span<const std::int64_t> members,
                                   CollectiveAlgo algo, std::string_view name) {
  if (members.empty()) throw InputError("collective '" + std::string(name) + "' has no members");
  if (!(bytes >= 0)) throw InputError("collective size must be >= 0");
  if (op == CollectiveOp::broadcast || op == CollectiveOp::reduce) {
    throw InputError("the flow fidelity does not lower broadcast/reduce yet; use the closed form");
  }
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  for (std::int64_t g : members) (void)fabric.graph().gpu(g);  // throws for GPUs outside the cluster
  const auto nodes = by_node(members, gpn);
  std::int64_t node_count = 0;
  {
    std::vector<std::int64_t> seen;
    for (std::int64_t g : members) seen.push_back(g / gpn);
    std::sort(seen.begin(), seen.end());
    node_count = std::unique(seen.begin(), seen.end()) - seen.begin();
  }
  LoweredCollective out;
  const std::string label(name);
  out.start = dag.join(dag.lane(label), label + " start");
  out.done = dag.join(dag.lane(label), label + " done");
  sim::TaskId first = out.start;
  const double fixed =
      cluster.node.comm.base_latency_s + (node_count > 1 ? cluster.node.comm.net_base_latency_s : 0.0);
  if (fixed > 0) {
    first = dag.busy(dag.lane(label + " launch"), sim::Duration::from_seconds(fixed), label + " launch");
    dag.depend(out.start, first);
  }
  const std::size_t n = members.size();
  Lowering low(dag, fabric, members, name);
  std::vector<Frontier> frontiers;
  if (n < 2 || bytes == 0) {
    frontiers.emplace_back(n, first);
  } else if (op == CollectiveOp::send_recv) {
    if (n != 2) throw InputError("send-recv needs exactly two members");
    frontiers.emplace_back(n, first);
    frontiers[0].recv[1] = low.transfer(0, 1, bytes, first, first);
  } else if (op == CollectiveOp::all_to_all) {
    frontiers.emplace_back(n, first);
    const double share = bytes / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (i != j) dag.depend(low.transfer(i, j, share, first, first), out.done);
      }
    }
  } else {
    const bool all_reduce = op == CollectiveOp::all_reduce;
    const std::size_t k = nodes.empty() ? 0 : nodes.front().size();
    const auto m = static_cast<std::int64_t>(nodes.size());
    if (algo == CollectiveAlgo::hierarchical && m > 1 && k > 1) {
      // Intra-node reduce-scatter, k inter-node rings on 1/k of the data, intra-node all-gather.
      frontiers.emplace_back(n, first);
      Frontier& f = frontiers.back();
      const double intra_chunk = bytes / static_cast<double>(k);
      const double inter_chunk = intra_chunk / static_cast<double>(m);
      auto intra = [&] {
        for (const auto& node : nodes) low.ring(node, static_cast<std::int64_t>(k) - 1, intra_chunk, f);
      };
      auto inter = [&](std::int64_t steps) {
        for (std::size_t l = 0; l < k; ++l) {
          std::vector<std::size_t> rail;
          for (const auto& node : nodes) rail.push_back(node[l]);
          low.ring(rail, steps, inter_chunk, f);
        }
      };
      if (op != CollectiveOp::all_gather) intra();
      inter(all_reduce ? 2 * (m - 1) : m - 1);
      if (op != CollectiveOp::reduce_scatter) intra();
    } else {
      // Flat ring, one per channel when it crosses nodes with several ranks on each.
      const std::int64_t steps = (all_reduce ? 2 : 1) * (static_cast<std::int64_t>(n) - 1);
      const std::size_t channels =
          (m > 1 && k > 1)
              ? std::min<std::size_t>(k, static_cast<std::size_t>(std::max(cluster.nics_per_node(), 1)))
              : 1;
      const double chunk = bytes / static_cast<double>(n) / static_cast<double>(channels);
      for (std::size_t c = 0; c < channels; ++c) {
        std::vector<std::size_t> order;
        if (channels == 1) {
          for (std::size_t i = 0; i < n; ++i) order.push_back(i);
        } else {
          const std::size_t shift = c * k / channels;
          for (const auto& node : nodes) {
            for (std::size_t i = 0; i < k; ++i) order.push_back(node[(i + shift) % k]);
          }
        }
        frontiers.emplace_back(n, first);
        low.ring(order, steps, chunk, frontiers.back());
      }
    }
  }
  for (const Frontier& f : frontiers) low.finish(f, out.done);
  out.transfers = low.transfers();
  return out;
}

std::vector<sim::Duration> simulate_collectives(const ClusterGraph& graph, const ClusterSpec& cluster,
                                                std::span<const CollectiveCall> calls) {
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  FabricFlows fabric(graph, network);
  sim::Dag dag;
  std::vector<LoweredCollective> lowered;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CollectiveCall& call = calls[i];
    lowered.push_back(lower_collective(dag, fabric, cluster, call.op, call.bytes, call.members, call.algo,
                                       "collective " + std::to_string(i)));
  }
  const sim::DagResult result = sim::execute(dag, engine, &network);
  std::vector<sim::Duration> durations;
  for (const LoweredCollective& l : lowered) {
    durations.push_back(result.tasks[l.done].end - result.tasks[l.start].start);
  }
  return durations;
}

}  // namespace trainsim::topo
