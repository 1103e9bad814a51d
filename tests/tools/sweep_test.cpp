// `trainsim sweep` end to end: the binary is run on a small GPT-3 1.3B sweep written to a temporary folder.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "binary_harness.hpp"
#include "report/table.hpp"

namespace fs = std::filesystem;
using Folder = trainsim::e2e::TempDir;
using trainsim::e2e::read_file;
using trainsim::e2e::shell;
using trainsim::e2e::trainsim_command;

namespace {

// 3 node counts x 4 tp x 2 optimizers = 24 points; tp 3 divides neither the 16 heads nor the 8 GPUs of a
// node, so the 6 points with tp 3 cannot be built.
constexpr const char* small_sweep = R"(name: sweep-test
tags: {team: infra}
model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 1}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
pricing: {gpu_hour: "$2.50"}
sweep:
  cluster.nodes: [1, 2, 4]
  parallelism.tp: [1, 2, 3, 8]
  training.optimizer: [adamw, sgd-momentum]
)";

// The same with three more axes: 24 x 4 x 4 x 3 = 1,152 points, long enough to be killed mid-way.
constexpr const char* large_axes = R"(  parallelism.micro_batch: [1, 2, 4, 8]
  parallelism.zero: [0, 1, 2, 3]
  parallelism.recompute: [none, selective, full]
)";

std::string write(const Folder& folder, const std::string& name, const std::string& text) {
  std::ofstream(folder.file(name), std::ios::binary) << text;
  return folder.file(name);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The k-th comma-separated field of a CSV row (the leading fields hold no quoted commas).
std::string nth_field(const std::string& row, int k) {
  std::size_t begin = 0;
  for (int i = 0; i < k; ++i) begin = row.find(',', begin) + 1;
  return row.substr(begin, row.find(',', begin) - begin);
}

}  // namespace

TEST_CASE("every point is written once in point order and unbuildable points keep their reason") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -j 2 -o " + dir.file("out.csv") + " 2>" +
                dir.file("err.txt")) == 0);
  const auto rows = lines(read_file(dir.file("out.csv")));
  REQUIRE(rows.size() == 25);
  const std::string& header = rows[0];
  for (const char* column : {"point,sweep_fingerprint,", ",cluster.nodes,", ",parallelism.tp,",
                             ",training.optimizer,", ",tags.team,", ",feasible,", ",reason,",
                             ",iteration_time_s,", ",memory_per_gpu_bytes,", ",cost_total_usd"}) {
    CHECK_MESSAGE(header.find(column) != std::string::npos, column);
  }
  int unbuildable = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i].starts_with(std::to_string(i - 1) + ","));
    CHECK(nth_field(rows[i], 1) == nth_field(rows[1], 1));  // one fingerprint for the whole sweep
    CHECK(nth_field(rows[i], 1).size() == 16);
    CHECK(nth_field(rows[i], 2) == "sweep-test");
    if (nth_field(rows[i], 4) == "3") {  // point, sweep_fingerprint, scenario, cluster.nodes, parallelism.tp
      ++unbuildable;
      CHECK(rows[i].find(",false,") != std::string::npos);
      CHECK(rows[i].find("divisible by tp (3)") != std::string::npos);
    }
  }
  CHECK(unbuildable == 6);
  // stderr is a file here, not a terminal: no progress bar, only the closing line.
  const std::string err = read_file(dir.file("err.txt"));
  CHECK(err.find('\r') == std::string::npos);
  CHECK(err.starts_with("trainsim sweep: 24 points in "));
  CHECK(lines(err).size() == 1);
}

TEST_CASE("the output does not depend on the number of threads") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -j 1 -o " + dir.file("one.csv")) == 0);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -j 3 > " + dir.file("three.csv")) == 0);
  CHECK(read_file(dir.file("one.csv")) == read_file(dir.file("three.csv")));
}

