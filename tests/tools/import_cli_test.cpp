// `trainsim import megatron` round trip: the flags of Megatron-LM's GPT-3 175B README example are imported,
// written, and the written scenario runs; the scenario says what it read from where.
#include <string>

#include "binary_harness.hpp"

using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

TEST_CASE("import megatron, then run: the Megatron-LM README's GPT-3 175B example") {
  const TempDir dir;
  const std::string args = std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/megatron_args/gpt3-175b.args";
  const std::string scenario = dir.file("gpt3.yaml");
  const auto imported = run_trainsim({"import", "megatron", args, "--node", "dgx-a100-80gb", "-o", scenario});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  const std::string yaml = read_file(scenario);
  for (const char* key :
       {"layers: 96", "hidden: 12288", "heads: 96", "vocab: 51200", "tp: 8", "pp: 16", "global_batch: 1536",
        "precision: fp16", "steps: 500000", "cluster: {node: dgx-a100-80gb, nodes: 16}"}) {
    CHECK_MESSAGE(yaml.find(key) != std::string::npos, key);
  }
  CHECK(yaml.find("--rampup-batch-size") != std::string::npos);  // listed as left out

  const auto run = run_trainsim({"run", scenario, "--fidelity", "analytic", "--set", "training.steps=1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("gpus                             128") != std::string::npos);

  // Bad input: a file that does not exist is exit 2 with its name.
  const auto missing = run_trainsim({"import", "megatron", dir.file("none.args")});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir.file("none.args") + ": no such file") != std::string::npos);
}

TEST_CASE("import megatron, then run: a Megatron-LM MoE recipe file on an NVL72 rack") {
  const TempDir dir;
  const std::string recipe =
      std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/megatron_args/qwen3-30b-gb200-recipe.yaml";
  const std::string scenario = dir.file("qwen3.yaml");
  // Its HuggingFace tokenizer's vocabulary is not in the recipe: refused until given.
  const auto no_vocab = run_trainsim({"import", "megatron", recipe, "--node", "gb200-nvl72"});
  CHECK(no_vocab.exit_code == 2);
  CHECK(no_vocab.err.find("give trainsim import megatron --vocab-size N") != std::string::npos);
  const auto imported = run_trainsim({"import", "megatron", recipe, "--node", "gb200-nvl72", "--nodes", "1",
                                      "--gpus-per-node", "16", "--vocab-size", "151669", "-o", scenario});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  const std::string yaml = read_file(scenario);
  // 151,669 padded to a multiple of 1,187 · tp 1: 128 · 1,187 = 151,936.
  for (const char* key :
       {"vocab: 151936", "qk_norm: true", "experts: 128", "expert_ffn_hidden: 768", "routing: force-balanced",
        "ep: 16", "expert_folding: true", "expert_tp: 1", "precision: fp8", "moe_dispatcher: hybridep",
        "cuda_graphs: true", "fused_grouped_mlp: true", "moe_host_sync: false",
        "cluster: {node: gb200-nvl72, nodes: 1, gpus_per_node: 16}"}) {
    CHECK_MESSAGE(yaml.find(key) != std::string::npos, key);
  }
  CHECK(yaml.find("--moe-expert-rank-capacity-factor (the paged stash") != std::string::npos);
  const auto run = run_trainsim({"run", scenario, "--fidelity", "analytic", "--set", "training.steps=1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("gpus                             16") != std::string::npos);
}

TEST_CASE("import nemo, then run: a NeMo 2 recipe in NeMo-Run's YAML") {
  const TempDir dir;
  const std::string recipe =
      std::string(TRAINSIM_SOURCE_DIR) + "/tests/tools/nemo_recipes/llama3-8b-fp8.yaml";
  const std::string scenario = dir.file("llama.yaml");
  const auto imported = run_trainsim({"import", "nemo", recipe, "-o", scenario});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  const std::string yaml = read_file(scenario);
  for (const char* key : {"preset: llama3-8b", "seq_len: 8192", "cp: 2", "zero: 3", "recompute: selective",
                          "precision: fp8", "global_batch: 128", "preset: nemo", "tp_comm_overlap: false"}) {
    CHECK_MESSAGE(yaml.find(key) != std::string::npos, key);
  }
  const auto run = run_trainsim({"run", scenario, "--fidelity", "analytic", "--set", "training.steps=1"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(run.out.find("gpus                             8") != std::string::npos);

  const auto wrong_node = run_trainsim({"import", "nemo", recipe, "--node", "gb200-nvl72"});
  CHECK(wrong_node.exit_code == 2);
  CHECK(wrong_node.err.find("trainer.devices") != std::string::npos);
}

TEST_CASE("import without a source it knows names the sources, and where a HuggingFace config goes") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"import"}, {"import", "hf"}}) {
    const auto o = run_trainsim(args);
    CHECK(o.exit_code == 2);
    CHECK(o.err.find("error: trainsim import needs one of: megatron, nemo") != std::string::npos);
    CHECK(o.err.find("model: {hf_config: path/to/config.json}") != std::string::npos);
    CHECK(o.err.find("A subcommand is required") == std::string::npos);
  }
}
