// `trainsim run -o DIR` writes its files as one set: all of them or the folder as it was, never an earlier
// run's files beside a new summary; a full disk, or a path that cannot be a folder, is exit 2 with the path.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/binary_harness.hpp"

using namespace trainsim::e2e;

namespace {

const std::string example = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-1024-a100.yaml";

// Loads (every layout rule holds) but is more than the event fidelity simulates: 65,536 micro-batches on
// 32 stages are 4.2M passes, over its 4M, so the step is infeasible and writes no trace and no timeline.
const std::string too_many_passes = R"(model: llama3-8b
cluster: {node: dgx-h100, nodes: 4}
parallelism: {tp: 1, pp: 32, micro_batch: 1}
training: {global_batch: 65536, steps: 1}
)";

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an infeasible run leaves no trace or timeline of the earlier run beside its summary") {
  const TempDir out;
  const Outcome first = run_trainsim({"run", example, "-o", out.path().string()});
  REQUIRE_MESSAGE(first.exit_code == 0, describe(first));
  REQUIRE(fs::exists(out.path() / "trace.json"));
  REQUIRE(fs::exists(out.path() / "run.csv"));
  const TempDir input;
  std::ofstream(input.file("passes.yaml")) << too_many_passes;
  const Outcome second = run_trainsim({"run", input.file("passes.yaml"), "-o", out.path().string()});
  CHECK_MESSAGE(second.exit_code == 1, describe(second));
  CHECK(second.err.find("infeasible layout") != std::string::npos);
  CHECK(read_file(out.path() / "summary.json").find("\"feasible\": false") != std::string::npos);
  CHECK_FALSE(fs::exists(out.path() / "trace.json"));
  CHECK_FALSE(fs::exists(out.path() / "run.csv"));
  CHECK(entries(out.path()) == 1);
}

TEST_CASE("a full disk is exit 2 naming the file, and leaves no output and no temporary") {
  // RLIMIT_FSIZE of 64 KiB: the summary fits, the trace (tens of MB) does not, as on a full disk.
  const TempDir out;
  const Outcome o =
      run_trainsim({"run", example, "-o", out.path().string()}, 30.0, rlim_t{8} << 30, 64 << 10);
  CHECK_MESSAGE(o.exit_code == 2, describe(o));
  CHECK(o.err.find("trace.json") != std::string::npos);
  CHECK(o.err.find("File too large") != std::string::npos);
  CHECK(entries(out.path()) == 0);
}

TEST_CASE("an output path that cannot be a folder is exit 2 with the reason, not an internal error") {
  const TempDir dir;
  std::ofstream(dir.file("a-file")) << "x";
  for (const std::string& bad : {dir.file("a-file"), dir.file("a-file") + "/sub", std::string("/dev/null")}) {
    const Outcome o = run_trainsim({"run", example, "-o", bad});
    const std::string what = bad + ": " + describe(o);
    CHECK_MESSAGE(o.exit_code == 2, what);
    CHECK(o.err.find(bad) != std::string::npos);
  }
}

TEST_CASE("calibrate -o on a full disk is exit 2 and writes no preset") {
  const std::string shared =
      std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/vtrain/ground_truth_single.csv";
  if (!fs::exists(shared)) return;  // the shared measurements are beside a development checkout only
  const TempDir dir;
  {
    std::ifstream in(shared);
    std::ofstream subset(dir.file("subset.csv"));
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) {
      if (i == 0 || i % 80 == 0) subset << line << "\n";
    }
  }
  // 100 bytes: the measurements are read; the preset (and the report on standard output) cannot be written.
  const Outcome o = run_trainsim({"calibrate", dir.file("subset.csv"), "--gpu", "a100-sxm4-80gb", "--fit",
                                  "matmul_peak_fraction", "-o", dir.file("p.yaml")},
                                 120.0, rlim_t{8} << 30, 100);
  CHECK_MESSAGE(o.exit_code == 2, describe(o));
  CHECK_FALSE(fs::exists(dir.file("p.yaml")));
  CHECK(entries(dir.path()) == 1);  // the subset only: no temporary left
}

TEST_CASE("report -o and merge on a full disk are exit 2 and leave neither a partial file nor a temporary") {
  const TempDir dir;
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("run")}).exit_code == 0);
  const std::string sweep_path = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-sweep.csv";
  // 4 KiB: the inputs are read whole; the HTML page (hundreds of kB) and the merged sweep cannot be written.
  const Outcome report =
      run_trainsim({"report", dir.file("run"), "-o", dir.file("page.html")}, 30.0, rlim_t{8} << 30, 4 << 10);
  CHECK_MESSAGE(report.exit_code == 2, describe(report));
  CHECK(report.err.find("page.html") != std::string::npos);
  const Outcome merge =
      run_trainsim({"merge", dir.file("merged.csv"), sweep_path}, 30.0, rlim_t{8} << 30, 4 << 10);
  CHECK_MESSAGE(merge.exit_code == 2, describe(merge));
  CHECK(merge.err.find("merged.csv") != std::string::npos);
  CHECK(entries(dir.path()) == 1);  // the run folder only
}

TEST_CASE(
    "a 1,024-GPU trace is per pass by default and under 5 MiB; --trace-detail layer keeps every kernel run") {
  const TempDir dir;
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("pass")}).exit_code == 0);
  const auto pass_bytes = fs::file_size(dir.path() / "pass" / "trace.json");
  CHECK(pass_bytes <= std::uintmax_t{5} << 20);
  const nlohmann::json pass = nlohmann::json::parse(read_file(dir.path() / "pass" / "trace.json"));
  CHECK(pass["otherData"]["detail"] == "pass");
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("layer"), "--trace-detail", "layer"}).exit_code == 0);
  const nlohmann::json layer = nlohmann::json::parse(read_file(dir.path() / "layer" / "trace.json"));
  CHECK(layer["otherData"]["detail"] == "layer");
  // Every pass of every stage is many slices at layer detail and one at pass detail.
  CHECK(layer["traceEvents"].size() > 4 * pass["traceEvents"].size());
}

TEST_CASE("--gzip writes trace.json.gz, a gzip member holding the same trace, and no trace.json") {
  const TempDir dir;
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("plain")}).exit_code == 0);
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("gz"), "--gzip"}).exit_code == 0);
  const fs::path gz = dir.path() / "gz" / "trace.json.gz";
  REQUIRE(fs::exists(gz));
  CHECK_FALSE(fs::exists(dir.path() / "gz" / "trace.json"));
  const std::string bytes = read_file(gz);
  REQUIRE(bytes.size() > 2);
  CHECK(static_cast<unsigned char>(bytes[0]) == 0x1f);  // RFC 1952 magic
  CHECK(static_cast<unsigned char>(bytes[1]) == 0x8b);
  // gzip(1) reads it back to the very bytes of the uncompressed trace.
  REQUIRE(std::system(("gzip -dc '" + gz.string() + "' > '" + dir.file("unzipped.json") + "'").c_str()) == 0);
  CHECK(read_file(dir.file("unzipped.json")) == read_file(dir.path() / "plain" / "trace.json"));
  // A later run without --gzip replaces it: never both files.
  REQUIRE(run_trainsim({"run", example, "-o", dir.file("gz")}).exit_code == 0);
  CHECK(fs::exists(dir.path() / "gz" / "trace.json"));
  CHECK_FALSE(fs::exists(gz));
}
