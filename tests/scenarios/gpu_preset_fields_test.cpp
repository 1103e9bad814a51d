// The GPU preset key table: what the calibrate writer and the dump write is what the preset reader reads
// back, key for key, and the reader refuses a key the table does not have.
#include "scenarios/gpu_preset_fields.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "scenarios/preset_blocks.hpp"
#include "scenarios/presets.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

// The H100 preset with every kind of field moved off its shipped value, including ones a shipped preset
// leaves at the default (power limit, GEMM shape keys).
topo::GpuSpec changed_h100() {
  topo::GpuSpec g = gpu_preset("h100-sxm");
  g.name = "h100-test";
  g.peak.fp8 = 1500e12;
  g.power_limit_w = 550;
  g.idle_w = 70;
  g.sm_count = 114;
  g.efficiency_fit_gpus = 512;
  g.efficiency.matmul_peak_fraction = 0.61;
  g.efficiency.kernel_overhead_s = 7e-6;
  g.efficiency.attention_kernel = topo::AttentionKernel::flash2;
  g.efficiency.matmul_tile_m = 64;
  g.efficiency.overlap_compute_slowdown = 0.25;
  g.validation = "kernels: \"test\" GEMMs; steps: none";  // quotes and a colon survive the round trip
  return g;
}

// Each load writes its own file in a fresh TempDir: ctest runs the cases as parallel processes.
topo::GpuSpec load_text(const std::string& text, const std::string& name) {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file(name + ".yaml");
  std::ofstream(path) << text;
  return load_gpu_preset_file(path);
}

}  // namespace

TEST_CASE("a block-style GPU preset written from the table loads back to the same GPU, every key") {
  const topo::GpuSpec g = changed_h100();
  const std::string text = gpu_to_block_yaml(g, {"a note"});
  CHECK(text.starts_with("# a note\n"));
  const topo::GpuSpec back = load_text(text, "block");
  CHECK(back.name == "h100-test");
  CHECK(back.peak.fp8 == 1500e12);
  CHECK(back.power_limit_w == 550);
  CHECK(back.sm_count == 114);
  CHECK(back.efficiency_fit_gpus == 512);
  CHECK(back.efficiency.attention_kernel == topo::AttentionKernel::flash2);
  CHECK(back.efficiency.matmul_tile_m == 64);
  CHECK(back.efficiency.overlap_compute_slowdown == doctest::Approx(0.25).scale(0));
  CHECK(back.validation == "kernels: \"test\" GEMMs; steps: none");
  // Every key the table lists is written, so equal flow dumps mean every key came back.
  CHECK(gpu_to_flow_yaml(back) == gpu_to_flow_yaml(g));
  for (const GpuPresetEntry& e : gpu_preset_entries(g)) {
    CAPTURE(e.key);
    CHECK(text.find("\n" + std::string(e.block == GpuBlock::top ? "" : "  ") + e.key + ": ") !=
          std::string::npos);
  }
}

TEST_CASE("the flow-style dump of a GPU reads back through the preset reader to the same GPU") {
  const topo::GpuSpec g = changed_h100();
  const topo::GpuSpec back = load_text(gpu_to_flow_yaml(g), "flow");
  CHECK(gpu_to_flow_yaml(back) == gpu_to_flow_yaml(g));
  CHECK(back.efficiency.kernel_overhead_s == doctest::Approx(7e-6).scale(0));
  CHECK(back.validation == "kernels: \"test\" GEMMs; steps: none");
}

TEST_CASE("an empty validation mark is written and read back empty, a shipped one as shipped") {
  topo::GpuSpec g = changed_h100();
  g.validation.clear();
  CHECK(gpu_to_block_yaml(g, {}).find("\nvalidation: \"\"\n") != std::string::npos);
  CHECK(load_text(gpu_to_block_yaml(g, {}), "empty_validation").validation.empty());
  const topo::GpuSpec shipped = gpu_preset("h100-sxm");
  CHECK_FALSE(shipped.validation.empty());
  CHECK(load_text(gpu_to_flow_yaml(shipped), "shipped_validation").validation == shipped.validation);
}

TEST_CASE("the reader takes each block's keys from the table and refuses others with their path") {
  const auto efficiency = gpu_block_keys(GpuBlock::efficiency);
  CHECK(std::find(efficiency.begin(), efficiency.end(), "matmul_split_k_min") != efficiency.end());
  CHECK(std::find(efficiency.begin(), efficiency.end(), "hbm") == efficiency.end());
  const std::string text = gpu_to_block_yaml(changed_h100(), {}) + "  matmul_tile_q: 3\n";
  try {
    (void)load_text(text, "unknown_key");
    FAIL("an unknown efficiency key loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("efficiency.matmul_tile_q") != std::string::npos);
  }
}

TEST_CASE("efficiency_fit_gpus is a count of at least one GPU") {
  topo::GpuSpec g = changed_h100();
  std::string text = gpu_to_block_yaml(g, {});
  const std::string key = "\nefficiency_fit_gpus: 512\n";
  REQUIRE(text.find(key) != std::string::npos);
  text.replace(text.find(key), key.size(), "\nefficiency_fit_gpus: 0\n");
  try {
    (void)load_text(text, "no_fit_gpus");
    FAIL("efficiency_fit_gpus: 0 loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("efficiency_fit_gpus: must be at least 1") != std::string::npos);
  }
}
