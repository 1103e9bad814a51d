// Inputs a hostile user writes on the paths beside the YAML loader (issue "nothing lost on every input
// path"): JSON read by hf_config and report, cluster files whose counts explode, physically impossible
// settings, torn sweep rows, importers given what they do not understand. Each runs through the binary
// under a wall-clock and an address-space limit and must exit with the stated code and a message that
// names the file, the key path and the problem; never a crash, a hang or a silent result.
#include <fstream>

#include "binary_harness.hpp"

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr double limit_s = 30.0;
constexpr rlim_t memory_limit = rlim_t{2} << 30;

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

/// A shipped test file (a path under the source tree) with `from` replaced by `to`.
std::string fixture_with(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = trainsim::e2e::read_file(std::string(TRAINSIM_SOURCE_DIR) + "/" + file);
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

/// The Llama 3.1 405B config shipped in models/hf_configs, with `hidden_act`'s value replaced by `act`.
std::string llama_config(const std::string& act) {
  return fixture_with("models/hf_configs/llama-3.1-405b.json", "\"hidden_act\": \"silu\"",
                      "\"hidden_act\": " + act);
}

/// A scenario that reads its model from `config` (a file name beside it).
std::string hf_scenario(const std::string& config) {
  return "model: {hf_config: " + config +
         "}\ncluster: {node: dgx-h100, nodes: 128}\nparallelism: {tp: 8, pp: 16}\ntraining: {global_batch: "
         "64}\n";
}

Outcome run(const std::vector<std::string>& args) {
  Outcome o = run_trainsim(args, limit_s, memory_limit);
  INFO(describe(o));
  REQUIRE_FALSE(o.timed_out);
  REQUIRE(o.signal == 0);
  return o;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("an hf_config whose hidden_act nests 100,000 arrays is refused by every command, the others read") {
  const TempDir dir;
  // 100,000 nested arrays: 200 kB, under the 1 MiB input cap.
  write(dir.file("deep.json"), llama_config(std::string(100000, '[') + std::string(100000, ']')));
  write(dir.file("a.yaml"), hf_scenario("deep.json"));
  write(dir.file("good.json"), llama_config("\"silu\""));
  write(dir.file("b.yaml"), hf_scenario("good.json"));
  // The scenario's key, then the JSON file's line and column: the object is level 1, so the 64th '[' of
  // line 7 (the value starts at column 17) is level 65, at column 17 + 63.
  const std::string expected = "a.yaml:1:20: model.hf_config: " + dir.file("deep.json") +
                               ":7:80: not JSON trainsim reads: nested "
                               "deeper than 64 levels";
  for (const std::string command : {"run", "explain", "search", "sweep"}) {
    const Outcome o = run({command, dir.file("a.yaml")});
    INFO(command << ": " << describe(o));
    CHECK(o.exit_code == 2);
    CHECK(has(o.err, expected));
  }
  // validate reports a case that does not load in its table, and exits 1 for it.
  const Outcome validate = run({"validate", dir.file("a.yaml")});
  CHECK(validate.exit_code == 1);
  CHECK(has(validate.out, "FAILED: does not load: " + dir.file(expected)));
  // check goes on to the next file.
  const Outcome both = run({"check", dir.file("a.yaml"), dir.file("b.yaml")});
  CHECK(both.exit_code == 2);
  CHECK(has(both.err, expected));
  CHECK(has(both.out, "ok: b: model good (126 layers, hidden 16384"));
}

TEST_CASE("a key given twice in an hf_config is refused with its line and column") {
  const TempDir dir;
  // Line 8 of the config is "hidden_size"; a second one is added on line 7, beside hidden_act.
  write(dir.file("dup.json"), llama_config("\"silu\",\n  \"hidden_size\": 8192"));
  write(dir.file("s.yaml"), hf_scenario("dup.json"));
  const Outcome o = run({"run", dir.file("s.yaml")});
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "model.hf_config: " + dir.file("dup.json") +
                       ":9:3: not JSON trainsim reads: the key \"hidden_size\" is given twice in one object "
                       "(first at line 8, column 3)"));
}

