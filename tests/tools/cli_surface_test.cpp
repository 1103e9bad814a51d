// The command-line surface of SPEC "Command line": --help on every command, exit codes (0 ok, 1 a budget or
// validation check failed, 2 bad input), the preset lists, `check`, and no colours or progress bar when the
// output goes to a pipe. Every test runs the real binary (TRAINSIM_BINARY).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "binary_harness.hpp"

namespace {

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

const std::string source = TRAINSIM_SOURCE_DIR;

/// Runs `trainsim ARGS` through a shell with standard output and error going into one pipe (so the binary
/// sees a pipe, not a terminal); returns what came through and the exit status (-1 if it did not exit).
struct Piped {
  int exit_code = -1;
  std::string output;
};

Piped run_piped(const std::string& args) {
  const std::string command = std::string(TRAINSIM_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Piped r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A small scenario that loads and simulates in milliseconds.
const char* const small_scenario =
    "model: gpt3-125m\n"
    "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
    "parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1}\n"
    "training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 10}\n";

struct CommandHelp {
  const char* command;
  std::vector<const char*> mentions;  // positional arguments (or, without any, the required options)
};

// The positional arguments each command takes (SPEC "Command line"), as its --help names them.
const std::vector<CommandHelp> commands = {
    {"run", {"scenario"}},
    {"sweep", {"scenario"}},
    {"merge", {"output", "shards"}},
    {"search", {"scenario"}},
    {"validate", {"paths"}},
    {"calibrate", {"inputs", "--gpu"}},
    {"explain", {"scenario"}},
    {"check", {"scenario"}},
    {"list", {"models", "gpus", "clusters", "optimizers"}},
    {"report", {"IN"}},
    {"topology", {"scenario"}},
    {"collective", {"--cluster", "--op"}},  // no positionals: nccl-tests style options
    {"import", {"megatron"}},               // one subcommand per tool whose configuration it reads
    {"cluster", {"cluster_file", "--output", "--format"}},
};

}  // namespace

TEST_CASE("trainsim --help exits 0 and lists every command") {
  const Outcome o = run_trainsim({"--help"});
  INFO(describe(o));
  CHECK(o.exit_code == 0);
  for (const auto& c : commands) {
    INFO("command " << std::string(c.command));
    CHECK(o.out.find(std::string("  ") + c.command + " ") != std::string::npos);
  }
}

TEST_CASE("Every command's --help exits 0 and names the command's arguments") {
  for (const auto& c : commands) {
    const Outcome o = run_trainsim({c.command, "--help"});
    INFO("trainsim " << std::string(c.command) << " --help: " << describe(o));
    CHECK(o.exit_code == 0);
    CHECK(o.out.find("Usage:") != std::string::npos);
    for (const char* word : c.mentions) {
      INFO("expected to mention " << std::string(word));
      CHECK(o.out.find(word) != std::string::npos);
    }
  }
}

TEST_CASE("An unknown command, a missing command or an unknown option is bad input: exit 2") {
  const TempDir dir;
  const std::string scenario = dir.file("small.yaml");
  write(scenario, small_scenario);
  const std::vector<std::vector<std::string>> bad = {
      {"frobnicate"},
      {},
      {"run", "--no-such-option", scenario},
      {"explain", "--no-such-option", scenario},
      {"collective", "--cluster", "dgx-h100", "--op", "all-reduce", "--size", "1M", "--no-such-option"},
      {"list", "no-such-list"},
      {"run"},      // its scenario is required
      {"cluster"},  // its cluster file is required
  };
  for (const auto& args : bad) {
    const Outcome o = run_trainsim(args);
    std::string line = "trainsim";
    for (const auto& a : args) line += " " + a;
    INFO(line << ": " << describe(o));
    CHECK(o.exit_code == 2);
    CHECK_FALSE(o.err.empty());
    CHECK(o.err.find("\x1b[") == std::string::npos);  // error messages are plain text off a terminal too
  }
}

TEST_CASE("A thread count out of range names the range it must be in, not a bound of 1.8e308") {
  const TempDir dir;
  const std::string scenario = dir.file("small.yaml");
  write(scenario, small_scenario);
  for (const std::string command : {"sweep", "search", "validate"}) {
    const Outcome o = run_trainsim({command, scenario, "-j", "-1"});
    INFO(command << ": " << describe(o));
    CHECK(o.exit_code == 2);
    CHECK(o.err.find("4096") != std::string::npos);
    CHECK(o.err.find("e+308") == std::string::npos);
  }
}

TEST_CASE("An endless stream, a folder or a binary file given as input is exit 2 at once, with the reason") {
  const TempDir dir;
  const std::string binary = dir.file("binary.csv");
  write(binary, std::string("point,scenario\n0,\0\x01\x02\n", 20));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"merge", dir.file("out.csv"), "/dev/zero"}, "not a regular file"},
      {{"merge", dir.file("out.csv"), dir.path().string()}, "this is a directory"},
      {{"merge", dir.file("out.csv"), binary}, "binary file"},
      {{"calibrate", "/dev/zero", "--gpu", "a100-sxm4-80gb"}, "not a regular file"},
      {{"report", "/dev/zero"}, "not a regular file"},
  };
  for (const auto& [args, reason] : cases) {
    const Outcome o = run_trainsim(args, 10.0);
    INFO(args.front() << " " << args.back() << ": " << describe(o));
    CHECK(o.exit_code == 2);
    CHECK(o.err.find(reason) != std::string::npos);
  }
}

