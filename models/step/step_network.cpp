#include "models/step/step_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

namespace {

constexpr sim::LinkId kNone = std::numeric_limits<sim::LinkId>::max();

sim::Duration dur(double seconds) {
  return sim::Duration::from_seconds(std::max(0.0, seconds));
}

}  // namespace

StepNetwork::StepNetwork(const topo::ClusterSpec& cluster, const StepCosts& costs, StepLayout layout,
                         bool contention, FabricRoutes routes)
    : StepNetwork(cluster, layout.instances * layout.stages, contention) {
  TRAINSIM_CHECK(
      layout.instances >= 1 && layout.stages >= 1 && layout.replicas >= 1 &&
          layout.instances % layout.replicas == 0,
      "step network: a layout needs instances, stages and replicas >= 1, replicas dividing instances");
  layout_ = layout;
  p2p_s_ = costs.p2p_s;
  p2p_latency_s_ = costs.p2p_latency_s;
  dp_fabric_ = costs.dp_crosses_nodes ? Fabric::network : Fabric::nvlink;
  stage_node_ = costs.stage_node;
  if (routes.graph) {
    TRAINSIM_CHECK(
        gpus_ > 0 && !routes.gpus.empty() && routes.gpus.size() % static_cast<std::size_t>(gpus_) == 0,
        "step network: routes need the cluster GPUs of every simulated GPU");
    model_ranks_ = static_cast<int>(routes.gpus.size() / static_cast<std::size_t>(gpus_));
    TRAINSIM_CHECK(routes.tp >= 1 && routes.cp >= 1 && routes.ep >= 1 &&
                       routes.tp * routes.cp * routes.ep == model_ranks_,
                   "step network: the routes' tp · cp · ep must be the model-parallel ranks");
    graph_links_.assign(routes.graph->link_count(), kNone);
    cluster_ = cluster;
    routes_ = std::move(routes);
  }
}

StepNetwork::StepNetwork(const topo::ClusterSpec& cluster, int gpus, bool contention)
    : contention_(contention),
      gpus_(gpus),
      ports_(static_cast<std::size_t>(gpus) * kPorts, kNone),
      last_(static_cast<std::size_t>(gpus) * kStreams, 0) {
  layout_.stages = std::max(1, gpus);
  TRAINSIM_CHECK(gpus >= 0, "a step network needs a GPU count >= 0");
  // The closed form's per-GPU rates (topologies/collective_cost.hpp), so that a flow alone takes exactly its
  // closed-form bandwidth term. Network: the inter-node tier of a group with one GPU on each node while
  // every GPU of the node crosses too (each GPU's share of the NICs, capped by its rail and PCIe link).
  if (cluster.nics_per_node() > 0 && cluster.nic_bytes_per_s() > 0) {
    topo::CommGroup one_per_node;
    one_per_node.size = 2;
    one_per_node.nodes = 2;
    one_per_node.groups_sharing_nics = std::max(1, cluster.gpus_in_use_per_node());
    network_bytes_per_s_ = topo::inter_node_tier(one_per_node, cluster).bytes_per_s;
  }
  if (topo::intra_node_bytes_per_s(cluster.node) > 0) {
    nvlink_bytes_per_s_ = topo::intra_node_tier(cluster).bytes_per_s;
  }
}

sim::LinkId StepNetwork::port(int gpu, Port which) {
  TRAINSIM_CHECK(gpu >= 0 && gpu < gpus_, "step network: GPU out of range");
  sim::LinkId& id = ports_[static_cast<std::size_t>(gpu) * kPorts + which];
  if (id == kNone) {
    const bool network = which == network_out || which == network_in;
    id = static_cast<sim::LinkId>(links_.size());
    links_.push_back({.bytes_per_s = network ? network_bytes_per_s_ : nvlink_bytes_per_s_,
                      .port = static_cast<std::int64_t>(gpu) * kPorts + which});
  }
  return id;
}

sim::LinkId StepNetwork::graph_link(topo::LinkIndex index) {
  sim::LinkId& id = graph_links_[index];
  if (id == kNone) {
    id = static_cast<sim::LinkId>(links_.size());
    links_.push_back(
        {.bytes_per_s = routes_.graph->link(index).bytes_per_s, .port = -1, .graph_link = index});
  }
  return id;
}

std::string StepNetwork::link_name(sim::LinkId link) const {
  const LinkSpec& spec = links_.at(link);
  if (spec.port >= 0) {
    static constexpr const char* kNames[] = {"network out", "network in", "nvlink out", "nvlink in"};
    return fmt::format("gpu {} {}", spec.port / kPorts, kNames[spec.port % kPorts]);
  }
  const topo::ClusterGraph& g = *routes_.graph;
  const topo::Link& l = g.link(spec.graph_link);
  auto device = [&](topo::DeviceId d) {
    const topo::Device& dev = g.device(d);
    return dev.node >= 0 ? fmt::format("node {} {} {}", dev.node, topo::to_string(dev.kind), dev.index)
                         : fmt::format("{} {}", topo::to_string(dev.kind), dev.index);
  };
  return device(l.from) + " -> " + device(l.to);
}

