// Region price tables (`pricing: {region: NAME}`): the values come from the preset file, a key written
// beside the region wins, and an unknown region, a GPU the table does not price or an entry without its
// source and date is an error at its file:line:col and key path.
#include "scenarios/region_block.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "scenarios/loader.hpp"
#include "scenarios/presets.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

const std::string layout = R"(model: gpt3-1.3b
cluster: {node: dgx-h100, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 4, zero: 1}
training: {global_batch: 64, steps: 1000}
)";

// A region table of round numbers on TRAINSIM_PATH, so that the test does not hang on the shipped prices.
class TestRegions {
 public:
  TestRegions() {
    std::filesystem::create_directories(dir_ / "regions");
    std::ofstream(dir_ / "regions" / "test-region.yaml") << R"(name: test-region
gpu_hour:
  h100-sxm: {value: "$3.00/h", source: "test", date: "2026-01"}
storage: {value: "$0.05/GB-month", source: "test", date: "2026-01"}
egress: {value: "$0.07/GB", source: "test", date: "2026-01"}
energy: {value: "$0.10/kWh", source: "test", date: "2026-01-31"}
carbon: {value: "400 g/kWh", source: "assumed: a test", date: "2026-01"}
)";
    std::ofstream(dir_ / "regions" / "undated.yaml")
        << "gpu_hour:\n  h100-sxm: {value: \"$3/h\", source: \"\", date: \"January\"}\n";
    ::setenv("TRAINSIM_PATH", dir_.string().c_str(), 1);
  }
  ~TestRegions() {
    ::unsetenv("TRAINSIM_PATH");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TestRegions(const TestRegions&) = delete;
  TestRegions& operator=(const TestRegions&) = delete;

 private:
  // One folder per process: ctest runs the test cases of this file as parallel processes.
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("trainsim_region_test_" + std::to_string(::getpid()));
};

}  // namespace

TEST_CASE("a region sets the GPU-hour of the cluster's GPU, storage, egress, energy and carbon") {
  const TestRegions regions;
  const Scenario s = load_scenario_text(layout + "pricing: {region: test-region}\n", "t.yaml");
  // The values test-region.yaml writes.
  CHECK(s.pricing.region == "test-region");
  CHECK(s.pricing.gpu_hour_usd == 3.0);
  CHECK(s.pricing.storage.hot_usd_per_gb_month == 0.05);
  CHECK(s.pricing.egress_usd_per_gb == 0.07);
  CHECK(s.pricing.energy.usd_per_kwh == 0.10);
  CHECK(s.pricing.energy.carbon_g_per_kwh == 400.0);
}

TEST_CASE("a key written beside the region wins over its table; the rest stays the table's") {
  const TestRegions regions;
  const Scenario s = load_scenario_text(
      layout + "pricing: {region: test-region, gpu_hour: \"$2.00\", energy: {price: \"$0/kWh\", pue: 1.2}}\n",
      "t.yaml");
  CHECK(s.pricing.gpu_hour_usd == 2.0);
  CHECK(s.pricing.energy.usd_per_kwh == 0.0);
  CHECK(s.pricing.energy.pue == 1.2);
  CHECK(s.pricing.energy.carbon_g_per_kwh == 400.0);  // not overridden: the table's
  CHECK(s.pricing.egress_usd_per_gb == 0.07);
  // The dump writes the region and every value; it loads back to the same prices.
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK(back.pricing.region == "test-region");
  CHECK(back.pricing.gpu_hour_usd == 2.0);
  CHECK(back.pricing.energy.usd_per_kwh == 0.0);
  CHECK(back.pricing.energy.carbon_g_per_kwh == 400.0);
}

TEST_CASE("an unknown region is an error at its key that lists the known ones") {
  const TestRegions regions;
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(layout + "pricing: {region: test-regoin}\n", "t.yaml"),
      doctest::Contains(
          "t.yaml:5:19: pricing.region: unknown region preset \"test-regoin\" (did you mean "
          "\"test-region\"?); known: eu-west, gpu-clouds, test-region, undated, us-east, us-west"),
      InputError);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(layout + "pricing: {region: [us-east]}\n", "t.yaml"),
                       doctest::Contains("pricing.region: expected the name of a region price table"),
                       InputError);
}

TEST_CASE("a GPU the region does not price needs a gpu_hour beside it") {
  const TestRegions regions;
  const std::string h800 = R"(model: gpt3-1.3b
cluster: {node: hgx-h800, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 4, zero: 1}
training: {global_batch: 64, steps: 1000}
)";
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(h800 + "pricing: {region: test-region}\n", "t.yaml"),
      doctest::Contains("pricing.region: region test-region has no GPU-hour price for the "
                        "cluster's GPU h800-sxm (it prices h100-sxm); give pricing.gpu_hour"),
      InputError);
  const Scenario s =
      load_scenario_text(h800 + "pricing: {region: test-region, gpu_hour: \"$1.50\"}\n", "t.yaml");
  CHECK(s.pricing.gpu_hour_usd == 1.5);
  CHECK(s.pricing.egress_usd_per_gb == 0.07);
}

TEST_CASE("every entry of a region table names its source and its date") {
  const TestRegions regions;
  try {
    (void)load_scenario_text(layout + "pricing: {region: undated}\n", "t.yaml");
    FAIL("an undated, unsourced entry loaded");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("gpu_hour.h100-sxm.source: name where the number comes from") != std::string::npos);
    CHECK(what.find("gpu_hour.h100-sxm.date: expected a date as YYYY-MM or YYYY-MM-DD, found \"January\"") !=
          std::string::npos);
  }
}

TEST_CASE("the shipped regions load, and each prices the H100 from its file") {
  for (const auto& name : region_preset_names()) {
    const model::RegionPrices r = region_preset(name);
    CHECK(r.name == name);
    // A geographic region names its grid's price and carbon; the GPU-cloud market table names neither.
    CHECK(r.energy_usd_per_kwh.has_value() == (name != "gpu-clouds"));
    CHECK(r.carbon_g_per_kwh.has_value() == (name != "gpu-clouds"));
  }
  // gpu-clouds.yaml: Spheron B200 $6.03, GB200 $9.08 per superchip of two GPUs, TensorWave MI300X $1.50.
  const model::RegionPrices clouds = region_preset("gpu-clouds");
  REQUIRE(clouds.gpu_hour("b200") != nullptr);
  CHECK(clouds.gpu_hour("b200")->value == doctest::Approx(6.03).epsilon(1e-12));
  REQUIRE(clouds.gpu_hour("gb200") != nullptr);
  CHECK(clouds.gpu_hour("gb200")->value == doctest::Approx(9.08 / 2).epsilon(1e-12));
  REQUIRE(clouds.gpu_hour("mi300x") != nullptr);
  CHECK(clouds.gpu_hour("mi300x")->value == doctest::Approx(1.50).epsilon(1e-12));
  CHECK(clouds.gpu_hour("b200")->date == "2026-03-17");
  // us-east.yaml: AWS p5.48xlarge $98.32 an instance-hour over its 8 GPUs = $12.29.
  const model::RegionPrices east = region_preset("us-east");
  REQUIRE(east.gpu_hour("h100-sxm") != nullptr);
  CHECK(east.gpu_hour("h100-sxm")->value == doctest::Approx(98.32 / 8).epsilon(1e-12));
  CHECK(east.gpu_hour("h100-sxm")->date == "2023-07-27");
  CHECK(east.gpu_hour("b200") == nullptr);  // not sold on demand at launch: no price
}
