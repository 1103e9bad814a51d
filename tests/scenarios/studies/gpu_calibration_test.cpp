#include "scenarios/studies/gpu_calibration.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenarios/presets.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;

namespace {

// A vTrain ground-truth file of `rows` single-node steps (8 GPUs, data-parallel), the k-th row's iteration
// time 1000 + k ms, so a row's place in the file can be read back from its measured value.
std::string write_rows(const trainsim::testing::TempDir& dir, const std::string& name, int rows) {
  const std::string path = dir.file(name + ".csv");
  std::ofstream out(path);
  out << "Parameters (billion),# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
         "sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n";
  for (int k = 1; k <= rows; ++k) out << "1.3,8,64,8,2048,16,24,2048,1,8,1," << 1000 + k << "\n";
  return path;
}

scenario::MeasurementSelection a100_selection() {
  return {.node = scenario::calibration_node("", scenario::gpu_preset("a100-sxm4-80gb"))};
}

}  // namespace

TEST_CASE("without check files every k-th row is held out of the fit, once there are 2k rows") {
  const trainsim::testing::TempDir dir;
  const std::string file = write_rows(dir, "split", 10);
  const scenario::CalibrationSets sets = scenario::calibration_sets({file}, {}, a100_selection(), 5);
  // Rows 1..10 with k = 5: rows 5 and 10 (indices 4 and 9) are held out, the other eight fitted.
  REQUIRE(sets.fit.size() == 8);
  REQUIRE(sets.held_out.size() == 1);
  CHECK(sets.held_out[0].first == "every 5th row of the inputs, not fitted");
  REQUIRE(sets.held_out[0].second.size() == 2);
  CHECK(sets.held_out[0].second[0].measured == doctest::Approx(1.005));
  CHECK(sets.held_out[0].second[1].measured == doctest::Approx(1.010));
  CHECK(sets.fit[4].measured == doctest::Approx(1.006));
  CHECK(sets.skipped == 0);

  // Nine rows are fewer than 2k: nothing is held out. k <= 1 holds out nothing either.
  CHECK(scenario::calibration_sets({write_rows(dir, "short", 9)}, {}, a100_selection(), 5).held_out.empty());
  CHECK(scenario::calibration_sets({file}, {}, a100_selection(), 1).fit.size() == 10);
}

TEST_CASE("check files are held out whole, each its own set, and stop the split") {
  const trainsim::testing::TempDir dir;
  const std::string file = write_rows(dir, "fit", 10);
  const std::string check = write_rows(dir, "check", 3);
  const scenario::CalibrationSets sets = scenario::calibration_sets({file}, {check}, a100_selection(), 5);
  CHECK(sets.fit.size() == 10);
  REQUIRE(sets.held_out.size() == 1);
  CHECK(sets.held_out[0].first == check);
  CHECK(sets.held_out[0].second.size() == 3);
}

TEST_CASE("calibration runs on the named node or the first built from the GPU, with the GPU given") {
  topo::GpuSpec gpu = scenario::gpu_preset("a100-sxm4-80gb");
  gpu.efficiency.matmul_peak_fraction = 0.5;
  const topo::NodeSpec node = scenario::calibration_node("", gpu);
  CHECK(node.gpu.name == "a100-sxm4-80gb");
  CHECK(node.gpu.efficiency.matmul_peak_fraction == 0.5);
  gpu.name = "no-such-gpu";
  CHECK_THROWS_WITH_AS(scenario::calibration_node("", gpu),
                       "no node preset is built from GPU 'no-such-gpu': name one with --node", InputError);
}

TEST_CASE("a fit set smaller than the free parameters is refused before anything is simulated") {
  const trainsim::testing::TempDir dir;
  const scenario::CalibrationSets sets =
      scenario::calibration_sets({write_rows(dir, "tiny", 1)}, {}, a100_selection(), 5);
  bool started = false;
  CHECK_THROWS_WITH_AS((void)scenario::calibrate_steps(scenario::gpu_preset("a100-sxm4-80gb"), sets,
                                                       {.free = {model::EfficiencyParam::matmul_peak_fraction,
                                                                 model::EfficiencyParam::kernel_overhead_s}},
                                                       [&] { started = true; }),
                       "1 usable measurements of iteration_time on a100-sxm4-80gb for 2 free parameters: "
                       "need at least as many",
                       InputError);
  CHECK(!started);
}
