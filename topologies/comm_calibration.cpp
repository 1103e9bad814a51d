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

// NCCL's all-to-all inside a node, every rank sending to and receiving from all its peers at once as grouped
// sends and receives, reaches less of NVLink than its rings (CommEfficiency::all_to_all_bandwidth_fraction):
// measured, not derived from NCCL's channel counts, and not applied to a single pair's send-recv, which no
// measurement here covers. Both values are busbw (remote bytes per rank / time) over the link rate, large
// messages, and hold for an NVLink generation:
// - NVLink 4 (H100, H200, H800): NVIDIA/nccl issue #2169 (2026-05), alltoall_perf on 4x H100 SXM in one
//   node, 500 MiB per rank: busbw 334.9 GB/s out of place, 338.0 in place = 0.745 x 450 GB/s. The
//   Megatron-Core MoE report's Table 7 (8x H100, all-to-all dispatcher, 470 MB per rank: 0.72) checks it
//   (scenarios/validation/moe-dispatch), unfitted.
// - NVLink 5 (B200, GB200, B300, GB300): fitted to Table 7's two all-to-all rows at EP 8 on GB200 (dispatch
//   735 us, combine 741 us for 7/8 of 470 MB, less the launch and hop latency: 0.63 x 900 GB/s). Its EP
//   16, 32 and 64 rows inside the rack are not fitted. No other NVLink 5 part has all-to-all measurements.
constexpr double kNvlink4AllToAllFraction = 0.745;
constexpr double kNvlink5AllToAllFraction = 0.63;

// The kernels that write to their peers over NVLink themselves (DeepEP, HybridEP;
// CommEfficiency::device_all_to_all_bandwidth_fraction), by the same measure:
// - NVLink 5: HybridEP's own benchmark, kernel time alone (DeepEP's hybrid-ep branch @ 17cfb81,
//   docs/README_Hybrid-EP.md, "Kernel Only" columns: Kineto's dispatch_kernel and combine_kernel;
//   tests/test_hybrid_ep.py, 4,096 BF16 tokens of hidden 7,168 a rank, top 8 of 8 experts a rank, routing
//   uniform at random). Its algorithm bandwidth counts every received row, the rank's own among them, so
//   busbw is (k − 1)/k of it: GB200 EP 8, 16, 24, 32, 36 at 16 and 32 SMs and B200 EP 8 at 16, dispatch and
//   combine, 22 rows from 0.587 (GB200 EP 36, 16 SMs, combine) to 0.743 (GB200 EP 8, 32 SMs, dispatch);
//   0.68 is their median. The rate falls as the group grows (0.70 at EP 8, 0.65 at EP 32 and 36, both ops'
//   mean) and the combine's is 0.05 below the dispatch's; one value per generation leaves every row within
//   0.1 of it.
// - NVLink 4: no kernel-only measurement inside a node (the benchmark's H100 rows cross InfiniBand); the
//   rings' fraction.
constexpr double kNvlink5DeviceAllToAllFraction = 0.68;

enum class NvlinkGeneration { nvlink4, nvlink5 };

std::optional<NvlinkGeneration> nvlink_generation(std::string_view name) {
  for (const char* part : {"h100", "h200", "h800"})
    if (contains(name, part)) return NvlinkGeneration::nvlink4;
  for (const char* part : {"b200", "gb200", "b300", "gb300"})
    if (contains(name, part)) return NvlinkGeneration::nvlink5;
  return std::nullopt;
}

// `lookup` of the node's name, else of its GPU's.
template <typename Lookup>
auto by_node_or_gpu(const NodeSpec& node, Lookup lookup) {
  auto found = lookup(node.name);
  if (!found) found = lookup(node.gpu.name);
  return found;
}

}  // namespace

std::optional<double> nvlink_all_to_all_fraction(std::string_view name) {
  const std::optional<NvlinkGeneration> g = nvlink_generation(name);
  if (!g) return std::nullopt;
  return *g == NvlinkGeneration::nvlink4 ? kNvlink4AllToAllFraction : kNvlink5AllToAllFraction;
}

std::optional<double> nvlink_device_all_to_all_fraction(std::string_view name) {
  if (nvlink_generation(name) == NvlinkGeneration::nvlink5) return kNvlink5DeviceAllToAllFraction;
  return std::nullopt;
}

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

std::optional<CommEfficiency> calibrated_comm_efficiency(const NodeSpec& node) {
  return by_node_or_gpu(node, [](std::string_view name) { return calibrated_comm_efficiency(name); });
}

bool apply_comm_calibration(NodeSpec& node) {
  // Only a preset that left every field at its default takes the fits.
  if (node.comm != CommEfficiency{}) return false;
  const std::optional<CommEfficiency> fitted = calibrated_comm_efficiency(node);
  // A PCIe node's all-to-all has no NVLink generation: it keeps the ring's fraction.
  const bool nvlink = node.fabric != IntraNodeFabric::pcie;
  const std::optional<double> all_to_all =
      nvlink ? by_node_or_gpu(node, nvlink_all_to_all_fraction) : std::nullopt;
  const std::optional<double> device_all_to_all =
      nvlink ? by_node_or_gpu(node, nvlink_device_all_to_all_fraction) : std::nullopt;
  if (fitted) node.comm = *fitted;
  if (all_to_all) node.comm.all_to_all_bandwidth_fraction = *all_to_all;
  if (device_all_to_all) node.comm.device_all_to_all_bandwidth_fraction = *device_all_to_all;
  return fitted || all_to_all || device_all_to_all;
}

}  // namespace trainsim::topo
