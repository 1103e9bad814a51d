// One training step simulated end to end (plan, costs, lowering, event run) at the scales of issue 6's
// targets, and the analytic fast path's layouts per second. Inputs are built in code from the presets'
// datasheet values so the benchmark needs no scenario files.
#include <benchmark/benchmark.h>

#include "models/step_simulator.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

topo::ClusterSpec dgx_a100(std::int64_t nodes) {
  topo::ClusterSpec c;
  auto& n = c.node;
  n.gpu.peak.fp32 = 19.5e12;
  n.gpu.peak.bf16 = 312e12;
  n.gpu.peak.fp16 = 312e12;
  n.gpu.hbm_bytes = 80.0 * (1ULL << 30);
  n.gpu.hbm_bytes_per_s = 2039e9;
  n.gpus_per_node = 8;
  n.intra_bytes_per_s = 300e9;
  n.intra_latency_s = 2e-6;
  n.nics_per_node = 8;
  n.nic_bytes_per_s = 25e9;
  n.pcie_bytes_per_s = 32e9;
  c.nodes = nodes;
  return c;
}

topo::ClusterSpec dgx_h100(std::int64_t nodes) {
  topo::ClusterSpec c;
  auto& n = c.node;
  n.gpu.peak.fp32 = 67e12;
  n.gpu.peak.bf16 = 989e12;
  n.gpu.peak.fp16 = 989e12;
  n.gpu.peak.fp8 = 1979e12;
  n.gpu.hbm_bytes = 80.0 * (1ULL << 30);
  n.gpu.hbm_bytes_per_s = 3.35e12;
  n.gpus_per_node = 8;
  n.intra_bytes_per_s = 450e9;
  n.intra_latency_s = 2e-6;
  n.nics_per_node = 8;
  n.nic_bytes_per_s = 50e9;
  n.pcie_bytes_per_s = 64e9;
  c.nodes = nodes;
  return c;
}

// GPT-3 175B on 1,024 A100: tp 8, pp 16, dp 8, global batch 1536, micro-batch 1 (issue 6 target).
StepInput gpt3_175b() {
  StepInput in;
  in.model.layers = 96;
  in.model.hidden = 12288;
  in.model.heads = 96;
  in.model.ffn_hidden = 49152;
  in.model.vocab = 51200;
  in.model.seq_len = 2048;
  in.cluster = dgx_a100(128);
  in.plan.tp = 8;
  in.plan.pp = 16;
  in.plan.dp = 8;
  in.plan.sequence_parallel = true;
  in.plan.zero = 1;
  in.plan.recompute = Recompute::selective;
  in.training.global_batch = 1536;
  return in;
}

// Llama-3 405B on 16,384 H100: tp 8, pp 16, cp 1, dp 128, 2,048 sequences of 8,192 tokens (16M tokens).
StepInput llama3_405b() {
  StepInput in;
  in.model.layers = 126;
  in.model.hidden = 16384;
  in.model.heads = 128;
  in.model.kv_heads = 8;
  in.model.ffn_hidden = 53248;
  in.model.vocab = 128256;
  in.model.seq_len = 8192;
  in.model.mlp = Mlp::swiglu;
  in.model.norm = Norm::rmsnorm;
  in.model.position = Position::rope;
  in.model.bias = false;
  in.cluster = dgx_h100(2048);
  in.plan.tp = 8;
  in.plan.pp = 16;
  in.plan.dp = 128;
  in.plan.sequence_parallel = true;
  in.plan.zero = 1;
  in.training.global_batch = 2048;
  return in;
}

void BM_Gpt3_175b_1024_A100_Event(benchmark::State& state) {
  const StepInput in = gpt3_175b();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event));
}
BENCHMARK(BM_Gpt3_175b_1024_A100_Event)->Unit(benchmark::kMillisecond);

void BM_Llama3_405b_16k_H100_Event(benchmark::State& state) {
  const StepInput in = llama3_405b();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event));
}
BENCHMARK(BM_Llama3_405b_16k_H100_Event)->Unit(benchmark::kMillisecond);

// A search's inner loop: the GPT-3 layout space on 1,024 A100 (tp × pp × micro-batch × recompute),
// analytic fidelity. items_per_second is layouts per second on one core.
void BM_Analytic_Layouts(benchmark::State& state) {
  std::vector<StepInput> layouts;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {4, 8, 16, 32}) {
      for (int mb : {1, 2}) {
        for (Recompute rc : {Recompute::selective, Recompute::full}) {
          StepInput in = gpt3_175b();
          in.plan.tp = tp;
          in.plan.pp = pp;
          in.plan.dp = 1024 / (tp * pp);
          in.plan.micro_batch = mb;
          in.plan.recompute = rc;
          layouts.push_back(in);
        }
      }
    }
  }
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(simulate_step(layouts[i], Fidelity::analytic));
    i = (i + 1) % layouts.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Analytic_Layouts);

}  // namespace
