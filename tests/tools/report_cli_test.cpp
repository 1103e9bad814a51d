// `trainsim report IN` end to end: it tells a run folder (trace.json or, with `run --gzip`, trace.json.gz),
// a sweep's JSON Lines and a search's JSON array apart and writes the page each asks for; a broken trace is
// exit 2 naming the file.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "tests/tools/binary_harness.hpp"

using namespace trainsim::e2e;

namespace {

const std::string kExamples = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/";
const std::string kFixtures = std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/report_fixtures/";

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("a run folder with a gzipped trace gets its pipeline timeline, written as DIR/report.html") {
  const TempDir dir;
  const Outcome run =
      run_trainsim({"run", kExamples + "llama3-70b-512-h100.yaml", "-o", dir.file("run"), "--gzip"});
  REQUIRE_MESSAGE(run.exit_code == 0, describe(run));
  REQUIRE(fs::exists(dir.path() / "run" / "trace.json.gz"));
  const Outcome report = run_trainsim({"report", dir.file("run")});
  REQUIRE_MESSAGE(report.exit_code == 0, describe(report));
  const std::string html = read_file(dir.path() / "run" / "report.html");
  CHECK(has(html, "<title>Run: llama3-70b-512-h100</title>"));
  CHECK(has(html, R"(data-chart="pipeline-timeline")"));
  CHECK(has(html, R"(data-chart="memory-per-stage")"));
}

TEST_CASE("a broken trace.json is exit 2 naming it, and no page is written") {
  const TempDir dir;
  fs::create_directories(dir.path() / "run");
  fs::copy_file(kFixtures + "run/summary.json", dir.path() / "run" / "summary.json");
  std::ofstream(dir.path() / "run" / "trace.json") << "{\"traceEvents\": [";
  const Outcome report = run_trainsim({"report", dir.file("run"), "-o", dir.file("page.html")});
  CHECK_MESSAGE(report.exit_code == 2, describe(report));
  CHECK(has(report.err, "trace.json"));
  CHECK_FALSE(fs::exists(dir.path() / "page.html"));
}

TEST_CASE("a CSV that is neither a sweep's nor a search's output is exit 2, and no page is written") {
  const TempDir dir;
  std::ofstream(dir.file("junk.csv")) << "a,b\n1,2\n";
  const Outcome report = run_trainsim({"report", dir.file("junk.csv"), "-o", dir.file("page.html")});
  CHECK_MESSAGE(report.exit_code == 2, describe(report));
  CHECK(has(report.err, "not a sweep's output (no point and sweep_fingerprint columns)"));
  CHECK_FALSE(fs::exists(dir.path() / "page.html"));
}

TEST_CASE("a sweep's JSON Lines and a search's JSON array get their own pages") {
  const TempDir dir;
  const Outcome sweep = run_trainsim({"sweep", kFixtures + "checkpoint-sweep.yaml", "--format", "jsonl", "-o",
                                      dir.file("s.jsonl"), "-j", "1"});
  REQUIRE_MESSAGE(sweep.exit_code == 0, describe(sweep));
  const Outcome sweep_report = run_trainsim({"report", dir.file("s.jsonl")});
  REQUIRE_MESSAGE(sweep_report.exit_code == 0, describe(sweep_report));
  const std::string sweep_html = read_file(dir.path() / "s.html");
  CHECK(has(sweep_html, R"(data-report="sweep")"));
  CHECK(has(sweep_html, R"(data-chart="sweep-checkpoint.interval-run_time")"));
  CHECK(has(sweep_html, ">30 min</text>"));

  std::ofstream(dir.path() / "q.json")
      << R"([{"rank": "1", "on_pareto": true, "fidelity": "event", "cluster.nodes": "64", "budget": "ok",
               "feasible": true, "reason": "", "compute": 3.0, "bubble": 0.5, "run_time": 1.7e6,
               "cost_total": 1.5e6, "fits": true}])";
  const Outcome search_report = run_trainsim({"report", dir.file("q.json"), "-o", dir.file("q.html")});
  REQUIRE_MESSAGE(search_report.exit_code == 0, describe(search_report));
  const std::string search_html = read_file(dir.path() / "q.html");
  CHECK(has(search_html, R"(data-report="search")"));
  CHECK(has(search_html, "bound by <b>compute</b>"));  // 3.0 of 3.5 s: 86 %
}

TEST_CASE("compare prints the options side by side with their bands, and writes the page") {
  const trainsim::e2e::TempDir dir;
  const std::string fixtures = TRAINSIM_SOURCE_DIR "/tests/tools/report_fixtures/compare/";
  const std::string page = dir.file("compare.html");
  const auto o = trainsim::e2e::run_trainsim(
      {"compare", fixtures + "h100.yaml", fixtures + "b200.yaml", "--fidelity", "analytic", "-o", page}, 120);
  INFO(trainsim::e2e::describe(o));
  REQUIRE(o.exit_code == 0);
  CHECK(o.out.find("llama3-70b-h100-fsdp2  2048 x h100-sxm") != std::string::npos);
  CHECK(o.out.find("llama3-70b-b200-fsdp2  1024 x b200") != std::string::npos);
  CHECK(o.out.find("(not validated)") != std::string::npos);  // B200: no shipped case
  CHECK(o.out.find("from 3 validation cases (h100-sxm / fsdp2 / dense 3D / 8192-16384 GPUs)") !=
        std::string::npos);
  const std::string html = trainsim::e2e::read_file(page);
  CHECK(html.find("data-report=\"compare\"") != std::string::npos);
  CHECK(html.find("llama3-70b-b200-fsdp2") != std::string::npos);
  // One option is not a comparison.
  CHECK(trainsim::e2e::run_trainsim({"compare", fixtures + "h100.yaml"}).exit_code == 2);
}
