#pragma once
// Hand-built inputs shared by the tests and the benchmarks: GPUs, DGX nodes, published model shapes and the
// step inputs built from them. Built in code, not loaded from the presets, so that a test of the step model
// does not depend on the YAML loader, and a change to a preset cannot move a test's expected value.
//
// Every value is a datasheet or paper figure, cited at its function; the hardware matches the preset of the
// same name in topologies/presets (peaks, memory, links), except that efficiencies and collective
// calibration stay at the header defaults (topologies/hardware.hpp) and power is left at zero: the tests
// that use these derive their expectations from the datasheet figures, not from fitted ones.
//
// A test that needs a value other than the datasheet's (a round number to compute by hand, a field left
// out on purpose) takes the fixture and overrides that field where it uses it, with a comment saying why.
#include <cstdint>

#include "models/spec/transformer_spec.hpp"
#include "models/step/step_simulator.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::testing {

// ---- GPUs ---------------------------------------------------------------------------------------------

/// NVIDIA A100 SXM4 80GB, dense (no sparsity) values of the A100 Tensor Core GPU datasheet (2021):
/// FP32 19.5, TF32 156, FP16/BF16 312 TFLOP/s; 80 GB HBM2e (80 GiB) at 2,039 GB/s; NVLink 600 GB/s
/// bidirectional = 300 GB/s per direction.
inline topo::GpuSpec a100_sxm4_80gb() {
  topo::GpuSpec g;
  g.name = "a100-sxm4-80gb";
  g.peak.fp32 = 19.5e12;
  g.peak.tf32 = 156e12;
  g.peak.fp16 = 312e12;
  g.peak.bf16 = 312e12;
  g.hbm_bytes = 80.0 * (1ULL << 30);
  g.hbm_bytes_per_s = 2039e9;
  g.nvlink_bytes_per_s = 300e9;
  return g;
}

/// NVIDIA H100 SXM5 80GB, H100 Tensor Core GPU datasheet (2023), SXM column. The datasheet quotes tensor
/// throughput with sparsity; the dense values are half of it (as in topologies/presets/gpus/h100-sxm.yaml):
/// FP32 67, TF32 494.7, FP16/BF16 989.4, FP8 1,978.9 TFLOP/s; 80 GB HBM3 (80 GiB) at 3.35 TB/s; NVLink
/// 900 GB/s bidirectional = 450 GB/s per direction.
inline topo::GpuSpec h100_sxm() {
  topo::GpuSpec g;
  g.name = "h100-sxm";
  g.peak.fp32 = 67e12;
  g.peak.tf32 = 494.7e12;
  g.peak.fp16 = 989.4e12;
  g.peak.bf16 = 989.4e12;
  g.peak.fp8 = 1978.9e12;
  g.hbm_bytes = 80.0 * (1ULL << 30);
  g.hbm_bytes_per_s = 3.35e12;
  g.nvlink_bytes_per_s = 450e9;
  return g;
}

// ---- Clusters -----------------------------------------------------------------------------------------

/// `nodes` NVIDIA DGX A100 640GB, DGX A100 datasheet (2021): 8 A100 SXM4 80GB on 6 NVSwitches (300 GB/s
/// per GPU per direction), 8 single-port ConnectX-6 HDR InfiniBand NICs of 200 Gb/s (25 GB/s), PCIe Gen4
/// x16 (32 GB/s per direction). The 2 us intra-node hop is the presets' estimate of NCCL's small-message
/// latency, not a datasheet value. On a rail-optimized fat-tree (the NetworkSpec default).
inline topo::ClusterSpec dgx_a100(std::int64_t nodes) {
  topo::ClusterSpec c;
  topo::NodeSpec& n = c.node;
  n.name = "dgx-a100-80gb";
  n.gpu = a100_sxm4_80gb();
  n.gpus_per_node = 8;
  n.fabric = topo::IntraNodeFabric::nvswitch;
  n.intra_bytes_per_s = 300e9;
  n.intra_latency_s = 2e-6;
  n.in_switch_reduction = false;  // 2nd-generation NVSwitch has no NVLink SHARP
  n.nics_per_node = 8;
  n.nic_bytes_per_s = 25e9;
  n.pcie_bytes_per_s = 32e9;
  c.nodes = nodes;
  return c;
}

