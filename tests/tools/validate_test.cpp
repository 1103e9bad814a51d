// The accuracy gate and the validation runner's arithmetic. The gate runs the real binary on the
// shipped cases: `trainsim validate scenarios/validation` must exit 0, i.e. every published measurement is
// predicted within the tolerance its case states.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenarios/presets.hpp"
#include "scenarios/studies/validation_runner.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace trainsim::scenario;

namespace {

struct Run {
  int exit_code = -1;
  std::string output;
};

Run run(const std::string& args) {
  const std::string command = std::string(TRAINSIM_BINARY) + " " + args + " 2>&1";
  Run r;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.output += buffer.data();
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string cases = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation";

// The layout Korthikanti et al. ran their 22B model with (Table 5: 8 A100-80GB, tensor-parallel).
const std::string korthikanti_layout =
    "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
    "parallelism: {tp: 8, pp: 1, dp: 1, micro_batch: 4, sequence_parallel: true, recompute: selective}\n";

// A small validation case: the Korthikanti 22B selective-recompute configuration (Table 5), by default on
// its published layout, with a measured time the test chooses.
std::string case_text(double iteration_time, double tolerance, const std::string& layout = korthikanti_layout,
                      const std::string& name = "probe") {
  return "name: " + name +
         "\n"
         "model: {layers: 48, hidden: 6144, heads: 64, ffn_hidden: 24576, vocab: 51200, seq_len: 2048, mlp: "
         "gelu,"
         " attention: standard}\n" +
         layout +
         "training: {global_batch: 4, precision: bf16, optimizer: adamw, steps: 1}\n"
         "measured:\n  source: \"test\"\n  iteration_time: " +
         std::to_string(iteration_time) + "\n  tolerance: " + std::to_string(tolerance) + "\n";
}

}  // namespace

TEST_CASE("the accuracy gate: every shipped validation case is within its tolerance") {
  const Run r = run("validate --failures-only " + cases);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("0 outside tolerance, 0 cases could not be evaluated") != std::string::npos);
}

TEST_CASE("a case outside its tolerance makes validate exit 1 and is marked") {
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  std::ofstream(dir / "probe.yaml") << case_text(1e-3, 0.01);  // nobody trains 22B in a millisecond
  const Run r = run("validate " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("OUTSIDE") != std::string::npos);
}

TEST_CASE("a case that does not load is a failed case with the reason, not a crash") {
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  std::ofstream(dir / "broken.yaml") << "model: {layers: 2}\nmeasured: {source: x, iteration_time: 1}\n";
  const Run r = run("validate --format csv " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.rfind("case,group,attention,framework,gpu,metric,measured,predicted,error,tolerance,within,"
                       "failure,file,source,fits,settings\n",
                       0) == 0);
  CHECK(r.output.find("does not load") != std::string::npos);
}

