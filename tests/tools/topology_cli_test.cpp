// `trainsim topology S.yaml` (issue 4): a summary of the scenario's cluster graph (device and link counts,
// bisection bandwidth, diameter) and, with --dot FILE, a Graphviz file. The expected counts are derived by
// hand from the example's cluster: 8 DGX H100 nodes (8 GPUs, NVSwitch, 8 x 400 Gb/s NICs, one per GPU) on a
// rail-optimized two-tier fat-tree of 64-port switches.
#include <doctest/doctest.h>

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

TEST_CASE("topology on a missing file is bad input: exit 2 naming the file") {
  const Outcome o = run_trainsim({"topology", "no-such-scenario.yaml"});
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("no-such-scenario.yaml") != std::string::npos);
}
