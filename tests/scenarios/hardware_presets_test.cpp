// The shipped GPU and node presets (topologies/presets/): every file loads, the derived presets (h800-sxm
// from h100-sxm, gb200 and gb300 from the NVL72 datasheets, b300 from HGX B300's) carry the numbers their
// comments state, and each GPU's validation mark says whether its constants were checked against published
// data.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/gpu_preset_fields.hpp"
#include "scenarios/presets.hpp"
#include "topologies/comm_calibration.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

constexpr double gib = 1024.0 * 1024 * 1024;

// The fused-attention constants a Blackwell preset fits to its own GPU's kernel benchmarks
// (scenarios/validation/kernels/attention-*.csv): the kernels' fractions and cuDNN's shape.
bool is_attention_fraction(const std::string& key) {
  const std::string suffix = "_attention_fraction";
  const bool fraction =
      key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0;
  return fraction || key == "cudnn_attention_half_key_len" || key == "cudnn_attention_backward_ratio";
}

// Which keys of the `efficiency:` block efficiency_text writes: all, without the attention constants
// (which the Blackwell presets transfer from b200), without those and the element-wise bandwidth fraction
// (which follows the GPU's SM count and HBM: topologies/README.md), without the attention constants and
// the SMs' peer-copy rate (GB200 has its own DeepEP measurement), or the attention constants alone.
enum class Keys {
  all,
  but_attention,
  but_attention_and_elementwise,
  but_attention_and_peer_copy,
  attention_only
};