/// `nodes` NVIDIA DGX H100, DGX H100 datasheet (2023): 8 H100 SXM5 80GB on 4 3rd-generation NVSwitches
/// (450 GB/s per GPU per direction, NVLink SHARP), 8 ConnectX-7 NICs of 400 Gb/s (50 GB/s), PCIe Gen5 x16
/// (64 GB/s per direction). Intra-node hop 2 us as for dgx_a100. On a rail-optimized fat-tree.
inline topo::ClusterSpec dgx_h100(std::int64_t nodes) {
  topo::ClusterSpec c;
  topo::NodeSpec& n = c.node;
  n.name = "dgx-h100";
  n.gpu = h100_sxm();
  n.gpus_per_node = 8;
  n.fabric = topo::IntraNodeFabric::nvswitch;
  n.intra_bytes_per_s = 450e9;
  n.intra_latency_s = 2e-6;
  n.in_switch_reduction = true;
  n.nics_per_node = 8;
  n.nic_bytes_per_s = 50e9;
  n.pcie_bytes_per_s = 64e9;
  c.nodes = nodes;
  return c;
}

/// Not a datasheet node: DGX-like nodes of round numbers for hand arithmetic in the topology tests. `gpus`
/// GPUs on an NVSwitch of 100 GB/s per GPU and 2 us per step, as many NICs of 50 GB/s with 4 us of NIC
/// latency, both at bandwidth efficiency 1 (what a link carries is its line rate); 1 us per switch,
/// 64-port switches, a rail-optimized fat-tree. No GPU figures: graph and collective tests need none.
inline topo::ClusterSpec round_number_cluster(std::int64_t nodes, int gpus = 8) {
  topo::ClusterSpec c;
  topo::NodeSpec& n = c.node;
  n.name = "round-number-test-node";
  n.gpus_per_node = gpus;
  n.intra_bytes_per_s = 100e9;
  n.intra_latency_s = 2e-6;
  n.nics_per_node = gpus;
  n.nic_bytes_per_s = 50e9;
  n.comm.intra_bandwidth_fraction = 1.0;
  n.comm.nic_bandwidth_fraction = 1.0;
  n.comm.nic_latency_s = 4e-6;
  c.nodes = nodes;
  c.network.topology = topo::FabricTopology::fat_tree;
  c.network.switch_latency_s = 1e-6;
  c.network.switch_radix = 64;
  return c;
}

// ---- Models -------------------------------------------------------------------------------------------

/// A GPT-2/GPT-3 style decoder (Radford et al. 2019; Brown et al. 2020): gelu MLP of 4·h, layernorm,
/// learned positions, biases, untied embeddings, flash attention, and Megatron-LM's GPT-2 vocabulary padded
/// to 51,200 (Narayanan et al. 2021, Korthikanti et al. 2022). Width and depth are the caller's.
/// ffn_hidden stays 0 ("4 · hidden"), not 4 · hidden written out: tests take this spec, change `hidden`,
/// and expect the MLP to follow.
inline model::TransformerSpec gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                  std::int64_t seq_len = 2048) {
  model::TransformerSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.vocab = 51200;
  m.seq_len = seq_len;
  return m;
}

/// A two-layer MoE small enough to count by hand: h = 512, 8 heads, 1,024-token sequences, 4 gelu experts
/// of 1,024, top 2 (capacity factor 1, force-balanced).
inline model::TransformerSpec four_expert_moe() {
  model::TransformerSpec m = gpt(2, 512, 8, 1024);
  m.experts = 4;
  m.top_k = 2;
  m.expert_ffn_hidden = 1024;
  return m;
}

/// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d_model 12,288, 96 heads, context 2,048, tied
/// embeddings; with Megatron's padded vocabulary of 51,200 as trained in Narayanan et al. 2021 and
/// Korthikanti et al. 2022 (the paper's own count uses 50,257: override `vocab` for it).
inline model::TransformerSpec gpt3_175b(model::Attention attention = model::Attention::flash) {
  model::TransformerSpec m = gpt(96, 12288, 96, 2048);
  m.name = "gpt3-175b";
  m.tied_embeddings = true;
  m.attention = attention;
  return m;
}

