// `trainsim search` end to end through the binary, on a model small enough to search in well under a second.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace {

int shell_output(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

constexpr const char* scenario = R"(name: search-test
model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
pricing: {gpu_hour: "$2.50"}
)";

}  // namespace

TEST_CASE("search prints the top layouts re-simulated by events and the time-cost Pareto front") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("test.yaml");
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(std::string("'") + TRAINSIM_BINARY + "' search " + path + " --top 3 2>&1", out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("layouts divide") != std::string::npos);
  CHECK(out.find("Top 3 by run time:") != std::string::npos);
  CHECK(out.find("Pareto front, run time vs run cost") != std::string::npos);
  // Three ranked rows, each re-simulated with the event fidelity (the budget column follows it).
  std::size_t events = 0;
  for (std::size_t at = out.find(" event    ok"); at != std::string::npos;
       at = out.find(" event    ok", at + 1))
    ++events;
  CHECK(events == 3);
  CHECK(out.find("The scenario's own layout (tp 1, pp 1, dp 16,") != std::string::npos);
  CHECK(out.find("would rank ") != std::string::npos);
}

TEST_CASE("search --max-layouts scores an evenly spaced subset and says it stopped short") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("budget.yaml");
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(
      std::string("'") + TRAINSIM_BINARY + "' search " + path + " --no-event --max-layouts 50 2>&1", out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("stopped short: scored ") != std::string::npos);
  CHECK(out.find("raise --max-layouts to score them all") != std::string::npos);
}

TEST_CASE("search with a node list and the cost objective ranks across cluster sizes") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("test2.yaml");
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(std::string("'") + TRAINSIM_BINARY + "' search " + path +
                                  " --objective cost --nodes 1,2 --top 2 --no-event 2>&1",
                              out);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("Top 2 by run cost:") != std::string::npos);
  CHECK(out.find(" event\n") == std::string::npos);
}

TEST_CASE(
    "search --format json rows re-run with run --set give the same iteration time, and meet the budget") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("rows.yaml");
  std::ofstream(path) << scenario << "budget: {deadline: \"3 d\"}\n";
  std::string out;
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  REQUIRE(shell_output(binary + " search " + path + " --top 5 --no-event --format json 2>/dev/null", out) ==
          0);
  const nlohmann::json rows = nlohmann::json::parse(out);
  REQUIRE(rows.size() >= 5);
  for (std::size_t i = 0; i < 5; ++i) {
    const nlohmann::json& row = rows[i];
    CAPTURE(row.dump());
    CHECK(row["rank"] == std::to_string(i + 1));
    CHECK(row["fidelity"] == "analytic");
    CHECK(row["budget"] == "ok");  // the first rows meet the 3-day deadline
    CHECK(row["run_time_s"].get<double>() <= 3 * 86400.0);
    std::string sets;
    for (const auto& [key, value] : row.items()) {
      if ((key.starts_with("cluster.") || key.starts_with("parallelism.") || key.starts_with("framework.")) &&
          !value.get<std::string>().empty())
        sets += " --set " + key + "=" + value.get<std::string>();
    }
    std::string run;
    REQUIRE(
        shell_output(binary + " run " + path + " --fidelity analytic --format json" + sets + " 2>/dev/null",
                     run) == 0);
    const double again = nlohmann::json::parse(run)["iteration_time_s"].get<double>();
    CHECK(again == doctest::Approx(row["iteration_time_s"].get<double>()).epsilon(1e-3));
  }
}

TEST_CASE("search -o writes the rows as CSV and needs a row format") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("csv.yaml");
  const std::string csv = dir.file("rows.csv");
  std::ofstream(path) << scenario;
  std::string out;
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  REQUIRE(shell_output(binary + " search " + path + " --top 3 --no-event --format csv -o " + csv + " 2>&1",
                       out) == 0);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  CHECK(header.starts_with("scenario,rank,on_pareto,fidelity,cluster.nodes,parallelism.tp,"));
  CHECK(header.find(",iteration_time_s,") != std::string::npos);
  CHECK(shell_output(binary + " search " + path + " -o " + csv + " 2>&1", out) == 2);
  CHECK(out.find("add --format csv or --format json") != std::string::npos);
}

TEST_CASE("search marks the layouts priced as PyTorch FSDP1 when the scenario names no framework") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("fsdp.yaml");
  std::ofstream(path) << scenario;
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  std::string out;
  REQUIRE(shell_output(binary + " search " + path + " --top 400 --no-event 2>&1", out) == 0);
  // ZeRO 2-3 layouts without tp, pp or cp are among 400 of a 16-GPU search, each marked, with the legend.
  CHECK(out.find("+ priced as PyTorch FSDP1 (framework: fsdp1)") != std::string::npos);
  CHECK(out.find("3+ ") != std::string::npos);
  // Once the scenario names a framework, every layout is priced with it and nothing is marked.
  std::ofstream(path) << scenario << "framework: megatron-core\n";
  REQUIRE(shell_output(binary + " search " + path + " --top 400 --no-event 2>&1", out) == 0);
  CHECK(out.find("priced as PyTorch FSDP1") == std::string::npos);
  CHECK(out.find("3+ ") == std::string::npos);
}

