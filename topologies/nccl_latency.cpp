// NCCL's latency terms (the header says which and why).
#include "topologies/nccl_latency.hpp"

#include <algorithm>

namespace trainsim::topo {

std::int64_t tree_levels(std::int64_t nodes) {
  std::int64_t levels = 0;
  for (std::int64_t reach = 2; reach <= nodes; reach *= 2) ++levels;
  return levels;
}

double ring_net_overhead_s(CollectiveProtocol protocol) {
  constexpr double kNetOverheadS = 1e-6;  // getNetOverhead on x86 Intel hosts (2 us on AMD)
  return protocol == CollectiveProtocol::simple ? 3 * kNetOverheadS : kNetOverheadS;
}

double tree_network_latency_factor(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::ll:
      return kNcclTreeNetLatencyUs.ll / kNcclRingNetLatencyUs.ll;
    case CollectiveProtocol::ll128:
      return kNcclTreeNetLatencyUs.ll128 / kNcclRingNetLatencyUs.ll128;
    case CollectiveProtocol::simple:
      return kNcclTreeNetLatencyUs.simple / kNcclRingNetLatencyUs.simple;
  }
  return 1.0;
}

double network_step_s(double fabric_step_s, CollectiveProtocol protocol, const CommEfficiency& efficiency) {
  switch (protocol) {
    case CollectiveProtocol::ll:
      return std::max(fabric_step_s, efficiency.net_ll_step_latency_s);
    case CollectiveProtocol::ll128:
      return std::max(fabric_step_s, efficiency.net_ll128_step_latency_s);
    case CollectiveProtocol::simple:
      return std::max(fabric_step_s, efficiency.net_simple_step_latency_s);
  }
  return fabric_step_s;
}

double ring_latency_s(double steps, std::int64_t ranks, std::int64_t nodes, double intra_step_s,
                      double inter_step_s, CollectiveProtocol protocol, const CommEfficiency& efficiency) {
  if (ranks < 2 || !(steps > 0)) return 0.0;
  if (nodes <= 1) return steps * intra_step_s;
  const double laps = steps / static_cast<double>(ranks - 1);
  const double inter_steps = laps * static_cast<double>(nodes - 1);
  const double net_step_s = network_step_s(inter_step_s, protocol, efficiency);
  const double inter = ranks == nodes ? net_step_s * tree_network_latency_factor(protocol) : net_step_s;
  const double intra = std::max(intra_step_s, ring_net_overhead_s(protocol));
  return (steps - inter_steps) * intra + inter_steps * inter;
}

}  // namespace trainsim::topo
