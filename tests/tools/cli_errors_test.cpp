// The bad-input corpus (tests/tools/bad_inputs/, one problem per file) run through the real binary:
// `trainsim check FILE` must exit 2 and print the problem with file:line:col and the key path. Each
// expected line below was checked by hand against its file (column counts included).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace {

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args) {
  const std::string command = std::string(TRAINSIM_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Result r;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr)
    r.output += buffer.data();
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string corpus = TRAINSIM_SOURCE_DIR "/tests/tools/bad_inputs/";

struct Case {
  const char* file;
  const char* expected;  ///< must appear in the output, after the corpus folder
};

// clang-format off
constexpr Case cases[] = {
    {"absurd-gpu-count.yaml",
     "absurd-gpu-count.yaml:2:39: cluster.nodes: must be at most 1e+07, found \"1e30\""},
    {"alerts-without-max-cost.yaml",
     "alerts-without-max-cost.yaml:4:35: budget.alerts: alerts are fractions of budget.max_cost: give max"},
    {"alias-bomb.yaml",
     "alias-bomb.yaml:1:12: the document expands to more than 200000 nodes (an alias bomb?); a sce"},
    {"bad-indentation.yaml",
     "bad-indentation.yaml:4:10: invalid YAML: illegal map value"},
    {"bare-number-bandwidth.yaml",
     "bare-number-bandwidth.yaml:5:18: cluster.network.nic: expected a bandwidth with a unit, like \"200 Gb/s\""},
    {"bare-number-duration.yaml",
     "bare-number-duration.yaml:4:24: checkpoint.interval: expected a duration with a unit, like \"2 h\" (ps, "},
    {"batch-not-divisible.yaml",
     "batch-not-divisible.yaml:3:26: training.global_batch: global_batch (100) must be divisible by dp·micr"},
    {"binary-garbage.yaml",
     "binary-garbage.yaml:1:1: this is not a text file (byte 0x7f at offset 0); a scenario is YAML te"},
    {"checkpoint-interval-and-steps.yaml",
     "checkpoint-interval-and-steps.yaml:4:13: checkpoint: give exactly one of interval (a duration, e.g. \"2 h\") or e"},
    {"comma-only.yaml",
     "comma-only.yaml:1:1: the document holds no value (only comments or punctuation); a scenario"},
    {"custom-model-missing-sizes.yaml",
     "custom-model-missing-sizes.yaml:1:8: model.heads: missing key \"heads\""},
    {"deep-nesting.yaml",
     "deep-nesting.yaml:4:39: nesting deeper than 32 levels; a scenario is much flatter"},
    {"duplicate-key.yaml",
     "duplicate-key.yaml:7:3: duplicate key \"tp\" (first given at line 5:3)"},
    {"duplicate-top-key.yaml",
     "duplicate-top-key.yaml:4:1: duplicate key \"model\" (first given at line 1:1)"},
    {"empty.yaml",
     "empty.yaml:1:1: the file is empty; a scenario needs at least model:, cluster: and trai"},
    {"ep-on-dense-model.yaml",
     "ep-on-dense-model.yaml:4:19: parallelism.ep: ep > 1 needs a mixture-of-experts model (experts > 0)"},
    {"epochs-without-dataset.yaml",
     "epochs-without-dataset.yaml:3:11: training.dataset_tokens: missing key \"dataset_tokens\" (needed with epo"},
    {"explicit-dp-mismatch.yaml",
     "explicit-dp-mismatch.yaml:4:26: parallelism.dp: tp·pp·cp·ep = 2·1·1·1 = 2 times dp = 4 is 8 GPUs, but "},
    {"fractional-batch.yaml",
     "fractional-batch.yaml:3:26: training.global_batch: expected a whole number, found \"2.5\""},
    {"gpus-not-divisible.yaml",
     "gpus-not-divisible.yaml:4:14: parallelism: the cluster's 16 GPUs are not divisible by tp·pp·cp·ep = "},
    {"heads-not-divisible-by-tp.yaml",
     "heads-not-divisible-by-tp.yaml:3:19: parallelism.tp: the model's heads (12) must be divisible by tp (5)"},
    {"hex-count.yaml",
     "hex-count.yaml:4:19: parallelism.tp: hexadecimal and octal numbers are not accepted, found "},
    {"hidden-not-divisible-by-heads.yaml",
     "hidden-not-divisible-by-heads.yaml:1:28: model.hidden: hidden (100) must be divisible by heads (3)"},
    {"interleaved-layers.yaml",
     "interleaved-layers.yaml:4:61: parallelism.virtual_stages: with schedule: interleaved every one of the"},
    {"invalid-utf8.yaml",
     "invalid-utf8.yaml:2:10: this is not a text file (byte 0xe9 at offset 26); a scenario is YAML t"},
    {"kv-heads-not-divisible-by-tp.yaml",
     "kv-heads-not-divisible-by-tp.yaml:3:19: parallelism.tp: the model's kv_heads (8) must be divisible by tp (12), "
     "or tp by kv_heads"},
    {"list-root.yaml",
     "list-root.yaml:1:1: expected a mapping of keys, found a list"},
    {"measured-unknown-metric.yaml",
     "measured-unknown-metric.yaml:4:11: measured: no measured metric given (e.g. iteration_time: 13.75)"},
    {"memory-headroom-range.yaml",
     "memory-headroom-range.yaml:4:27: budget.memory_headroom: a fraction of HBM must be at most 0.95, found "
     "\"1.5\"; or give a size with a unit, like \"8 GiB\""},
    {"missing-global-batch.yaml",
     "missing-global-batch.yaml:3:11: training.global_batch: missing key \"global_batch\""},
    {"missing-model.yaml",
     "missing-model.yaml:1:1: model: missing key \"model\""},
    {"missing-nodes.yaml",
     "missing-nodes.yaml:2:10: cluster.nodes: missing key \"nodes\""},
    {"moe-without-top-k.yaml",
     "moe-without-top-k.yaml:1:37: model.experts: top_k must be between 1 and experts (8) for a mixture-of-"},
    {"nan-quantity.yaml",
     "nan-quantity.yaml:4:23: parallelism.bucket: expected a size with a unit, like \"80 GiB\" (B, kB,"},
    {"negative-quantity.yaml",
     "negative-quantity.yaml:5:20: cluster.storage.write: must not be negative, found \"-5 GB/s\""},
    {"negative-tp.yaml",
     "negative-tp.yaml:4:19: parallelism.tp: must be at least 1, found \"-2\""},
    {"octal-count.yaml",
     "octal-count.yaml:2:39: cluster.nodes: leading zeros are not accepted (YAML 1.1 reads \"010\" as"},
    {"only-comments.yaml",
     "only-comments.yaml:1:1: the document holds no value (only comments or punctuation); a scenario"},
    {"parallel-order-repeats.yaml",
     "parallel-order-repeats.yaml:4:27: parallelism.order: axis tp appears twice"},
    {"pp-exceeds-layers.yaml",
     "pp-exceeds-layers.yaml:4:19: parallelism.pp: pp (16) is larger than the model's layers (12)"},
    {"price-with-wrong-denominator.yaml",
     "price-with-wrong-denominator.yaml:4:37: pricing.egress: \"$0.02/h\" is a price per hour; expected a price per GB"},
    {"run-length-twice.yaml",
     "run-length-twice.yaml:3:11: training: give only one of tokens, steps or epochs (the run length)"},
    {"scalar-root.yaml",
     "scalar-root.yaml:1:1: expected a mapping of keys, found \"just a sentence\""},
    {"stage-layers-sum.yaml",
     "stage-layers-sum.yaml:4:36: parallelism.stage_layers: adds up to 11 layers; the model has 12"},
    {"sweep-bad-value.yaml",
     "sweep-bad-value.yaml:5:23: cluster.nodes: expected a number, found \"many\""},
    {"sweep-not-a-list.yaml",
     "sweep-not-a-list.yaml:5:18: sweep.cluster.nodes: expected a non-empty list of values, e.g. [16, 32"},
    {"sweep-zip-lengths.yaml",
     "sweep-zip-lengths.yaml:7:23: sweep.training.optimizer: with mode: zip every list has the same lengt"},
    {"tab-indent.yaml",
     "tab-indent.yaml:3:1: a tab in the indentation; YAML indents with spaces only"},
    {"tags-not-a-mapping.yaml",
     "tags-not-a-mapping.yaml:4:7: tags: expected a mapping of tag names to values, e.g. {team: llm}"},
    {"too-many-gpus-per-node.yaml",
     "too-many-gpus-per-node.yaml:2:57: cluster.gpus_per_node: the node dgx-a100-80gb has 8 GPUs; found"},
    {"typo-network-key.yaml",
     "typo-network-key.yaml:5:13: cluster.network.topolgy: unknown key \"topolgy\" (did you mean \"topology"},
    {"unbalanced-brace.yaml",
     "unbalanced-brace.yaml:3:9: invalid YAML: end of map flow not found"},
    {"unknown-cluster-key.yaml",
     "unknown-cluster-key.yaml:2:42: cluster.racks: unknown key \"racks\"; known keys here: node, nodes, gpus"},
    {"unknown-model-preset.yaml",
     "unknown-model-preset.yaml:1:8: model: unknown model preset \"gpt3-175\" (did you mean \"gpt3-175b\"?); kn"},
    {"unknown-node-preset.yaml",
     "unknown-node-preset.yaml:2:17: cluster.node: unknown node preset \"dgx-h10\" (did you mean \"dgx-h100\"?)"},
    {"unknown-optimizer.yaml",
     "unknown-optimizer.yaml:7:14: training.optimizer: unknown value \"adamw8\" (did you mean \"adamw\"?); ex"},
    {"unknown-precision.yaml",
     "unknown-precision.yaml:7:14: training.precision: unknown value \"bf17\" (did you mean \"bf16\"?); expec"},
    {"unknown-region.yaml",
     "unknown-region.yaml:4:19: pricing.region: unknown region preset \"us-central\"; known: eu-west, gpu-c"},
    {"unknown-schedule.yaml",
     "unknown-schedule.yaml:4:32: parallelism.schedule: unknown value \"1f1\" (did you mean \"1f1b\"?); expe"},
    {"unknown-top-key.yaml",
     "unknown-top-key.yaml:4:1: paralelism: unknown key \"paralelism\" (did you mean \"parallelism\"?)"},
    {"unknown-unit.yaml",
     "unknown-unit.yaml:4:24: checkpoint.interval: unknown unit \"hours\" in \"2 hours\"; expected a dur"},
    {"unterminated-quote.yaml",
     "unterminated-quote.yaml:1:8: a quoted string is never closed (missing \")"},
    {"very-deep-nesting.yaml",
     "very-deep-nesting.yaml:1:6008: nesting deeper than 500 levels; a scenario is much flatter"},
    {"virtual-stages-without-interleaved.yaml",
     "virtual-stages-without-interleaved.yaml:4:38: parallelism.virtual_stages: virtual_stages > 1 needs schedule: interle"},
    {"wrong-dimension-unit.yaml",
     "wrong-dimension-unit.yaml:5:18: cluster.network.nic: \"200 GB\" is a size; expected a bandwidth with a u"},
    {"yes-as-bool.yaml",
     "yes-as-bool.yaml:4:34: parallelism.sequence_parallel: expected true or false, found \"yes\""},
    {"yes-as-count.yaml",
     "yes-as-count.yaml:4:19: parallelism.pp: expected a number, found \"yes\""},
    {"zero-nodes.yaml",
     "zero-nodes.yaml:2:39: cluster.nodes: must be at least 1, found \"0\""},
    {"zero-stage-out-of-range.yaml",
     "zero-stage-out-of-range.yaml:4:21: parallelism.zero: must be at most 3, found \"4\""},
};
// clang-format on

}  // namespace

