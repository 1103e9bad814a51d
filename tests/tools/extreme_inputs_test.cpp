// Extreme but valid inputs (tests/tools/extreme/*.yaml: a million GPUs, ten trillion parameters, a million-
// token context) give a result or a clear "does not fit", never a crash or a hang: each runs through the
// binary under a wall-clock limit and a 2 GiB address-space limit, exits 0 or 1, and prints a summary whose
// numbers are finite; an infeasible plan carries its reason.
#include <cmath>
#include <nlohmann/json.hpp>

#include "binary_harness.hpp"

using nlohmann::json;
using trainsim::e2e::describe;
using trainsim::e2e::run_trainsim;
namespace fs = std::filesystem;

namespace {

// Each case takes well under a second on an idle core; the limit leaves room for a loaded CI machine.
constexpr double limit_s = 20.0;
constexpr rlim_t memory_limit = rlim_t{2} << 30;

fs::path extreme_folder() {
  return fs::path(TRAINSIM_SOURCE_DIR) / "tests" / "tools" / "extreme";
}

std::vector<fs::path> extreme_scenarios() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(extreme_folder()))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// Runs `trainsim run FILE --format json [--fidelity F]` within the limits; returns the printed summary.
json run_summary(const fs::path& file, const std::string& fidelity) {
  const auto outcome =
      run_trainsim({"run", file.string(), "--format", "json", "--fidelity", fidelity}, limit_s, memory_limit);
  INFO(file.filename().string() << " (" << fidelity << "): " << describe(outcome));
  REQUIRE_FALSE(outcome.timed_out);
  REQUIRE(outcome.signal == 0);
  REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
  const json summary = json::parse(outcome.out);
  for (const auto& [key, value] : summary.items()) {
    INFO("field " << key);
    CHECK_FALSE(value.is_null());  // nlohmann-json writes NaN and infinity as null
    if (value.is_number()) CHECK(std::isfinite(value.get<double>()));
  }
  const bool fits = summary.at("fits").get<bool>();
  if (!fits) {
    CHECK(outcome.exit_code == 1);
    CHECK(!summary.at("reason").get<std::string>().empty());
    CHECK(outcome.err.find("does not fit") != std::string::npos);
  }
  return summary;
}

json run_named(const std::string& stem, const std::string& fidelity = "event") {
  return run_summary(extreme_folder() / (stem + ".yaml"), fidelity);
}

}  // namespace

TEST_CASE("every extreme scenario gives a result or a reasoned infeasible plan under both fidelities") {
  REQUIRE(extreme_scenarios().size() >= 5);
  for (const auto& file : extreme_scenarios()) {
    SUBCASE(file.stem().string().c_str()) {
      run_summary(file, "event");
      run_summary(file, "analytic");
    }
  }
}

TEST_CASE("a million GPUs (125,000 DGX H100 nodes) are simulated and counted") {
  const json summary = run_named("gpus-1m");
  CHECK(summary["gpus"].get<double>() == 1'000'000.0);
  CHECK(summary["fits"].get<bool>());
  // 31,250 sequences of 8,192 tokens per step.
  CHECK(summary["tokens_per_s"].get<double>() * summary["iteration_time_s"].get<double>() ==
        doctest::Approx(31250.0 * 8192.0).epsilon(1e-9));
}

TEST_CASE("a data-parallel group of 1,048,576 ranks gives a finite step time") {
  const json summary = run_named("gpus-1m-pure-dp");
  CHECK(summary["gpus"].get<double>() == 1'048'576.0);
  CHECK(summary["iteration_time_s"].get<double>() > 0.0);
}

TEST_CASE("a ten-trillion-parameter model is reported as not fitting, with its largest memory term") {
  const json summary = run_named("params-10t");
  // Hand count: 256 x (2h^2 + 2h x 1,024 (8 KV heads of 128) + 3 h ffn) + 2 x 128,256 x h, h = 57,344,
  // ffn = 229,376: 1.1830e13; norms and the model's conventions change it by far less than 0.1%.
  CHECK(summary["parameters"].get<double>() == doctest::Approx(1.1830194e13).epsilon(1e-3));
  CHECK_FALSE(summary["fits"].get<bool>());
  const std::string reason = summary["reason"].get<std::string>();
  CHECK(reason.find("GiB of 80 GiB") != std::string::npos);
  CHECK(reason.find("activations") != std::string::npos);
}

