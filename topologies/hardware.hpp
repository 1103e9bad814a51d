#pragma once
// Plain descriptions of a GPU and of a node, as read from presets. Units: all doubles are SI —
// bytes, seconds, bytes per second, FLOP per second, watts. Builders and cost formulas read these;
// nothing here computes.
#include <string>

#include "topologies/precision.hpp"

namespace trainsim::topo {

/// Dense (non-sparse) peak throughput per precision, FLOP/s. Zero means "not supported".
struct PeakFlops {
  double fp32 = 0;
  double tf32 = 0;
  double fp16 = 0;
  double bf16 = 0;
  double fp8 = 0;
  double int8 = 0;

  [[nodiscard]] double at(Precision p) const {
    switch (p) {
      case Precision::fp32:
        return fp32;
      case Precision::tf32:
        return tf32;
      case Precision::fp16:
        return fp16;
      case Precision::bf16:
        return bf16;
      case Precision::fp8:
        return fp8;
      case Precision::int8:
        return int8;
    }
    return fp32;
  }
  bool operator==(const PeakFlops&) const = default;
};

/// Fused attention kernels (SPEC model.attention): FlashAttention-2, FlashAttention-3 (Hopper only), and
/// cuDNN's fused flash attention (what Transformer Engine runs).
enum class AttentionKernel { flash2, flash3, cudnn };
inline constexpr EnumNames<AttentionKernel, 3> kAttentionKernelNames{{{"flash2", AttentionKernel::flash2},
                                                                      {"flash3", AttentionKernel::flash3},
                                                                      {"cudnn", AttentionKernel::cudnn}}};
constexpr std::string_view to_string(AttentionKernel k) {
  return name_in(kAttentionKernelNames, k);
}

/// How much of the datasheet a real kernel achieves. Calibrated per GPU type (never per case) against
/// published measurements; each preset cites the data it was fitted to.
struct ComputeEfficiency {
  double matmul_peak_fraction = 0.80;  ///< large-GEMM throughput / dense peak (MAMF-style)
  double matmul_half_flops = 2.0e9;    ///< GEMM work at which achieved efficiency is half of the above
  /// Achieved / peak HBM bandwidth of the library kernels: the memory roof of GEMMs and fused attention.
  double memory_bandwidth_fraction = 0.85;
  /// Achieved / peak HBM bandwidth of the frameworks' element-wise kernels (norms, activations, casts,
  /// permutes, the optimizer's update: OpKind::memory_bound); 0: memory_bandwidth_fraction. Where a GPU's HBM
  /// outgrew its SMs these keep the bytes in flight per SM they were tuned with (topologies/README.md,
  /// "Memory-bound kernels on newer HBM").
  double elementwise_bandwidth_fraction = 0;
  [[nodiscard]] double elementwise_fraction() const {
    return elementwise_bandwidth_fraction > 0 ? elementwise_bandwidth_fraction : memory_bandwidth_fraction;
  }
  double kernel_overhead_s = 4.0e-6;  ///< fixed launch + tail cost per kernel
  /// The fused attention kernel that `model.attention: flash` runs on this GPU (SPEC gpu.efficiency).
  AttentionKernel attention_kernel = AttentionKernel::flash2;
  /// Forward throughput of each fused attention kernel / dense 16-bit peak, for long sequences at head
  /// dim 128 without a causal mask; 0: that kernel does not run on this GPU. The kernel's shape in sequence
  /// length, head dim, mask and pass is models/workload/attention_kernel.hpp.
  double flash2_attention_fraction = 0.60;
  double flash3_attention_fraction = 0.0;
  double cudnn_attention_fraction = 0.0;
  double flash_attention_half_flops = 4.0e9;  ///< fused attention work at which it reaches half of that
  /// The cuDNN kernel's shape on this GPU where it differs from the one fitted to H100
  /// (models/workload/attention_kernel.cpp): the keys at which its key loop reaches half its efficiency, and
  /// its backward's efficiency over its forward's; 0: the H100 fit's.
  double cudnn_attention_half_key_len = 0;
  double cudnn_attention_backward_ratio = 0;

