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
    graph_links_.assign(routes.graph->link_count(), kNone);
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
    static constexpr const char* kNames[] = {"network out", "network in", "nvlink out", "nvlink in"};
    const bool network = which == network_out || which == network_in;
    id = static_cast<sim::LinkId>(links_.size());
    links_.push_back(
        {network ? network_bytes_per_s_ : nvlink_bytes_per_s_, fmt::format("gpu {} {}", gpu, kNames[which])});
  }
  return id;
}

sim::LinkId StepNetwork::graph_link(topo::LinkIndex index) {
  sim::LinkId& id = graph_links_[index];
  if (id == kNone) {
    const topo::ClusterGraph& g = *routes_.graph;
    const topo::Link& l = g.link(index);
    auto device = [&](topo::DeviceId d) {
      const topo::Device& dev = g.device(d);
      return dev.node >= 0 ? fmt::format("node {} {} {}", dev.node, topo::to_string(dev.kind), dev.index)
                           : fmt::format("{} {}", topo::to_string(dev.kind), dev.index);
    };
    id = static_cast<sim::LinkId>(links_.size());
    links_.push_back({l.bytes_per_s, device(l.from) + " -> " + device(l.to)});
  }
  return id;
}

LoweredTransfer StepNetwork::lower_routed(sim::Dag& dag, sim::LaneId lane, int from, int to, double latency,
                                          double bytes, std::string_view name, std::string_view category) {
  const topo::ClusterGraph& g = *routes_.graph;
  // Simulated GPU i·stages + s stands for cluster GPUs (i·r + k)·stages + s, k < r.
  auto cluster_gpu = [&](int gpu, int k) {
    const auto stages = static_cast<std::size_t>(layout_.stages);
    const auto i = static_cast<std::size_t>(gpu) / stages;
    const auto s = static_cast<std::size_t>(gpu) % stages;
    return g.gpu(
        routes_
            .gpus[(i * static_cast<std::size_t>(model_ranks_) + static_cast<std::size_t>(k)) * stages + s]);
  };
  scratch_.assign(name);
  scratch_ += " latency";
  LoweredTransfer out;
  out.first = dag.busy(lane, dur(latency), scratch_, category);
  out.last = model_ranks_ > 1 ? dag.join(lane, name, category) : out.first;
  for (int k = 0; k < model_ranks_; ++k) {
    path_.clear();
    for (topo::LinkIndex l : g.route(cluster_gpu(from, k), cluster_gpu(to, k)))
      path_.push_back(graph_link(l));
    const sim::TaskId flow = dag.transfer(lane, path_, bytes, name, category);
    dag.depend(out.first, flow);
    if (model_ranks_ > 1) {
      dag.depend(flow, out.last);
    } else {
      out.last = flow;
    }
  }
  return out;
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
  const double latency = std::clamp(latency_s, 0.0, std::max(0.0, seconds));
  const double bandwidth_s = std::max(0.0, seconds) - latency;
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
  for (const LinkSpec& l : links_) network.add_link(l.bytes_per_s, sim::Duration{}, l.name);
}

}  // namespace trainsim::model