TEST_CASE("a case that does not fit in memory as written is scored and says so in every format") {
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  // The same 22B model on one A100-80GB, unsharded: 48 layers · 12 · 6144^2 = 21.74e9 parameters, and
  // mixed-precision Adam holds at least 16 bytes of each (BF16 weights and grads, FP32 master weights and two
  // moments; Rajbhandari et al. 2020, ZeRO): >= 348 GB = 324 GiB of 80 GiB before any activation. Measured
  // 10 s with a tolerance of 100 (anything finite is within), so only the memory verdict is at stake.
  std::ofstream(dir / "big.yaml") << case_text(
      10, 100,
      "cluster: {node: dgx-a100-80gb, nodes: 1, gpus_per_node: 1}\n"
      "parallelism: {tp: 1, pp: 1, dp: 1, micro_batch: 4, recompute: selective}\n",
      "big");
  // The published layout, which Korthikanti et al. ran on these GPUs: its 2.7e9 parameters a GPU at 16-18
  // bytes and about 10 GB of activations (34·s·b·h/t bytes a layer) fit in 80 GiB.
  std::ofstream(dir / "probe.yaml") << case_text(1.1, 100);
  const CaseResult big = run_case((dir / "big.yaml").string());
  const CaseResult fits = run_case((dir / "probe.yaml").string());
  INFO(big.failure << fits.failure);
  REQUIRE(big.failure.empty());
  REQUIRE(fits.failure.empty());
  REQUIRE(big.fits.has_value());
  CHECK_FALSE(*big.fits);
  CHECK(big.does_not_fit());
  CHECK(big.unfit_reason.find("of 80 GiB") != std::string::npos);
  // Still timed: at least its model FLOPs, 6 · 21.74e9 · 4 · 2048 tokens = 1.069e15, at the A100's 312
  // TFLOP/s BF16 peak: 3.43 s.
  REQUIRE(big.checks.size() == 1);
  CHECK(big.checks.front().predicted >= 6 * 21.74e9 * 4 * 2048 / 312e12);
  CHECK(big.passed());  // not fitting is reported, never a failure: the exit status is the tolerance's
  REQUIRE(fits.fits.has_value());
  CHECK(*fits.fits);
  CHECK(fits.unfit_reason.empty());
  // A component case has no step, so no verdict.
  const CaseResult dispatch =
      run_case(std::string(TRAINSIM_SOURCE_DIR) +
               "/scenarios/validation/moe-dispatch/mcore-t7-h100-a2a-dispatch-ep16.yaml");
  CHECK_FALSE(dispatch.fits.has_value());

  const std::vector<CaseResult> results = {big, fits, dispatch};
  const std::string csv = format_validation_csv(results);
  CHECK(csv.rfind("case,group,attention,framework,gpu,metric,measured,predicted,error,tolerance,within,"
                  "failure,file,source,fits,settings\n",
                  0) == 0);
  const auto row_of = [&](const std::string& name) {
    const std::size_t at = csv.find("\n" + name + ",");
    REQUIRE(at != std::string::npos);
    return csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
  };
  // fits, then the settings (none here: the last field is empty).
  CHECK(row_of("big").rfind(",test,false,") == row_of("big").size() - 12);
  CHECK(row_of("probe").rfind(",test,true,") == row_of("probe").size() - 11);
  const std::string dispatch_row = row_of("mcore-t7-h100-a2a-dispatch-ep16");
  CHECK(dispatch_row.compare(dispatch_row.size() - 2, 2, ",,") == 0);  // no verdict, no settings

  const std::string table = format_validation_table(results, summarize_cases(results));
  // One line under the case names it and says why; no other line does.
  const std::size_t mark = table.find("does not fit: stage 0 needs ");
  REQUIRE(mark != std::string::npos);
  CHECK(table.compare(table.rfind('\n', mark) + 1, 4, "big ") == 0);
  CHECK(table.find("does not fit:", mark + 1) == std::string::npos);
  CHECK(table.find("\n1 case does not fit in memory as written (big); its time is scored anyway\n") !=
        std::string::npos);
  CaseResult big2 = big;
  big2.name = "big2";
  const std::vector<CaseResult> two = {big, fits, big2};
  CHECK(format_validation_table(two, summarize_cases(two))
            .find("\n2 cases do not fit in memory as written (big, big2); their time is scored anyway\n") !=
        std::string::npos);
  const std::string fitting_table = format_validation_table({fits}, summarize_cases({fits}));
  CHECK(fitting_table.find("not fit") == std::string::npos);

  const nlohmann::json json =
      nlohmann::json::parse(format_validation_json(results, summarize_cases(results)));
  CHECK(json["cases"][0]["fits"] == false);
  CHECK(json["cases"][0]["unfit_reason"] == big.unfit_reason);
  CHECK(json["cases"][1]["fits"] == true);
  CHECK(json["cases"][1]["unfit_reason"] == "");
  CHECK(json["cases"][2]["fits"].is_null());

  // The command exits 0: both cases are within their tolerance, fitting or not.
  const Run r = run("validate " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("1 case does not fit in memory as written (big)") != std::string::npos);
}

TEST_CASE("validate refuses a path that does not exist with exit 2") {
  CHECK(run("validate /nonexistent/trainsim/cases").exit_code == 2);
}