TEST_CASE("invalid UTF-8 and long values from an hf_config are escaped and cut in the message") {
  const TempDir dir;
  write(dir.file("bytes.json"), llama_config("\"\xff\x1b[2J\""));
  write(dir.file("long.json"), llama_config("\"" + std::string(100000, 'g') + "\""));
  write(dir.file("a.yaml"), hf_scenario("bytes.json"));
  write(dir.file("b.yaml"), hf_scenario("long.json"));
  const Outcome bytes = run({"run", dir.file("a.yaml")});
  CHECK(bytes.exit_code == 2);
  CHECK(has(bytes.err, "model.hf_config: " + dir.file("bytes.json") + ":7:18: not JSON trainsim reads"));
  CHECK(has(bytes.err, "\\xff"));
  CHECK_FALSE(has(bytes.err, "\xff"));
  CHECK_FALSE(has(bytes.err, "\x1b"));
  const Outcome long_value = run({"run", dir.file("b.yaml")});
  CHECK(long_value.exit_code == 2);
  CHECK(has(long_value.err, "model.hf_config: field \"hidden_act\": expected \"silu\""));
  CHECK(long_value.err.size() < 1000);
}

TEST_CASE("report refuses a summary.json, trace.json or JSON Lines that nests too deep or repeats a key") {
  const TempDir dir;
  const fs::path run_dir = fs::path(dir.path()) / "run";
  fs::create_directories(run_dir);
  write((run_dir / "summary.json").string(),
        "{\"scenario\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const Outcome deep = run({"report", run_dir.string()});
  CHECK(deep.exit_code == 2);
  CHECK(has(deep.err, "summary.json:1:77: not JSON trainsim reads: nested deeper than 64 levels"));

  write((run_dir / "summary.json").string(), "{\"scenario\": \"a\",\n\"scenario\": \"b\"}");
  const Outcome twice = run({"report", run_dir.string()});
  CHECK(twice.exit_code == 2);
  CHECK(has(twice.err, "summary.json:2:1: not JSON trainsim reads: the key \"scenario\" is given twice"));

  write((run_dir / "summary.json").string(), "{\"scenario\": \"a\"}");
  write((run_dir / "trace.json").string(), "{\"traceEvents\": [" + std::string(1000, '[') + "]}");
  const Outcome trace = run({"report", run_dir.string()});
  CHECK(trace.exit_code == 2);
  CHECK(has(trace.err, (run_dir / "trace.json").string() + ":1:80: not JSON trainsim reads: nested deeper"));

  write(dir.file("rows.jsonl"), "{\"point\": 0}\n{\"point\": 1, \"point\": 2}\n");
  const Outcome lines = run({"report", dir.file("rows.jsonl")});
  CHECK(lines.exit_code == 2);
  CHECK(
      has(lines.err, dir.file("rows.jsonl") + ":2:14: not JSON trainsim reads: the key \"point\" is given"));
}

namespace {

std::string example(const std::string& name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/" + name;
}

}  // namespace

/// A cluster file of 64 nodes over 10 days whose arrival streams have these rates (teams a, b, …).
std::string cluster_with_rates(const std::vector<std::string>& rates) {
  std::string text = "cluster: {node: dgx-h100, nodes: 64}\nperiod: \"10 d\"\narrivals:\n";
  for (std::size_t i = 0; i < rates.size(); ++i) {
    text += "  - {team: " + std::string(1, static_cast<char>('a' + i)) + ", rate: \"" + rates[i] +
            "\", mix: [{scenario: " + example("shared-cluster/small.yaml") + ", nodes: 1}]}\n";
  }
  return text;
}

TEST_CASE("a cluster file's arrivals are bounded at their rate: rate x period, the product and the limit") {
  const TempDir dir;
  // 1000 /s over 10 days: 1000 x 864,000 s = 8.64e8 jobs, which once took 1.9 GiB and bad_alloc.
  write(dir.file("c.yaml"), cluster_with_rates({"1000/s"}));
  const Outcome o = run({"cluster", dir.file("c.yaml")});
  CHECK(o.exit_code == 2);
  CHECK(has(o.err,
            "c.yaml:4:21: arrivals[0].rate: rate x period = 1000 /s x 864000 s = 8.64e+08 expected "
            "arrivals; a cluster file simulates at most 1e+06 jobs"));
  // Two streams each under the limit, together over it: 0.7 /s x 864,000 s = 604,800 each.
  write(dir.file("two.yaml"), cluster_with_rates({"0.7/s", "0.7/s"}));
  const Outcome two = run({"cluster", dir.file("two.yaml")});
  CHECK(two.exit_code == 2);
  CHECK(has(two.err,
            "two.yaml:4:3: arrivals: the jobs listed and the streams' rate x period add up to "
            "1209600 expected jobs; a cluster file simulates at most 1e+06"));
}

TEST_CASE("a cluster file's failures are bounded at node_mtbf: nodes x period / node_mtbf") {
  const TempDir dir;
  // 4,096 nodes over 100 days at 1 ms: 4096 x 8.64e6 s / 1e-3 s = 3.538944e13 failures (this once hung).
  write(dir.file("c.yaml"),
        "cluster: {node: dgx-h100, nodes: 4096}\nperiod: \"100 d\"\njobs:\n"
        "  - {scenario: " +
            example("shared-cluster/small.yaml") +
            ", team: a, nodes: 1}\nfailures: {node_mtbf: \"1 ms\", repair: \"1 h\"}\n");
  const Outcome o = run({"cluster", dir.file("c.yaml")});
  CHECK(o.exit_code == 2);
  CHECK(has(o.err,
            "c.yaml:5:23: failures.node_mtbf: nodes x period / node_mtbf = 4096 x 8640000 s / 0.001 s "
            "= 3.538944e+13 expected node failures; a cluster file simulates at most 1e+06"));
}

TEST_CASE(
    "physically impossible settings are refused: more concurrent trials than nodes, a fast degraded NIC") {
  // llama2-7b-to-loss runs on 32 nodes: 64 trials at a time would each get max(1, 32/64) = 1 node, 64 nodes.
  const Outcome trials = run({"run", example("llama2-7b-to-loss.yaml"), "--set", "tuning.concurrent=64"});
  CHECK(trials.exit_code == 2);
  CHECK(has(trials.err,
            "tuning.concurrent: 64 trials at a time need at least one node each; the cluster has "
            "32: set concurrent to at most 32"));
  // 32 at a time is the most: one node each (the run then exits 1 only for its budget alert).
  const Outcome most = run({"run", example("llama2-7b-to-loss.yaml"), "--set", "tuning.concurrent=32"});
  CHECK(most.exit_code == 1);
  CHECK_FALSE(has(most.err, "tuning.concurrent"));
  // A DGX H100's NICs are rated 400 Gb/s.
  const Outcome nic = run({"run", example("llama3-8b-64-h100.yaml"), "--set",
                           "cluster.degraded=[{node: 0, nic: 0, bandwidth: \"800 Gb/s\"}]"});
  CHECK(nic.exit_code == 2);
  CHECK(has(nic.err, "cluster.degraded[0].bandwidth: 800 Gb/s is faster than the NIC's rating of 400 Gb/s"));
}

namespace {

// Three points whose tag makes a multi-line quoted cell in every CSV row.
constexpr const char* kMultiLineTagSweep = R"(name: torn
tags: {note: "first line\nsecond line"}
model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 1}
parallelism: {tp: 2, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
sweep:
  cluster.nodes: [1, 2, 4]
)";

}  // namespace