TEST_CASE("JSON Lines rows are objects with finite numbers, null where a point could not be built") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("out.jsonl")) == 0);
  const auto rows = lines(read_file(dir.file("out.jsonl")));
  REQUIRE(rows.size() == 24);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto j = nlohmann::json::parse(rows[i]);
    CHECK(j["point"] == static_cast<int>(i));
    CHECK(j["tags.team"] == "infra");
    if (j["parallelism.tp"] == 3) {
      CHECK(j["feasible"] == false);
      CHECK(j["iteration_time_s"].is_null());
      CHECK_FALSE(j["reason"].get<std::string>().empty());
    } else {
      CHECK(j["feasible"] == true);
      CHECK(j["iteration_time_s"].get<double>() > 0);
      CHECK(j["cost_total_usd"].get<double>() > 0);
    }
  }
}

/// Starts `trainsim sweep scenario -j 1 -o out`, sends `sig` once more than 20 rows are out, and returns
/// the wait status.
int interrupt_sweep(const std::string& scenario, const std::string& out, int sig) {
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    freopen("/dev/null", "w", stderr);
    execl(TRAINSIM_BINARY, TRAINSIM_BINARY, "sweep", scenario.c_str(), "-j", "1", "-o", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Signal it once a few rows are out, before it can finish (its stderr goes to the void).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (lines(read_file(out)).size() > 20) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  kill(child, sig);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

TEST_CASE("a sweep killed or interrupted mid-way and resumed loses and duplicates no point") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", std::string(small_sweep) + large_axes);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -j 2 -o " + dir.file("full.csv")) == 0);
  const std::string full = read_file(dir.file("full.csv"));
  REQUIRE(lines(full).size() == 1153);

  const std::string out = dir.file("killed.csv");
  const int status = interrupt_sweep(scenario, out, SIGKILL);
  const std::string partial = read_file(out);
  CHECK(WIFSIGNALED(status));
  CHECK(lines(partial).size() < 1153);
  CHECK(full.starts_with(partial.substr(0, partial.rfind('\n') + 1)));

  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -j 2 --resume -o " + out) == 0);
  CHECK(read_file(out) == full);

  // Ctrl-C stops cleanly: exit code 130, whole rows only, and the output resumes the same way.
  const std::string stopped = dir.file("stopped.csv");
  const int interrupted = interrupt_sweep(scenario, stopped, SIGINT);
  REQUIRE(WIFEXITED(interrupted));
  CHECK(WEXITSTATUS(interrupted) == 130);
  const std::string rows = read_file(stopped);
  CHECK(lines(rows).size() < 1153);
  CHECK(full.starts_with(rows));
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + stopped + " 2>/dev/null") == 0);
  CHECK(read_file(stopped) == full);
}

TEST_CASE("a torn last row is cut off on resume and its point written again") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("full.csv")) == 0);
  const std::string full = read_file(dir.file("full.csv"));
  // Keep the header and 10 rows, plus half of the 11th, as a power cut mid-write would.
  std::size_t cut = 0;
  for (int n = 0; n < 11; ++n) cut = full.find('\n', cut) + 1;
  const std::size_t torn = cut + (full.find('\n', cut) - cut) / 2;
  write(dir, "torn.csv", full.substr(0, torn));
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("torn.csv")) == 0);
  CHECK(read_file(dir.file("torn.csv")) == full);
  // Resuming a finished output changes nothing.
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("torn.csv")) == 0);
  CHECK(read_file(dir.file("torn.csv")) == full);
}

TEST_CASE("resume refuses the output of a different sweep and needs an output file") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  write(dir, "other.csv", "point,something,else\n0,a,b\n");
  CHECK(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("other.csv") +
              " 2>/dev/null") == 2);
  CHECK(read_file(dir.file("other.csv")) == "point,something,else\n0,a,b\n");
  CHECK(shell(trainsim_command() + " sweep " + scenario + " --resume 2>/dev/null >/dev/null") == 2);
}

TEST_CASE("resume refuses rows of another sweep with the same columns, by their fingerprint") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("out.csv")) == 0);
  const std::string full = read_file(dir.file("out.csv"));
  // Same axes and columns, another global batch: a different sweep whose rows must not be mixed in.
  std::string other_text = small_sweep;
  other_text.replace(other_text.find("global_batch: 512"), 17, "global_batch: 256");
  const std::string other = write(dir, "other.yaml", other_text);
  const std::string err = dir.file("err.txt");
  write(dir, "part.csv", full.substr(0, full.find('\n', full.find('\n') + 1) + 1));  // header and point 0
  CHECK(shell(trainsim_command() + " sweep " + other + " --resume -o " + dir.file("part.csv") + " 2>" +
              err) == 2);
  CHECK(read_file(err).find("holds rows of a different sweep") != std::string::npos);
  CHECK(read_file(dir.file("part.csv")) == full.substr(0, full.find('\n', full.find('\n') + 1) + 1));
  // The same scenario resumes it.
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("part.csv")) == 0);
  CHECK(read_file(dir.file("part.csv")) == full);
}