TEST_CASE(
    "the summary gives MAPE, bias and the worst case per metric, per folder, attention kernel and "
    "framework") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two folders; errors +10 % and -30 % in "a", +20 % in "b"; one failed case in "b".
  std::vector<CaseResult> results = {
      {.name = "a1",
       .group = "a",
       .attention = "standard",
       .checks = {{"iteration_time", 1.0, 1.1, 0.1, 0.15}}},
      {.name = "a2",
       .group = "a",
       .attention = "standard",
       .checks = {{"iteration_time", 1.0, 0.7, -0.3, 0.15}}},
      {.name = "b1",
       .group = "b",
       .attention = "flash",
       .framework = "fsdp2",
       .gpu = "h100-sxm",
       .checks = {{"iteration_time", 2.0, 2.4, 0.2, 0.25}}},
      {.name = "b2",
       .group = "b",
       .attention = "flash",
       .failure = "infeasible: x",
       .checks = {{"iteration_time", 2.0, nan, nan, 0.25}}},
  };
  CHECK(results[0].passed());
  CHECK_FALSE(results[1].passed());
  CHECK(results[2].passed());
  CHECK_FALSE(results[3].passed());
  const std::vector<GroupSummary> s = summarize_cases(results);
  REQUIRE(s.size() == 7);  // all, groups a and b, attention flash and standard, framework fsdp2, gpu h100-sxm
  CHECK(s[0].by == "all");
  CHECK(s[0].cases == 4);
  CHECK(s[0].outside == 2);
  CHECK(s[0].stats.count == 3);
  CHECK(s[0].stats.failures == 1);
  CHECK(s[0].stats.mape == doctest::Approx((0.1 + 0.3 + 0.2) / 3).scale(0));
  CHECK(s[0].stats.mean_error == doctest::Approx((0.1 - 0.3 + 0.2) / 3).scale(0));
  CHECK(s[0].worst_case == "a2");
  CHECK(s[1].key == "a");
  CHECK(s[1].stats.mape == doctest::Approx(0.2).scale(0));
  CHECK(s[2].key == "b");
  CHECK(s[2].stats.mape == doctest::Approx(0.2).scale(0));
  CHECK(s[3].by == "attention");
  CHECK(s[3].key == "flash");
  CHECK(s[4].key == "standard");
  CHECK(s[5].by == "framework");  // only b1 names one
  CHECK(s[5].key == "fsdp2");
  CHECK(s[5].cases == 1);
  CHECK(s[5].stats.mape == doctest::Approx(0.2).scale(0));
  CHECK(s[6].by == "gpu");
  CHECK(s[6].key == "h100-sxm");
  CHECK(s[6].cases == 1);
  const std::string table = format_validation_table(results, s);
  CHECK(table.find("4 cases, 4 checks: 2 outside tolerance, 1 cases could not be evaluated") !=
        std::string::npos);
  const std::string json = format_validation_json(results, s);
  CHECK(json.find("\"predicted\": null") != std::string::npos);  // NaN never reaches JSON
}

TEST_CASE("calibrate fits a GPU to measured steps and writes a preset that loads back") {
  const std::string shared =
      std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/vtrain/ground_truth_single.csv";
  if (!fs::exists(shared)) return;  // outside the development tree
  // A small, varied subset keeps the test quick: every 40th row of the single-node set.
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  {
    std::ifstream in(shared);
    std::ofstream out(dir / "subset.csv");
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) {
      if (i == 0 || i % 40 == 0) out << line << "\n";
    }
  }
  const fs::path preset = dir / "a100-calibrated.yaml";
  const Run r =
      run("calibrate " + (dir / "subset.csv").string() +
          " --gpu a100-sxm4-80gb --fit matmul_peak_fraction,kernel_overhead_s -o " + preset.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("fit set") != std::string::npos);
  const trainsim::topo::GpuSpec gpu = load_gpu_preset_file(preset.string());
  CHECK(gpu.name == "a100-sxm4-80gb");
  CHECK(gpu.efficiency.matmul_peak_fraction > 0.05);
  CHECK(gpu.efficiency.matmul_peak_fraction <= 1.0);
  CHECK(gpu.peak.bf16 ==
        doctest::Approx(312e12).scale(0));  // the datasheet numbers are carried over unchanged
}

TEST_CASE("calibrate on vTrain multi-node never writes a fit that worsens the held-out single-node steps") {
  const std::string vtrain = std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/vtrain/";
  if (!fs::exists(vtrain + "ground_truth_multi.csv")) return;  // outside the development tree
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  const fs::path preset = dir / "a100.yaml";
  // Unregularised (prior strength 0), the step fit drives kernel_overhead_s to its 10 ns floor and
  // raises the single-node error: the command must say both and keep the preset's own values.
  const Run r =
      run("calibrate " + vtrain + "ground_truth_multi.csv --gpu a100-sxm4-80gb --nic \"200 Gb/s\" " +
          "--nics-per-node 4 --check " + vtrain + "ground_truth_single.csv --prior-strength 0 -o " +
          preset.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("held out (") != std::string::npos);
  CHECK(r.output.find("kernel_overhead_s sits at its lower bound") != std::string::npos);
  CHECK(r.output.find("the preset written keeps the kernel-level values") != std::string::npos);
  const trainsim::topo::GpuSpec written = load_gpu_preset_file(preset.string());
  const trainsim::topo::GpuSpec shipped = trainsim::scenario::gpu_preset("a100-sxm4-80gb");
  CHECK(written.efficiency.kernel_overhead_s == shipped.efficiency.kernel_overhead_s);
  CHECK(written.efficiency.matmul_peak_fraction == shipped.efficiency.matmul_peak_fraction);
  // Without --check, a split of the inputs is held out and reported.
  const Run split =
      run("calibrate " + vtrain + "ground_truth_multi.csv --gpu a100-sxm4-80gb --nic \"200 Gb/s\" " +
          "--nics-per-node 4 -o " + preset.string());
  INFO(split.output);
  REQUIRE(split.exit_code == 0);
  CHECK(split.output.find("held out (every 5th row of the inputs, not fitted)") != std::string::npos);
}