  // GEMMs by shape (models/workload/gemm_time.hpp). Active when GpuSpec::sm_count > 0; otherwise a GEMM is
  // priced by its FLOPs alone (matmul_peak_fraction, matmul_half_flops).
  double matmul_tile_m = 128;  ///< rows of the largest output tile (CUTLASS/cuBLAS sm90: 128x256)
  double matmul_tile_n = 256;  ///< columns of the largest output tile
  /// In-tile efficiency of the tile_m x tile_n/2 tile relative to the largest tile's.
  double matmul_half_tile_efficiency = 1.0;
  double matmul_quarter_tile_efficiency = 1.0;  ///< same, tile_m/2 x tile_n/2
  /// Fixed cost of one output tile (pipeline fill, epilogue) in units of K: a tile takes (K + this) steps.
  double matmul_tile_k_overhead = 0;
  /// Split-K: a GEMM with fewer tiles than SMs splits K into pieces of at least this many (0: never).
  double matmul_split_k_min = 0;
  /// Share of a partial last wave that costs a full wave: 1 strict wave quantisation, 0 perfectly
  /// balanced (stream-K / persistent schedulers spread the tail over all SMs).
  double matmul_wave_quantisation = 1.0;
  /// In-tile efficiency of fp8 GEMMs (matmul_peak_fraction is bf16's): at twice the math rate the same
  /// tiles spend a larger share on loads, epilogues and power-limited clocks. 0: matmul_peak_fraction.
  double fp8_matmul_peak_fraction = 0;
  /// Sustained SM clock under training load at the power limit / the clock the kernel measurements ran at
  /// (short benchmarks run near boost; long runs settle lower). Scales every compute peak.
  double sustained_clock_fraction = 1.0;
  /// Fractional slow-down of kernels that run while a collective overlaps them (NCCL takes SMs and HBM
  /// bandwidth): an overlapped kernel takes (1 + this) times as long.
  double overlap_compute_slowdown = 0.0;
  /// Bytes a second one SM moves to its NVLink peers with loads and stores, as DeepEP's normal kernels copy
  /// a MoE layer's tokens, counted as DeepEP's benchmark counts them (every row a rank receives, its own
  /// among them); 0: not measured, no bound. Bounds a DeepEP exchange's NVLink leg at the dispatcher's SMs
  /// times this (models/step/unit_pricing.hpp, dispatcher_copy_bytes_per_s).
  double sm_peer_copy_bytes_per_s = 0.0;
  bool operator==(const ComputeEfficiency&) const = default;
};

struct GpuSpec {
  std::string name;               ///< preset name, e.g. "a100-sxm4-80gb"
  PeakFlops peak;                 ///< dense peak, FLOP/s
  double hbm_bytes = 0;           ///< device memory capacity, bytes
  double hbm_bytes_per_s = 0;     ///< peak device memory bandwidth, B/s
  double nvlink_bytes_per_s = 0;  ///< NVLink/Infinity Fabric bandwidth per GPU per direction, B/s (0 = none)
  double tdp_w = 0;               ///< board power at full load, W
  double idle_w = 0;              ///< board power when idle, W
  double power_limit_w = 0;       ///< enforced board power limit, W (0: the TDP); lowers the sustained clock
  int sm_count = 0;               ///< streaming multiprocessors (0: unknown, GEMMs priced without shape)
  /// σ of one GPU's kernel time over the mean GPU's of this model (preset key `variability`; manufacturing
  /// and power management, models/step/gpu_variability.hpp); 0: all alike.
  double variability = 0;
  /// GPUs of the steps this model's efficiency constants were fitted to, as one count whose expected slowest
  /// GPU is theirs (preset key `efficiency_fit_gpus`; 1: kernel benchmarks on one GPU). Those constants
  /// already hold the slowest-of-N penalty of that many GPUs, so the step prices only the difference
  /// (models/step/gpu_variability.hpp).
  int efficiency_fit_gpus = 1;
  ComputeEfficiency efficiency;
  /// The published data this GPU's constants were checked against, in words (preset key `validation`);
  /// empty: not validated (datasheet values and constants transferred from another GPU only).
  std::string validation;
  bool operator==(const GpuSpec&) const = default;
};

enum class IntraNodeFabric { nvswitch, nvlink_mesh, pcie };

inline constexpr EnumNames<IntraNodeFabric, 3> kIntraNodeFabricNames{
    {{"nvswitch", IntraNodeFabric::nvswitch},
     {"nvlink-mesh", IntraNodeFabric::nvlink_mesh},
     {"pcie", IntraNodeFabric::pcie}}};

constexpr std::string_view to_string(IntraNodeFabric f) {
  return name_in(kIntraNodeFabricNames, f);
}

/// NCCL's network latency of one step per protocol, in microseconds: hwLatencies[NET] of its ring and of
/// its tree (src/graph/tuning.cc, NVIDIA/nccl 5067397c). The one place these constants are written:
/// CommEfficiency's net_*_step_latency_s default to the ring's, and nccl_latency.hpp's tree factor is the
/// tree's over the ring's.
struct NcclNetLatencyUs {
  double ll = 0;
  double ll128 = 0;
  double simple = 0;
};
inline constexpr NcclNetLatencyUs kNcclRingNetLatencyUs{2.7, 4.0, 14.0};
inline constexpr NcclNetLatencyUs kNcclTreeNetLatencyUs{5.0, 8.5, 14.0};

/// What collectives achieve on a node type's links, following NCCL's own cost model (time = latency +
/// bytes / bandwidth per algorithm and protocol, src/graph/tuning.cc). Calibrated per node type (never per
/// case) against nccl-tests measurements; each preset cites the rows it was fitted to. See
/// topologies/collective_cost.hpp for how each field enters. The defaults are NCCL's shape on an NVSwitch
/// node as fitted to nccl-tests on 8x H200 (topologies/comm_calibration.cpp).
struct CommEfficiency {
  double intra_bandwidth_fraction = 0.81;      ///< ring (Simple) busbw / intra_bytes_per_s, large messages
  double in_switch_bandwidth_fraction = 0.59;  ///< NVLS algbw / intra_bytes_per_s, large messages
  double nic_bandwidth_fraction = 0.95;        ///< achieved / NIC line rate, large messages
  double ll_bandwidth_fraction = 0.55;         ///< LL protocol bandwidth / Simple bandwidth (small messages)
  double ll128_bandwidth_fraction = 0.72;      ///< LL128 protocol bandwidth / Simple bandwidth
  double base_latency_s = 7.6e-6;              ///< fixed cost of one collective launch (NCCL baseLat), s
  double net_base_latency_s = 0.0;       ///< extra fixed cost when a collective crosses nodes (proxy), s
  double nic_latency_s = 3.0e-6;         ///< one inter-node step beyond the switch hops (NIC, PCIe, proxy), s
  double in_switch_latency_s = 57.0e-6;  ///< fixed cost of an NVLS (in-switch) collective, s
  int in_switch_min_ranks = 5;           ///< NCCL's tuner enables NVLS from this many GPUs of a node
  double ll_latency_fraction = 0.35;     ///< per-step latency of LL / of Simple
  double ll128_latency_fraction = 0.59;  ///< per-step latency of LL128 / of Simple
  /// The least one ring step between nodes costs, per protocol: NCCL's hwLatencies[NET][RING]
  /// (kNcclRingNetLatencyUs), its proxy, NIC and one switch. A fabric whose own step (nic_latency_s +
  /// switch hops, times the protocol's latency fraction) is slower pays its own (nccl_latency.hpp:
  /// network_step_s).
  double net_ll_step_latency_s = kNcclRingNetLatencyUs.ll * 1e-6;
  double net_ll128_step_latency_s = kNcclRingNetLatencyUs.ll128 * 1e-6;
  double net_simple_step_latency_s = kNcclRingNetLatencyUs.simple * 1e-6;
  /// NCCL's all-to-all inside a node (grouped sends and receives to and from every peer at once) busbw /
  /// intra_bytes_per_s, large messages; 0: as intra_bandwidth_fraction.
  double all_to_all_bandwidth_fraction = 0;
  /// The same for the kernels that write to their peers over NVLink themselves (DeepEP, HybridEP:
  /// topologies/collective_cost.hpp, AllToAllKernel::device_initiated); 0: as intra_bandwidth_fraction.
  double device_all_to_all_bandwidth_fraction = 0;