TEST_CASE("a sweep row torn inside a multi-line quoted cell is re-run by --resume, left out by merge") {
  const TempDir dir;
  write(dir.file("s.yaml"), kMultiLineTagSweep);
  REQUIRE(run({"sweep", dir.file("s.yaml"), "-o", dir.file("whole.csv")}).exit_code == 0);
  const std::string whole = trainsim::e2e::read_file(dir.file("whole.csv"));
  // Cut the last row right after the newline inside its quoted cell: 5 of its cells are written.
  const std::size_t cut = whole.rfind("first line\n") + std::string("first line\n").size();
  REQUIRE(whole.rfind("\n2,", cut) != std::string::npos);
  const std::string torn = whole.substr(0, cut);
  write(dir.file("torn.csv"), torn);
  write(dir.file("resume.csv"), torn);
  const Outcome resumed = run({"sweep", dir.file("s.yaml"), "-o", dir.file("resume.csv"), "--resume"});
  CHECK(resumed.exit_code == 0);
  CHECK(has(resumed.err, "1 points in"));  // point 2 again, not "0 points"
  CHECK(trainsim::e2e::read_file(dir.file("resume.csv")) == whole);
  // merge leaves the torn row out with a warning, --strict exits 1.
  const Outcome merged = run({"merge", dir.file("m.csv"), dir.file("torn.csv")});
  CHECK(merged.exit_code == 0);
  CHECK(has(merged.err, "torn.csv ends in a torn row (" +
                            std::to_string(torn.size() - whole.rfind("\n2,") - 1) +
                            " bytes) that is left out"));
  CHECK(has(merged.err, "2 rows from 1 files"));
  CHECK(run({"merge", "--strict", dir.file("m.csv"), dir.file("torn.csv")}).exit_code == 1);
  // report names the line the torn row starts on: the header and two rows of two lines each come first.
  const Outcome report = run({"report", dir.file("torn.csv")});
  CHECK(report.exit_code == 2);
  CHECK(has(report.err, "torn.csv:6: unterminated quoted CSV field"));
}