TEST_CASE("a CSV cell holding a newline is one row to --resume and merge") {
  const Folder dir;
  std::string scenario_text = small_sweep;
  scenario_text.replace(scenario_text.find("tags: {team: infra}"), 19, "tags: {team: \"infra\\nand more\"}");
  const std::string scenario = write(dir, "s.yaml", scenario_text);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("full.csv")) == 0);
  const std::string full = read_file(dir.file("full.csv"));
  REQUIRE(full.find("\"infra\nand more\"") != std::string::npos);  // written quoted, as RFC 4180 says
  // Keep the header and 5 whole rows (each spans two lines), then resume: the rest is appended once.
  std::size_t cut = 0;
  for (int n = 0; n < 1 + 5 * 2; ++n) cut = full.find('\n', cut) + 1;
  write(dir, "part.csv", full.substr(0, cut));
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("part.csv")) == 0);
  CHECK(read_file(dir.file("part.csv")) == full);
  REQUIRE(shell(trainsim_command() + " merge " + dir.file("merged.csv") + " " + dir.file("part.csv") +
                " 2>/dev/null") == 0);
  CHECK(read_file(dir.file("merged.csv")) == full);
}

TEST_CASE("a grid too big to run is refused by check and by sweep, before the output is touched") {
  const Folder dir;
  // 5 keys of 100 values: 10^10 points, over the 10^8 a sweep runs.
  std::string text = std::string(small_sweep).substr(0, std::string(small_sweep).find("sweep:")) + "sweep:\n";
  for (const char* key : {"cluster.nodes", "parallelism.micro_batch", "training.global_batch",
                          "pricing.gpu_hour", "tags.team"}) {
    text += std::string("  ") + key + ": [";
    for (int v = 1; v <= 100; ++v) {
      const std::string value = std::string(key) == "pricing.gpu_hour" ? "\"$" + std::to_string(v) + "\""
                                : std::string(key) == "training.global_batch" ? std::to_string(512 * v)
                                                                              : std::to_string(v);
      text += (v > 1 ? ", " : "") + value;
    }
    text += "]\n";
  }
  const std::string scenario = write(dir, "big.yaml", text);
  CHECK(shell(trainsim_command() + " check " + scenario + " 2>" + dir.file("check.txt")) == 2);
  CHECK(read_file(dir.file("check.txt")).find("more than 100000000 points") != std::string::npos);
  write(dir, "keep.csv", "earlier results\n");
  CHECK(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("keep.csv") + " 2>/dev/null") ==
        2);
  CHECK(read_file(dir.file("keep.csv")) == "earlier results\n");
}

TEST_CASE("resume leaves a one-line file that is not the start of a sweep output as it is") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  write(dir, "notes.csv", "my notes, no newline");
  CHECK(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + dir.file("notes.csv") +
              " 2>/dev/null") == 2);
  CHECK(read_file(dir.file("notes.csv")) == "my notes, no newline");
}

TEST_CASE("a second sweep writing the same output is refused while the first holds it") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  const std::string out = dir.file("shared.csv");
  write(dir, "shared.csv", "");
  // The test holds the lock a running sweep would hold.
  const int fd = ::open(out.c_str(), O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  CHECK(shell(trainsim_command() + " sweep " + scenario + " -o " + out + " 2>" + dir.file("err.txt")) == 2);
  CHECK(read_file(dir.file("err.txt")).find("another trainsim sweep is writing this file") !=
        std::string::npos);
  CHECK(shell(trainsim_command() + " sweep " + scenario + " --resume -o " + out + " 2>/dev/null") == 2);
  ::close(fd);
  CHECK(shell(trainsim_command() + " sweep " + scenario + " -o " + out) == 0);  // free again
}

