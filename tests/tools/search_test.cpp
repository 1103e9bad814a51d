// `trainsim search` end to end through the binary, on a model small enough to search in well under a second.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

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
  const std::string path = (std::filesystem::temp_directory_path() / "trainsim-search-test.yaml").string();
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(std::string("'") + TRAINSIM_BINARY + "' search " + path + " --top 3 2>&1", out);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("layouts divide") != std::string::npos);
  CHECK(out.find("Top 3 by run time:") != std::string::npos);
  CHECK(out.find("Pareto front, run time vs run cost") != std::string::npos);
  // Three ranked rows, each re-simulated with the event fidelity.
  std::size_t events = 0;
  for (std::size_t at = out.find(" event\n"); at != std::string::npos; at = out.find(" event\n", at + 1))
    ++events;
  CHECK(events == 3);
  CHECK(out.find("The scenario's own layout (tp 1, pp 1, dp 16,") != std::string::npos);
  CHECK(out.find("would rank ") != std::string::npos);
}

TEST_CASE("search --max-layouts scores an evenly spaced subset and says it stopped short") {
  const std::string path = (std::filesystem::temp_directory_path() / "trainsim-search-budget.yaml").string();
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(
      std::string("'") + TRAINSIM_BINARY + "' search " + path + " --no-event --max-layouts 50 2>&1", out);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("stopped short: scored ") != std::string::npos);
  CHECK(out.find("raise --max-layouts to score them all") != std::string::npos);
}

TEST_CASE("search with a node list and the cost objective ranks across cluster sizes") {
  const std::string path = (std::filesystem::temp_directory_path() / "trainsim-search-test2.yaml").string();
  std::ofstream(path) << scenario;
  std::string out;
  const int rc = shell_output(std::string("'") + TRAINSIM_BINARY + "' search " + path +
                                  " --objective cost --nodes 1,2 --top 2 --no-event 2>&1",
                              out);
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(rc == 0, out);
  CHECK(out.find("Top 2 by run cost:") != std::string::npos);
  CHECK(out.find(" event\n") == std::string::npos);
}