TEST_CASE("a collective case compares nccl-tests bus bandwidth with the collective model") {
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  // 1 TB/s of bus bandwidth for a 1 GiB all-reduce on 8 H200 exceeds NVLink (450 GB/s per direction) with
  // any algorithm but NVLS, which reaches about 480 GB/s (NCCL-H200-COLL-1): more than 50 % off.
  std::ofstream(dir / "c.yaml") << "name: probe\n"
                                   "collective: {node: hgx-h200, nodes: 1, op: all-reduce, size: \"1 GiB\"}\n"
                                   "measured: {source: test, busbw: 1.0e12, tolerance: 0.5}\n";
  const Run r = run("validate " + dir.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("busbw") != std::string::npos);
  CHECK(r.output.find("OUTSIDE") != std::string::npos);
}

TEST_CASE("validate --gpu replaces the case's GPU by name, so a preset can be checked before it ships") {
  const trainsim::testing::TempDir temp;
  const fs::path& dir = temp.path();
  std::ofstream(dir / "probe.yaml") << case_text(1.1, 0.5);
  // The same GPU with a tenth of its fp16/bf16 peak must predict a much slower step.
  std::ifstream shipped(preset_file(PresetKind::gpu, "a100-sxm4-80gb"));
  std::string text((std::istreambuf_iterator<char>(shipped)), std::istreambuf_iterator<char>());
  for (std::size_t at; (at = text.find("\"312 TFLOP/s\"")) != std::string::npos;) {
    text.replace(at, 13, "\"31.2 TFLOP/s\"");
  }
  std::ofstream(dir / "gpu.yaml") << text;
  const fs::path cases_dir = dir / "cases";
  fs::create_directories(cases_dir);
  fs::rename(dir / "probe.yaml", cases_dir / "probe.yaml");
  const Run normal = run("validate --format csv " + cases_dir.string());
  const Run slowed =
      run("validate --format csv --gpu " + (dir / "gpu.yaml").string() + " " + cases_dir.string());
  INFO(normal.output << slowed.output);
  const auto predicted = [](const std::string& csv) {
    const auto row = csv.substr(csv.find('\n') + 1);
    std::vector<std::string> f;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= row.size(); ++i) {
      if (i == row.size() || row[i] == ',') {
        f.push_back(row.substr(start, i - start));
        start = i + 1;
      }
    }
    return std::stod(f.at(7));  // case, group, attention, framework, gpu, metric, measured, predicted
  };
  CHECK(slowed.exit_code != 2);
  CHECK(predicted(slowed.output) > 3 * predicted(normal.output));
}

TEST_CASE("validate --settings and --set: what each case ran with, in every format") {
  const trainsim::testing::TempDir temp;
  const std::string settings =
      temp.write("settings.yaml",
                 "cases:\n  kor22-t5-175b-selective:\n    source: \"Table 5, full\"\n"
                 "    set: {parallelism.recompute: full}\n");
  const std::string folder = cases + "/korthikanti";
  const Run table = run("validate --settings " + settings + " " + folder);
  INFO(table.output);
  CHECK(table.output.find("\nkor22-t5-175b-selective ") != std::string::npos);
  CHECK(table.output.find("set: parallelism.recompute=full\n") != std::string::npos);
  CHECK(table.output.find("\n1 of 10 cases ran with keys their files do not set") != std::string::npos);
  const Run csv = run("validate --format csv --settings " + settings + " " + folder);
  CHECK(csv.output.find(",parallelism.recompute=full\n") != std::string::npos);
  // One text per --set: the paths after it stay paths.
  const Run set = run("validate --format csv --set training.global_batch=8 " + folder +
                      "/kor22-t5-175b-full.yaml " + folder + "/kor22-t5-1t-full.yaml");
  INFO(set.output);
  CHECK(set.output.find("kor22-t5-175b-full,") != std::string::npos);
  CHECK(set.output.find("kor22-t5-1t-full,") != std::string::npos);
  // A settings file naming a case not run stops before anything runs.
  const Run missing = run("validate --settings " + settings + " " + folder + "/kor22-t5-175b-full.yaml");
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find(settings +
                            ":2:3: cases.kor22-t5-175b-selective: no such case among the 1 cases given") !=
        std::string::npos);
}
