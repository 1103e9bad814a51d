// Cost of building and timing one transformer layer's op lists: the step model does this per stage for
// every sweep or search point, so it bounds how many layouts per second a search can price.
#include <benchmark/benchmark.h>

#include "models/kernel_time.hpp"
#include "models/layer_ops.hpp"

using namespace trainsim::model;

namespace {

TransformerSpec llama3_70b() {
  TransformerSpec s;
  s.layers = 80;
  s.hidden = 8192;
  s.heads = 64;
  s.kv_heads = 8;
  s.ffn_hidden = 28672;
  s.vocab = 128256;
  s.seq_len = 8192;
  s.mlp = Mlp::swiglu;
  s.norm = Norm::rmsnorm;
  s.position = Position::rope;
  s.bias = false;
  return s;
}

trainsim::topo::GpuSpec h100() {
  trainsim::topo::GpuSpec g;
  g.name = "h100";
  g.peak.bf16 = 989e12;
  g.hbm_bytes_per_s = 3.35e12;
  return g;
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
