#include "scenarios/studies/error_band.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "scenarios/studies/validation_runner.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

BandCase synthetic(double ratio, std::int64_t gpus, std::string gpu = "a100-sxm4-80gb") {
  return {.file = "",
          .name = "c",
          .gpu = std::move(gpu),
          .framework = "deepspeed",
          .style = "dense 3D",
          .gpus = gpus,
          .ratio = ratio};
}

}  // namespace

TEST_CASE("the band is the 10th to 90th percentile of the near cases' measured / predicted ratios") {
  std::vector<BandCase> cases;
  for (int i = 0; i <= 10; ++i) cases.push_back(synthetic(0.8 + 0.04 * i, 64));  // 0.80, 0.84, ..., 1.20
  cases.push_back(synthetic(5.0, 4096));                                         // 64x the scale: not near
  cases.push_back(synthetic(5.0, 64, "h100-sxm"));                               // another GPU
  const ErrorBand band = error_band(cases, "a100-sxm4-80gb", "deepspeed", "dense 3D", 128);
  REQUIRE(band.validated);
  // n = 11: floor(0.1 x 10) = 1 -> 0.84; ceil(0.9 x 10) = 9 -> 1.16.
  CHECK(band.low == doctest::Approx(0.84));
  CHECK(band.high == doctest::Approx(1.16));
  CHECK(band.cases.size() == 11);
  CHECK(band.basis.find("from 11 validation cases (a100-sxm4-80gb / deepspeed / dense 3D / 64 GPUs)") !=
        std::string::npos);
  // Two near cases are too few.
  const ErrorBand few =
      error_band({synthetic(1.0, 64), synthetic(1.1, 64)}, "a100-sxm4-80gb", "deepspeed", "dense 3D", 64);
  CHECK_FALSE(few.validated);
  CHECK(few.basis.starts_with(
      "not validated for this GPU/framework/style (a100-sxm4-80gb / deepspeed / dense 3D"));
}

TEST_CASE("on the shipped A100 DeepSpeed cases the band holds at least 80 % of their measurements") {
  const std::string folder = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/vtrain-multi";
  const std::vector<BandCase> cases = band_cases(folder);
  REQUIRE(cases.size() >= 100);  // 109 published vTrain runs on 64-512 A100s
  const ErrorBand band = error_band(cases, "a100-sxm4-80gb", "deepspeed", "dense 3D", 128);
  REQUIRE(band.validated);
  CHECK(band.low < 1.0);
  CHECK(band.high > band.low);
  // Each near case's own band, [low, high] x its prediction, against its measured iteration time, straight
  // from the validation runner's numbers.
  const std::vector<std::string> files = find_case_files({folder});
  const std::vector<CaseResult> results = run_cases(files);
  std::size_t near = 0;
  std::size_t inside = 0;
  for (const CaseResult& r : results) {
    if (std::find(band.cases.begin(), band.cases.end(), r.name) == band.cases.end()) continue;
    REQUIRE(r.checks.size() == 1);
    const MetricCheck& c = r.checks.front();
    REQUIRE(c.metric == "iteration_time");
    ++near;
    if (c.measured >= band.low * c.predicted * (1 - 1e-12) &&
        c.measured <= band.high * c.predicted * (1 + 1e-12))
      ++inside;
  }
  CHECK(near == band.cases.size());
  CAPTURE(band.basis);
  CHECK(static_cast<double>(inside) >= 0.8 * static_cast<double>(near));
}

TEST_CASE("a GPU with no shipped case says it is not validated") {
  const std::string folder = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/vtrain-multi";
  const ErrorBand band = error_band(band_cases(folder), "gb200", "megatron-core", "dense 3D", 72);
  CHECK_FALSE(band.validated);
  CHECK(band.basis ==
        "not validated for this GPU/framework/style (gb200 / megatron-core / dense 3D / 72 GPUs): 0 shipped "
        "cases "
        "within 8x of its scale; 3 needed");
}

TEST_CASE("the look at a case's text before loading it passes over no case of the GPU and framework asked") {
  const std::string folder = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/published";
  const std::vector<BandCase> all = band_cases(folder);
  for (const auto& [gpu, framework] : {std::pair<std::string, std::string>{"h100-sxm", "fsdp2"},
                                       {"a100-sxm4-80gb", "megatron-lm-2021"},
                                       {"a100-sxm4-80gb", "deepspeed"},
                                       {"gb200", "megatron-core"}}) {
    CAPTURE(gpu);
    CAPTURE(framework);
    std::vector<std::string> expected;
    for (const BandCase& c : all) {
      if (c.gpu == gpu && c.framework == framework) expected.push_back(c.name);
    }
    // The look may keep cases it cannot rule out; it must not pass over one that matches.
    std::vector<std::string> got;
    for (const BandCase& c : band_cases(folder, gpu, framework)) {
      if (c.gpu == gpu && c.framework == framework) got.push_back(c.name);
    }
    CHECK(got == expected);
  }
  // The published folder: 3 Llama 3 runs on H100 under FSDP2, 10 Narayanan runs and BLOOM on A100.
  CHECK(std::count_if(all.begin(), all.end(), [](const BandCase& c) { return c.gpu == "h100-sxm"; }) == 3);
}