std::int64_t StepNetwork::cluster_gpu(int instance, int k, int stage) const {
  const auto r = static_cast<std::size_t>(model_ranks_);
  const auto stages = static_cast<std::size_t>(layout_.stages);
  return routes_.gpus[(static_cast<std::size_t>(instance) * r + static_cast<std::size_t>(k)) * stages +
                      static_cast<std::size_t>(stage)];
}

const topo::ClusterGraph& StepNetwork::graph() const {
  TRAINSIM_CHECK(routed(), "step network: no cluster graph without routes");
  return *routes_.graph;
}

double StepNetwork::gpu_latency_s(std::int64_t /*from_gpu*/, std::int64_t /*to_gpu*/) const {
  return 0.0;  // a step's transfer pays its closed-form latency before its flows
}

std::span<const sim::LinkId> StepNetwork::gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) {
  const topo::ClusterGraph& g = graph();
  path_.clear();
  for (topo::LinkIndex l : g.route(g.gpu(from_gpu), g.gpu(to_gpu))) path_.push_back(graph_link(l));
  return path_;
}

std::vector<std::vector<std::int64_t>> StepNetwork::data_parallel_groups(int stage, DataGroup over) const {
  const int replicas = layout_.instances;
  const int shard = over == DataGroup::gradient || routes_.shard <= 0 ? replicas : routes_.shard;
  std::vector<std::vector<std::int64_t>> groups;
  if (over == DataGroup::expert_gradient || over == DataGroup::expert_shard) {
    // A GPU's expert-data-parallel group is every GPU that shares its tp index inside an expert (t mod
    // expert_tp), its expert-parallel position and, for a sharding group, its replica. The position is the
    // ep index on its own axis; folded, x mod ep of its index x over (tp/expert_tp) × cp × the sharding part,
    // in that order (communicators.cpp: the ep group is the first ep of them).
    const int tp = routes_.tp, cp = routes_.cp;
    const int etp = routes_.expert_tp > 0 ? routes_.expert_tp : tp;
    const int fold = routes_.folded_ep;
    const int positions = fold > 1 ? fold : routes_.ep;
    const int sharding_groups = over == DataGroup::expert_shard ? replicas / shard : 1;
    groups.resize(static_cast<std::size_t>(etp) * static_cast<std::size_t>(positions) *
                  static_cast<std::size_t>(sharding_groups));
    for (int d = 0; d < replicas; ++d) {
      for (int k = 0; k < model_ranks_; ++k) {
        const int t = k % tp, c = (k / tp) % cp, e = k / (tp * cp);
        const int x = t / etp + (tp / etp) * (c + cp * (d % shard));
        const int position = fold > 1 ? x % fold : e;
        const int group = t % etp + etp * (position + positions * (d / shard % sharding_groups));
        groups[static_cast<std::size_t>(group)].push_back(cluster_gpu(d, k, stage));
      }
    }
    for (auto& members : groups) std::sort(members.begin(), members.end());
    return groups;
  }
  if (over == DataGroup::replicas) {
    // Instance d holds position d % shard of sharding group d / shard (full_cluster_gpus' numbering).
    for (int k = 0; k < model_ranks_; ++k) {
      for (int j = 0; j < shard; ++j) {
        std::vector<std::int64_t>& members = groups.emplace_back();
        for (int d = j; d < replicas; d += shard) members.push_back(cluster_gpu(d, k, stage));
        std::sort(members.begin(), members.end());
      }
    }
    return groups;
  }
  for (int t = 0; t < routes_.tp; ++t) {
    for (int first = 0; first < replicas; first += shard) {
      std::vector<std::int64_t>& members = groups.emplace_back();
      for (int d = first; d < first + shard; ++d) {
        for (int k = t; k < model_ranks_; k += routes_.tp) members.push_back(cluster_gpu(d, k, stage));
      }
      std::sort(members.begin(), members.end());
    }
  }
  return groups;
}