TEST_CASE("two MPI ranks write the same output as one process") {
  if (shell("command -v mpirun >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: mpirun is not installed");
    return;
  }
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("single.csv")) == 0);
  // OpenMPI's own allocations outlive MPI_Finalize (some in components it has already unloaded, which no
  // suppression file can name), so LeakSanitizer is off for the ranks; address and UB checks stay on.
  const int rc = shell("mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0 -np 2 " +
                       trainsim_command() + " sweep " + scenario + " --mpi -o " + dir.file("mpi.csv") + " >" +
                       dir.file("mpi.log") + " 2>&1");
  if (read_file(dir.file("mpi.log")).find("built without MPI") != std::string::npos) {
    MESSAGE("skipped: trainsim was built without MPI (MPI was not found at configure time)");
    return;
  }
  REQUIRE_MESSAGE(rc == 0, read_file(dir.file("mpi.log")));
  CHECK(read_file(dir.file("mpi.csv")) == read_file(dir.file("single.csv")));
}

TEST_CASE("sweep --set edits the scenario before its points, and the rows and fingerprint follow") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("a.csv")) == 0);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --set training.global_batch=256 -o " +
                dir.file("b.csv")) == 0);
  const auto a = lines(read_file(dir.file("a.csv")));
  const auto b = lines(read_file(dir.file("b.csv")));
  REQUIRE(a.size() == b.size());
  CHECK(a[0] == b[0]);                              // the same columns
  CHECK(nth_field(a[1], 1) != nth_field(b[1], 1));  // another sweep
  // Half the batch: half the tokens per step, so the same tokens take twice the steps.
  const auto steps_column = [&](const std::string& header) {
    int k = 0;
    for (std::size_t at = 0; at < header.find(",steps,"); at = header.find(',', at) + 1) ++k;
    return k;
  };
  const int steps = steps_column(a[0]);
  const std::string sa = nth_field(a[1], steps), sb = nth_field(b[1], steps);
  CAPTURE(sa);
  CAPTURE(sb);
  CHECK(std::stod(sb) == doctest::Approx(2 * std::stod(sa)).epsilon(0.01));
}

TEST_CASE("a quoted swept value is stored as its value, in CSV and in JSON Lines") {
  const Folder dir;
  std::string text = small_sweep;
  text.replace(text.find("  training.optimizer: [adamw, sgd-momentum]\n"), 44,
               "  pricing.gpu_hour: [\"$2.10/h\", '$2.50/h']\n");
  const std::string scenario = write(dir, "s.yaml", text);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("out.csv")) == 0);
  const std::string csv = read_file(dir.file("out.csv"));
  CHECK(csv.find(",$2.10/h,") != std::string::npos);
  CHECK(csv.find(",$2.50/h,") != std::string::npos);
  CHECK(csv.find("\"\"") == std::string::npos);  // no doubled quotes anywhere
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("out.jsonl")) == 0);
  const auto rows = lines(read_file(dir.file("out.jsonl")));
  REQUIRE_FALSE(rows.empty());
  CHECK(nlohmann::json::parse(rows[0])["pricing.gpu_hour"] == "$2.10/h");
}

TEST_CASE("a finished sweep says in one line how many points were feasible and fit, and which was fastest") {
  const Folder dir;
  const std::string scenario = write(dir, "s.yaml", small_sweep);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("out.jsonl") + " 2>" +
                dir.file("err.txt")) == 0);
  // The counts the rows themselves give.
  int feasible = 0, fits = 0;
  for (const std::string& line : lines(read_file(dir.file("out.jsonl")))) {
    const nlohmann::json row = nlohmann::json::parse(line);
    feasible += row["feasible"].get<bool>();
    fits += row["fits"].get<bool>();
  }
  REQUIRE(feasible > 0);
  REQUIRE(feasible < 24);  // the tp 3 points do not divide the GPUs
  const std::string err = read_file(dir.file("err.txt"));
  CAPTURE(err);
  CHECK(err.find("trainsim sweep: 24 points in ") != std::string::npos);
  CHECK(err.find(std::to_string(feasible) + " feasible, " + std::to_string(fits) + " fit; ") !=
        std::string::npos);
  CHECK(err.find(feasible > 0 ? "fastest feasible: point " : "no point is feasible") != std::string::npos);
}

