// Golden summaries (DESIGN "Tests"): for every example scenario, `trainsim run FILE --format json` must
// reproduce tests/golden/<example>.json field by field: exactly for integers, text and booleans, within a
// relative 1e-9 for doubles (the last printed digits may differ across compilers). A mismatch names the
// field with the expected and actual values; after an intended model change, run tools/update-golden and
// review the diff.
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "binary_harness.hpp"

using nlohmann::json;
using trainsim::e2e::describe;
using trainsim::e2e::example_scenarios;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
namespace fs = std::filesystem;

namespace {

const std::string regenerate = "run tools/update-golden and review the diff (git diff tests/golden)";
constexpr double relative_tolerance = 1e-9;

fs::path golden_folder() {
  return fs::path(TRAINSIM_SOURCE_DIR) / "tests" / "golden";
}

bool doubles_agree(double expected, double actual) {
  if (expected == actual) return true;
  return std::abs(expected - actual) <= relative_tolerance * std::max(std::abs(expected), std::abs(actual));
}

/// The differences between two summaries, one line per field: missing, unexpected, or a changed value.
std::vector<std::string> differences(const json& expected, const json& actual) {
  std::vector<std::string> found;
  for (const auto& [key, want] : expected.items()) {
    if (!actual.contains(key)) {
      found.push_back("field " + key + ": expected " + want.dump() + ", missing from the output");
      continue;
    }
    const json& got = actual[key];
    bool same = false;
    if (want.is_number_float() || got.is_number_float())
      same = want.is_number() && got.is_number() && doubles_agree(want.get<double>(), got.get<double>());
    else
      same = want == got;  // integers, text, booleans, null: exact
    if (!same) found.push_back("field " + key + ": expected " + want.dump() + ", actual " + got.dump());
  }
  for (const auto& [key, got] : actual.items())
    if (!expected.contains(key))
      found.push_back("field " + key + ": not in the golden file, actual " + got.dump());
  return found;
}

}  // namespace

TEST_CASE("the golden comparison accepts a relative difference of 1e-9 and nothing larger") {
  CHECK(doubles_agree(1.0, 1.0 + 0.5e-9));
  CHECK_FALSE(doubles_agree(1.0, 1.0 + 2e-9));
  CHECK(doubles_agree(0.0, 0.0));
  CHECK_FALSE(doubles_agree(0.0, 1e-300));
  const json golden = json::parse(R"({"steps": 10, "name": "a", "fits": true, "iteration_time": 2.5})");
  CHECK(differences(golden, golden).empty());
  const json changed =
      json::parse(R"({"steps": 11, "name": "a", "fits": true, "iteration_time": 2.5, "x": 1})");
  const auto found = differences(golden, changed);
  REQUIRE(found.size() == 2);
  CHECK(found[0] == "field steps: expected 10, actual 11");
  CHECK(found[1] == "field x: not in the golden file, actual 1");
}

TEST_CASE("every example has a golden summary and every golden summary has an example") {
  std::set<std::string> examples;
  for (const auto& file : example_scenarios()) examples.insert(file.stem().string());
  std::set<std::string> goldens;
  if (fs::exists(golden_folder()))
    for (const auto& entry : fs::directory_iterator(golden_folder()))
      if (entry.path().extension() == ".json") goldens.insert(entry.path().stem().string());
  for (const auto& name : examples)
    CHECK_MESSAGE(goldens.count(name) == 1, "no tests/golden/" << name << ".json: " << regenerate);
  for (const auto& name : goldens)
    CHECK_MESSAGE(examples.count(name) == 1,
                  "tests/golden/" << name << ".json has no example: " << regenerate);
}

TEST_CASE("every example reproduces its golden summary field by field") {
  for (const auto& file : example_scenarios()) {
    const std::string example = file.stem().string();
    const fs::path golden_file = golden_folder() / (example + ".json");
    if (!fs::exists(golden_file)) continue;  // reported by the test case above
    SUBCASE(example.c_str()) {
      const auto outcome = run_trainsim({"run", file.string(), "--format", "json"}, 60.0);
      INFO(example << ": " << describe(outcome));
      REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
      const json expected = json::parse(read_file(golden_file));
      const json actual = json::parse(outcome.out);
      const auto found = differences(expected, actual);
      std::string report;
      for (const auto& line : found) report += "\n  " + line;
      CHECK_MESSAGE(found.empty(), example << " differs from tests/golden/" << example << ".json:" << report
                                           << "\nIf the change is intended, " << regenerate << ".");
    }
  }
}
