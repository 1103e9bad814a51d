// Settings files (`trainsim validate --settings`): read with every problem at file:line:col, matched to
// the cases run, and applied to a case exactly as if its file said so.
#include "scenarios/case_settings.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/studies/validation_runner.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    (void)load_case_settings_text(yaml, "s.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string korthikanti = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/korthikanti/";

double predicted_time(const CaseResult& r) {
  for (const MetricCheck& c : r.checks) {
    if (c.metric == "iteration_time") return c.predicted;
  }
  return NAN;
}

}  // namespace

TEST_CASE("a settings file: each case's source and its keys, in order, each at its place") {
  const CaseSettings s = load_case_settings_text(
      "cases:\n"
      "  case-a:\n"
      "    source: \"recipe A\"\n"
      "    set:\n"
      "      framework.moe_dispatcher: hybridep\n"
      "      parallelism.recompute: {modules: [mla_up_proj, mlp]}\n"
      "  case-b:\n"
      "    source: recipe B\n"
      "    set: {parallelism.recompute: none}\n",
      "s.yaml");
  REQUIRE(s.cases.size() == 2);
  const CaseSetting& a = s.cases[0];
  CHECK(a.case_name == "case-a");
  CHECK(a.source == "recipe A");
  CHECK(a.line == 2);
  REQUIRE(a.overrides.size() == 2);
  CHECK(a.overrides[0].key_path == "framework.moe_dispatcher");
  CHECK(a.overrides[0].yaml_value == "hybridep");
  CHECK(a.overrides[0].origin_file == "s.yaml");
  CHECK(a.overrides[0].origin_line == 5);
  CHECK(a.overrides[0].origin_column == 33);
  CHECK(a.overrides[1].key_path == "parallelism.recompute");
  CHECK(a.overrides[1].origin_line == 6);
  REQUIRE(s.cases[1].overrides.size() == 1);
  CHECK(set_text(s.cases[1].overrides[0]) == "parallelism.recompute=none");
  // Matched by the case file's stem, wherever the file is.
  REQUIRE(s.find("/some/folder/case-b.yaml") != nullptr);
  CHECK(s.find("/some/folder/case-b.yaml")->source == "recipe B");
  CHECK(s.find("case-c.yaml") == nullptr);
}

TEST_CASE("a settings file's problems, each at its place") {
  CHECK(error_of("cases:\n  x:\n    sorce: a\n    set: {a.b: 1}\n")
            .find("s.yaml:3:5: cases.x.sorce: unknown key \"sorce\" (did you mean \"source\"?)") !=
        std::string::npos);
  CHECK(error_of("cases:\n  x:\n    set: {a.b: 1}\n").find("missing key \"source\"") != std::string::npos);
  CHECK(error_of("cases:\n  x:\n    source: a\n    set: []\n")
            .find("s.yaml:4:10: cases.x.set: expected a mapping") != std::string::npos);
  CHECK(error_of("cases:\n  x:\n    source: a\n    set: {}\n").find("cases.x.set: expected a mapping") !=
        std::string::npos);
  CHECK(error_of("cases: [x]\n").find("s.yaml:1:8: cases: expected a mapping of case names") !=
        std::string::npos);
  CHECK(error_of("case: {}\n").find("unknown key \"case\"") != std::string::npos);
  CHECK(
      error_of("cases:\n  x: {source: a, set: {a: 1}}\n  x: {source: b, set: {a: 2}}\n").find("s.yaml:3:") !=
      std::string::npos);  // a case named twice: the parser's duplicate key
}

TEST_CASE("every case a settings file names must be among the cases run") {
  const CaseSettings s = load_case_settings_text(
      "cases:\n  kor22-t5-175b-full:\n    source: a\n    set: {parallelism.recompute: full}\n"
      "  kor22-t5-175b-fulll:\n    source: a\n    set: {parallelism.recompute: full}\n",
      "s.yaml");
  const std::vector<std::string> files = {korthikanti + "kor22-t5-175b-full.yaml",
                                          korthikanti + "kor22-t5-175b-selective.yaml"};
  try {
    check_settings_match(s, files);
    FAIL("a misspelt case was accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("s.yaml:5:3: cases.kor22-t5-175b-fulll: no such case among the 2 cases given") !=
          std::string::npos);
    CHECK(what.find("cases.kor22-t5-175b-full:") == std::string::npos);
  }
}