TEST_CASE("merge names a CRLF shard, a negative point and a forged point for what they are") {
  const TempDir dir;
  write(dir.file("crlf.csv"), "point,sweep_fingerprint,x\r\n0,f,1\r\n");
  const Outcome crlf = run({"merge", dir.file("m.csv"), dir.file("crlf.csv")});
  CHECK(crlf.exit_code == 2);
  CHECK(has(crlf.err, "crlf.csv:1: ends its lines in CRLF"));
  write(dir.file("negative.csv"), "point,sweep_fingerprint,x\n0,f,1\n-5,f,2\n");
  const Outcome negative = run({"merge", dir.file("m.csv"), dir.file("negative.csv")});
  CHECK(negative.exit_code == 2);
  CHECK(has(negative.err,
            "negative.csv:3: this row point \"-5\" is not a point index (a whole number from 0 to "
            "99999999"));
  write(dir.file("forged.jsonl"), "{\"point\":9000000000000000000,\"sweep_fingerprint\":\"f\"}\n");
  const Outcome forged = run({"merge", dir.file("m.jsonl"), dir.file("forged.jsonl")});
  CHECK(forged.exit_code == 2);
  CHECK(has(forged.err, "forged.jsonl:1: this row point \"9000000000000000000\" is not a point index"));
  CHECK_FALSE(fs::exists(dir.file("m.csv")));
  CHECK_FALSE(fs::exists(dir.file("m.jsonl")));
}

namespace {

/// The Megatron-LM README's GPT-3 175B flag file (tests/tools/megatron_args) with `from` replaced by `to`.
std::string gpt3_args(const std::string& from, const std::string& to) {
  return fixture_with("tests/tools/megatron_args/gpt3-175b.args", from, to);
}

/// The NeMo recipe of tests/tools/nemo_recipes with `from` replaced by `to`.
std::string llama_recipe(const std::string& from, const std::string& to) {
  return fixture_with("tests/tools/nemo_recipes/llama3-8b-fp8.yaml", from, to);
}

}  // namespace

