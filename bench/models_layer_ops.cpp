// Cost of building and timing one transformer layer's op lists: the step model does this per stage for
// every sweep or search point, so it bounds how many layouts per second a search can price.
#include <benchmark/benchmark.h>

#include "models/workload/kernel_time.hpp"
#include "models/workload/layer_ops.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

// Llama-3 70B's layer on one H100 of a DGX H100 (tp 8): the shared fixtures' datasheet values.
using trainsim::testing::llama3_70b;
trainsim::topo::GpuSpec h100() {
  return trainsim::testing::h100_sxm();
}

void BM_TransformerLayerOps(benchmark::State& state) {
  const TransformerSpec spec = llama3_70b();
  Shard shard;
  shard.tp = 8;
  shard.sequence_parallel = true;
  shard.cp = 2;
  shard.recompute = Recompute::full;
  for (auto _ : state) benchmark::DoNotOptimize(transformer_layer_ops(spec, shard));
}
BENCHMARK(BM_TransformerLayerOps);

void BM_LayerOpsTimed(benchmark::State& state) {
  const TransformerSpec spec = llama3_70b();
  const auto gpu = h100();
  Shard shard;
  shard.tp = 8;
  shard.sequence_parallel = true;
  for (auto _ : state) {
    const LayerOps ops = transformer_layer_ops(spec, shard);
    double t = 0;
    for (const LayerOp& op : ops.forward) {
      if (!op.communication) t += kernel_time(op.kernel, gpu, Precision::bf16);
    }
    for (const LayerOp& op : ops.backward) {
      if (!op.communication) t += kernel_time(op.kernel, gpu, Precision::bf16);
    }
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_LayerOpsTimed);

void BM_KernelTime(benchmark::State& state) {
  const auto gpu = h100();
  const KernelCost op{OpKind::fused_attention, 3e11, 2e8, 128, 4096};
  for (auto _ : state) benchmark::DoNotOptimize(kernel_time(op, gpu, Precision::bf16));
}
BENCHMARK(BM_KernelTime);

}  // namespace