TEST_CASE("A missing input file is bad input for every command that reads one: exit 2 naming it") {
  const std::string missing = "/no-such-dir/no-such-file.yaml";
  const std::vector<std::vector<std::string>> lines = {
      {"run", missing},
      {"sweep", missing},
      {"search", missing},
      {"explain", missing},
      {"check", missing},
      {"topology", missing},
      {"validate", missing},
      {"report", missing},
      {"merge", "/no-such-dir/out.csv", missing},
      {"calibrate", missing, "--gpu", "h100-sxm"},
  };
  for (const auto& args : lines) {
    const Outcome o = run_trainsim(args);
    INFO("trainsim " << args.front() << ": " << describe(o));
    CHECK(o.exit_code == 2);
    CHECK(o.err.find("/no-such-dir/no-such-file.yaml") != std::string::npos);
  }
}

TEST_CASE("trainsim --version exits 0 and prints the version") {
  const Outcome o = run_trainsim({"--version"});
  INFO(describe(o));
  CHECK(o.exit_code == 0);
  CHECK(o.out.find("trainsim") != std::string::npos);
}

TEST_CASE(
    "trainsim list shows the SPEC's preset names for models, gpus, clusters, optimizers and frameworks") {
  const std::vector<std::pair<const char*, std::vector<const char*>>> lists = {
      {"models", {"gpt3-175b", "llama3-70b", "llama3-8b", "gpt3-1.3b"}},
      {"gpus", {"a100-sxm4-80gb", "h100-sxm"}},
      {"clusters", {"dgx-a100-80gb", "dgx-h100"}},
      {"optimizers", {"adamw", "adafactor", "sgd-momentum", "adam-8bit", "lion", "lamb", "muon"}},
      {"frameworks",
       {"megatron-core", "nemo", "megatron-lm-2021", "deepspeed", "deepspeed-2021", "fsdp1", "fsdp2",
        "torchtitan", "llm-foundry", "attention flash: flash2", "attention flash: the GPU's default kernel"}},
  };
  for (const auto& [what, names] : lists) {
    const Outcome o = run_trainsim({"list", what});
    INFO("trainsim list " << std::string(what) << ": " << describe(o));
    CHECK(o.exit_code == 0);
    for (const char* name : names) {
      INFO("expected " << std::string(name));
      CHECK(o.out.find(name) != std::string::npos);
    }
  }
}

TEST_CASE("check exits 0 on a good file and 2 with file:line:col and a did-you-mean on a typo'd key") {
  const TempDir dir;
  const std::string good = dir.file("good.yaml");
  write(good, small_scenario);
  const Outcome ok = run_trainsim({"check", good});
  INFO(describe(ok));
  CHECK(ok.exit_code == 0);

  const std::string typo = dir.file("typo.yaml");
  write(typo,
        "model: gpt3-125m\n"
        "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
        "parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1}\n"
        "training: {global_batch: 8, precison: bf16, optimizer: adamw, steps: 10}\n");
  const Outcome bad = run_trainsim({"check", typo});
  INFO(describe(bad));
  CHECK(bad.exit_code == 2);
  // "training: {global_batch: 8, " is 28 characters: the typo starts at column 29 of line 4.
  CHECK(bad.err.find("typo.yaml:4:29") != std::string::npos);
  CHECK(bad.err.find("training.precison") != std::string::npos);
  CHECK(bad.err.find("did you mean") != std::string::npos);
  CHECK(bad.err.find("precision") != std::string::npos);
}

