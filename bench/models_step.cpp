// One training step simulated end to end (plan, costs, lowering, event run) at the scales of
// the step targets in bench/README.md, and the analytic fast path's layouts per second. Inputs are the shared
// fixtures of tests/support/fixtures.hpp, built in code from datasheet values, so the benchmark needs no
// scenario files.
#include <benchmark/benchmark.h>

#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

void BM_Gpt3_175b_1024_A100_Event(benchmark::State& state) {
  const StepInput in = testing::gpt3_175b_on_1024_a100();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event));
}
BENCHMARK(BM_Gpt3_175b_1024_A100_Event)->Unit(benchmark::kMillisecond);

void BM_Llama3_405b_16k_H100_Event(benchmark::State& state) {
  const StepInput in = testing::llama3_405b_on_16k_h100();
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event));
}
BENCHMARK(BM_Llama3_405b_16k_H100_Event)->Unit(benchmark::kMillisecond);

// The event re-rank's typical candidate: GPT-3 175B on 64 A100 (8 DGX A100) at tp 8, pp 8, dp 1, micro-batch
// 2, interleaved over 6 virtual stages, no ZeRO or recompute: the second of `trainsim search
// scenarios/examples/gpt3-175b-sweep.yaml --set cluster.nodes=8 --set parallelism.pp=8`'s top 10, 768
// micro-batches through 48 virtual stages (about 2M tasks collapsed).
void BM_Gpt3_175b_64_A100_Interleaved_Event(benchmark::State& state) {
  StepInput in = testing::gpt3_175b_on_1024_a100();
  in.cluster = testing::dgx_a100(8);
  in.plan.pp = 8;
  in.plan.dp = 1;
  in.plan.micro_batch = 2;
  in.plan.schedule = Schedule::interleaved;
  in.plan.virtual_stages = 6;
  in.plan.zero = ZeroStage::none;
  in.plan.recompute = Recompute::none;
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event));
}
BENCHMARK(BM_Gpt3_175b_64_A100_Interleaved_Event)->Unit(benchmark::kMillisecond);

// The same two steps with every data-parallel replica and pipeline rank simulated and their transfers routed
// over the cluster graph (StepMode::full_cluster): the fabric in the step.
void full_cluster_step(benchmark::State& state, const StepInput& in) {
  StepOptions options;
  options.mode = StepMode::full_cluster;
  for (auto _ : state) benchmark::DoNotOptimize(simulate_step(in, Fidelity::event, options));
}

void BM_Gpt3_175b_1024_A100_FullCluster(benchmark::State& state) {
  full_cluster_step(state, testing::gpt3_175b_on_1024_a100());
}
BENCHMARK(BM_Gpt3_175b_1024_A100_FullCluster)->Unit(benchmark::kMillisecond);

void BM_Llama3_405b_16k_H100_FullCluster(benchmark::State& state) {
  full_cluster_step(state, testing::llama3_405b_on_16k_h100());
}
BENCHMARK(BM_Llama3_405b_16k_H100_FullCluster)->Unit(benchmark::kMillisecond);

// The same layout on eight times the GPUs: 131,072 H100 (16,384 DGX H100) at dp 1,024 and the same 16
// micro-batches per replica (global batch 16,384), one node straggling at 1.2x, so the step is the full
// cluster's with the straggler's replica slowed by its own. About 25M tasks (eight times the 16,384-GPU
// step's 3.1M): one iteration is tens of seconds of CPU and gigabytes, so run it alone (--benchmark_filter)
// and few times.
void BM_Llama3_405b_131k_H100_Straggler_FullCluster(benchmark::State& state) {
  StepInput in = testing::llama3_405b_on_16k_h100();
  in.cluster = testing::dgx_h100(16384);
  in.plan.dp = 1024;
  in.training.global_batch = 16384;
  in.cluster.stragglers.push_back({.node = 5000, .slowdown = 1.2});
  full_cluster_step(state, in);
}
BENCHMARK(BM_Llama3_405b_131k_H100_Straggler_FullCluster)->Unit(benchmark::kMillisecond)->Iterations(1);

// Times `layouts` one after another at the analytic fidelity, as a search scores them; items are layouts.
void time_analytic_layouts(benchmark::State& state, const std::vector<StepInput>& layouts) {
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(simulate_step(layouts[i], Fidelity::analytic));
    i = (i + 1) % layouts.size();
  }
  state.SetItemsProcessed(state.iterations());
}

// GPT-3 175B on 1,024 A100 laid out as tp × pp (dp the rest) at micro-batch mb.
StepInput gpt3_layout(int tp, int pp, int mb) {
  StepInput in = testing::gpt3_175b_on_1024_a100();
  in.plan.tp = tp;
  in.plan.pp = pp;
  in.plan.dp = 1024 / (tp * pp);
  in.plan.micro_batch = mb;
  return in;
}

// A search's inner loop: the GPT-3 layout space on 1,024 A100 (tp × pp × micro-batch × recompute),
// analytic fidelity. items_per_second is layouts per second on one core. With state.range(0) = 1 the GPU
// gets the H100 preset's shape-dependent GEMM constants (132 SMs, tile and wave quantisation per GEMM).
void BM_Analytic_Layouts(benchmark::State& state) {
  const bool gemm_shapes = state.range(0) == 1;
  std::vector<StepInput> layouts;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {4, 8, 16, 32}) {
      for (int mb : {1, 2}) {
        for (Recompute rc : {Recompute::selective, Recompute::full}) {
          StepInput in = gpt3_layout(tp, pp, mb);
          in.plan.recompute = rc;
          if (gemm_shapes) {
            auto& g = in.cluster.node.gpu;
            g.sm_count = 132;
            g.efficiency.matmul_half_flops = 0;
            g.efficiency.matmul_half_tile_efficiency = 1.0;
            g.efficiency.matmul_quarter_tile_efficiency = 0.8;
            g.efficiency.matmul_tile_k_overhead = 256;
            g.efficiency.matmul_split_k_min = 1024;
            g.efficiency.matmul_wave_quantisation = 0.5;
          }
          layouts.push_back(in);
        }
      }
    }
  }
  time_analytic_layouts(state, layouts);
}
BENCHMARK(BM_Analytic_Layouts)->Arg(0)->Arg(1);

// The same model's layouts under ZeRO-3 (pp 1–8): every pass's gathers and reductions on the shared port
// (models/step/shared_port.hpp), the closed form's per-unit path.
void BM_Analytic_Layouts_Zero3(benchmark::State& state) {
  std::vector<StepInput> layouts;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8}) {
      for (int mb : {1, 2}) {
        StepInput in = gpt3_layout(tp, pp, mb);
        in.plan.zero = ZeroStage::parameters;
        layouts.push_back(in);
      }
    }
  }
  time_analytic_layouts(state, layouts);
}
BENCHMARK(BM_Analytic_Layouts_Zero3);

}  // namespace
