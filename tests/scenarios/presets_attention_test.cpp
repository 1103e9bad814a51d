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
#include <map>
#include <string>
#include <vector>

#include "models/workload/attention_kernel.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/studies/measurement_csv.hpp"
#include "sim/error.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

struct Point {
  std::string where;  ///< file:line
  std::string gpu;
  model::Attention kernel = model::Attention::flash;
  bool standard = false;
  bool backward = false;
  bool causal = false;
  double head_dim = 0;
  double seq_len = 0;
  double batch = 0;
  double heads = 0;
  double tflops = 0;
};

std::vector<Point> read_points() {
  std::vector<Point> points;
  const fs::path dir = fs::path(TRAINSIM_SOURCE_DIR) / "scenarios" / "validation" / "kernels";
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("attention-", 0) != 0 || entry.path().extension() != ".csv") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::map<std::string, std::size_t> column;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty() || line[0] == '#') continue;
      const std::vector<std::string> f = model::split_csv_record(line);
      if (column.empty()) {
        for (std::size_t i = 0; i < f.size(); ++i) column[f[i]] = i;
        for (const char* needed : {"gpu", "implementation", "pass", "causal", "head_dim", "seq_len", "batch",
                                   "heads", "tflops", "source"}) {
          REQUIRE_MESSAGE(column.count(needed) == 1, name << " lacks column " << std::string(needed));
        }
        continue;
      }
      REQUIRE(f.size() == column.size());
      Point p;
      p.where = name + ":" + std::to_string(number);
      p.gpu = f[column["gpu"]];
      const std::string impl = f[column["implementation"]];
      if (impl == "flash2") p.kernel = model::Attention::flash2;
      else if (impl == "flash3") p.kernel = model::Attention::flash3;
      else if (impl == "cudnn") p.kernel = model::Attention::cudnn;
      else if (impl == "standard") p.standard = true;
      else FAIL(p.where << ": unknown implementation " << impl);
      p.backward = f[column["pass"]] == "backward";
      p.causal = f[column["causal"]] == "true";
      p.head_dim = std::stod(f[column["head_dim"]]);
      p.seq_len = std::stod(f[column["seq_len"]]);
      p.batch = std::stod(f[column["batch"]]);
      p.heads = std::stod(f[column["heads"]]);
      p.tflops = std::stod(f[column["tflops"]]);
      REQUIRE_MESSAGE(!f[column["source"]].empty(), p.where << " has no source");
      points.push_back(p);
    }
  }
  return points;
}

// Executed FLOPs as the FlashAttention papers count them: 4·b·heads·s²·d forward, halved under a causal
// mask, 2.5 × forward for the backward.
double executed_flops(const Point& p) {
  const double forward = 4.0 * p.batch * p.heads * p.seq_len * p.seq_len * p.head_dim * (p.causal ? 0.5 : 1.0);
  return p.backward ? 2.5 * forward : forward;
}

}  // namespace

TEST_CASE("every transcribed fused-attention point is predicted within 10 % by its GPU's preset") {
  const std::vector<Point> points = read_points();
  int checked = 0;
  double worst = 0;
  for (const Point& p : points) {
    if (p.standard) continue;
    const topo::GpuSpec gpu = scenario::gpu_preset(p.gpu);
    const model::AttentionVariant variant{p.kernel, p.backward, p.causal, 1};
    const double flops = executed_flops(p);
    const double efficiency =
        model::attention_kernel_efficiency(flops, p.head_dim, p.seq_len, variant, gpu.efficiency, gpu.name);
    const double predicted_tflops = efficiency * gpu.peak.bf16 / 1e12;
    const double error = predicted_tflops / p.tflops - 1.0;
    INFO(p.where << ": predicted " << predicted_tflops << " TFLOP/s, published " << p.tflops);
    CHECK(std::abs(error) <= 0.10);
    worst = std::max(worst, std::abs(error));
    ++checked;
  }
  MESSAGE("fused-attention points checked: " << checked << ", worst |error| " << worst);
  // FlashAttention-3 Figures 5 and 6: 3 kernels x (6 forward panels + 2 backward panels) x 6 lengths.
  CHECK(checked >= 144);
}

TEST_CASE("causal masking halves the work but lowers the efficiency, most at short sequences") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  for (const model::Attention k : {model::Attention::flash2, model::Attention::flash3, model::Attention::cudnn}) {
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
  CHECK_THROWS_AS((void)model::attention_kernel_efficiency(1e12, 128, 4096, flash3, a100.efficiency, a100.name),
                  InputError);
}

TEST_CASE("ring attention (cp > 1) runs its steps on s/cp-key chunks: lower efficiency than one kernel") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  const auto eff = [&](bool causal, int cp) {
    return model::attention_kernel_efficiency(1e15, 128, 131072.0,
                                              model::AttentionVariant{model::Attention::cudnn, false, causal, cp},
                                              h100.efficiency, h100.name);
  };
  // Unmasked: every step loops over s/cp keys, so the ring equals one kernel over s/cp keys.
  const model::AttentionVariant one{model::Attention::cudnn, false, false, 1};
  CHECK(eff(false, 16) == doctest::Approx(model::attention_kernel_efficiency(1e15 / 16, 128, 131072.0 / 16, one,
                                                                             h100.efficiency, h100.name)));
  // Chunks of 128K/64 = 2K keys are slower per FLOP than chunks of 8K, and slower than one causal kernel
  // over 128K keys.
  CHECK(eff(true, 64) < eff(true, 16));
  CHECK(eff(true, 64) < eff(true, 1));
  // Causal load balancing leaves all steps but the diagonal unmasked: at cp = 16 the masked diagonal is
  // 1/16 of the work, so the ring runs within a few per cent of an unmasked ring.
  CHECK(eff(true, 16) > 0.95 * eff(false, 16));
  CHECK(eff(true, 16) < eff(false, 16));
}
