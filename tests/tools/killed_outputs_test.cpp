// A reader never sees half a file: `trainsim cluster -o DIR` and `trainsim compare -o page.html` killed
// with SIGKILL at any moment leave each output either absent or whole (byte for byte the uninterrupted
// run's), and the next run into the same place writes the uninterrupted run's files; on a full disk compare
// is exit 2 naming the page and leaves neither the page nor a temporary (sim/output_files.hpp). The sweep's
// SIGKILL-and-resume is tested in sweep_test.cpp, run -o's full disk in run_output_test.cpp, cluster -o's
// in hostile_inputs_test.cpp.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "binary_harness.hpp"

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string source = TRAINSIM_SOURCE_DIR;
const std::string cluster_file = source + "/scenarios/examples/shared-cluster.yaml";
const std::string compare_h100 = source + "/tests/tools/report_fixtures/compare/h100.yaml";
const std::string compare_b200 = source + "/tests/tools/report_fixtures/compare/b200.yaml";

/// The kill times: eight evenly spread over an uninterrupted run's `seconds`, the last just past its end
/// (a run is a little slower or faster each time, so the last kills land in the writing or after it).
/// `seconds` is the faster of two runs, so that most kills land before the end.
std::vector<double> kill_times(double seconds) {
  std::vector<double> times;
  for (int k = 1; k <= 8; ++k) times.push_back(seconds * k / 7.5);
  return times;
}

/// Files not hidden: what a reader globs. The temporaries are ".NAME.tmp-PID-N".
std::vector<std::string> visible_files(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string()[0] != '.') names.push_back(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("cluster -o killed at any moment leaves each file whole or absent, and the next run completes it") {
  const TempDir dir;
  const fs::path whole = dir.path() / "whole";
  const Outcome reference = run_trainsim({"cluster", cluster_file, "-o", whole.string()}, 300);
  REQUIRE_MESSAGE(reference.exit_code == 0, describe(reference));
  const Outcome warm = run_trainsim({"cluster", cluster_file, "-o", whole.string()}, 300);
  REQUIRE_MESSAGE(warm.exit_code == 0, describe(warm));
  const std::vector<std::string> names = {"jobs.csv", "cluster.csv", "queue.json", "trace.json"};
  for (const std::string& name : names) REQUIRE(!read_file(whole / name).empty());

  int killed = 0;
  int tried = 0;
  for (const double at : kill_times(std::min(reference.seconds, warm.seconds))) {
    const fs::path out = dir.path() / ("killed-" + std::to_string(tried++));
    const Outcome o = run_trainsim({"cluster", cluster_file, "-o", out.string()}, at);
    INFO("killed after " << at << " s: " << describe(o));
    CHECK((o.timed_out || o.exit_code == 0));
    killed += o.timed_out ? 1 : 0;
    if (!fs::exists(out)) continue;  // killed before the folder was made
    for (const std::string& name : visible_files(out)) {
      INFO(name);
      CHECK(std::find(names.begin(), names.end(), name) != names.end());
      CHECK(read_file(out / name) == read_file(whole / name));
    }
    // The same folder, run again to the end: the uninterrupted run's files, whatever the kill left there.
    const Outcome again = run_trainsim({"cluster", cluster_file, "-o", out.string()}, 300);
    REQUIRE_MESSAGE(again.exit_code == 0, describe(again));
    for (const std::string& name : names) CHECK(read_file(out / name) == read_file(whole / name));
  }
  CHECK(killed >= 2);  // kills before the run's end did land
}

TEST_CASE("compare -o killed at any moment leaves the page whole or absent, and the next run writes it") {
  const TempDir dir;
  const std::vector<std::string> options = {"compare",    compare_h100, compare_b200,
                                            "--fidelity", "analytic",   "-o"};
  auto with_output = [&](const fs::path& page) {
    std::vector<std::string> args = options;
    args.push_back(page.string());
    return args;
  };
  const fs::path whole = dir.path() / "whole.html";
  const Outcome reference = run_trainsim(with_output(whole), 120);
  REQUIRE_MESSAGE(reference.exit_code == 0, describe(reference));
  const Outcome warm = run_trainsim(with_output(whole), 120);
  REQUIRE_MESSAGE(warm.exit_code == 0, describe(warm));
  const std::string page = read_file(whole);
  REQUIRE(page.find("data-report=\"compare\"") != std::string::npos);

  int killed = 0;
  int tried = 0;
  for (const double at : kill_times(std::min(reference.seconds, warm.seconds))) {
    const fs::path out = dir.path() / ("killed-" + std::to_string(tried++) + ".html");
    const Outcome o = run_trainsim(with_output(out), at);
    INFO("killed after " << at << " s: " << describe(o));
    CHECK((o.timed_out || o.exit_code == 0));
    killed += o.timed_out ? 1 : 0;
    if (fs::exists(out)) CHECK(read_file(out) == page);
    const Outcome again = run_trainsim(with_output(out), 120);
    REQUIRE_MESSAGE(again.exit_code == 0, describe(again));
    CHECK(read_file(out) == page);
  }
  CHECK(killed >= 2);
}

TEST_CASE("compare -o on a full disk is exit 2 naming the page, and leaves no page nor a temporary") {
  const TempDir dir;
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  // RLIMIT_FSIZE of 8 KiB: the page (11 kB: its styles and script inline) cannot be written; the table on
  // standard output (under 2 kB) can.
  const Outcome o = run_trainsim(
      {"compare", compare_h100, compare_b200, "--fidelity", "analytic", "-o", (out / "page.html").string()},
      120, rlim_t{8} << 30, 8 << 10);
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("page.html") != std::string::npos);
  CHECK(o.err.find("File too large") != std::string::npos);
  CHECK(fs::is_empty(out));
}