TEST_CASE("import megatron refuses a misspelt flag with a did-you-mean, unless --lenient lists it") {
  const TempDir dir;
  write(dir.file("a.args"), gpt3_args("--tensor-model-parallel-size 8", "--tensor-model-paralel-size 8"));
  const Outcome strict = run({"import", "megatron", dir.file("a.args"), "-o", dir.file("a.yaml")});
  CHECK(strict.exit_code == 2);
  CHECK(has(strict.err,
            "--tensor-model-paralel-size is not a Megatron-LM flag this importer knows (did you "
            "mean --tensor-model-parallel-size?)"));
  CHECK_FALSE(fs::exists(dir.file("a.yaml")));
  const Outcome lenient =
      run({"import", "megatron", dir.file("a.args"), "--lenient", "-o", dir.file("a.yaml")});
  CHECK(lenient.exit_code == 0);
  CHECK(has(lenient.err, "left out --tensor-model-paralel-size, which this importer does not know"));
  const std::string yaml = trainsim::e2e::read_file(dir.file("a.yaml"));
  CHECK(has(yaml, "# Not known to this importer, left out (--lenient): --tensor-model-paralel-size\n"));
  CHECK(has(yaml, "  tp: 1\n"));  // what the lenient import says it did
}

TEST_CASE("import megatron refuses values Megatron-LM refuses, and counts past its range") {
  const TempDir dir;
  write(dir.file("zero.args"), gpt3_args("--tensor-model-parallel-size 8", "--tensor-model-parallel-size 0"));
  const Outcome zero = run({"import", "megatron", dir.file("zero.args")});
  CHECK(zero.exit_code == 2);
  CHECK(has(zero.err, "--tensor-model-parallel-size expects a whole number from 1 to 1000000, got 0"));
  // 1e30 layers once overflowed the conversion and read as "must be >= 1".
  write(dir.file("big.args"), gpt3_args("--num-layers 96", "--num-layers 1e30"));
  const Outcome big = run({"import", "megatron", dir.file("big.args")});
  CHECK(big.exit_code == 2);
  CHECK(has(big.err, "--num-layers expects a whole number from 1 to 1000000000000, got 1e30"));
}

TEST_CASE("a scenario an import cannot load is named as imported, not as the output file never written") {
  const TempDir dir;
  // tp 7 does not divide 96 heads: the loader refuses the imported scenario.
  write(dir.file("a.args"), gpt3_args("--tensor-model-parallel-size 8", "--tensor-model-parallel-size 7"));
  const Outcome o = run({"import", "megatron", dir.file("a.args"), "-o", dir.file("out.yaml")});
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "(the scenario imported from " + dir.file("a.args") +
                       ", not written; run without -o to see "
                       "it):"));
  CHECK_FALSE(has(o.err, "out.yaml"));
  CHECK_FALSE(fs::exists(dir.file("out.yaml")));
}

