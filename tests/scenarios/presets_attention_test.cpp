// The GPU presets' fused-attention constants against the published kernel benchmarks transcribed in
// scenarios/validation/kernels/attention-*.csv: every point of a fused kernel (flash2, flash3, cudnn) is
// predicted by models/workload/attention_kernel.hpp with the preset of the point's GPU within that GPU's
// bound (worst_error_bound below). Standard-attention rows are kept in the CSVs for reference but not checked
// here: unfused attention is priced as separate matmuls and memory-bound softmax kernels
// (models/workload/layer_ops.cpp), not by this kernel model.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
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

// The worst |error| a kernel's points may show on a GPU: the kernel model's accuracy target, 10 % (the H100
// fit's, models/workload/attention_kernel.cpp). One exception, named: FlashAttention-2 on B200 keeps the H100
// kernel shape (only its fraction is fitted), which its B200 bars do not follow; its worst point is 14.9 %,
// and its 15 % is a regression ratchet at that point, not an accuracy the model claims.
double worst_error_bound(const std::string& gpu, model::Attention kernel) {
  return gpu == "b200" && kernel == model::Attention::flash2 ? 0.15 : 0.10;
}

// The worst |error| of a GPU's cuDNN points, its fraction refitted (the kernel stage), with the cuDNN shape
// in `gpu.efficiency`.
double cudnn_worst_error(topo::GpuSpec gpu, const std::vector<model::AttentionKernelPoint>& pts) {
  for (const model::KernelStageFit& f : model::fit_attention_kernel_stage(gpu, pts)) {
    if (f.kernel == model::Attention::cudnn) return std::abs(f.stats.worst_error);
  }
  return 1.0;
}

// Fused-kernel points per GPU and kernel in the CSVs (attention-h100-fa3-paper.csv: FlashAttention-3
// Figures 5 and 6, 8 panels x 6 lengths per kernel; attention-b200-fa4-paper.csv: FlashAttention-4 Figures
// 4-6, 5 cuDNN and 4 FlashAttention-2 panels x 6 lengths; attention-blackwell-cudnn-frontend.csv: 30 cuDNN
// points per GB200/GB300 and 10 FlashAttention-2 points per Blackwell GPU).
const std::map<std::string, std::map<model::Attention, std::size_t>> kPoints = {
    {"h100-sxm",
     {{model::Attention::flash2, 48}, {model::Attention::flash3, 48}, {model::Attention::cudnn, 48}}},
    {"b200", {{model::Attention::flash2, 34}, {model::Attention::cudnn, 30}}},
    {"gb200", {{model::Attention::flash2, 10}, {model::Attention::cudnn, 30}}},
    {"gb300", {{model::Attention::flash2, 10}, {model::Attention::cudnn, 30}}}};

}  // namespace

TEST_CASE("every transcribed fused-attention point is predicted within its GPU's bound by its GPU's preset") {
  std::map<std::string, std::size_t> checked;
  std::map<std::string, double> worst;
  for (const model::AttentionKernelPoint& p : points()) {
    if (!model::is_fused(p.kernel)) continue;
    REQUIRE(kPoints.count(p.gpu) == 1);
    const double predicted = model::predicted_attention_tflops(p, scenario::gpu_preset(p.gpu));
    const double error = predicted / p.tflops - 1.0;
    INFO(p.where << ": predicted " << predicted << " TFLOP/s, published " << p.tflops);
    CHECK(std::abs(error) <= worst_error_bound(p.gpu, p.kernel));
    worst[p.gpu] = std::max(worst[p.gpu], std::abs(error));
    ++checked[p.gpu];
  }
  for (const auto& [gpu, kernels] : kPoints) {
    std::size_t expected = 0;
    for (const auto& [kernel, n] : kernels) expected += n;
    MESSAGE(gpu << ": fused-attention points checked " << checked[gpu] << ", worst |error| " << worst[gpu]);
    CHECK(checked[gpu] == expected);
  }
}

TEST_CASE("the presets' attention fractions are what calibrate's kernel stage fits to the CSVs") {
  for (const auto& [name, kernels] : kPoints) {
    topo::GpuSpec gpu = scenario::gpu_preset(name);
    const topo::GpuSpec shipped = gpu;
    const std::vector<model::KernelStageFit> fits = model::fit_attention_kernel_stage(gpu, points());
    REQUIRE(fits.size() == kernels.size());
    for (const model::KernelStageFit& f : fits) {
      INFO(name << " kernel " << static_cast<int>(f.kernel) << ": fitted " << f.after << " from " << f.points
                << " points, shipped " << f.before);
      MESSAGE(name << " kernel " << static_cast<int>(f.kernel) << ": fitted " << f.after << ", shipped "
                   << f.before << ", worst error " << f.stats.worst_error << ", MAPE " << f.stats.mape);
      REQUIRE(kernels.count(f.kernel) == 1);
      CHECK(f.points == kernels.at(f.kernel));
      // The preset rounds to three digits.
      CHECK(f.after == doctest::Approx(f.before).epsilon(0.002));
      CHECK(std::abs(f.stats.worst_error) <= worst_error_bound(name, f.kernel));
      CHECK(model::attention_kernel_fraction(f.kernel, shipped.efficiency) ==
            doctest::Approx(f.after).epsilon(0.002));
    }
  }
}

TEST_CASE("the Blackwell presets' cuDNN key length and backward ratio are the minimax fit on their grid") {
  // Fitted by a search over key lengths in steps of 25 and backward ratios in steps of 0.005, the fraction
  // refitted at each (the kernel stage's minimax rule): the shipped pair has a worst error no larger than any
  // of its eight neighbours', and lower than the H100 shape's (204 keys, backward 0.723) on the same points.
  const std::vector<model::AttentionKernelPoint> pts = points();
  for (const char* name : {"b200", "gb200", "gb300"}) {
    CAPTURE(name);
    const topo::GpuSpec gpu = scenario::gpu_preset(name);
    const double half = gpu.efficiency.cudnn_attention_half_key_len;
    const double ratio = gpu.efficiency.cudnn_attention_backward_ratio;
    REQUIRE((half > 0 && ratio > 0));
    const auto worst_at = [&](double h, double r) {
      topo::GpuSpec g = gpu;
      g.efficiency.cudnn_attention_half_key_len = h;
      g.efficiency.cudnn_attention_backward_ratio = r;
      return cudnn_worst_error(g, pts);
    };
    const double shipped = worst_at(half, ratio);
    for (const double dh : {-25.0, 0.0, 25.0}) {
      for (const double dr : {-0.005, 0.0, 0.005}) {
        if (dh == 0 && dr == 0) continue;
        CHECK(shipped <= worst_at(half + dh, ratio + dr) + 1e-9);
      }
    }
    CHECK(shipped < worst_at(204, 0.723));
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
