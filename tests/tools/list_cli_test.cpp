// `trainsim list gpus|clusters|regions` through the real binary (TRAINSIM_BINARY): a plain aligned table
// whose last GPU column says whether the preset's constants were validated against published data, and every
// shipped node.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "binary_harness.hpp"

namespace {

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::run_trainsim;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The row whose first word is `name`, or an empty string.
std::string row_of(const std::vector<std::string>& lines, const std::string& name) {
  for (const std::string& line : lines) {
    const auto words = words_of(line);
    if (!words.empty() && words.front() == name) return line;
  }
  return "";
}

}  // namespace

TEST_CASE("list gpus ends every row with a validated column: yes for h100-sxm, no for gb200") {
  const Outcome o = run_trainsim({"list", "gpus"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const auto lines = lines_of(o.out);
  REQUIRE(lines.size() >= 3);
  CHECK(words_of(lines.front()).back() == "validated");
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(line.size() == lines.front().size());  // aligned: every row as wide as the header
    CHECK(line.find('\t') == std::string::npos);
  }
  for (const auto& [name, mark] : std::vector<std::pair<std::string, std::string>>{
           {"h100-sxm", "yes"}, {"a100-sxm4-80gb", "yes"}, {"gb200", "no"}, {"h800-sxm", "no"}}) {
    CAPTURE(name);
    const std::string row = row_of(lines, name);
    REQUIRE_FALSE(row.empty());
    CHECK(words_of(row).back() == mark);
  }
}

TEST_CASE("list clusters shows the new nodes with their GPU, GPU count and NICs") {
  const Outcome o = run_trainsim({"list", "clusters"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const auto lines = lines_of(o.out);
  const std::string nvl72 = row_of(lines, "gb200-nvl72");
  CHECK(nvl72.find("gb200") != std::string::npos);
  CHECK(words_of(nvl72).size() >= 3);
  if (words_of(nvl72).size() >= 3) CHECK(words_of(nvl72)[2] == "72");
  CHECK(nvl72.find("72 x 400 Gb/s") != std::string::npos);
  const std::string h800 = row_of(lines, "hgx-h800");
  CHECK(h800.find("h800-sxm") != std::string::npos);
  CHECK(h800.find("8 x 400 Gb/s") != std::string::npos);
}

TEST_CASE("list regions shows each region's GPU-hours, storage, egress, energy and carbon, and its file") {
  const Outcome o = run_trainsim({"list", "regions"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const std::string east = row_of(lines_of(o.out), "us-east");
  // models/regions/us-east.yaml: H100 $98.32 / 8 = $12.29; EIA Virginia industrial 8.92 cents.
  CHECK(east.find("h100-sxm $12.29") != std::string::npos);
  CHECK(east.find("$0.0892") != std::string::npos);
  CHECK(east.find("us-east.yaml") != std::string::npos);
  CHECK_FALSE(row_of(lines_of(o.out), "eu-west").empty());
}