TEST_CASE("one run written as summary.json, a CSV row and a JSON Lines row: the same names and values") {
  // A one-point sweep whose point is the scenario itself, so `run` and `sweep` simulate the same thing.
  const Folder dir;
  // small_sweep's scenario with checkpoints, failures and a region's prices.
  const std::string base = small_sweep;
  const std::string scenario =
      write(dir, "one.yaml",
            base.substr(0, base.find("pricing:")) +
                "checkpoint: {interval: \"1 h\"}\nfailures: {node_mtbf: \"2000 h\", restart: \"10 min\"}\n"
                "pricing: {region: us-east}\nsweep:\n  cluster.nodes: [1]\n");
  const std::string run_dir = dir.file("run");
  REQUIRE(shell(trainsim_command() + " run " + scenario + " --fidelity analytic -o " + run_dir +
                " > /dev/null 2>&1") == 0);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("rows.csv") + " 2>/dev/null") ==
          0);
  REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("rows.jsonl") +
                " 2>/dev/null") == 0);
  const auto summary = nlohmann::ordered_json::parse(read_file(run_dir + "/summary.json"));
  const auto jsonl = nlohmann::ordered_json::parse(lines(read_file(dir.file("rows.jsonl"))).at(0));
  const trainsim::report::Table csv =
      trainsim::report::parse_csv(read_file(dir.file("rows.csv")), "rows.csv");
  REQUIRE(csv.rows.size() == 1);
  const std::vector<std::string>& header = csv.columns;
  const std::vector<std::string>& row = csv.rows[0];
  // The summary's fields, from `feasible` on (the labels before it differ: a run names its fidelity, a
  // sweep row its point and swept keys).
  std::vector<std::string> fields;
  bool started = false;
  for (const auto& [key, value] : summary.items()) {
    started = started || key == "feasible";
    if (started) fields.push_back(key);
  }
  REQUIRE(fields.size() > 40);
  CHECK(summary.contains("iteration_time_s"));
  CHECK(summary.contains("memory_per_gpu_bytes"));
  CHECK(summary.contains("cost_total_usd"));
  CHECK(summary["region"] == "us-east");
  const auto csv_tail = std::find(header.begin(), header.end(), "feasible");
  REQUIRE(csv_tail != header.end());
  CHECK(std::vector<std::string>(csv_tail, header.end()) == fields);  // same names, same order
  std::vector<std::string> jsonl_fields;
  started = false;
  for (const auto& [key, value] : jsonl.items()) {
    started = started || key == "feasible";
    if (started) jsonl_fields.push_back(key);
  }
  CHECK(jsonl_fields == fields);
  for (const std::string& key : fields) {
    CAPTURE(key);
    const auto& v = summary[key];
    const std::string& cell = row[static_cast<std::size_t>(csv.column(key))];
    if (v.is_number()) {
      // JSON keeps every digit; CSV writes 10 significant ones.
      CHECK(jsonl[key].get<double>() == v.get<double>());
      CHECK(std::stod(cell) == doctest::Approx(v.get<double>()).epsilon(1e-9));
    } else if (v.is_boolean()) {
      CHECK(jsonl[key] == v);
      CHECK(cell == (v.get<bool>() ? "true" : "false"));
    } else {
      CHECK(jsonl[key] == v);
      CHECK(cell == v.get<std::string>());
    }
  }
}