std::vector<std::vector<std::int64_t>> StepNetwork::model_groups(int instance, int stage,
                                                                 CommGroup group) const {
  TRAINSIM_CHECK(group == CommGroup::cp || group == CommGroup::ep || group == CommGroup::expert_tp_ep,
                 "step network: only context- and expert-parallel groups are routed inside a replica");
  const int tp = routes_.tp, cp = routes_.cp, ep = routes_.ep;
  auto rank = [&](int t, int c, int e) { return cluster_gpu(instance, t + tp * (c + cp * e), stage); };
  std::vector<std::vector<std::int64_t>> groups;
  if (group == CommGroup::expert_tp_ep) {  // unfolded, an expert is split over the whole tp group
    for (int c = 0; c < cp; ++c) {
      std::vector<std::int64_t>& members = groups.emplace_back();
      for (int e = 0; e < ep; ++e) {
        for (int t = 0; t < tp; ++t) members.push_back(rank(t, c, e));
      }
    }
    return groups;
  }
  for (int t = 0; t < tp; ++t) {
    for (int other = 0; other < (group == CommGroup::cp ? ep : cp); ++other) {
      std::vector<std::int64_t>& members = groups.emplace_back();
      if (group == CommGroup::cp) {
        for (int c = 0; c < cp; ++c) members.push_back(rank(t, c, other));
      } else {
        for (int e = 0; e < ep; ++e) members.push_back(rank(t, other, e));
      }
    }
  }
  return groups;
}

sim::TaskId StepNetwork::routed_collective(sim::Dag& dag, sim::LaneId lane, sim::TaskId after,
                                           const RoutedCollective& flows,
                                           std::span<const std::int64_t> members, std::string_view name) {
  const topo::LoweringLane at{lane};
  if (flows.op != topo::CollectiveOp::send_recv) {
    bind(dag);
    std::vector<LoweredOnce>& on_lane = lowered_[lane];
    for (const LoweredOnce& l : on_lane) {
      if (l.op != flows.op || l.bytes != flows.bytes || l.algo != flows.algo ||
          l.protocol != flows.protocol || !std::ranges::equal(l.members, members))
        continue;
      const sim::TaskId copy = dag.repeat(l.first, l.end, l.edge_first, l.edge_end, l.name, name);
      dag.depend(after, l.start - l.first + copy);
      return l.done - l.first + copy;
    }
    const auto first = static_cast<sim::TaskId>(dag.size());
    const std::size_t edge_first = dag.edge_count();
    const topo::LoweredCollective c = topo::lower_collective(dag, *this, cluster_, flows.op, flows.bytes,
                                                             members, flows.algo, name, flows.protocol, at);
    on_lane.push_back({.op = flows.op,
                       .algo = flows.algo,
                       .protocol = flows.protocol,
                       .bytes = flows.bytes,
                       .members = {members.begin(), members.end()},
                       .first = first,
                       .end = static_cast<sim::TaskId>(dag.size()),
                       .start = c.start,
                       .done = c.done,
                       .edge_first = edge_first,
                       .edge_end = dag.edge_count(),
                       .name = std::string(name)});
    dag.depend(after, c.start);
    return c.done;
  }
  // A ring exchange: every member sends to its successor at once.
  const sim::TaskId done = dag.join(lane, name);
  const std::size_t n = members.size();
  for (std::size_t i = 0; n > 1 && i < n; ++i) {
    const std::int64_t pair[2] = {members[i], members[(i + 1) % n]};
    const topo::LoweredCollective c = topo::lower_collective(dag, *this, cluster_, flows.op, flows.bytes,
                                                             pair, flows.algo, name, flows.protocol, at);
    dag.depend(after, c.start);
    dag.depend(c.done, done);
  }
  if (n <= 1) dag.depend(after, done);
  return done;
}

LoweredTransfer StepNetwork::chain(sim::Dag& dag, int instance, int stage, Stream stream, LoweredTransfer t) {
  return in_order(dag, instance * layout_.stages + stage, stream, t);
}

LoweredTransfer StepNetwork::lower_routed(sim::Dag& dag, sim::LaneId lane, int from, int to, double latency,
                                          double bytes, std::string_view name, std::string_view category) {
  // Simulated GPU i·stages + s stands for cluster GPUs (i·r + k)·stages + s, k < r.
  const int stages = layout_.stages;
  scratch_.assign(name);
  scratch_ += " latency";
  LoweredTransfer out;
  out.first = dag.busy(lane, dur(latency), scratch_, category);
  out.last = model_ranks_ > 1 ? dag.join(lane, name, category) : out.first;
  // The ranks' routes between the two GPUs, found the first time they send to each other; kept once that
  // send's flows exist.
  bind(dag);
  const std::int64_t pair = static_cast<std::int64_t>(from) * gpus_ + to;
  const auto sent = sends_.find(pair);
  const bool first_send = sent == sends_.end();
  const auto first_flow = static_cast<sim::TaskId>(dag.size());
  for (int k = 0; k < model_ranks_; ++k) {
    sim::TaskId flow = 0;
    if (first_send) {
      const std::span<const sim::LinkId> path =
          gpu_path(cluster_gpu(from / stages, k, from % stages), cluster_gpu(to / stages, k, to % stages));
      flow = dag.transfer(lane, path, bytes, name, category);
    } else {
      flow = dag.transfer_like(sent->second + static_cast<sim::TaskId>(k), lane, bytes, name, category);
    }
    dag.depend(out.first, flow);
    if (model_ranks_ > 1) {
      dag.depend(flow, out.last);
    } else {
      out.last = flow;
    }
  }
  if (first_send) sends_.emplace(pair, first_flow);
  return out;
}