TEST_CASE(
    "import nemo refuses a misspelt key and a strategy that is not a mapping; the header lists every key "
    "left out") {
  const TempDir dir;
  write(dir.file("mis.yaml"), llama_recipe("    context_parallel_size: 2", "    context_paralel_size: 2"));
  const Outcome mis = run({"import", "nemo", dir.file("mis.yaml")});
  CHECK(mis.exit_code == 2);
  CHECK(has(mis.err,
            "mis.yaml:61:27: trainer.strategy.context_paralel_size: not a key this importer knows "
            "(did you mean context_parallel_size?)"));
  const Outcome lenient = run({"import", "nemo", dir.file("mis.yaml"), "--lenient"});
  CHECK(lenient.exit_code == 0);
  CHECK(
      has(lenient.err, "left out trainer.strategy.context_paralel_size, which this importer does not know"));
  CHECK(has(lenient.out,
            "# Not known to this importer, left out (--lenient): trainer.strategy.context_paralel_size"));
  CHECK(has(lenient.out, "  cp: 1\n"));

  write(dir.file("auto.yaml"), llama_recipe("  strategy:\n", "  strategy: auto\n  old_strategy:\n"));
  const Outcome strategy = run({"import", "nemo", dir.file("auto.yaml")});
  CHECK(strategy.exit_code == 2);
  CHECK(has(strategy.err, "auto.yaml:59:13: trainer.strategy: expected a mapping"));

  // The shipped recipe: every key it drops, by its path, in the header.
  const Outcome whole = run(
      {"import", "nemo", std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/nemo_recipes/llama3-8b-fp8.yaml"});
  CHECK(whole.exit_code == 0);
  for (const std::string key :
       {"log", "resume", "model.config.cross_entropy_fusion_impl", "trainer.accelerator",
        "trainer.plugins.fp8_recipe", "trainer.plugins.params_dtype", "data.paths", "optim.config.bf16",
        "optim.config.lr", "trainer.callbacks[0] (TimingCallback)",
        "trainer.callbacks[1].overlap_param_gather_with_optimizer_step",
        "trainer.callbacks[2] (FLOPsMeasurementCallback)"}) {
    CHECK_MESSAGE(has(whole.out.substr(0, whole.out.find("\nname:")), key), key);
  }
}

TEST_CASE("a sweep past a million points is refused without --large, with what it would cost") {
  const TempDir dir;
  std::string nodes;
  for (int i = 1; i <= 1000; ++i) nodes += (i > 1 ? "," : "") + std::to_string(i);
  // 1,000 node counts x 1,001 micro-batch sizes = 1,001,000 points.
  std::string micro;
  for (int i = 1; i <= 1001; ++i) micro += (i > 1 ? "," : "") + std::to_string(i);
  write(dir.file("s.yaml"),
        std::string(kMultiLineTagSweep).substr(0, std::string(kMultiLineTagSweep).find("sweep:")) +
            "sweep:\n  cluster.nodes: [" + nodes + "]\n  parallelism.micro_batch: [" + micro + "]\n");
  const Outcome o = run({"sweep", dir.file("s.yaml"), "-o", dir.file("out.csv")});
  CHECK(o.exit_code == 2);
  CHECK(has(o.err,
            "s.yaml: the sweep has 1001000 points, more than 1000000 without --large: about 0.3 core-hours"));
  CHECK(has(o.err, "pass --large to run it"));
  CHECK_FALSE(fs::exists(dir.file("out.csv")));
}

TEST_CASE(
    "unclear messages: a 300-digit value is cut, an empty --set value is named, a huge interval refused") {
  const std::string scenario = example("llama3-8b-64-h100.yaml");
  const std::string digits(300, '9');
  const Outcome long_number = run({"run", scenario, "--set", "training.optimizer=" + digits});
  CHECK(long_number.exit_code == 2);
  CHECK(has(long_number.err, "training.optimizer: unknown value \"" + std::string(40, '9') + "...\""));
  CHECK_FALSE(has(long_number.err, std::string(41, '9')));
  // 400 digits: past a double's range.
  const Outcome duration =
      run({"run", scenario, "--set", "checkpoint={interval: \"" + std::string(400, '9') + " s\"}"});
  CHECK(duration.exit_code == 2);
  CHECK(has(duration.err,
            "checkpoint.interval: the number \"" + std::string(40, '9') + "...\" is out of range"));
  // --set cluster.nodes= once said "the file is empty".
  const Outcome empty = run({"run", scenario, "--set", "cluster.nodes="});
  CHECK(empty.exit_code == 2);
  CHECK(has(empty.err, "cluster.nodes: no value after '=': write one, e.g. --set cluster.nodes=VALUE"));
  CHECK_FALSE(has(empty.err, "the file is empty"));
  // 1e20 s overflowed the interval in steps into a checkpoint every step (6.84 s here), silently.
  const Outcome interval = run({"run", scenario, "--set", "checkpoint={interval: \"1e20 s\"}"});
  CHECK(interval.exit_code == 2);
  CHECK(has(interval.err, "checkpoint.interval: expected at most 1e9 s (31 years)"));
}

TEST_CASE("cluster -o on a full disk is exit 2 naming the file, and leaves no partial file nor a temporary") {
  const TempDir dir;
  const fs::path out = fs::path(dir.path()) / "out";
  fs::create_directories(out);
  // RLIMIT_FSIZE of 4 KiB: the shared-cluster example's jobs.csv (tens of kB) cannot be written.
  const Outcome o = run_trainsim({"cluster", example("shared-cluster.yaml"), "-o", out.string()}, limit_s,
                                 memory_limit, 4 << 10);
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  CHECK(has(o.err, "jobs.csv"));
  CHECK(has(o.err, "File too large"));
  CHECK(fs::is_empty(out));
}
