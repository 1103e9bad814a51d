// The Megatron-LM argument importer: shell words as bash splits a launch script, each flag to its key with
// Megatron's own defaults (FFN width, vocabulary padding, virtual stages), and bad lists as clear errors.
#include "scenarios/importers/megatron_args.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

const std::string kLlama = R"(--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096
--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights
--disable-bias-linear --vocab-size 32000 --micro-batch-size 1 --global-batch-size 128 --bf16
--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4
--sequence-parallel --recompute-granularity full --use-distributed-optimizer --overlap-grad-reduce
--tp-comm-overlap --train-samples 1000 --hidden-dropout 0 --lr 3e-4
)";

}  // namespace

TEST_CASE("shell words: comments, continuations, bash arrays and quotes as bash splits them") {
  const std::vector<std::string> words = shell_words(
      "ARGS=(\n    --num-layers 96 \\\n    --split '949,50,1' # a comment --not-a-flag\n)\n"
      "torchrun ${ARGS[@]} \"pretrain gpt.py\"\n");
  CHECK(words == std::vector<std::string>{"--num-layers", "96", "--split", "949,50,1", "torchrun",
                                          "${ARGS[@]}", "pretrain gpt.py"});
  CHECK_THROWS_WITH_AS(shell_words("--split '949"), "the argument list has an unclosed quote", InputError);
}

TEST_CASE("each Megatron flag becomes its key, and the scenario loads") {
  const MegatronImport imported =
      import_megatron_args(kLlama, "llama.args", {.node = "dgx-h100", .nodes = 2});
  const Scenario s = load_scenario_text(imported.yaml, "llama.yaml");
  CHECK(s.model.layers == 32);
  CHECK(s.model.mlp == model::Mlp::swiglu);
  CHECK(s.model.norm == model::Norm::rmsnorm);
  CHECK(s.model.position == model::Position::rope);
  CHECK_FALSE(s.model.tied_embeddings);
  CHECK_FALSE(s.model.bias);
  CHECK(s.model.dropout == 0);
  // Megatron's SwiGLU default: int(4h · 2/3) rounded down to a multiple of 64 = 10,922 -> 10,880.
  CHECK(s.model.ffn_hidden == 10880);
  // --vocab-size padded to a multiple of 128 · tp = 256: 32,000 is one already.
  CHECK(s.model.vocab == 32000);
  CHECK(s.parallelism.tp == 2);
  CHECK(s.parallelism.pp == 2);
  CHECK(s.parallelism.dp == 4);  // 16 GPUs / (tp 2 · pp 2)
  // 32 layers / (pp 2 · 4 layers per virtual stage) = 4 virtual stages.
  CHECK(s.parallelism.schedule == model::Schedule::interleaved);
  CHECK(s.parallelism.virtual_stages == 4);
  CHECK(s.parallelism.sequence_parallel);
  CHECK(s.parallelism.recompute == model::Recompute::full);
  CHECK(s.parallelism.zero == model::ZeroStage::optimizer_states);
  CHECK(s.parallelism.overlap_grad_reduce);
  CHECK(s.parallelism.framework.tp_comm_overlap);
  CHECK_FALSE(s.parallelism.framework.overlap_param_gather);  // not given: Megatron's default is off
  CHECK(s.training.precision == topo::Precision::bf16);
  REQUIRE(s.training.tokens);
  CHECK(*s.training.tokens == doctest::Approx(1000.0 * 4096));  // --train-samples x --seq-length
  CHECK(imported.ignored_flags == std::vector<std::string>{"--lr"});
  CHECK(imported.yaml.find("# Read and left out (they price nothing): --lr") != std::string::npos);
}

TEST_CASE("Megatron's defaults: FFN 4h, GPT-2 BPE padded to 128·tp, no overlap, fp32, the fewest nodes") {
  const std::string gpt =
      "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
      "--global-batch-size 64 --tensor-model-parallel-size 1\n";
  const MegatronImport imported = import_megatron_args(gpt, "gpt.args", {});
  const Scenario s = load_scenario_text(imported.yaml, "gpt.yaml");
  CHECK(s.model.ffn_hidden == 4 * 2048);
  CHECK(s.model.vocab == 50304);  // 50,257 rounded up to a multiple of 128
  CHECK(s.training.precision == topo::Precision::fp32);
  CHECK(s.parallelism.zero == model::ZeroStage::none);
  CHECK_FALSE(s.parallelism.overlap_grad_reduce);
  CHECK_FALSE(s.parallelism.framework.tp_comm_overlap);
  CHECK(s.cluster.nodes == 1);
  CHECK(s.model.attention == model::Attention::flash);  // Transformer Engine, Megatron's default
  // At tp 8 the same vocabulary pads to a multiple of 1,024.
  CHECK(load_scenario_text(import_megatron_args(gpt + " --tensor-model-parallel-size 8", "g.args", {}).yaml,
                           "g.yaml")
            .model.vocab == 51200);
  // The unfused local implementation without --use-flash-attn: the standard attention kernels.
  CHECK(
      load_scenario_text(import_megatron_args(gpt + " --transformer-impl local", "g.args", {}).yaml, "g.yaml")
          .model.attention == model::Attention::standard);
}

TEST_CASE("bad argument lists are errors that name the flag") {
  const std::string base =
      "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --global-batch-size 8 ";
  CHECK_THROWS_WITH_AS(import_megatron_args(base, "a.args", {}),
                       "the argument list does not give --seq-length", InputError);
  CHECK_THROWS_WITH_AS(import_megatron_args(base + "--seq-length 2k", "a.args", {}),
                       "--seq-length expects a number, got '2k'", InputError);
  CHECK_THROWS_WITH_AS(import_megatron_args(base + "--seq-length $SEQ", "a.args", {}),
                       "--seq-length is the shell variable $SEQ: write its value in the argument list",
                       InputError);
  CHECK_THROWS_WITH_AS(
      import_megatron_args(base + "--seq-length 2048 --tokenizer-type HuggingFaceTokenizer", "a.args", {}),
      "the vocabulary of tokenizer HuggingFaceTokenizer is not in the argument list: add --vocab-size N",
      InputError);
  CHECK_THROWS_WITH_AS(import_megatron_args("python train.py\n", "a.args", {}), "no --flags found in a.args",
                       InputError);
}
