// The fitted values. Method: coordinate descent on the per-type latency and protocol parameters,
// minimising MAPE(>= 64 MiB)/0.10 + MAPE(< 64 MiB)/0.25 over all_reduce busbw points; large-message
// bandwidth fractions are the measured plateau / link rate. Rounded to 2-3 significant digits.
#include "topologies/comm_calibration.hpp"

#include <cctype>
#include <string>

namespace trainsim::topo {
namespace {

// Whether `needle` names the GPU of `haystack` as a word of its own: "dgx-b200" and "b200" are a B200,
// "gb200-nvl72" (a Grace-Blackwell part with its own fabric, no fit of its own) is not.
bool contains(std::string_view haystack, std::string_view needle) {
  std::string lower;
  for (char c : haystack) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto at = lower.find(needle); at != std::string::npos; at = lower.find(needle, at + 1)) {
    if (at == 0 || std::isalnum(static_cast<unsigned char>(lower[at - 1])) == 0) return true;
  }
  return false;
}

}  // namespace

std::optional<CommEfficiency> calibrated_comm_efficiency(std::string_view name) {
  if (contains(name, "h200")) {
    // CommEfficiency's defaults are this fit (NCCL's latency and protocol shape on an NVSwitch node,
    // reused for A100/H100 nodes, which have no small-message rows).
    // NCCL-H200-1N-01..20 (size sweep, 8 GPUs), NCCL-H200-NVLS-1..5 a/b (ring vs NVLS plateau, 4..8
    // GPUs: ring 363-366 GB/s = 0.81 x 450 GB/s; NVLS algbw ~265 GB/s = 0.59 x 450; NCCL keeps ring at 4
    // GPUs and picks NVLS from 5), NCCL-H200-COLL-1..4.
    CommEfficiency e;
    e.intra_bandwidth_fraction = 0.81;
    e.in_switch_bandwidth_fraction = 0.59;
    e.in_switch_min_ranks = 5;
    return e;
  }
  if (contains(name, "b200")) {
    // NCCL-B200-1N-01..20 and NCCL-B200-4N-03..20 (torch all_reduce_bench on AWS P6-B200, 8x400 Gb/s EFA:
    // a high fixed cost per call, ~40 us in a node and ~360 us across nodes), NCCL-B200-NVLS-1..5 (ring
    // 673-682 GB/s = 0.755 x 900; NVLS algbw ~479 GB/s = 0.535 x 900; NVLS from 6 GPUs). 4N plateau
    // 382 GB/s = 0.955 x 400 GB/s of NICs per node.
    CommEfficiency e;
    e.intra_bandwidth_fraction = 0.755;
    e.in_switch_bandwidth_fraction = 0.535;
    e.in_switch_min_ranks = 6;
    e.nic_bandwidth_fraction = 0.955;
    e.base_latency_s = 40e-6;
    e.net_base_latency_s = 320e-6;
    e.nic_latency_s = 2.6e-6;
    e.in_switch_latency_s = 330e-6;
    e.ll_bandwidth_fraction = 0.35;
    e.ll128_bandwidth_fraction = 0.44;
    e.ll_latency_fraction = 0.14;
    e.ll128_latency_fraction = 0.59;
    return e;
  }
  if (contains(name, "h100")) {
    // NCCL-GTC24-05 (ring 370 GB/s = 0.822 x 450), -06 (NVLS 480 GB/s busbw = 1.75 x 0.61 x 450),
    // -11 (8x400 Gb/s IB: 380 GB/s = 0.95 x 400 GB/s per node).
    CommEfficiency e;
    e.intra_bandwidth_fraction = 0.822;
    e.in_switch_bandwidth_fraction = 0.61;
    e.nic_bandwidth_fraction = 0.95;
    return e;
  }
  if (contains(name, "a100")) {
    // NCCL-GTC24-04 (ring 232 GB/s = 0.773 x 300; NCCL-A100-1 says ~235), -10 (8x200 Gb/s IB: 192 GB/s =
    // 0.96 x 200 GB/s per node). No NVLS on A100.
    CommEfficiency e;
    e.intra_bandwidth_fraction = 0.773;
    e.nic_bandwidth_fraction = 0.96;
    return e;
  }
  return std::nullopt;
}

bool apply_comm_calibration(NodeSpec& node) {
  const CommEfficiency defaults;
  const CommEfficiency& c = node.comm;
  const bool untouched =
      c.intra_bandwidth_fraction == defaults.intra_bandwidth_fraction &&
      c.in_switch_bandwidth_fraction == defaults.in_switch_bandwidth_fraction &&
      c.nic_bandwidth_fraction == defaults.nic_bandwidth_fraction &&
      c.ll_bandwidth_fraction == defaults.ll_bandwidth_fraction &&
      c.ll128_bandwidth_fraction == defaults.ll128_bandwidth_fraction &&
      c.base_latency_s == defaults.base_latency_s && c.net_base_latency_s == defaults.net_base_latency_s &&
      c.nic_latency_s == defaults.nic_latency_s && c.in_switch_latency_s == defaults.in_switch_latency_s &&
      c.in_switch_min_ranks == defaults.in_switch_min_ranks &&
      c.ll_latency_fraction == defaults.ll_latency_fraction &&
      c.ll128_latency_fraction == defaults.ll128_latency_fraction &&
      c.net_ll_step_latency_s == defaults.net_ll_step_latency_s &&
      c.net_ll128_step_latency_s == defaults.net_ll128_step_latency_s &&
      c.net_simple_step_latency_s == defaults.net_simple_step_latency_s;
  if (!untouched) return false;
  std::optional<CommEfficiency> fitted = calibrated_comm_efficiency(node.name);
  if (!fitted) fitted = calibrated_comm_efficiency(node.gpu.name);
  if (!fitted) return false;
  node.comm = *fitted;
  return true;
}

}  // namespace trainsim::topo
