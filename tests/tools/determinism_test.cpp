// DESIGN principle 2, asserted through the binary: the same input gives byte-identical output. Two runs of
// one scenario write the same summary.json, trace.json and run.csv; two sweeps write the same rows; two
// runs of a cluster file write the same jobs.csv, cluster.csv and trace.json; two comparisons the same page.
#include "binary_harness.hpp"

using trainsim::e2e::describe;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;
namespace fs = std::filesystem;

namespace {

fs::path example(const std::string& stem) {
  return fs::path(TRAINSIM_SOURCE_DIR) / "scenarios" / "examples" / (stem + ".yaml");
}

/// Runs `trainsim run` on the example twice into separate folders and checks the three files match byte
/// for byte (and are not empty, so that two missing files do not pass).
void check_two_runs_identical(const std::string& stem, const std::string& fidelity) {
  const TempDir first;
  const TempDir second;
  for (const TempDir* out : {&first, &second}) {
    const auto outcome = run_trainsim({"run", example(stem).string(), "-o", out->path().string(), "--format",
                                       "json", "--fidelity", fidelity},
                                      60.0);
    INFO(stem << ": " << describe(outcome));
    REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
  }
  for (const std::string name : {"summary.json", "trace.json", "run.csv"}) {
    INFO(stem << " (" << fidelity << "): " << name);
    const std::string a = read_file(first.path() / name);
    const std::string b = read_file(second.path() / name);
    CHECK(!a.empty());
    CHECK(a.size() == b.size());
    CHECK(a == b);
  }
}

}  // namespace

TEST_CASE("two event-driven runs of GPT-3 175B on 1,024 A100 write byte-identical outputs") {
  check_two_runs_identical("gpt3-175b-1024-a100", "event");
}

TEST_CASE("two event-driven runs of Llama-3 405B on 16,384 H100 write byte-identical outputs") {
  check_two_runs_identical("llama3-405b-8k-16k-h100", "event");
}

TEST_CASE("two analytic runs of Llama-3 70B on 512 H100 write byte-identical outputs") {
  check_two_runs_identical("llama3-70b-512-h100", "analytic");
}

TEST_CASE("two sweeps of the same scenario write byte-identical rows, whatever the thread count") {
  const TempDir out;
  const std::string scenario = example("gpt3-1.3b-sweep").string();
  struct Sweep {
    std::string file, threads, fidelity;
  };
  const std::vector<Sweep> sweeps = {{"a.csv", "2", "analytic"},
                                     {"b.csv", "2", "analytic"},
                                     {"c.csv", "1", "analytic"},
                                     {"d.csv", "2", "event"},
                                     {"e.csv", "1", "event"}};
  for (const auto& sweep : sweeps) {
    const auto outcome = run_trainsim(
        {"sweep", scenario, "-j", sweep.threads, "--fidelity", sweep.fidelity, "-o", out.file(sweep.file)},
        120.0);
    INFO("sweep -j " << sweep.threads << " --fidelity " << sweep.fidelity << ": " << describe(outcome));
    REQUIRE((outcome.exit_code == 0 || outcome.exit_code == 1));
  }
  const std::string analytic = read_file(out.file("a.csv"));
  CHECK(analytic.find('\n') != std::string::npos);
  CHECK(analytic == read_file(out.file("b.csv")));
  CHECK(analytic == read_file(out.file("c.csv")));
  const std::string event = read_file(out.file("d.csv"));
  CHECK(event.find('\n') != std::string::npos);
  CHECK(event == read_file(out.file("e.csv")));
}

TEST_CASE("two runs of a shared cluster write byte-identical jobs, cluster timeline and trace") {
  const TempDir first;
  const TempDir second;
  for (const TempDir* out : {&first, &second}) {
    const auto outcome =
        run_trainsim({"cluster", example("shared-cluster").string(), "-o", out->path().string()}, 300.0);
    INFO(describe(outcome));
    REQUIRE(outcome.exit_code == 0);
  }
  for (const std::string name : {"jobs.csv", "cluster.csv", "trace.json"}) {
    INFO(name);
    const std::string a = read_file(first.path() / name);
    CHECK(!a.empty());
    CHECK(a == read_file(second.path() / name));
  }
}

TEST_CASE("two comparisons of the same scenarios write byte-identical pages") {
  const TempDir out;
  const std::string fixtures = std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/report_fixtures/compare/";
  for (const std::string page : {"a.html", "b.html"}) {
    const auto outcome = run_trainsim({"compare", fixtures + "h100.yaml", fixtures + "b200.yaml",
                                       "--fidelity", "analytic", "-o", out.file(page)},
                                      120.0);
    INFO(describe(outcome));
    REQUIRE(outcome.exit_code == 0);
  }
  const std::string a = read_file(out.file("a.html"));
  CHECK(a.find("data-report=\"compare\"") != std::string::npos);
  CHECK(a == read_file(out.file("b.html")));
}