void StepNetwork::forget_lowered() {
  dag_ = nullptr;
  lowered_ = {};
  sends_ = {};
}

void StepNetwork::bind(const sim::Dag& dag) {
  if (dag_ == nullptr) dag_ = &dag;
  TRAINSIM_CHECK(
      dag_ == &dag,
      "StepNetwork: its routed transfers and collectives are repeated from one Dag; this is another");
}

LoweredTransfer StepNetwork::in_order(sim::Dag& dag, int gpu, Stream stream, LoweredTransfer t) {
  sim::TaskId& last = last_[static_cast<std::size_t>(gpu) * kStreams + static_cast<std::size_t>(stream)];
  if (last != 0) dag.depend(last - 1, t.first);
  last = t.last + 1;
  return t;
}

void StepNetwork::after(int instance, int stage, Stream stream, sim::TaskId task) {
  const int gpu = instance * layout_.stages + stage;
  TRAINSIM_CHECK(gpu >= 0 && gpu < gpus_, "step network: GPU out of range");
  last_[static_cast<std::size_t>(gpu) * kStreams + static_cast<std::size_t>(stream)] = task + 1;
}

LoweredTransfer StepNetwork::dp_collective(sim::Dag& dag, sim::LaneId lane, int instance, int stage,
                                           double seconds, double latency_s, std::string_view name,
                                           std::string_view category, Stream stream) {
  const int per_replica = layout_.instances / layout_.replicas;
  const int next = ((instance / per_replica + 1) % layout_.replicas) * per_replica + instance % per_replica;
  const int from = instance * layout_.stages + stage;
  const int to = next * layout_.stages + stage;
  return in_order(dag, from, stream,
                  lower(dag, lane, from, to, dp_fabric_, seconds, latency_s, name, category));
}

LoweredTransfer StepNetwork::pp_send(sim::Dag& dag, sim::LaneId lane, int instance, int from_stage,
                                     int to_stage, std::string_view name, std::string_view category) {
  const bool placed = stage_node_.size() == static_cast<std::size_t>(layout_.stages);
  const Fabric fabric = placed && stage_node_[static_cast<std::size_t>(from_stage)] !=
                                      stage_node_[static_cast<std::size_t>(to_stage)]
                            ? Fabric::network
                            : Fabric::nvlink;
  const int from = instance * layout_.stages + from_stage;
  const int to = instance * layout_.stages + to_stage;
  return in_order(dag, from, Stream::pipeline,
                  lower(dag, lane, from, to, fabric, p2p_s_, p2p_latency_s_, name, category));
}

LoweredTransfer StepNetwork::lower(sim::Dag& dag, sim::LaneId lane, int from, int to, Fabric fabric,
                                   double seconds, double latency_s, std::string_view name,
                                   std::string_view category) {
  const double rate = port_bandwidth(fabric);
  const auto [latency, bandwidth_s] = split_latency(seconds, latency_s);
  if (!contention_ || !(rate > 0) || !(bandwidth_s > 0)) {
    const sim::TaskId t = dag.busy(lane, dur(seconds), name, category);
    return {t, t};
  }
  if (routed()) return lower_routed(dag, lane, from, to, latency, bandwidth_s * rate, name, category);
  const bool network = fabric == Fabric::network;
  const sim::LinkId path[2] = {port(from, network ? network_out : nvlink_out),
                               port(to, network ? network_in : nvlink_in)};
  // Both ports of one fabric have the same rate, so alone the flow moves at `rate` and takes bandwidth_s.
  const sim::TaskId flow = dag.transfer(lane, path, bandwidth_s * rate, name, category);
  if (latency <= 0) return {flow, flow};
  scratch_.assign(name);
  scratch_ += " latency";
  const sim::TaskId first = dag.busy(lane, dur(latency), scratch_, category);
  dag.depend(first, flow);
  return {first, flow};
}

void StepNetwork::install(sim::FlowNetwork& network) const {
  if (network.link_count() != 0) {
    throw InputError("a step network must be installed in an empty flow network");
  }
  network.reserve_links(links_.size());
  for (const LinkSpec& l : links_) network.add_link(l.bytes_per_s, sim::Duration{});
}

}  // namespace trainsim::model