TEST_CASE("search leaves the default memory headroom free, and its rows are distinct answers") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("headroom.yaml");
  std::ofstream(path) << scenario;
  std::string out;
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  REQUIRE(shell_output(binary + " search " + path + " --top 10 --no-event --format json 2>/dev/null", out) ==
          0);
  std::string words;
  REQUIRE(shell_output(binary + " search " + path + " --top 1 --no-event 2>&1", words) == 0);
  CHECK(words.find("the default memory headroom") != std::string::npos);
  const nlohmann::json rows = nlohmann::json::parse(out);
  REQUIRE(rows.size() >= 10);
  // A100 80 GiB: 2 x 688 MB + 15 % of HBM must stay free (models/step/memory_headroom.hpp).
  const double hbm = 80.0 * 1024 * 1024 * 1024;
  const double allowed = hbm - (2 * 688e6 + 0.15 * hbm);
  for (std::size_t i = 0; i < 10; ++i) {
    CAPTURE(rows[i].dump());
    CHECK(rows[i]["memory_per_gpu_bytes"].get<double>() <= allowed);
    CHECK(rows[i].contains("same_results_with"));
    for (std::size_t j = i + 1; j < 10; ++j) {
      CHECK_FALSE((rows[i]["iteration_time_s"] == rows[j]["iteration_time_s"] &&
                   rows[i]["memory_per_gpu_bytes"] == rows[j]["memory_per_gpu_bytes"]));
    }
  }
}

TEST_CASE("an empty Pareto front says why") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("empty.yaml");
  std::ofstream(path) << scenario << "budget: {deadline: \"1 h\"}\n";
  std::string out;
  REQUIRE(shell_output(std::string("'") + TRAINSIM_BINARY + "' search " + path + " --top 2 --no-event 2>&1",
                       out) == 0);
  INFO(out);
  CHECK(out.find("(empty) none of the") != std::string::npos);
  CHECK(out.find("past budget.deadline 60.0 min") != std::string::npos);
}

TEST_CASE("search --nodes A..B doubles from A to B; a front on one cluster size says cost follows time") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("span.yaml");
  std::ofstream(path) << scenario;
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  // 1..5: 1, 2, 4 (8 is past 5). Every row is on one of them, and the rows use more than one.
  std::string out;
  REQUIRE(shell_output(binary + " search " + path +
                           " --nodes 1..5 --top 3 --max-layouts 300 --no-event --format json 2>/dev/null",
                       out) == 0);
  const nlohmann::json rows = nlohmann::json::parse(out);
  std::set<std::string> counts;
  for (const auto& row : rows) counts.insert(row["cluster.nodes"].get<std::string>());
  CHECK(counts.size() > 1);
  for (const std::string& n : counts) CHECK((n == "1" || n == "2" || n == "4"));
  // The scenario's 2 nodes alone: the table says how to compare sizes, halving and doubling them.
  REQUIRE(shell_output(binary + " search " + path + " --top 1 --max-layouts 300 --no-event 2>&1", out) == 0);
  CHECK(out.find("one node count: cost follows time; --nodes 1..4 compares cluster sizes") !=
        std::string::npos);
  // A span written backwards, or not a number, is refused with the item.
  CHECK(shell_output(binary + " search " + path + " --nodes 4..1 2>&1", out) == 2);
  CHECK(out.find("--nodes 4..1: a span A..B needs A <= B") != std::string::npos);
  CHECK(shell_output(binary + " search " + path + " --nodes 2..x 2>&1", out) == 2);
  CHECK(out.find("--nodes 2..x: expected a node count") != std::string::npos);
}

TEST_CASE(
    "search names a per-module recompute in its table, its own layout and its rows, as --set takes it") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.file("modules.yaml");
  // The scenario's modules in the reverse of RecomputeModule's order: the output writes them in its order.
  std::ofstream(path) << R"(name: search-modules
model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1, recompute: {modules: [layernorm, core_attn]}}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
framework: megatron-core
)";
  const std::string binary = std::string("'") + TRAINSIM_BINARY + "'";
  const std::string modules = "{modules: [core_attn, layernorm]}";
  std::string out;
  REQUIRE(shell_output(binary + " search " + path + " --top 400 --no-event 2>&1", out) == 0);
  INFO(out);
  CHECK(out.find("The scenario's own layout (tp 1, pp 1, dp 16,") != std::string::npos);
  CHECK(out.find(", recompute " + modules + "):") != std::string::npos);
  // The selective rows carry the scenario's modules: the table says so, and names them once below it.
  CHECK(out.find(" modules ") != std::string::npos);
  CHECK(out.find(" selective  ") == std::string::npos);  // a cell, padded before the iteration column
  CHECK(out.find("   modules: selective recompute of the scenario's modules (parallelism.recompute: " +
                 modules + ")\n") != std::string::npos);
  // A row's recompute, re-run with run --set, gives the row's iteration time.
  REQUIRE(shell_output(binary + " search " + path + " --top 400 --no-event --format json 2>/dev/null", out) ==
          0);
  const nlohmann::json rows = nlohmann::json::parse(out);
  const auto row = std::find_if(rows.begin(), rows.end(), [&](const nlohmann::json& r) {
    return r["parallelism.recompute"] == modules;
  });
  REQUIRE(row != rows.end());
  std::string sets;
  for (const auto& [key, value] : row->items()) {
    if ((key.starts_with("cluster.") || key.starts_with("parallelism.") || key.starts_with("framework.")) &&
        !value.get<std::string>().empty())
      sets += " --set '" + key + "=" + value.get<std::string>() + "'";
  }
  std::string run;
  REQUIRE(shell_output(binary + " run " + path + " --fidelity analytic --format json" + sets + " 2>/dev/null",
                       run) == 0);
  CHECK(nlohmann::json::parse(run)["iteration_time_s"].get<double>() ==
        doctest::Approx((*row)["iteration_time_s"].get<double>()).epsilon(1e-3));
}