TEST_CASE("run exits 1 and prints the violation when the scenario's budget is exceeded") {
  const TempDir dir;
  const std::string scenario = dir.file("over-budget.yaml");
  // 100,000 steps x 8 sequences x 2,048 tokens = 1.64e9 tokens of GPT-3 125M: at least 6 x 125e6 x 1.64e9 =
  // 1.23e18 FLOP, which 8 A100 at their 312 TFLOP/s peak need 493 s for: 1.1 GPU-hours, $2.74 at $2.50/h
  // even at 100% MFU, over the $1 budget.
  write(scenario,
        "model: gpt3-125m\n"
        "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
        "parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1}\n"
        "training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 100000}\n"
        "pricing: {gpu_hour: \"$2.50\"}\n"
        "budget: {max_cost: \"$1\"}\n");
  const Outcome o = run_trainsim({"run", scenario});
  INFO(describe(o));
  CHECK(o.exit_code == 1);
  const std::string all = o.out + o.err;
  CHECK(all.find("max_cost") != std::string::npos);
  CHECK(all.find("exceeds") != std::string::npos);
}

TEST_CASE("run exits 1 and prints the violation when the scenario's deadline is missed") {
  const TempDir dir;
  const std::string scenario = dir.file("late.yaml");
  // 1,000 steps x 16,384 tokens of GPT-3 125M: at least 6 x 125e6 x 1.64e7 = 1.23e16 FLOP, 4.9 s on 8 A100
  // at their 312 TFLOP/s peak: over a 1 s deadline.
  write(scenario,
        "model: gpt3-125m\n"
        "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
        "parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1}\n"
        "training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1000}\n"
        "budget: {deadline: \"1 s\"}\n");
  const Outcome o = run_trainsim({"run", scenario});
  INFO(describe(o));
  CHECK(o.exit_code == 1);
  const std::string all = o.out + o.err;
  CHECK(all.find("deadline") != std::string::npos);
  CHECK(all.find("exceeds") != std::string::npos);
}

TEST_CASE("Output to a pipe carries no ANSI escape and no progress bar, for every command") {
  const TempDir dir;
  const std::string scenario = dir.file("small.yaml");
  write(scenario, small_scenario);
  const std::string sweep = dir.file("sweep.yaml");
  write(sweep, std::string(small_scenario) + "sweep:\n  training.optimizer: [adamw, sgd-momentum]\n");
  const std::string run_dir = dir.file("run");
  const std::string shard0 = dir.file("shard0.csv");
  const std::string shard1 = dir.file("shard1.csv");

  // Each command line, in an order where later ones read what earlier ones wrote.
  const std::vector<std::string> lines = {
      "--help",
      "run " + scenario + " -o " + run_dir,
      "sweep " + sweep + " -j 1",
      "sweep " + sweep + " -j 1 --shard 0/2 -o " + shard0,
      "sweep " + sweep + " -j 1 --shard 1/2 -o " + shard1,
      "merge " + dir.file("merged.csv") + " " + shard0 + " " + shard1,
      "search " + scenario + " --top 1 -j 1 --no-event",
      "validate " + source + "/scenarios/validation/korthikanti -j 1",
      "calibrate --help",
      "explain " + scenario,
      "check " + scenario,
      "list models",
      "list gpus",
      "list clusters",
      "list optimizers",
      "report " + run_dir + " -o " + dir.file("report.html"),
      "topology " + scenario,
      "collective --cluster dgx-h100 --op all-reduce -b 1M -e 4M -f 2",
  };
  for (const auto& line : lines) {
    const Piped r = run_piped(line);
    INFO("trainsim " << line << " (exit " << r.exit_code << "): " << r.output.substr(0, 400));
    // validate exits 1 when a case drifts outside its tolerance: that is the validation's business, not this
    // test's.
    const bool validate = line.rfind("validate ", 0) == 0;
    CHECK((r.exit_code == 0 || (validate && r.exit_code == 1)));
    // A sweep writing its rows to a file (-o) may print nothing; every other command prints something.
    if (line.rfind("sweep ", 0) != 0 || line.find(" -o ") == std::string::npos) CHECK_FALSE(r.output.empty());
    CHECK(r.output.find("\x1b[") == std::string::npos);
    CHECK(r.output.find('\r') == std::string::npos);  // a progress bar redraws its line with \r
  }
}