// The `efficiency:` block of a GPU as YAML text, key by key in the table's order, with the keys `keys` names.
std::string efficiency_text(const topo::GpuSpec& g, Keys keys = Keys::all) {
  std::string text;
  for (const GpuPresetEntry& e : gpu_preset_entries(g)) {
    if (e.block != GpuBlock::efficiency) continue;
    if (keys != Keys::all && is_attention_fraction(e.key) != (keys == Keys::attention_only)) continue;
    if (keys == Keys::but_attention_and_elementwise && e.key == "elementwise_bandwidth_fraction") continue;
    if (keys == Keys::but_attention_and_peer_copy && e.key == "sm_peer_copy_bandwidth") continue;
    text += e.key + ": " + e.value + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("every GPU preset and every node preset loads under its own name") {
  CHECK(gpu_preset_names().size() >= 10);
  for (const std::string& name : gpu_preset_names()) {
    CAPTURE(name);
    const topo::GpuSpec g = gpu_preset(name);
    CHECK(g.name == name);
    CHECK(g.peak.bf16 + g.peak.fp16 > 0);
    CHECK(g.hbm_bytes > 0);
  }
  CHECK(node_preset_names().size() >= 10);
  for (const std::string& name : node_preset_names()) {
    CAPTURE(name);
    const topo::NodeSpec n = node_preset(name);
    CHECK(n.name == name);
    CHECK_FALSE(n.gpu.name.empty());
    CHECK(n.gpus_per_node >= 1);
    CHECK(n.intra_bytes_per_s > 0);
  }
}

TEST_CASE("h800-sxm is h100-sxm with NVLink at 200 GB/s per direction, and hgx-h800 joins 8 of them") {
  const topo::GpuSpec h800 = gpu_preset("h800-sxm");
  const topo::GpuSpec h100 = gpu_preset("h100-sxm");
  CHECK(h800.nvlink_bytes_per_s == 200e9);  // 400 GB/s bidirectional
  CHECK(h800.peak.fp32 == h100.peak.fp32);
  CHECK(h800.peak.tf32 == h100.peak.tf32);
  CHECK(h800.peak.fp16 == h100.peak.fp16);
  CHECK(h800.peak.bf16 == h100.peak.bf16);
  CHECK(h800.peak.fp8 == h100.peak.fp8);
  CHECK(h800.peak.int8 == h100.peak.int8);
  CHECK(h800.hbm_bytes == h100.hbm_bytes);
  CHECK(h800.hbm_bytes_per_s == h100.hbm_bytes_per_s);
  CHECK(h800.tdp_w == h100.tdp_w);
  CHECK(h800.sm_count == h100.sm_count);
  CHECK(efficiency_text(h800) == efficiency_text(h100));
  const topo::NodeSpec node = node_preset("hgx-h800");
  CHECK(node.gpu.name == "h800-sxm");
  CHECK(node.gpus_per_node == 8);
  CHECK(node.fabric == topo::IntraNodeFabric::nvswitch);
  CHECK(node.intra_bytes_per_s == 200e9);
  CHECK(node.nics_per_node == 8);
  CHECK(node.nic_bytes_per_s == 50e9);  // 400 Gb/s
}

TEST_CASE("gb200 carries the GB200 NVL72 datasheet per GPU, and gb200-nvl72 is one node of 72 GPUs") {
  const topo::GpuSpec g = gpu_preset("gb200");
  // The NVL72 datasheet quotes 72-GPU totals with sparsity: per GPU dense = total / 72 / 2.
  CHECK(g.peak.bf16 == doctest::Approx(360e15 / 72 / 2).epsilon(1e-12));  // 2.5 PFLOP/s
  CHECK(g.peak.fp16 == doctest::Approx(360e15 / 72 / 2).epsilon(1e-12));
  CHECK(g.peak.fp8 == doctest::Approx(720e15 / 72 / 2).epsilon(1e-12));  // 5 PFLOP/s
  CHECK(g.peak.int8 == doctest::Approx(720e15 / 72 / 2).epsilon(1e-12));
  CHECK(g.peak.tf32 == doctest::Approx(180e15 / 72 / 2).epsilon(1e-12));  // 1.25 PFLOP/s
  CHECK(g.peak.fp32 == doctest::Approx(5760e12 / 72).epsilon(1e-12));     // FP32 is quoted dense: 80 TFLOP/s
  CHECK(g.hbm_bytes == 186 * gib);                                        // 13.4 TB / 72 = 186 GB
  CHECK(g.hbm_bytes_per_s == doctest::Approx(576e12 / 72).epsilon(1e-12));  // 8 TB/s
  CHECK(g.nvlink_bytes_per_s == 900e9);                                     // 1.8 TB/s bidirectional
  CHECK(g.tdp_w == 1200);
  CHECK(g.sm_count == 148);
  CHECK(efficiency_text(g, Keys::but_attention_and_peer_copy) ==
        efficiency_text(gpu_preset("b200"), Keys::but_attention_and_peer_copy));
  // DeepEP's BF16 dispatch and combine at 16 SMs through its Torch API, EP 8 (docs/README_Hybrid-EP.md of
  // DeepEP's hybrid-ep branch): the mean per SM of the two, GB200 362.01 and 310.21 GB/s, B200 348 and 302.
  CHECK(g.efficiency.sm_peer_copy_bytes_per_s ==
        doctest::Approx((362.01 + 310.21) / 2 / 16 * 1e9).epsilon(0.002));
  CHECK(gpu_preset("b200").efficiency.sm_peer_copy_bytes_per_s ==
        doctest::Approx((348.0 + 302.0) / 2 / 16 * 1e9).epsilon(0.002));
  // GB200's own cuDNN data (presets_attention_test checks each value is its fit): none of b200's three.
  const topo::ComputeEfficiency b200 = gpu_preset("b200").efficiency;
  CHECK(g.efficiency.cudnn_attention_fraction != b200.cudnn_attention_fraction);
  CHECK(g.efficiency.cudnn_attention_half_key_len != b200.cudnn_attention_half_key_len);
  CHECK(g.efficiency.cudnn_attention_backward_ratio != b200.cudnn_attention_backward_ratio);
  const topo::NodeSpec node = node_preset("gb200-nvl72");
  CHECK(node.gpu.name == "gb200");
  CHECK(node.gpus_per_node == 72);
  CHECK(node.fabric == topo::IntraNodeFabric::nvswitch);
  CHECK(node.intra_bytes_per_s == 900e9);
  CHECK(node.in_switch_reduction);
  CHECK(node.nics_per_node == 72);      // one 400 Gb/s ConnectX-7 per GPU
  CHECK(node.nic_bytes_per_s == 50e9);  // 400 Gb/s
}

TEST_CASE(
    "b300 and gb300 carry the HGX B300 and GB300 NVL72 datasheets per GPU, with b200's efficiencies but "
    "attention and the element-wise bandwidth fraction") {
  // Datasheet totals with sparsity: per GPU dense = total / GPUs / 2 (HGX: 8 GPUs, NVL72: 72).
  const topo::GpuSpec b300 = gpu_preset("b300");
  CHECK(b300.peak.bf16 == doctest::Approx(36e15 / 8 / 2).epsilon(1e-12));  // 2.25 PFLOP/s
  CHECK(b300.peak.fp8 == doctest::Approx(72e15 / 8 / 2).epsilon(1e-12));   // 4.5 PFLOP/s
  CHECK(b300.peak.tf32 == doctest::Approx(18e15 / 8 / 2).epsilon(1e-12));
  CHECK(b300.peak.int8 == doctest::Approx(2e15 / 8 / 2).epsilon(1e-12));  // Blackwell Ultra cut INT8
  CHECK(b300.peak.fp32 == doctest::Approx(600e12 / 8).epsilon(1e-12));
  CHECK(b300.hbm_bytes == 288 * gib);  // 2.3 TB / 8 (8 stacks x 12-high x 3 GiB)
  CHECK(b300.hbm_bytes_per_s == doctest::Approx(64e12 / 8).epsilon(1e-12));
  CHECK(b300.nvlink_bytes_per_s == 900e9);
  CHECK(b300.tdp_w == 1100);
  CHECK(b300.sm_count == 160);
  CHECK(efficiency_text(b300, Keys::but_attention_and_elementwise) ==
        efficiency_text(gpu_preset("b200"), Keys::but_attention_and_elementwise));
  CHECK(efficiency_text(b300, Keys::attention_only) ==
        efficiency_text(gpu_preset("gb300"), Keys::attention_only));  // same GPU
  const topo::GpuSpec gb300 = gpu_preset("gb300");
  CHECK(gb300.peak.bf16 == doctest::Approx(360e15 / 72 / 2).epsilon(1e-12));  // 2.5 PFLOP/s
  CHECK(gb300.peak.fp8 == doctest::Approx(720e15 / 72 / 2).epsilon(1e-12));   // 5 PFLOP/s
  CHECK(gb300.peak.int8 == doctest::Approx(24e15 / 72 / 2).epsilon(1e-3));    // 166.7 TFLOP/s as written
  CHECK(gb300.hbm_bytes == 288 * gib);                                        // 20.7 TB / 72
  CHECK(gb300.hbm_bytes_per_s == doctest::Approx(576e12 / 72).epsilon(1e-12));
  // NVLink 5: 130 TB/s over 72 GPUs is 1.806 TB/s, which NVIDIA quotes per GPU as 1.8 TB/s bidirectional.
  CHECK(gb300.nvlink_bytes_per_s == 1.8e12 / 2);
  CHECK(gb300.tdp_w == 1400);
  CHECK(efficiency_text(gb300, Keys::but_attention_and_elementwise) ==
        efficiency_text(gpu_preset("gb200"), Keys::but_attention_and_elementwise));
  for (const char* node_name : {"gb300-nvl72", "dgx-b300"}) {
    CAPTURE(node_name);
    const topo::NodeSpec node = node_preset(node_name);
    CHECK(node.nics_per_node == node.gpus_per_node);  // one ConnectX-8 per GPU
    CHECK(node.nic_bytes_per_s == 100e9);             // 800 Gb/s
    CHECK(node.intra_bytes_per_s == 900e9);
    CHECK(node.in_switch_reduction);
  }
  CHECK(node_preset("gb300-nvl72").gpus_per_node == 72);
  CHECK(node_preset("gb300-nvl72").gpu.name == "gb300");
  CHECK(node_preset("dgx-b300").gpus_per_node == 8);
  CHECK(node_preset("dgx-b300").gpu.name == "b300");
}

TEST_CASE("Hopper- and Blackwell-class GPUs' element-wise kernels reach h100-sxm's bandwidth per SM") {
  // topologies/README.md, "Memory-bound kernels on newer HBM": the frameworks' element-wise kernels keep
  // Hopper's bytes in flight per SM, so a GPU's element-wise fraction is h100-sxm's achieved bandwidth per SM
  // times its SMs, over its own HBM bandwidth (written to three decimals in the presets). The libraries'
  // GEMMs and fused attention keep h100-sxm's fraction of the peak as their memory roof.
  const topo::GpuSpec h100 = gpu_preset("h100-sxm");
  const double per_sm = h100.efficiency.elementwise_fraction() * h100.hbm_bytes_per_s / h100.sm_count;
  CHECK(per_sm == doctest::Approx(0.7 * 3.35e12 / 132));
  for (const char* name : {"h800-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300"}) {
    CAPTURE(name);
    const topo::GpuSpec g = gpu_preset(name);
    CHECK(g.efficiency.elementwise_fraction() ==
          doctest::Approx(per_sm * g.sm_count / g.hbm_bytes_per_s).epsilon(0.002));
    CHECK(g.efficiency.memory_bandwidth_fraction == h100.efficiency.memory_bandwidth_fraction);
  }
  CHECK(gpu_preset("b200").efficiency.elementwise_fraction() < 0.35);  // 8 TB/s on 148 SMs
  // Unset, the element-wise share is the library kernels' (every preset fitted before the rule).
  CHECK(h100.efficiency.elementwise_bandwidth_fraction == 0);
  const topo::ComputeEfficiency a100 = gpu_preset("a100-sxm4-80gb").efficiency;
  CHECK(a100.elementwise_fraction() == a100.memory_bandwidth_fraction);
}

TEST_CASE("a GPU preset's validation mark names its data, and presets never checked against data have none") {
  for (const char* name : {"h100-sxm", "a100-sxm4-80gb", "b200", "h200-sxm", "gb200", "gb300"}) {
    CAPTURE(name);
    CHECK_FALSE(gpu_preset(name).validation.empty());
  }
  CHECK(gpu_preset("h100-sxm").validation.find("FlashAttention-3") != std::string::npos);
  CHECK(gpu_preset("a100-sxm4-80gb").validation.find("vTrain") != std::string::npos);
  CHECK(gpu_preset("gb200").validation.find("MCORE26-T11") != std::string::npos);
  for (const char* name : {"h800-sxm", "b300", "a100-sxm4-40gb", "l40s", "mi300x", "v100-sxm2-32gb"}) {
    CAPTURE(name);
    CHECK(gpu_preset(name).validation.empty());
  }
}

TEST_CASE("a node's collective fit is found by its GPU's name as a word: gb200 does not take the B200 fit") {
  using trainsim::topo::calibrated_comm_efficiency;
  // The B200 fit carries AWS P6-B200's 40 us per call; GB200 NVL72 has no measurements of its own.
  CHECK(calibrated_comm_efficiency("dgx-b200").has_value());
  CHECK(calibrated_comm_efficiency("b200").has_value());
  CHECK_FALSE(calibrated_comm_efficiency("gb200-nvl72").has_value());
  CHECK_FALSE(calibrated_comm_efficiency("gb200").has_value());
  // Blackwell Ultra has no nccl-tests rows in the data either: its nodes take the default CommEfficiency.
  for (const char* name : {"dgx-b300", "b300", "gb300-nvl72", "gb300"}) {
    CAPTURE(name);
    CHECK_FALSE(calibrated_comm_efficiency(name).has_value());
  }
  CHECK(calibrated_comm_efficiency("hgx-h200").has_value());
}

TEST_CASE(
    "the all-to-alls' shares of NVLink, NCCL's and the dispatch kernels', go by NVLink generation, over the "
    "node's other fits") {
  using trainsim::topo::apply_comm_calibration;
  using trainsim::topo::CommEfficiency;
  using trainsim::topo::nvlink_all_to_all_fraction;
  for (const char* name : {"dgx-h100", "hgx-h200", "hgx-h800", "h100-sxm"}) {
    CAPTURE(name);
    CHECK(nvlink_all_to_all_fraction(name) == 0.745);
  }
  for (const char* name : {"dgx-b200", "gb200-nvl72", "dgx-b300", "gb300-nvl72", "gb200"}) {
    CAPTURE(name);
    CHECK(nvlink_all_to_all_fraction(name) == 0.63);
    // HybridEP's kernel-only benchmark (DeepEP hybrid-ep branch, docs/README_Hybrid-EP.md): BF16 dispatch
    // and combine algorithm bandwidth, GB/s of received rows, at EP k, (k − 1)/k of them over NVLink of
    // 900 GB/s. The constant is the median of the 22 rows' shares (0.6802), within their spread.
    const std::optional<double> device = trainsim::topo::nvlink_device_all_to_all_fraction(name);
    REQUIRE(device.has_value());
    struct KernelRow {
      double ranks, dispatch, combine;
    };
    constexpr std::array<KernelRow, 11> kRows{{{8, 750.15, 684.27},  // GB200, 16 SMs then 32
                                               {8, 764.03, 737.13},
                                               {16, 661.93, 600.75},
                                               {16, 706.95, 666.26},
                                               {24, 637.80, 565.53},
                                               {24, 665.97, 639.80},
                                               {32, 629.79, 547.25},
                                               {32, 642.23, 605.15},
                                               {36, 612.85, 543.27},
                                               {36, 632.31, 596.99},
                                               {8, 734.95, 673.84}}};  // B200, 16 SMs
    std::vector<double> shares;
    for (const KernelRow& r : kRows) {
      for (const double bw : {r.dispatch, r.combine}) shares.push_back(bw * (r.ranks - 1) / r.ranks / 900);
    }
    std::ranges::sort(shares);
    CHECK(*device == doctest::Approx((shares[10] + shares[11]) / 2).epsilon(0.002));
    CHECK(*device > shares.front());
    CHECK(*device < shares.back());
  }
  CHECK_FALSE(trainsim::topo::nvlink_device_all_to_all_fraction("dgx-h100").has_value());
  CHECK_FALSE(nvlink_all_to_all_fraction("dgx-a100-80gb").has_value());
  // A GB200 NVL72 keeps every default but the all-to-alls; a DGX B200 takes B200's fit and NVLink 5's
  // all-to-alls; an A100 node its fit, its all-to-alls at the ring's 0.773; an H100 node NCCL's
  // all-to-all, its device-initiated one at the ring's 0.822.
  trainsim::topo::NodeSpec gb200 = node_preset("gb200-nvl72");
  CommEfficiency expected;
  expected.all_to_all_bandwidth_fraction = 0.63;
  expected.device_all_to_all_bandwidth_fraction = 0.68;
  CHECK(gb200.comm == expected);
  const trainsim::topo::NodeSpec b200 = node_preset("dgx-b200");
  CHECK(b200.comm.base_latency_s == doctest::Approx(40e-6));
  CHECK(b200.comm.all_to_all_bandwidth_fraction == 0.63);
  CHECK(b200.comm.device_all_to_all_fraction() == 0.68);
  CHECK(node_preset("dgx-a100-80gb").comm.nccl_all_to_all_fraction() == 0.773);
  CHECK(node_preset("dgx-a100-80gb").comm.device_all_to_all_fraction() == 0.773);
  CHECK(node_preset("dgx-h100").comm.device_all_to_all_fraction() == 0.822);
  // A PCIe node has no NVLink generation: an H100 one keeps the ring's fraction for its all-to-all.
  trainsim::topo::NodeSpec pcie = node_preset("dgx-h100");
  pcie.fabric = trainsim::topo::IntraNodeFabric::pcie;
  pcie.comm = CommEfficiency{};
  CHECK(apply_comm_calibration(pcie));  // H100's nccl-tests fit
  CHECK(pcie.comm.all_to_all_bandwidth_fraction == 0);
  CHECK(pcie.comm.nccl_all_to_all_fraction() == 0.822);
  // A preset that sets its own efficiencies takes neither.
  gb200.comm.intra_bandwidth_fraction = 0.5;
  gb200.comm.all_to_all_bandwidth_fraction = 0;
  CHECK_FALSE(apply_comm_calibration(gb200));
  CHECK(gb200.comm.all_to_all_bandwidth_fraction == 0);
}
