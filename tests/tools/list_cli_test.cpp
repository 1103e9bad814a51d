// `trainsim list gpus|clusters|regions` through the real binary (TRAINSIM_BINARY): a plain aligned table
// whose last GPU columns say which validation cases check each preset and at what error, and every shipped
// node.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <map>
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

namespace {

// The columns after `TDP W`: validated, checks, MAPE, validated by (the last may hold spaces).
struct ValidationCells {
  std::string validated, checks, mape, by;
};

ValidationCells validation_cells(const std::string& header, const std::string& row) {
  const std::size_t at = header.find("validated");
  std::istringstream in(row.substr(at));  // the cell is right-aligned in the header's 9 columns
  ValidationCells c;
  in >> c.validated >> c.checks >> c.mape;
  std::getline(in >> std::ws, c.by);
  while (!c.by.empty() && c.by.back() == ' ') c.by.pop_back();
  return c;
}

}  // namespace

TEST_CASE(
    "list gpus says which presets the shipped validation cases check, how many checks and at what MAPE") {
  const Outcome o = run_trainsim({"list", "gpus"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const auto lines = lines_of(o.out);
  REQUIRE(lines.size() >= 3);
  CHECK(lines.front().find("validated checks   MAPE  validated by") != std::string::npos);
  for (const std::string& line : lines) {
    CAPTURE(line);
    CHECK(line.size() == lines.front().size());  // aligned: every row as wide as the header
    CHECK(line.find('\t') == std::string::npos);
  }
  // gb200 and gb300: the Megatron-Core MoE report's step cases in published/ (4 and 3 of them); b300: one
  // Megatron-LM MoE recipe (moe-recipes/).
  for (const auto& [name, mark] : std::vector<std::pair<std::string, std::string>>{{"h100-sxm", "yes"},
                                                                                   {"a100-sxm4-80gb", "yes"},
                                                                                   {"gb200", "yes"},
                                                                                   {"gb300", "yes"},
                                                                                   {"b300", "yes"},
                                                                                   {"mi300x", "no"},
                                                                                   {"h800-sxm", "no"}}) {
    CAPTURE(name);
    const std::string row = row_of(lines, name);
    REQUIRE_FALSE(row.empty());
    const ValidationCells c = validation_cells(lines.front(), row);
    CHECK(c.validated == mark);
    if (mark == "no") {
      CHECK(c.checks == "0");
      CHECK(c.mape == "-");
      CHECK(c.by == "not validated");
    }
  }
  // GB200: its 16 dispatch and combine latencies (moe-dispatch) beside the 6 Megatron-LM recipes and the 4
  // published step cases.
  const ValidationCells gb200 = validation_cells(lines.front(), row_of(lines, "gb200"));
  CHECK(gb200.checks == "26");
  CHECK(gb200.by.starts_with("moe-dispatch 16 @ "));
  CHECK(gb200.by.find(", moe-recipes 6 @ ") != std::string::npos);
  CHECK(gb200.by.find(", published 4 @ ") != std::string::npos);
}

// The MAPE `list gpus` prints per (GPU, suite) is the mean |error| of `validate --format csv`'s rows for that
// GPU and folder, recomputed here from the CSV: the two commands cannot disagree.
TEST_CASE("list gpus's per-suite MAPE and check count are validate's, recomputed from its CSV") {
  const Outcome v = run_trainsim({"validate", "--suite", "all", "--format", "csv"}, 120.0);
  INFO(describe(v));
  const auto rows = lines_of(v.out);
  REQUIRE(rows.size() > 10);
  // case,group,attention,framework,gpu,metric,measured,predicted,error,... (no commas before `error`)
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> sums;  // (gpu, group) -> (sum, n)
  for (std::size_t i = 1; i < rows.size(); ++i) {
    std::vector<std::string> cells;
    std::istringstream in(rows[i]);
    for (std::string cell; cells.size() < 9 && std::getline(in, cell, ',');) cells.push_back(cell);
    REQUIRE(cells.size() == 9);
    auto& [sum, n] = sums[{cells[4], cells[1]}];
    sum += std::fabs(std::stod(cells[8]));
    ++n;
  }
  const Outcome o = run_trainsim({"list", "gpus"}, 120.0);
  REQUIRE(o.exit_code == 0);
  const auto lines = lines_of(o.out);
  int compared = 0;
  for (const auto& [key, total] : sums) {
    const auto& [gpu, group] = key;
    CAPTURE(gpu);
    CAPTURE(group);
    const std::string expected =
        fmt::format("{} {} @ {:.1f}%", group, total.second, 100 * total.first / total.second);
    CHECK(validation_cells(lines.front(), row_of(lines, gpu)).by.find(expected) != std::string::npos);
    ++compared;
  }
  CHECK(compared >= 5);  // megatron2020, korthikanti, published, vtrain-*, collectives on several GPUs
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
