#include "models/report/explain.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "models/step/memory.hpp"
#include "models/workload/parameters.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;
using trainsim::testing::gpt3_175b;

namespace {

const ExplainLine* find_line(const Explanation& e, const std::string& section_prefix,
                             const std::string& label) {
  for (const auto& s : e.sections) {
    if (s.title.rfind(section_prefix, 0) != 0) continue;
    for (const auto& l : s.lines) {
      if (l.label == label) return &l;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the explanation carries the parameter count and the worst stage's memory lines") {
  const TransformerSpec m = gpt3_175b();
  const ParallelPlan p{.tp = 8,
                       .pp = 16,
                       .dp = 8,
                       .sequence_parallel = true,
                       .zero = ZeroStage::optimizer_states,
                       .recompute = Recompute::selective};
  const TrainingSpec t;
  const Explanation e = explain(m, p, t, trainsim::testing::a100_sxm4_80gb());
  const ExplainLine* params = find_line(e, "model", "parameters");
  REQUIRE(params != nullptr);
  CHECK(params->value == doctest::Approx(parameter_count(m)).scale(0));
  const MemoryEstimate est = estimate_memory(m, p, t, trainsim::testing::a100_sxm4_80gb());
  const ExplainLine* total = find_line(e, "memory per GPU, stage 0 (worst)", "total");
  REQUIRE(total != nullptr);
  CHECK(total->value == doctest::Approx(est.per_gpu).scale(0));
  CHECK(e.fits == est.fits);
  CHECK(to_text(e).find("optimizer: adamw") != std::string::npos);
}

TEST_CASE("the framework section names the element-wise kernels' bandwidth where the GPU sets its own") {
  const ParallelPlan p{
      .tp = 8, .pp = 16, .dp = 8, .sequence_parallel = true, .zero = ZeroStage::optimizer_states};
  trainsim::topo::GpuSpec gpu = trainsim::testing::a100_sxm4_80gb();
  CHECK(to_text(explain(gpt3_175b(), p, TrainingSpec{}, gpu)).find("element-wise kernels") ==
        std::string::npos);
  // 0.25 of 2.039 TB/s = 0.51 TB/s, the library roof left at the preset's fraction.
  gpu.efficiency.elementwise_bandwidth_fraction = 0.25;
  const std::string text = to_text(explain(gpt3_175b(), p, TrainingSpec{}, gpu));
  CHECK(text.find("at 0.250 of its 2.04 TB/s = 0.51 TB/s") != std::string::npos);
  CHECK(text.find(fmt::format("memory roof at {:.2f}", gpu.efficiency.memory_bandwidth_fraction)) !=
        std::string::npos);
}

TEST_CASE("the framework section counts a MoE layer's router kernels, fewer under a flex dispatcher") {
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  ParallelPlan p{.tp = 1, .pp = 1, .dp = 2, .ep = 2};
  const trainsim::topo::GpuSpec gpu = trainsim::testing::h100_sxm();
  const std::string alltoall = to_text(explain(m, p, TrainingSpec{}, gpu));
  CHECK(alltoall.find("router and dispatch preprocessing: 31 kernels in its forward") != std::string::npos);
  CHECK(alltoall.find(
            fmt::format("each at least {:.0f} us of GPU and 20 us of host (framework.router_kernels 31)",
                        gpu.efficiency.kernel_overhead_s * 1e6)) != std::string::npos);
  p.framework.moe_dispatcher = MoeDispatcher::hybridep;
  CHECK(to_text(explain(m, p, TrainingSpec{}, gpu)).find("17 kernels in its forward") != std::string::npos);
  CHECK(to_text(explain(m, p, TrainingSpec{}, gpu)).find("14 fewer under hybridep's fused preprocessing") !=
        std::string::npos);
  CHECK(to_text(explain(gpt3_175b(), p, TrainingSpec{}, gpu)).find("router and dispatch") ==
        std::string::npos);
}

TEST_CASE("an explanation of a plan that does not fit says why") {
  const ParallelPlan p{.tp = 8, .pp = 1, .dp = 1, .zero = ZeroStage::none};
  const Explanation e = explain(gpt3_175b(), p, TrainingSpec{}, trainsim::testing::a100_sxm4_80gb());
  CHECK_FALSE(e.fits);
  const std::string text = to_text(e);
  CHECK(text.find("does not fit: stage 0 needs") != std::string::npos);
  CHECK(text.find("ZeRO-1 shards it over data-parallel ranks, and dp is 1") != std::string::npos);
}

TEST_CASE("standard attention shows the score tensor flash attention does not keep") {
  TransformerSpec m = gpt3_175b();
  m.attention = Attention::standard;
  const ParallelPlan p{.tp = 8, .pp = 16, .dp = 8};
  const Explanation e = explain(m, p, TrainingSpec{}, trainsim::testing::a100_sxm4_80gb());
  const ExplainLine* scores = find_line(e, "attention kernel", "kept scores per layer (standard)");
  REQUIRE(scores != nullptr);
  // Korthikanti Sec. 4.1: 5·a·s²·b bytes per layer, split by tp: 5 x 96/8 x 2048² x 1.
  CHECK(scores->value == doctest::Approx(5.0 * 12 * 2048 * 2048).scale(0));
}

TEST_CASE("a generic layer-list model is explained without an attention section") {
  TransformerSpec m;
  m.generic_layers = {{"conv", 1e6, 2e9, 1e6}, {"fc", 4e6, 8e9, 2e5}};
  const Explanation e = explain(m, ParallelPlan{}, TrainingSpec{}, trainsim::testing::a100_sxm4_80gb());
  const ExplainLine* params = find_line(e, "model", "parameters");
  REQUIRE(params != nullptr);
  CHECK(params->value == doctest::Approx(5e6).scale(0));
  for (const auto& s : e.sections) CHECK(s.title != "attention kernel");
  CHECK(e.fits);
}

TEST_CASE("under fp8 the explanation shows each Transformer Engine memory term, and the total counts them") {
  const TransformerSpec m = gpt3_175b();
  const ParallelPlan p{
      .tp = 8, .pp = 16, .dp = 8, .sequence_parallel = true, .zero = ZeroStage::optimizer_states};
  TrainingSpec bf16;
  TrainingSpec fp8;
  fp8.precision = trainsim::topo::Precision::fp8;
  const auto gpu = trainsim::testing::h100_sxm();
  const Explanation e = explain(m, p, fp8, gpu);
  const ExplainLine* copies = find_line(e, "memory per GPU, stage 0 (worst)", "fp8 weight copies");
  const ExplainLine* amax = find_line(e, "memory per GPU, stage 0 (worst)", "fp8 amax history");
  const ExplainLine* saved = find_line(e, "memory per GPU, stage 0 (worst)", "fp8 saved GEMM inputs");
  REQUIRE(copies != nullptr);
  REQUIRE(amax != nullptr);
  REQUIRE(saved != nullptr);
  CHECK(copies->value > 0);
  CHECK(amax->value > 0);
  CHECK(saved->value < 0);
  // The fp8 run differs from the bf16 one by exactly these terms (and the allocator reserve on them, 0 by
  // default: memory.reserve).
  const MemoryEstimate with_bf16 = estimate_memory(m, p, bf16, gpu);
  const MemoryEstimate with_fp8 = estimate_memory(m, p, fp8, gpu);
  const StageMemory& a = with_bf16.stages.front();
  const StageMemory& b = with_fp8.stages.front();
  CHECK(b.memory.weights == doctest::Approx(a.memory.weights + copies->value).scale(0));
  CHECK(b.memory.activations == doctest::Approx(a.memory.activations + saved->value).scale(0));
  CHECK(b.allocator_bytes - a.allocator_bytes ==
        doctest::Approx(MemoryOptions{}.allocator_fraction * (copies->value + amax->value + saved->value))
            .scale(1));  // the allocator fraction defaults to 0, and then both sides are 0
  CHECK(find_line(explain(m, p, bf16, gpu), "memory per GPU, stage 0 (worst)", "fp8 weight copies") ==
        nullptr);
}

TEST_CASE("the attention note names the key blocks the kernel loops over: a cp ring, or all keys gathered") {
  TransformerSpec m = gpt3_175b();
  m.attention = Attention::flash;
  m.seq_len = 8192;
  trainsim::topo::GpuSpec gpu = trainsim::testing::h100_sxm();
  gpu.efficiency.flash2_attention_fraction = 0.4;
  ParallelPlan p{.tp = 8, .pp = 16, .dp = 2, .cp = 4, .sequence_parallel = true};
  const auto note = [&] {
    for (const auto& s : explain(m, p, TrainingSpec{}, gpu).sections) {
      for (const std::string& n : s.notes) {
        if (n.rfind("kernel flash2", 0) == 0) return n;
      }
    }
    return std::string();
  };
  CHECK(note().find("ring of 4 steps over 2048 keys each") != std::string::npos);
  p.framework.cp_kv_all_gather = true;
  const std::string gathered = note();
  CHECK(gathered.find("one kernel over all 8192 keys gathered over cp 4") != std::string::npos);
  CHECK(gathered.find("ring of") == std::string::npos);
}

TEST_CASE("the attention note says where its kernel comes from: the GPU's default or the framework's code") {
  TransformerSpec m = gpt3_175b();
  trainsim::topo::GpuSpec gpu = trainsim::testing::h100_sxm();
  gpu.efficiency.flash2_attention_fraction = 0.4;
  ParallelPlan p{.tp = 8, .pp = 16, .dp = 2};
  const auto note = [&] {
    for (const auto& s : explain(m, p, TrainingSpec{}, gpu).sections) {
      for (const std::string& n : s.notes) {
        if (n.rfind("kernel ", 0) == 0) return n;
      }
    }
    return std::string();
  };
  m.attention = Attention::flash;  // the fixture GPU's default kernel is flash2
  CHECK(note().rfind("kernel flash2 (the GPU's default) on h100-sxm", 0) == 0);
  m.attention = Attention::flash2;  // as the loader names torchtitan's `flash`
  p.framework = framework_preset(FrameworkPreset::torchtitan);
  CHECK(note().rfind("kernel flash2 (torchtitan's model code) on h100-sxm", 0) == 0);
  p.framework = framework_preset(FrameworkPreset::megatron_core);  // written by hand: no origin to name
  CHECK(note().rfind("kernel flash2 on h100-sxm", 0) == 0);
}