  /// all_to_all_bandwidth_fraction where it is set, else intra_bandwidth_fraction.
  [[nodiscard]] double nccl_all_to_all_fraction() const {
    return all_to_all_bandwidth_fraction > 0 ? all_to_all_bandwidth_fraction : intra_bandwidth_fraction;
  }
  /// device_all_to_all_bandwidth_fraction where it is set, else intra_bandwidth_fraction.
  [[nodiscard]] double device_all_to_all_fraction() const {
    return device_all_to_all_bandwidth_fraction > 0 ? device_all_to_all_bandwidth_fraction
                                                    : intra_bandwidth_fraction;
  }
  bool operator==(const CommEfficiency&) const = default;
};

struct NodeSpec {
  std::string name;  ///< preset name, e.g. "dgx-a100-80gb"
  GpuSpec gpu;
  /// A preset node whose GPU the scenario replaced by another GPU: `name` still names the preset, but no
  /// longer the hardware (a price keyed by the node preset does not apply).
  bool gpu_replaced = false;
  int gpus_per_node = 8;
  IntraNodeFabric fabric = IntraNodeFabric::nvswitch;
  double intra_bytes_per_s = 0;      ///< GPU-to-fabric bandwidth per GPU per direction, B/s
  double intra_latency_s = 0;        ///< one intra-node hop (α), s
  bool in_switch_reduction = false;  ///< NVLink SHARP (NVLS) available on the switch
  int nics_per_node = 0;
  double nic_bytes_per_s = 0;   ///< per NIC per direction, B/s
  double pcie_bytes_per_s = 0;  ///< GPU-to-host per GPU per direction, B/s
  double host_power_w = 0;      ///< node power beyond the GPUs (CPUs, NICs, fans), W
  CommEfficiency comm;          ///< collective efficiencies and latencies (calibrated per node type)
  bool operator==(const NodeSpec&) const = default;
};

}  // namespace trainsim::topo