TEST_CASE("the corpus holds at least forty bad inputs, each listed here") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
    ++files;
    const std::string name = entry.path().filename().string();
    bool listed = false;
    for (const Case& c : cases) listed = listed || name == c.file;
    INFO(name);
    CHECK(listed);
  }
  CHECK(files >= 40);
}

TEST_CASE("every bad input exits 2 with its location, key path and message") {
  for (const Case& c : cases) {
    INFO(c.file);
    const Result r = run("check " + corpus + c.file);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("error: " + corpus + c.expected) != std::string::npos);
    if (r.output.find(corpus + c.expected) == std::string::npos) MESSAGE(r.output);
  }
}

TEST_CASE("a directory, a missing file and an oversized file are clear errors") {
  Result r = run("check " + corpus);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(": this is a directory; expected a YAML scenario file") != std::string::npos);
  r = run("check " + corpus + "no-such-file.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("no-such-file.yaml: no such file") != std::string::npos);
  const trainsim::testing::TempDir dir;
  const auto big = dir.path() / "big.yaml";
  {
    std::ofstream out(big);
    const std::string line = "# " + std::string(1000, 'x') + "\n";
    for (int i = 0; i < 1100; ++i) out << line;
  }
  r = run("check " + big.string());
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("bytes; scenario and preset files are limited to 1048576 bytes") != std::string::npos);
}