TEST_CASE("a case run with settings predicts what its file would with those keys written in it") {
  // Korthikanti et al.'s Table 5 ran GPT-3 175B on the same layout twice: full recompute without sequence
  // parallelism, and selective recompute with it. The selective case told the other's two keys is the
  // full case.
  const trainsim::testing::TempDir temp;
  const std::string settings_path =
      temp.write("settings.yaml",
                 "cases:\n"
                 "  kor22-t5-175b-selective:\n"
                 "    source: \"Table 5's other row\"\n"
                 "    set: {parallelism.recompute: full, parallelism.sequence_parallel: false}\n");
  ValidationOptions options;
  options.settings = load_case_settings_file(settings_path);
  const CaseResult told = run_case(korthikanti + "kor22-t5-175b-selective.yaml", options);
  const CaseResult full = run_case(korthikanti + "kor22-t5-175b-full.yaml", options);
  const CaseResult as_written = run_case(korthikanti + "kor22-t5-175b-selective.yaml");
  REQUIRE(told.failure.empty());
  REQUIRE(full.failure.empty());
  CHECK(predicted_time(told) == doctest::Approx(predicted_time(full)).epsilon(1e-12));
  // Full recompute runs the forward again: slower than selective.
  CHECK(predicted_time(told) > 1.05 * predicted_time(as_written));
  CHECK(told.settings ==
        std::vector<std::string>{"parallelism.recompute=full", "parallelism.sequence_parallel=false"});
  CHECK(told.settings_source == "Table 5's other row");
  CHECK(full.settings.empty());
  CHECK(as_written.settings.empty());

  // --set applies to every case, before its settings entry.
  options.overrides = {Override{"training.global_batch", "16"}};
  const CaseResult both = run_case(korthikanti + "kor22-t5-175b-selective.yaml", options);
  CHECK(both.settings.front() == "training.global_batch=16");
  CHECK(both.settings.size() == 3);
}

TEST_CASE("a settings value the reader refuses fails its case at the value's place in the settings file") {
  const trainsim::testing::TempDir temp;
  const std::string settings_path = temp.write(
      "settings.yaml",
      "cases:\n  kor22-t5-175b-full:\n    source: x\n    set:\n      parallelism.recompute: fulll\n");
  ValidationOptions options;
  options.settings = load_case_settings_file(settings_path);
  const CaseResult r = run_case(korthikanti + "kor22-t5-175b-full.yaml", options);
  CHECK(r.failure.find(settings_path + ":5:30: parallelism.recompute") != std::string::npos);
  CHECK_FALSE(r.passed());
}

TEST_CASE("a collective or dispatch case given keys to set fails rather than run without them") {
  ValidationOptions options;
  options.overrides = {Override{"cluster.nodes", "2"}};
  const CaseResult r = run_case(std::string(TRAINSIM_SOURCE_DIR) +
                                    "/scenarios/validation/moe-dispatch/mcore-t7-h100-a2a-dispatch-ep16.yaml",
                                options);
  CHECK(r.failure.find("has no scenario to set keys in") != std::string::npos);
  CHECK(r.checks.empty());
}

TEST_CASE(
    "the shipped Megatron-Bridge settings: one entry per Bridge case, each with its source, every key read") {
  const CaseSettings s =
      load_case_settings_file(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/recipe-settings/moe-steps.yaml");
  // The 18 Megatron-Bridge rows of moe-steps (the two DeepSeek reports ran DeepSeek's own framework).
  CHECK(s.cases.size() == 18);
  for (const CaseSetting& c : s.cases) {
    INFO(c.case_name);
    CHECK(c.case_name.rfind("mb", 0) == 0);
    CHECK(c.source.find("Megatron-Bridge v0.") == 0);
    REQUIRE_FALSE(c.overrides.empty());
    CHECK(c.overrides.front().key_path == "framework.moe_dispatcher");
    CHECK(c.overrides.back().key_path == "parallelism.recompute");
  }
  const std::string shared = std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/moe-steps";
  if (!std::filesystem::exists(shared)) return;  // outside the development tree
  const std::vector<std::string> files = find_case_files({shared});
  check_settings_match(s, files);  // every entry names a case there
  ValidationOptions options;
  options.settings = s;
  for (const std::string& f : files) {
    const CaseResult r = run_case(f, options);
    INFO(f << ": " << r.failure);
    CHECK(r.failure.empty());  // every value reads as if written in its case
  }
}
