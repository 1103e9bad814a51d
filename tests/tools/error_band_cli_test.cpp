// `trainsim run`'s error band end to end: a scenario like the shipped vTrain cases (A100, DeepSpeed, dense
// 3D, 128 GPUs) carries *_low/*_high figures in the table and in JSON, each its figure times the band's
// ratios; a GB200 scenario, which no shipped case is near, says it is not validated.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "binary_harness.hpp"

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

namespace {

constexpr const char* vtrain_like = R"(name: vtrain-like
model: {layers: 30, hidden: 3072, heads: 32, ffn_hidden: 12288, vocab: 51200, seq_len: 2048, mlp: gelu, attention: standard}
cluster: {node: dgx-a100-80gb, nodes: 16, network: {nic: "200 Gb/s", nics_per_node: 4}}
parallelism: {tp: 2, pp: 2, dp: 32, schedule: 1f1b, micro_batch: 4, sequence_parallel: false, recompute: full, zero: 0}
framework: deepspeed
training: {global_batch: 512, precision: fp16, optimizer: adamw, tokens: 1e10}
pricing: {gpu_hour: "$2.00"}
)";

}  // namespace

TEST_CASE("run gives iteration time, run time and cost a band from the nearest validation cases") {
  TempDir dir;
  const std::string path = dir.file("vtrain-like.yaml");
  std::ofstream(path) << vtrain_like;
  const Outcome o = run_trainsim({"run", path, "--fidelity", "analytic", "--format", "json"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const std::string basis = j["error_band"].get<std::string>();
  CHECK(basis.starts_with("from "));
  CHECK(basis.find("(a100-sxm4-80gb / deepspeed / dense 3D / ") != std::string::npos);
  // One pair of ratios scales all three figures.
  const double low = j["iteration_time_low_s"].get<double>() / j["iteration_time_s"].get<double>();
  const double high = j["iteration_time_high_s"].get<double>() / j["iteration_time_s"].get<double>();
  CHECK(low < high);
  CHECK(j["run_time_low_s"].get<double>() == doctest::Approx(low * j["run_time_s"].get<double>()));
  CHECK(j["run_time_high_s"].get<double>() == doctest::Approx(high * j["run_time_s"].get<double>()));
  CHECK(j["cost_total_low_usd"].get<double>() == doctest::Approx(low * j["cost_total_usd"].get<double>()));
  CHECK(j["cost_total_high_usd"].get<double>() == doctest::Approx(high * j["cost_total_usd"].get<double>()));

  const Outcome table = run_trainsim({"run", path, "--fidelity", "analytic"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("iteration_time_low") != std::string::npos);
  CHECK(table.out.find("cost_total_high") != std::string::npos);
}

TEST_CASE("the cost band scales what follows the run's time and leaves the data work as it is") {
  TempDir dir;
  const std::string path = dir.file("with-data.yaml");
  // 50 TB of raw data at 400 core-hours per TB and $0.04 a core-hour: 50 x 400 x 0.04 = $800, whatever
  // the run takes.
  std::ofstream(path) << vtrain_like
                      << "data: {raw: \"50 TB\", preprocessing: {core_hours_per_tb: 400, core_hour: "
                         "\"$0.04/h\"}}\n";
  const Outcome o = run_trainsim({"run", path, "--fidelity", "analytic", "--format", "json"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(o.out);
  CHECK(j["cost_data_usd"].get<double>() == doctest::Approx(800.0));
  const double low = j["iteration_time_low_s"].get<double>() / j["iteration_time_s"].get<double>();
  const double high = j["iteration_time_high_s"].get<double>() / j["iteration_time_s"].get<double>();
  const double total = j["cost_total_usd"].get<double>();
  CHECK(j["cost_total_low_usd"].get<double>() == doctest::Approx(800.0 + low * (total - 800.0)));
  CHECK(j["cost_total_high_usd"].get<double>() == doctest::Approx(800.0 + high * (total - 800.0)));
}

TEST_CASE("a GB200 run says it is not validated, and carries no band") {
  TempDir dir;
  const std::string path = dir.file("gb200.yaml");
  std::ofstream(path) << vtrain_like;
  const Outcome o =
      run_trainsim({"run", path, "--fidelity", "analytic", "--format", "json", "--set",
                    "cluster.node=gb200-nvl72", "--set", "cluster.nodes=2", "--set", "parallelism.dp=auto",
                    "--set", "cluster.network={}", "--set", "training.global_batch=576"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(o.out);
  CHECK(j["error_band"].get<std::string>().starts_with(
      "not validated for this GPU/framework/style (gb200 / deepspeed / dense 3D / 144 GPUs)"));
  CHECK_FALSE(j.contains("iteration_time_low_s"));
}

// The MI300X preset's kernel efficiencies are uncalibrated placeholders (Llama-3 8B at ~71 % MFU, above the
// published MI300X training results), and Blackwell Ultra's are transferred from b200: no validation case
// runs on either, so every run on them says so in the table and in summary.json's `error_band`.
TEST_CASE("Llama-3 8B on MI300X or B300 says it is not validated, in the table and in the JSON") {
  constexpr const char* llama3_8b = R"(name: llama3-8b-64
model: llama3-8b
cluster: {node: dgx-h100, nodes: 8}
parallelism: {tp: 2, pp: 1, dp: auto, micro_batch: 2, sequence_parallel: true, zero: 1, recompute: none}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 1e12}
)";
  TempDir dir;
  const std::string path = dir.file("llama3-8b.yaml");
  std::ofstream(path) << llama3_8b;
  for (const auto& [node, gpu] : {std::pair{"mi300x-8", "mi300x"}, std::pair{"dgx-b300", "b300"}}) {
    CAPTURE(node);
    const std::string set = std::string("cluster.node=") + node;
    const Outcome o = run_trainsim({"run", path, "--fidelity", "analytic", "--format", "json", "--set", set});
    INFO(describe(o));
    REQUIRE(o.exit_code == 0);
    const nlohmann::json j = nlohmann::json::parse(o.out);
    CHECK(j["error_band"].get<std::string>().starts_with(
        std::string("not validated for this GPU/framework/style (") + gpu +
        " / megatron-core / dense 3D / 64 GPUs)"));
    CHECK_FALSE(j.contains("iteration_time_low_s"));
    const Outcome table = run_trainsim({"run", path, "--fidelity", "analytic", "--set", set});
    REQUIRE(table.exit_code == 0);
    CHECK(table.out.find("not validated for this GPU/framework/style (" + std::string(gpu)) !=
          std::string::npos);
  }
}

TEST_CASE("search rows carry each layout's band: ZeRO 0-2 the run's, ZeRO-3 (FSDP, no cases) none") {
  TempDir dir;
  const std::string path = dir.file("vtrain-like.yaml");
  std::ofstream(path) << vtrain_like;
  const Outcome run = run_trainsim({"run", path, "--fidelity", "analytic", "--format", "json"});
  REQUIRE(run.exit_code == 0);
  const nlohmann::json r = nlohmann::json::parse(run.out);
  const double low = r["iteration_time_low_s"].get<double>() / r["iteration_time_s"].get<double>();
  const double high = r["iteration_time_high_s"].get<double>() / r["iteration_time_s"].get<double>();
  // The top 25 on the scenario's 16 nodes mix ZeRO-3 layouts (FSDP: no shipped A100 DeepSpeed case) with
  // ZeRO 1-2 ones (dense 3D on 128 GPUs, the run's own band).
  const Outcome o = run_trainsim({"search", path, "--no-event", "--top", "25", "--format", "json"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const nlohmann::json rows = nlohmann::json::parse(o.out);
  int banded = 0;
  int unbanded = 0;
  for (const auto& row : rows) {
    REQUIRE(row.contains("iteration_time_low_s"));  // every row has every column
    const std::string zero = row["parallelism.zero"].get<std::string>();
    if (zero == "3") {
      ++unbanded;
      CHECK(row["iteration_time_low_s"].is_null());
      CHECK(row["error_band"].get<std::string>().starts_with("not validated for this GPU/framework/style"));
    } else {
      ++banded;
      const double t = row["iteration_time_s"].get<double>();
      CHECK(row["iteration_time_low_s"].get<double>() == doctest::Approx(low * t));
      CHECK(row["iteration_time_high_s"].get<double>() == doctest::Approx(high * t));
      CHECK(row["error_band"].get<std::string>() == r["error_band"].get<std::string>());
    }
  }
  CHECK(banded > 0);
  CHECK(unbanded > 0);
}