TEST_CASE(
    "the campaign example sweeps over its campaign keys: trials x eta, region x commitment, loss x model") {
  const Folder dir;
  const std::string example = TRAINSIM_SOURCE_DIR "/scenarios/examples/llama2-7b-to-loss.yaml";
  const auto sweep = [&](const std::string& axes) {
    const int code = shell(trainsim_command() + " sweep '" + example + "' --set 'sweep={" + axes + "}' -o " +
                           dir.file("out.jsonl") + " 2>" + dir.file("err.txt"));
    REQUIRE(code == 0);
    std::vector<nlohmann::json> rows;
    for (const std::string& line : lines(read_file(dir.file("out.jsonl"))))
      rows.push_back(nlohmann::json::parse(line));
    for (const auto& row : rows) {
      CHECK(row["feasible"] == true);
      CHECK(row["tags.team"] == "llm");  // every row carries the scenario's tags
      CHECK(row["tags.project"] == "campaign");
    }
    return rows;
  };

  // The example's trials train 0.01 of the run each, halved from min_fraction 0.05 up to a whole trial.
  // By hand, trial equivalents = sum over rungs of floor(n / eta^i) * min(0.05 * eta^i, 1):
  //   27, eta 3: 27*0.05 + 9*0.15 + 3*0.45 + 1*1 = 1.35 + 1.35 + 1.35 + 1 = 5.05
  //   27, eta 4: 27*0.05 + 6*0.2 + 1*0.8 = 1.35 + 1.2 + 0.8 = 3.35 (27/64 leaves no trial)
  //   64, eta 3: 64*0.05 + 21*0.15 + 7*0.45 + 2*1 = 3.2 + 3.15 + 3.15 + 2 = 11.5
  //   64, eta 4: 64*0.05 + 16*0.2 + 4*0.8 + 1*1 = 3.2 + 3.2 + 3.2 + 1 = 10.6
  const auto trials = sweep("tuning.trials: [27, 64], tuning.early_stopping.eta: [3, 4]");
  REQUIRE(trials.size() == 4);
  const double equivalents[] = {5.05, 3.35, 11.5, 10.6};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(trials[i]["tuning_trial_equivalents"].get<double>() ==
          doctest::Approx(equivalents[i]).epsilon(1e-12));
  }

  // The example gives gpu_hour and energy.price beside its region: they win in every point, and the sweep
  // says so. us-east and us-west agree on storage and egress (models/regions/), so a commitment's rows have
  // one bill in both regions; the carbon differs, 300 against 200 g/kWh: 1.5 times the CO2 in us-east.
  const auto regions = sweep("pricing.region: [us-east, us-west], pricing.commitment.gpus: [128, 256]");
  REQUIRE(regions.size() == 4);
  CHECK(
      read_file(dir.file("err.txt"))
          .find("note: sweep over pricing.region: pricing.gpu_hour and pricing.energy.price are given beside "
                "the region") != std::string::npos);
  CHECK(read_file(dir.file("err.txt")).find("only the carbon differs") != std::string::npos);
  CHECK(regions[0]["region"] == "us-east");
  CHECK(regions[2]["region"] == "us-west");
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    CHECK(regions[i]["cost_total_usd"].get<double>() == regions[i + 2]["cost_total_usd"].get<double>());
    CHECK(regions[i]["co2_kg"].get<double>() ==
          doctest::Approx(1.5 * regions[i + 2]["co2_kg"].get<double>()));
  }
  CHECK(regions[0]["cost_fixed_usd"].get<double>() != regions[1]["cost_fixed_usd"].get<double>());

  // The law's tokens for each (target, model), from the row's own parameter count N, by Chinchilla's
  // approach 3: D = (410.7 / (L − 1.69 − 406.4 / N^0.34))^(1 / 0.28).
  const auto losses = sweep("convergence.target_loss: [2.05, 2.1], model.preset: [llama2-7b, llama2-13b]");
  REQUIRE(losses.size() == 4);
  const double targets[] = {2.05, 2.05, 2.1, 2.1};
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const double n = losses[i]["parameters"].get<double>();
    const double d = std::pow(410.7 / (targets[i] - 1.69 - 406.4 / std::pow(n, 0.34)), 1 / 0.28);
    CHECK(losses[i]["tokens_min"].get<double>() == doctest::Approx(d).epsilon(1e-9));
    CHECK(losses[i]["target_loss"].get<double>() == targets[i]);
  }
  CHECK(losses[1]["parameters"].get<double>() > losses[0]["parameters"].get<double>());
}

