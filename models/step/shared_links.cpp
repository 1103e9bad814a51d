// The collapsed step's fabric beyond the NICs (the reasoning: the header).
#include "models/step/shared_links.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"
#include "sim/error.hpp"
#include "topologies/collective_flows.hpp"
#include "topologies/fabric_load.hpp"

namespace trainsim::model {

namespace {

// The slowdown is a ratio of bandwidth terms, each proportional to the bytes for a ring, an all-to-all or a
// send; trees add a slice of at most 128 KiB per edge. It is measured at one size for every call.
constexpr double kReferenceBytes = 1024.0 * 1024 * 1024;

// Everything ClusterGraph::build and the lowering read of a cluster.
std::string fabric_key(const topo::ClusterSpec& c) {
  const topo::NodeSpec& n = c.node;
  std::string key = fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", n.name, c.nodes,
      c.gpus_in_use_per_node(), static_cast<int>(n.fabric), topo::intra_node_bytes_per_s(n),
      n.intra_latency_s, n.pcie_bytes_per_s, c.nics_per_node(), c.nic_bytes_per_s(),
      n.comm.nic_bandwidth_fraction, n.comm.intra_bandwidth_fraction, n.comm.all_to_all_bandwidth_fraction,
      n.comm.ll_bandwidth_fraction, n.comm.ll128_bandwidth_fraction, n.comm.nic_latency_s,
      static_cast<int>(c.network.topology), c.network.oversubscription, c.network.rail_optimized,
      c.network.switch_radix, c.network.switch_latency_s, c.background_fraction);
  for (int d : c.network.torus_dims) key += fmt::format(",{}", d);
  return key;
}

std::string placement_key(const PlanPlacement& placed) {
  std::string key;
  for (std::size_t a = 0; a < placed.placement.axis_count(); ++a)
    key += fmt::format("{},", placed.placement.axis_size(a));
  for (std::size_t at : placed.at) key += fmt::format("@{}", at);
  return key;
}

// The placement axes a traffic's groups span (pipeline sends: none, they pair ranks along pp).
std::vector<std::size_t> group_axes(const PlanPlacement& placed, FabricTraffic traffic) {
  const std::size_t dp_shard = placed.axis(ParallelAxis::dp);
  switch (traffic) {
    case FabricTraffic::gradient:
      return {dp_shard, dp_shard + 1, placed.axis(ParallelAxis::cp), placed.axis(ParallelAxis::ep)};
    case FabricTraffic::shard:
      return {dp_shard, placed.axis(ParallelAxis::cp), placed.axis(ParallelAxis::ep)};
    case FabricTraffic::replicas:
      return {dp_shard + 1};
    case FabricTraffic::context:
    case FabricTraffic::context_ring:
      return {placed.axis(ParallelAxis::cp)};
    case FabricTraffic::expert:
      return {placed.axis(ParallelAxis::ep)};
    case FabricTraffic::expert_dispatch:
      return {placed.axis(ParallelAxis::tp), placed.axis(ParallelAxis::ep)};
    case FabricTraffic::pipeline_send:
      return {};
  }
  return {};
}

struct Memo {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<topo::FabricGraphs>> graphs;  // a few clusters at a time
  std::unordered_map<std::string, std::optional<double>> slowdowns;
};

Memo& memo() {
  static Memo m;
  return m;
}

// The slowdown of every group of `traffic` running `op` at once, on the memoised graphs of `fabric`.
std::optional<double> measure(Memo& m, const std::string& fabric, const ParallelPlan& plan,
                              const topo::ClusterSpec& cluster, FabricTraffic traffic, topo::CollectiveOp op,
                              const topo::CollectiveEstimate& e) {
  std::vector<topo::CollectiveCall> calls;
  for (std::vector<std::int64_t>& members : concurrent_groups(plan, cluster, traffic)) {
    if (members.size() < 2) continue;
    if (traffic == FabricTraffic::context_ring) {  // every member's send to its ring successor
      for (std::size_t i = 0; i < members.size(); ++i) {
        calls.push_back(topo::CollectiveCall{topo::CollectiveOp::send_recv,
                                             kReferenceBytes,
                                             {members[i], members[(i + 1) % members.size()]},
                                             e.algo,
                                             e.protocol});
      }
      continue;
    }
    calls.push_back(topo::CollectiveCall{op, kReferenceBytes, std::move(members), e.algo, e.protocol});
  }
  if (calls.empty()) return 1.0;
  try {
    auto graphs = m.graphs.find(fabric);
    if (graphs == m.graphs.end()) {
      if (m.graphs.size() >= 4) m.graphs.clear();
      graphs = m.graphs.emplace(fabric, std::make_unique<topo::FabricGraphs>(cluster)).first;
    }
    return topo::fabric_slowdown(*graphs->second, calls);
  } catch (const InputError&) {
    return std::nullopt;  // too large a graph or group for the routes
  }
}

}  // namespace

