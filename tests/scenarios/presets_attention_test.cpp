// The GPU presets' fused-attention constants against the published kernel benchmarks transcribed in
// scenarios/validation/kernels/attention-*.csv: every point of a fused kernel (flash2, flash3, cudnn) is
// predicted within 10 % by models/workload/attention_kernel.hpp with the preset of the point's GPU.
// Standard-attention rows are kept in the CSVs for reference but not checked here: unfused attention is
// priced as separate matmuls and memory-bound softmax kernels (models/workload/layer_ops.cpp), not by this
// kernel model.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/workload/attention_kernel.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/studies/calibration.hpp"
#include "scenarios/studies/kernel_measurements.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

std::vector<model::AttentionKernelPoint> points() {
  return model::read_attention_kernel_points(std::string(TRAINSIM_SOURCE_DIR) +
                                             "/scenarios/validation/kernels");
}

}  // namespace

TEST_CASE("every transcribed fused-attention point is predicted within 10 % by its GPU's preset") {
  int checked = 0;
  double worst = 0;
  for (const model::AttentionKernelPoint& p : points()) {
    if (!model::is_fused(p.kernel)) continue;
    const double predicted = model::predicted_attention_tflops(p, scenario::gpu_preset(p.gpu));
    const double error = predicted / p.tflops - 1.0;
    INFO(p.where << ": predicted " << predicted << " TFLOP/s, published " << p.tflops);
    CHECK(std::abs(error) <= 0.10);
    worst = std::max(worst, std::abs(error));
    ++checked;
  }
  MESSAGE("fused-attention points checked: " << checked << ", worst |error| " << worst);
  // FlashAttention-3 Figures 5 and 6: 3 kernels x (6 forward panels + 2 backward panels) x 6 lengths.
  CHECK(checked >= 144);
}

TEST_CASE("the presets' attention fractions are what calibrate's kernel stage fits to the CSVs") {
  for (const char* name : {"h100-sxm"}) {
    topo::GpuSpec gpu = scenario::gpu_preset(name);
    const topo::GpuSpec shipped = gpu;
    const std::vector<model::KernelStageFit> fits = model::fit_attention_kernel_stage(gpu, points());
    REQUIRE(fits.size() == 3);
    for (const model::KernelStageFit& f : fits) {
      INFO(std::string(name) << " kernel " << static_cast<int>(f.kernel) << ": fitted " << f.after << " from "
                             << f.points << " points, shipped " << f.before);
      MESSAGE(std::string(name) << " kernel " << static_cast<int>(f.kernel) << ": fitted " << f.after
                                << ", shipped " << f.before << ", worst error " << f.stats.worst_error
                                << ", MAPE " << f.stats.mape);
      CHECK(f.points == 48);
      // The preset rounds to three digits.
      CHECK(f.after == doctest::Approx(f.before).epsilon(0.002));
      CHECK(std::abs(f.stats.worst_error) <= 0.10);
    }
    CHECK(model::attention_kernel_fraction(model::Attention::cudnn, shipped.efficiency) ==
          doctest::Approx(fits[2].after).epsilon(0.002));
  }
}

TEST_CASE("a bad kernel CSV is refused naming file and line") {
  const trainsim::testing::TempDir dir;
  const std::string file = dir.file("attention-bad.csv");
  {
    std::ofstream out(file);
    out << "gpu,implementation,pass,causal,head_dim,seq_len,batch,heads,tflops,source\n";
    out << "h100-sxm,flash4,forward,false,128,512,32,16,300,paper\n";
  }
  CHECK_THROWS_WITH_AS((void)model::read_attention_kernel_points(file),
                       doctest::Contains("attention-bad.csv:2"), InputError);
}

TEST_CASE("causal masking halves the work but lowers the efficiency, most at short sequences") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  for (const model::Attention k :
       {model::Attention::flash2, model::Attention::flash3, model::Attention::cudnn}) {
    const auto eff = [&](bool causal, double s) {
      return model::attention_kernel_efficiency(1e15, 128, s, model::AttentionVariant{k, false, causal, 1},
                                                h100.efficiency, h100.name);
    };
    CHECK(eff(true, 512) < eff(false, 512));
    CHECK(eff(true, 16384) < eff(false, 16384));
    CHECK(eff(true, 512) / eff(false, 512) < eff(true, 16384) / eff(false, 16384));
  }
}

TEST_CASE("flash resolves to the preset's default kernel, and a kernel a GPU lacks is an input error") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  const topo::GpuSpec a100 = scenario::gpu_preset("a100-sxm4-80gb");
  CHECK(model::resolve_attention(model::Attention::flash, h100.efficiency) == model::Attention::cudnn);
  CHECK(model::resolve_attention(model::Attention::flash, a100.efficiency) == model::Attention::flash2);
  CHECK(model::resolve_attention(model::Attention::flash3, a100.efficiency) == model::Attention::flash3);
  const model::AttentionVariant flash3{model::Attention::flash3, false, true, 1};
  CHECK_THROWS_AS(
      (void)model::attention_kernel_efficiency(1e12, 128, 4096, flash3, a100.efficiency, a100.name),
      InputError);
}

TEST_CASE("ring attention (cp > 1) runs its steps on s/cp-key chunks: lower efficiency than one kernel") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  const auto eff = [&](bool causal, int cp) {
    return model::attention_kernel_efficiency(
        1e15, 128, 131072.0, model::AttentionVariant{model::Attention::cudnn, false, causal, cp},
        h100.efficiency, h100.name);
  };
  // Unmasked: every step loops over s/cp keys, so the ring equals one kernel over s/cp keys.
  const model::AttentionVariant one{model::Attention::cudnn, false, false, 1};
  CHECK(eff(false, 16) == doctest::Approx(model::attention_kernel_efficiency(1e15 / 16, 128, 131072.0 / 16,
                                                                             one, h100.efficiency, h100.name))
                              .scale(0));
  // Chunks of 128K/64 = 2K keys are slower per FLOP than chunks of 8K, and slower than one causal kernel
  // over 128K keys.
  CHECK(eff(true, 64) < eff(true, 16));
  CHECK(eff(true, 64) < eff(true, 1));
  // Causal load balancing leaves all steps but the diagonal unmasked: at cp = 16 the masked diagonal is
  // 1/16 of the work, so the ring runs within a few per cent of an unmasked ring.
  CHECK(eff(true, 16) > 0.95 * eff(false, 16));
  CHECK(eff(true, 16) < eff(false, 16));
}