/// A Llama-family decoder (Touvron et al. 2023; Llama Team 2024): swiglu MLP, rmsnorm, rope, no biases,
/// untied embeddings, grouped-query attention with `kv_heads` key/value heads, 8,192 tokens of context.
inline model::TransformerSpec llama(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                                    std::int64_t kv_heads, std::int64_t ffn_hidden, std::int64_t vocab) {
  model::TransformerSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  m.vocab = vocab;
  m.seq_len = 8192;
  m.mlp = model::Mlp::swiglu;
  m.norm = model::Norm::rmsnorm;
  m.position = model::Position::rope;
  m.bias = false;
  return m;
}

/// Llama-3 8B, 70B and 405B (Llama Team 2024, "The Llama 3 Herd of Models", Table 3, and the released
/// config.json files): vocabulary 128,256, 8 key/value heads.
inline model::TransformerSpec llama3_8b() {
  model::TransformerSpec m = llama(32, 4096, 32, 8, 14336, 128256);
  m.name = "llama3-8b";
  return m;
}
inline model::TransformerSpec llama3_70b() {
  model::TransformerSpec m = llama(80, 8192, 64, 8, 28672, 128256);
  m.name = "llama3-70b";
  return m;
}
inline model::TransformerSpec llama3_405b() {
  model::TransformerSpec m = llama(126, 16384, 128, 8, 53248, 128256);
  m.name = "llama3-405b";
  return m;
}

// ---- Step inputs --------------------------------------------------------------------------------------

/// A small GPT of GPT-3 Medium's width (Brown et al. 2020, Table 2.1: d_model 1,024, 16 heads of 64) with
/// 16 layers and 1,024-token sequences on `nodes` DGX A100: tp × pp × dp as given, sequence parallel,
/// ZeRO-1, m = global_batch / dp micro-batches of one sequence. Small enough for the event simulator to
/// run in milliseconds, deep enough for every pipeline schedule up to pp 16. `hidden` and `seq_len` widen or
/// lengthen it (16 heads either way).
inline model::StepInput small_gpt_on_a100(std::int64_t nodes, int tp, int pp, std::int64_t dp,
                                          std::int64_t global_batch, std::int64_t hidden = 1024,
                                          std::int64_t seq_len = 1024) {
  model::StepInput in;
  in.model = gpt(16, hidden, 16, seq_len);
  in.cluster = dgx_a100(nodes);
  in.plan.tp = tp;
  in.plan.pp = pp;
  in.plan.dp = dp;
  in.plan.sequence_parallel = true;
  in.plan.zero = model::ZeroStage::optimizer_states;
  in.training.global_batch = global_batch;
  return in;
}

/// GPT-3 175B on 1,024 A100 (128 DGX A100) as Narayanan et al. 2021 (Table 1) lay it out: tp 8, pp 16,
/// dp 8, global batch 1,536 of micro-batch 1, 1F1B; with sequence parallelism and selective recompute
/// (Korthikanti et al. 2022) and ZeRO-1. scenarios/examples/gpt3-175b-1024-a100.yaml runs this layout
/// with the interleaved schedule on top.
inline model::StepInput gpt3_175b_on_1024_a100() {
  model::StepInput in;
  in.model = gpt3_175b();
  in.cluster = dgx_a100(128);
  in.plan.tp = 8;
  in.plan.pp = 16;
  in.plan.dp = 8;
  in.plan.sequence_parallel = true;
  in.plan.zero = model::ZeroStage::optimizer_states;
  in.plan.recompute = model::Recompute::selective;
  in.training.global_batch = 1536;
  return in;
}

/// Llama-3 405B pre-training on 16,384 H100 (2,048 DGX H100) as in Llama Team 2024, Table 4 (first stage,
/// 8K context): tp 8, pp 16, cp 1, dp 128, 2,048 sequences of 8,192 tokens (16M tokens) per step; with
/// sequence parallelism and ZeRO-1.
inline model::StepInput llama3_405b_on_16k_h100() {
  model::StepInput in;
  in.model = llama3_405b();
  in.cluster = dgx_h100(2048);
  in.plan.tp = 8;
  in.plan.pp = 16;
  in.plan.dp = 128;
  in.plan.sequence_parallel = true;
  in.plan.zero = model::ZeroStage::optimizer_states;
  in.training.global_batch = 2048;
  return in;
}

}  // namespace trainsim::testing