std::vector<std::vector<std::int64_t>> concurrent_groups(const ParallelPlan& plan,
                                                         const topo::ClusterSpec& cluster,
                                                         FabricTraffic traffic) {
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& p = placed.placement;
  const std::size_t pp_axis = placed.axis(ParallelAxis::pp);
  const std::int64_t pp_stride = p.axis_stride(pp_axis);
  auto coordinate = [&](std::int64_t rank, std::size_t axis) {
    return (rank / p.axis_stride(axis)) % p.axis_size(axis);
  };
  std::vector<std::vector<std::int64_t>> groups;
  if (traffic == FabricTraffic::pipeline_send) {
    if (p.axis_size(pp_axis) < 2) return groups;
    for (std::int64_t r = 0; r < p.world_size(); ++r) {
      if (coordinate(r, pp_axis) == 0) groups.push_back({r, r + pp_stride});
    }
    return groups;
  }
  const std::vector<std::size_t> axes = group_axes(placed, traffic);
  std::map<std::int64_t, std::size_t> group_of;  // a rank with its coordinates on `axes` zeroed → group
  for (std::int64_t r = 0; r < p.world_size(); ++r) {
    if (coordinate(r, pp_axis) != 0) continue;
    std::int64_t base = r;
    for (std::size_t a : axes) base -= coordinate(r, a) * p.axis_stride(a);
    const auto [it, fresh] = group_of.try_emplace(base, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

std::optional<double> fabric_slowdown(const ParallelPlan& plan, const topo::ClusterSpec& cluster,
                                      FabricTraffic traffic, topo::CollectiveOp op, double bytes,
                                      const topo::CollectiveEstimate& e) {
  if (cluster.nodes < 2 || !(bytes > 0)) return 1.0;
  // Beyond what the flow lowering takes in one collective, the closed form's own shares (its leaf
  // uplinks) stand: routing every GPU's flows there would cost seconds per layout.
  if (cluster.total_gpus() > topo::kMaxFlowCollectiveGpus) return std::nullopt;
  const std::string fabric = fabric_key(cluster);
  const std::string key = fmt::format(
      "{}#{}#{}#{}#{}#{}", fabric, placement_key(plan_placement(plan, cluster)), static_cast<int>(traffic),
      static_cast<int>(op), static_cast<int>(e.algo), static_cast<int>(e.protocol));
  Memo& m = memo();
  const std::lock_guard<std::mutex> lock(m.mutex);  // graphs memoise their routes: one user at a time
  if (const auto hit = m.slowdowns.find(key); hit != m.slowdowns.end()) return hit->second;
  const std::optional<double> slowdown = measure(m, fabric, plan, cluster, traffic, op, e);
  if (m.slowdowns.size() >= 65536) m.slowdowns.clear();
  m.slowdowns.emplace(key, slowdown);
  return slowdown;
}

topo::CollectiveEstimate shared_links_estimate(const ParallelPlan& plan, const topo::ClusterSpec& cluster,
                                               const topo::ClusterSpec& open, FabricTraffic traffic,
                                               topo::CollectiveOp op, double bytes,
                                               const topo::CommGroup& group) {
  topo::CollectiveEstimate e = topo::estimate_collective(op, bytes, group, open);
  const std::optional<double> slowdown = fabric_slowdown(plan, cluster, traffic, op, bytes, e);
  if (!slowdown) return topo::estimate_collective(op, bytes, group, cluster);
  e.time_s = slowed_bandwidth(e.time_s, e.latency_s, *slowdown);
  return e;
}

}  // namespace trainsim::model