TEST_CASE("a good scenario checks with exit 0 and a one-line summary") {
  const Result r = run("check " TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml");
  CHECK(r.exit_code == 0);
  CHECK(r.output.rfind(
            "ok: gpt3-175b-1024-a100: model gpt3-175b (96 layers, hidden 12288, 174.6B params), 1024 GPUs "
            "(128 x dgx-a100-80gb), tp 8 pp 16 dp 8",
            0) == 0);
}

TEST_CASE("several files are all checked and the exit code is 2 if any is bad") {
  const Result r = run("check " TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-8b-64-h100.yaml " + corpus +
                       "zero-nodes.yaml " + corpus + "empty.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("ok: llama3-8b-64-h100") != std::string::npos);
  CHECK(r.output.find("zero-nodes.yaml:2:39: cluster.nodes: must be at least 1") != std::string::npos);
  CHECK(r.output.find("empty.yaml:1:1: the file is empty") != std::string::npos);
}

TEST_CASE("--set overrides are applied and --dump writes the scenario back") {
  Result r =
      run("check " TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-8b-64-h100.yaml --set cluster.nodes=16");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("128 GPUs (16 x dgx-h100)") != std::string::npos);
  r = run("check " TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-8b-64-h100.yaml --set cluster.nodes=0");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("override cluster.nodes:1:1: cluster.nodes: must be at least 1") != std::string::npos);
  r = run("check " TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-8b-64-h100.yaml --dump");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("name: \"llama3-8b-64-h100\"") != std::string::npos);
}

TEST_CASE("list prints the shipped presets with their key numbers") {
  Result r = run("list models");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("gpt3-175b") != std::string::npos);
  CHECK(r.output.find("174.6B") != std::string::npos);
  CHECK(r.output.find("405.9B") != std::string::npos);
  r = run("list gpus");
  CHECK(r.output.find("h100-sxm") != std::string::npos);
  r = run("list clusters");
  CHECK(r.output.find("8 x 200 Gb/s") != std::string::npos);  // DGX A100: 8x HDR InfiniBand
  r = run("list optimizers");
  CHECK(r.output.find("adam-8bit") != std::string::npos);
  r = run("list widgets");
  CHECK(r.exit_code == 2);
}