TEST_CASE("a million-token context fits with cp 64 and not without it under standard attention") {
  const json with_cp = run_named("seq-1m-cp");
  CHECK(with_cp["fits"].get<bool>());
  const json standard = run_named("seq-1m-standard");
  CHECK_FALSE(standard["fits"].get<bool>());
  // Kept scores alone: 5 B x (32 heads / tp 8) x (2^20)^2 per layer, 32 layers: 7.0e14 bytes.
  CHECK(standard["activations_bytes"].get<double>() > 5.0 * 4.0 * 1048576.0 * 1048576.0 * 32.0);
  CHECK(standard["reason"].get<std::string>().find("activations") != std::string::npos);
}

TEST_CASE("explain and search stay bounded on a million GPUs") {
  for (const std::string stem : {"gpus-1m", "seq-1m-cp"}) {
    const std::string file = (extreme_folder() / (stem + ".yaml")).string();
    const auto explained = run_trainsim({"explain", file}, limit_s, memory_limit);
    INFO(stem << " explain: " << describe(explained));
    CHECK((explained.exit_code == 0 || explained.exit_code == 1));
    CHECK(explained.out.find("memory per GPU") != std::string::npos);
  }
  const auto searched = run_trainsim({"search", (extreme_folder() / "gpus-1m.yaml").string(), "--top", "3"},
                                     3 * limit_s, memory_limit);
  INFO("search gpus-1m: " << describe(searched));
  CHECK((searched.exit_code == 0 || searched.exit_code == 1));
}

TEST_CASE(
    "a flow-level collective beyond what it can build is refused in words, not by running out of memory") {
  // Ten million nodes: the cluster graph alone would hold 1.3e9 devices and links.
  const auto huge = run_trainsim(
      {"collective", "--cluster", "dgx-h100", "--nodes", "10000000", "--fidelity", "flow", "--size", "1GiB"},
      limit_s, memory_limit);
  INFO("1e7 nodes: " << describe(huge));
  CHECK(huge.exit_code == 2);
  CHECK(huge.err.find("a cluster graph holds; the closed form prices any size") != std::string::npos);
  // 8,192 nodes build, but 65,536 GPUs' flows are past the flow fidelity's limit.
  const auto wide = run_trainsim(
      {"collective", "--cluster", "dgx-h100", "--nodes", "8192", "--fidelity", "flow", "--size", "1GiB"},
      limit_s, memory_limit);
  INFO("8192 nodes: " << describe(wide));
  CHECK(wide.exit_code == 2);
  CHECK(wide.err.find("limited to 32768 GPUs; this collective spans 65536") != std::string::npos);
  // The closed form answers both.
  CHECK(run_trainsim({"collective", "--cluster", "dgx-h100", "--nodes", "10000000", "--size", "1GiB"},
                     limit_s, memory_limit)
            .exit_code == 0);
}

TEST_CASE("the most micro-batches the step model accepts are priced analytically and refused by events") {
  // In its own folder: the analytic pass over 33.5M passes takes seconds, more under the sanitizers.
  const fs::path file = extreme_folder() / "heavy" / "many-micro-batches.yaml";
  const auto analytic = run_trainsim({"run", file.string(), "--format", "json", "--fidelity", "analytic"},
                                     3 * limit_s, memory_limit);
  INFO("analytic: " << describe(analytic));
  REQUIRE((analytic.exit_code == 0 || analytic.exit_code == 1));  // 1: priced, but does not fit in 80 GB
  CHECK(std::isfinite(json::parse(analytic.out)["iteration_time_s"].get<double>()));
  const auto event = run_trainsim({"run", file.string()}, limit_s, memory_limit);
  INFO("event: " << describe(event));
  CHECK(event.exit_code == 1);
  CHECK(event.out.find("use --fidelity analytic") != std::string::npos);
}