TEST_CASE("check and sweep judge a region sweep alike: a note for prices given beside it, exit 2 for all") {
  const Folder dir;
  const std::string head = R"(model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 1}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
)";
  const std::string swept = "sweep:\n  pricing.region: [us-east, us-west]\n";
  // The GPU-hour beside the region: both tables' energy prices differ (models/regions/), so the bills do.
  const std::string some =
      write(dir, "some.yaml", head + "pricing: {region: us-east, gpu_hour: \"$2.50\"}\n" + swept);
  for (const char* command : {" check ", " sweep "}) {
    CAPTURE(command);
    CHECK(shell(trainsim_command() + command + some + " >/dev/null 2>" + dir.file("err.txt")) == 0);
    CHECK(
        read_file(dir.file("err.txt"))
            .find("note: sweep over pricing.region: pricing.gpu_hour is given beside the region, and a price "
                  "given beside it wins over its table in every point; the rows compare the regions' other "
                  "prices") != std::string::npos);
  }
  // Every price a table sets given beside it: the rows would differ in the region's name only. The sweep key
  // is on line 7, at column 3.
  const std::string all = write(dir, "all.yaml",
                                head +
                                    "pricing: {region: us-east, gpu_hour: \"$2.50\", storage: "
                                    "{hot: \"$0.01/GB-month\"}, egress: \"$0.01/GB\", energy: "
                                    "{price: \"$0.05/kWh\", carbon: \"100 g/kWh\"}}\n" +
                                    swept);
  for (const char* command : {" check ", " sweep "}) {
    CAPTURE(command);
    CHECK(shell(trainsim_command() + command + all + " >/dev/null 2>" + dir.file("err.txt")) == 2);
    CHECK(read_file(dir.file("err.txt"))
              .find("all.yaml:7:3: sweep.pricing.region: every swept region ends with the same prices: "
                    "pricing.gpu_hour, pricing.storage.hot, pricing.egress, pricing.energy.price and "
                    "pricing.energy.carbon are given beside the region") != std::string::npos);
  }
}

TEST_CASE("a sweep over cluster.node with a price per node bills each row at its node's price") {
  Folder dir;
  const std::string body = R"(name: node-prices
model: gpt3-1.3b
cluster: {node: dgx-h100, nodes: 1}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
sweep:
  cluster.node: [dgx-h100, dgx-b200, dgx-a100-80gb]
)";
  // Per node preset, and the A100 node by its GPU preset's name.
  const std::string priced = write(dir, "priced.yaml",
                                   body +
                                       "pricing: {gpu_hour: {dgx-h100: \"$2.50\", dgx-b200: \"$4.50\", "
                                       "a100-sxm4-80gb: \"$1.75\"}}\n");
  const trainsim::e2e::Outcome o = trainsim::e2e::run_trainsim({"sweep", priced, "--format", "jsonl"}, 120);
  REQUIRE_MESSAGE(o.exit_code == 0, o.err);
  CHECK(o.err.find("one pricing.gpu_hour") == std::string::npos);
  const std::vector<std::string> rows = lines(o.out);
  REQUIRE(rows.size() == 3);
  const double expected[] = {2.50, 4.50, 1.75};
  for (std::size_t i = 0; i < 3; ++i) {
    const nlohmann::json row = nlohmann::json::parse(rows[i]);
    CAPTURE(row.dump());
    // cost_compute = GPU-hours x the node's price (no commitment, no spot).
    CHECK(row["cost_compute_usd"].get<double>() / row["gpu_hours"].get<double>() ==
          doctest::Approx(expected[i]).epsilon(1e-12));
  }

  // One price for every node: the rows are billed alike, and the sweep says so.
  const std::string single = write(dir, "single.yaml", body + "pricing: {gpu_hour: \"$3.00\"}\n");
  const trainsim::e2e::Outcome s = trainsim::e2e::run_trainsim({"sweep", single, "--format", "jsonl"}, 120);
  REQUIRE(s.exit_code == 0);
  CHECK(
      s.err.find("note: sweep over cluster.node: one pricing.gpu_hour ($3.00 per GPU-hour) prices every GPU "
                 "type swept (a100-sxm4-80gb, b200, h100-sxm)") != std::string::npos);

  // A map that does not price the cluster's node is an error that names what it prices.
  const std::string missing =
      write(dir, "missing.yaml",
            "name: m\nmodel: gpt3-1.3b\ncluster: {node: dgx-b200, nodes: 1}\ntraining: {global_batch: 8}\n"
            "pricing: {gpu_hour: {dgx-h100: \"$2.50\"}}\n");
  const trainsim::e2e::Outcome m = trainsim::e2e::run_trainsim({"check", missing});
  CHECK(m.exit_code == 2);
  CHECK(m.err.find("pricing.gpu_hour: no price for the cluster's node dgx-b200 (GPU b200): the map prices "
                   "dgx-h100; add one for dgx-b200") != std::string::npos);
}
