// `trainsim topology S.yaml`: a summary of the scenario's cluster graph (device and link counts,
// bisection bandwidth, diameter) and, with --dot FILE, a Graphviz file. The expected counts are derived by
// hand from the example's cluster: 8 DGX H100 nodes (8 GPUs, NVSwitch, 8 x 400 Gb/s NICs, one per GPU) on a
// rail-optimized two-tier fat-tree of 64-port switches.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <string>

#include "binary_harness.hpp"

namespace {

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

const std::string example = TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-8b-64-h100.yaml";

/// The first number after `label` at the start of a line (leading spaces allowed); -1 when absent.
double number_after(const std::string& text, const std::string& label) {
  const std::regex pattern("(^|\\n)\\s*" + label + R"(\s*:?\s+([0-9]+(\.[0-9]+)?))");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return -1.0;
  return std::stod(match[2].str());
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

/// A small GPT-3 125M scenario on `nodes` DGX H100 nodes with the given `network:` mapping.
std::string scenario_text(int nodes, const std::string& network) {
  return "model: gpt3-125m\ncluster:\n  node: dgx-h100\n  nodes: " + std::to_string(nodes) +
         "\n  network: " + network +
         "\nparallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1}\n"
         "training: {global_batch: " +
         std::to_string(8 * nodes) + ", precision: bf16, optimizer: adamw, steps: 10}\n";
}

std::size_t count_of(const std::string& text, const std::regex& pattern) {
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("The topology summary of 8 DGX H100 nodes counts devices and links, bisection and diameter") {
  const Outcome o = run_trainsim({"topology", example});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  INFO(o.out);

  // Devices: 64 GPUs, 8 NVSwitch devices (one per node), 64 NICs (one per GPU, rail-optimized), 8 leaves
  // (one per rail; 32 nodes fit under a 64-port leaf), 32 spines (each leaf's 32 up-ports) = 176.
  CHECK(number_after(o.out, "gpu") == 64);
  CHECK(number_after(o.out, "nic") == 64);
  CHECK(number_after(o.out, "devices") == 176);
  // Links, each direction counted: GPU-NVSwitch 64 + GPU-NIC 64 + NIC-leaf 64 + leaf-spine 8 x 32 = 448
  // cables, 896 directed links.
  CHECK(number_after(o.out, "links") == 896);

  // Bisection of a non-blocking (1:1) fat-tree is half the injection bandwidth: 64 NICs x 400 Gb/s = 3,200
  // GB/s, half 1,600 GB/s per direction; allow the fabric's efficiency below that, not above.
  const double bisection = number_after(o.out, "bisection bandwidth");
  CHECK(bisection <= 1600.0);
  CHECK(bisection >= 0.9 * 1600.0);
  CHECK(o.out.find("GB/s") != std::string::npos);
  std::smatch percent;
  if (std::regex_search(o.out, percent, std::regex(R"(([0-9.]+)% of half the NIC bandwidth)")))
    CHECK(std::stod(percent[1].str()) == doctest::Approx(bisection / 1600.0 * 100.0).epsilon(0.01));

  // GPUs do not forward: the longest GPU-to-GPU route is GPU -> NIC -> leaf (rail i) -> spine -> leaf
  // (rail j) -> NIC -> GPU, 6 links.
  CHECK(number_after(o.out, "diameter") == 6);
}

TEST_CASE("topology --dot writes a Graphviz file with one node per device and one edge per cable") {
  const TempDir dir;
  const std::string dot = dir.file("cluster.dot");
  const Outcome o = run_trainsim({"topology", example, "--dot", dot});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const std::string text = read_file(dot);
  REQUIRE(!text.empty());
  const bool graph = text.rfind("graph", 0) == 0 || text.rfind("digraph", 0) == 0;
  CHECK(graph);
  CHECK(text.find('}') != std::string::npos);
  // The same hand counts as the summary: 176 devices; 448 cables drawn once each in an undirected graph
  // (`--`) or 896 directed edges (`->`).
  const std::size_t nodes = count_of(text, std::regex(R"((^|\n)\s*\w+\s*\[label=)"));
  const std::size_t undirected = count_of(text, std::regex(R"(\w+\s*--\s*\w+)"));
  const std::size_t directed = count_of(text, std::regex(R"(\w+\s*->\s*\w+)"));
  CHECK(nodes == 176);
  CHECK((undirected == 448 || directed == 896));
}

TEST_CASE("A single-switch fabric: every NIC on one switch, GPU-to-GPU diameter 4") {
  const TempDir dir;
  const std::string scenario = dir.file("single-switch.yaml");
  write(scenario, scenario_text(8, "{topology: single-switch}"));
  const Outcome o = run_trainsim({"topology", scenario});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  INFO(o.out);
  // 64 GPUs + 8 NVSwitch devices + 64 NICs + 1 switch = 137 devices; cables GPU-NVSwitch 64 + GPU-NIC 64 +
  // NIC-switch 64 = 192, 384 directed links; longest route GPU -> NIC -> switch -> NIC -> GPU.
  CHECK(number_after(o.out, "devices") == 137);
  CHECK(number_after(o.out, "links") == 384);
  CHECK(number_after(o.out, "diameter") == 4);
  // A single non-blocking switch: half the NICs' 3,200 GB/s, at most.
  CHECK(number_after(o.out, "bisection bandwidth") <= 1600.0);
}

// The summary qualifies the bisection as "P% of half the NIC bandwidth". On one node the bisection runs
// through the NVSwitch (at most 4 GPUs x 450 GB/s = 1,800 GB/s), while half the NIC bandwidth is 8 x 50 / 2 =
// 200 GB/s: it once printed "1479.6 GB/s per direction (100% of half the NIC bandwidth)" (really 740%).
TEST_CASE(
    "On one node the bisection is NVSwitch-bound and its percentage of the NIC bandwidth is consistent") {
  const TempDir dir;
  const std::string scenario = dir.file("one-node.yaml");
  write(scenario, scenario_text(1, "{topology: fat-tree}"));
  const Outcome o = run_trainsim({"topology", scenario});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  INFO(o.out);
  const double bisection = number_after(o.out, "bisection bandwidth");
  CHECK(bisection <= 4 * 450.0);
  CHECK(bisection >= 0.5 * 4 * 450.0);
  std::smatch match;
  if (std::regex_search(o.out, match, std::regex(R"(([0-9.]+)% of half the NIC bandwidth)")))
    CHECK(std::stod(match[1].str()) == doctest::Approx(bisection / 200.0 * 100.0).epsilon(0.01));
}

TEST_CASE("topology on a missing file is bad input: exit 2 naming the file") {
  const Outcome o = run_trainsim({"topology", "no-such-scenario.yaml"});
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("no-such-scenario.yaml") != std::string::npos);
}
