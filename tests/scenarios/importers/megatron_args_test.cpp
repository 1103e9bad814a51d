// The Megatron-LM argument importer: shell words as bash splits a launch script, each flag to its key with
// Megatron's own defaults (FFN width, vocabulary padding, virtual stages), and bad lists as clear errors.
#include "scenarios/importers/megatron_args.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/workload/parameters.hpp"
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

TEST_CASE("--num-query-groups makes grouped-query attention only with --group-query-attention") {
  // Megatron-LM reads num_query_groups only under --group-query-attention; without it every one of the 16
  // heads has its own K and V, and the flag prices nothing.
  const std::string gpt =
      "--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
      "--global-batch-size 64 --num-query-groups 4\n";
  const MegatronImport alone = import_megatron_args(gpt, "gpt.args", {});
  CHECK(load_scenario_text(alone.yaml, "gpt.yaml").model.kv_heads == 0);  // 0: one K/V head per query head
  CHECK(alone.ignored_flags == std::vector<std::string>{"--num-query-groups"});
  const MegatronImport grouped = import_megatron_args(gpt + " --group-query-attention", "gpt.args", {});
  CHECK(load_scenario_text(grouped.yaml, "gpt.yaml").model.kv_heads == 4);
  CHECK(grouped.ignored_flags.empty());
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
      "the vocabulary of tokenizer HuggingFaceTokenizer is not in the argument list: add --vocab-size N to "
      "it, "
      "or give trainsim import megatron --vocab-size N (the tokenizer's length, before padding)",
      InputError);
  // The importer's vocabulary stands in for the list's, padded as Megatron pads it: 151,669 to a multiple of
  // 128 · tp 1, 151,680.
  CHECK(load_scenario_text(
            import_megatron_args(base + "--seq-length 2048 --tokenizer-type HuggingFaceTokenizer", "a.args",
                                 {.vocab_size = 151669})
                .yaml,
            "a.yaml")
            .model.vocab == 151680);
  CHECK_THROWS_WITH_AS(import_megatron_args("python train.py\n", "a.args", {}), "no --flags found in a.args",
                       InputError);
}

namespace {

// A small fine-grained MoE with each MoE feature's flag, as Megatron-LM spells them
// (megatron/training/arguments.py; the TransformerConfig fields it turns into flags).
const std::string kMoe = R"(--num-layers 8 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096
--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights
--disable-bias-linear --vocab-size 32000 --micro-batch-size 1 --global-batch-size 256 --bf16
--num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 1024 --pipeline-model-parallel-size 2
--expert-model-parallel-size 8 --use-distributed-optimizer --train-iters 10 --moe-token-drop-policy probs
)";

Scenario import_moe(const std::string& extra) {
  return load_scenario_text(import_megatron_args(kMoe + extra, "moe.args", {.nodes = 2}).yaml, "moe.yaml");
}

}  // namespace

TEST_CASE(
    "the MoE flags: dispatcher, expert overlap, per-module recompute and offload, moments, routing, MTP") {
  const Scenario s = import_moe(
      "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
      "--overlap-moe-expert-parallel-comm --recompute-granularity selective --recompute-modules moe_act "
      "layernorm --fine-grained-activation-offloading --offload-modules core_attn attn_proj expert_fc1 "
      "--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 "
      "--moe-expert-capacity-factor 1.25 --mtp-num-layers 1");
  CHECK(s.parallelism.framework.moe_dispatcher == model::MoeDispatcher::hybridep);
  CHECK(s.parallelism.framework.ep_comm_overlap);
  CHECK_FALSE(s.parallelism.framework.delay_wgrad_compute);
  CHECK(import_moe(
            "--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm --delay-wgrad-compute")
            .parallelism.framework.delay_wgrad_compute);
  // The router's kernels: Megatron-Core's 72 unless --moe-router-fusion (31).
  CHECK(s.parallelism.framework.router_kernels == 72);
  CHECK(import_moe("--moe-router-fusion").parallelism.framework.router_kernels == 31);
  // Megatron's default allgather dispatcher does not overlap (its TransformerConfig asserts alltoall or
  // flex): the written scenario does not load.
  CHECK_THROWS_WITH_AS(
      (void)import_moe("--overlap-moe-expert-parallel-comm"),
      doctest::Contains(
          "framework.moe_dispatcher: allgather does not run with framework.ep_comm_overlap: true"),
      InputError);
  CHECK(s.parallelism.recompute == model::Recompute::selective);
  // moe_act (4) | layernorm (8), RecomputeModule's bits.
  CHECK(s.parallelism.recompute_modules == 4 + 8);
  // core_attn (4) | attn_proj (8) | expert_fc1 (32), OffloadModule's bits.
  CHECK(s.parallelism.offload_modules == 4 + 8 + 32);
  CHECK(s.training.optimizer.state_precision == topo::Precision::bf16);
  CHECK(s.model.routing == model::Routing::capacity);
  CHECK(s.model.capacity_factor == 1.25);
  CHECK(s.model.mtp_layers == 1);
  // Group-limited routing: 64 experts in 8 groups, a token's 8 from 4 of them.
  const Scenario grouped = import_moe("--moe-router-num-groups 8 --moe-router-group-topk 4");
  CHECK((grouped.model.routing_groups == 8 && grouped.model.routing_group_top_k == 4));
  CHECK(import_moe("").model.routing_groups == 0);
  CHECK_THROWS_WITH_AS(
      import_moe("--moe-router-num-groups 8"),
      "--moe-router-num-groups and --moe-router-group-topk go together (group-limited routing); "
      "found only --moe-router-num-groups",
      InputError);
  // The flex dispatcher's default backend is DeepEP (transformer_config.py moe_flex_dispatcher_backend).
  CHECK(import_moe("--moe-token-dispatcher-type flex").parallelism.framework.moe_dispatcher ==
        model::MoeDispatcher::deepep);
  CHECK(import_moe("--moe-token-dispatcher-type alltoall").parallelism.framework.moe_dispatcher ==
        model::MoeDispatcher::all_to_all);
  // The flex dispatcher's SMs: --moe-flex-dispatcher-num-sms, else a deprecated per-backend flag, which
  // Megatron-Core routes to it whatever the backend; unset: 0, the backend's default.
  const auto sms = [](const std::string& flags) {
    return import_moe("--moe-token-dispatcher-type flex " + flags).parallelism.framework.moe_dispatcher_sms;
  };
  CHECK(sms("") == 0);
  CHECK(sms("--moe-flex-dispatcher-num-sms 24 --moe-deepep-num-sms 40") == 24);
  CHECK(sms("--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 32") == 32);
  CHECK(sms("--moe-deepep-num-sms 48") == 48);
  CHECK(import_moe("--moe-token-dispatcher-type alltoall --moe-flex-dispatcher-num-sms 24")
            .parallelism.framework.moe_dispatcher_sms == 0);
  // Forced balance: every expert gets the mean, so a capacity factor pads only when asked to.
  const Scenario forced = import_moe("--moe-router-force-load-balancing --moe-expert-capacity-factor 2");
  CHECK(forced.model.routing == model::Routing::force_balanced);
  CHECK(forced.model.capacity_factor == 1.0);
  CHECK(import_moe("--moe-router-force-load-balancing --moe-expert-capacity-factor 2 "
                   "--moe-pad-expert-input-to-capacity")
            .model.capacity_factor == 2.0);
}

TEST_CASE("without --nodes a MoE import takes the fewest nodes holding one replica, experts folded") {
  // Megatron-Core folds the expert group into the attention's tp x cp x dp ranks, each expert split over the
  // expert tp (default: tp). tp 2, pp 4, ep 8: pp · lcm(tp 2, ep 8 · expert tp 2) = 64 GPUs, 8 DGX H100
  // nodes, dp 64 / (2 · 4) = 8; with --expert-tensor-parallel-size 1, 4 · lcm(2, 8) = 32 GPUs, dp 4.
  const std::string moe =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --num-experts 8 "
      "--moe-router-topk 2 --expert-model-parallel-size 8 --tensor-model-parallel-size 2 "
      "--pipeline-model-parallel-size 4 --sequence-parallel --global-batch-size 256\n";
  const Scenario s = load_scenario_text(import_megatron_args(moe, "moe.args", {}).yaml, "moe.yaml");
  CHECK(s.cluster.nodes == 8);
  CHECK(s.parallelism.dp == 8);
  CHECK(s.parallelism.expert_folding);
  CHECK(s.parallelism.expert_tensor_parallel() == 2);
  const Scenario etp1 = load_scenario_text(
      import_megatron_args(moe + "--expert-tensor-parallel-size 1", "moe.args", {}).yaml, "moe.yaml");
  CHECK(etp1.cluster.nodes == 4);
  CHECK(etp1.parallelism.dp == 4);
  CHECK(etp1.parallelism.expert_tensor_parallel() == 1);
}

TEST_CASE("Megatron's MoE defaults: allgather, dropless, fp32 moments, core_attn, nothing offloaded") {
  const Scenario s = import_moe(
      "--recompute-granularity selective --offload-modules core_attn "
      "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  CHECK(s.parallelism.framework.moe_dispatcher == model::MoeDispatcher::all_gather);
  CHECK_FALSE(s.parallelism.framework.ep_comm_overlap);
  CHECK(s.model.routing == model::Routing::dropless);
  CHECK(s.model.mtp_layers == 0);
  // Selective without --recompute-modules: Megatron's default module, the attention core.
  CHECK(s.parallelism.recompute == model::Recompute::selective);
  CHECK(s.parallelism.recompute_modules == 0);
  // Megatron reads the modules only under --fine-grained-activation-offloading, and the moments' types
  // only under --use-precision-aware-optimizer.
  CHECK(s.parallelism.offload_modules == 0);
  CHECK(s.training.optimizer.state_precision == topo::Precision::fp32);
  // Under full recompute Megatron reads no modules.
  CHECK(
      import_moe("--recompute-granularity full --recompute-modules moe_act").parallelism.recompute_modules ==
      0);
}

TEST_CASE("bad MoE flags are errors that name the flag and what is modelled") {
  CHECK_THROWS_WITH_AS(import_moe("--moe-token-dispatcher-type alltoal"),
                       "--moe-token-dispatcher-type alltoal is not modelled (alltoall, allgather, flex)",
                       InputError);
  CHECK_THROWS_WITH_AS(import_moe("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep"),
                       "--moe-flex-dispatcher-backend ncclep is not modelled (deepep, hybridep)", InputError);
  CHECK_THROWS_WITH_AS(
      import_moe("--moe-token-dispatcher-type flex --moe-deepep-num-sms 20 --moe-hybridep-num-sms 32"),
      "--moe-deepep-num-sms 20 and --moe-hybridep-num-sms 32 disagree (Megatron-Core refuses them): give one "
      "--moe-flex-dispatcher-num-sms",
      InputError);
  CHECK_THROWS_WITH_AS(
      import_moe("--recompute-granularity selective --recompute-modules moe_act mhc"),
      "--recompute-modules mhc is not modelled (core_attn, mlp, moe_act, layernorm, mla_up_proj, moe, "
      "shared_experts)",
      InputError);
  CHECK_THROWS_WITH_AS(import_moe("--recompute-granularity selective --recompute-modules"),
                       "--recompute-modules needs a value", InputError);
  CHECK_THROWS_WITH_AS(import_moe("--use-precision-aware-optimizer --exp-avg-dtype bf16"),
                       "--exp-avg-dtype bf16 and --exp-avg-sq-dtype fp32 differ: trainsim holds both moments "
                       "in one type (training.optimizer.state_precision)",
                       InputError);
  CHECK_THROWS_WITH_AS(import_moe("--moe-expert-capacity-factor 0"),
                       "--moe-expert-capacity-factor expects a number from 0.001 to 1000, got 0", InputError);
  CHECK_THROWS_WITH_AS(import_moe("--mtp-num-layers 1001"),
                       "--mtp-num-layers expects a whole number from 0 to 1000, got 1001", InputError);
  // What the importer does not model is refused, not dropped: the run priced without it is another run.
  CHECK_THROWS_WITH_AS(
      import_moe("--offload-optimizer-states"),
      "--offload-optimizer-states is not read by this importer: optimizer states offloaded to "
      "host memory are not modelled; give --lenient to import the rest and list the flags "
      "left out",
      InputError);
  const MegatronImport lenient =
      import_megatron_args(kMoe + "--offload-optimizer-states", "moe.args", {.nodes = 2, .lenient = true});
  CHECK(lenient.unknown_flags == std::vector<std::string>{"--offload-optimizer-states"});
  // An MTP module alone in a virtual stage of its own: the model holds it with the loss.
  CHECK_THROWS_WITH_AS(import_moe("--mtp-num-layers 1 --pipeline-model-parallel-layout 'Et*4|t*4|m|L'"),
                       doctest::Contains("virtual stage 2 holds no decoder layer (an MTP module alone?)"),
                       InputError);
  CHECK_THROWS_WITH_AS(import_moe("--moe-shared-expert-intermediate-size 1536"),
                       "--moe-shared-expert-intermediate-size 1536 is not a whole number of experts of width "
                       "1024 (trainsim holds shared experts as model.shared_experts of the expert width)",
                       InputError);
  CHECK_THROWS_WITH_AS(import_moe("--main-grads-dtype bf16"),
                       "--main-grads-dtype bf16 is not modelled (fp32 only)", InputError);
}

namespace {

// A Megatron-LM recipe file as examples/moe_recipes lays them out (DEPENDENCIES, ENV_VARS, ARGS): a small
// MLA model with dense first layers and shared experts, every MoE recipe setting the importer reads.
const std::string kRecipe = R"(DEPENDENCIES:
  pytorch_base_image: nvcr.io/nvidia/pytorch:26.03-py3
ENV_VARS:
  NVTE_CUTEDSL_FUSED_GROUPED_MLP: '1'
  CUDA_DEVICE_MAX_CONNECTIONS: '1'
ARGS:
  num_layers: 8
  hidden_size: 1024
  num_attention_heads: 16
  seq_length: 4096
  swiglu: true
  normalization: RMSNorm
  position_embedding_type: rope
  untie_embeddings_and_output_weights: true
  disable_bias_linear: true
  vocab_size: 32000
  multi_latent_attention: true
  q_lora_rank: 384
  kv_lora_rank: 128
  qk_head_dim: 64
  qk_pos_emb_head_dim: 32
  v_head_dim: 64
  qk_layernorm: true
  ffn_hidden_size: 4096
  num_experts: 32
  moe_ffn_hidden_size: 512
  moe_shared_expert_intermediate_size: 1024
  moe_layer_freq: ([0]*2+[1]*6)
  moe_router_topk: 4
  moe_router_pre_softmax: false
  moe_token_dispatcher_type: flex
  moe_flex_dispatcher_backend: hybridep
  moe_router_force_load_balancing: true
  moe_paged_stash: true
  use_transformer_engine_op_fuser: true
  cuda_graph_impl: local
  cuda_graph_scope: full_iteration
  pipeline_model_parallel_size: 2
  expert_model_parallel_size: 8
  expert_tensor_parallel_size: 1
  pipeline_model_parallel_layout: Et*2|t*2|t*2|t*2L
  recompute_granularity: selective
  recompute_modules: mla_up_proj layernorm
  micro_batch_size: 1
  global_batch_size: 64
  bf16: true
  fp8_recipe: mxfp8
  fp8_format: e4m3
  use_distributed_optimizer: true
  overlap_grad_reduce: true
  train_iters: 10
  lr: 0.0001
)";

Scenario import_recipe(const std::string& text, MegatronImport* out = nullptr) {
  const MegatronImport imported = import_megatron_args(text, "recipe.yaml", {.node = "dgx-b200"});
  if (out != nullptr) *out = imported;
  return load_scenario_text(imported.yaml, "recipe-scenario.yaml");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a Megatron-LM recipe file: its ARGS as flags, its ENV_VARS as the environment") {
  MegatronImport imported;
  const Scenario s = import_recipe(kRecipe, &imported);
  // Multi-head latent attention with the recipe's ranks; under MLA --qk-layernorm is the latents' norms,
  // which the model's MLA holds, not a per-head norm.
  CHECK(s.model.q_lora_rank == 384);
  CHECK(s.model.kv_lora_rank == 128);
  CHECK(s.model.qk_nope_head_dim == 64);
  CHECK(s.model.qk_rope_head_dim == 32);
  CHECK(s.model.v_head_dim == 64);
  CHECK_FALSE(s.model.qk_norm);
  // ([0]*2+[1]*6): 2 dense first layers, then every layer MoE; 1024 / 512 = 2 shared experts.
  CHECK(s.model.dense_layers == 2);
  CHECK(s.model.moe_layer_step == 1);
  CHECK(s.model.shared_experts == 2);
  CHECK(s.model.experts == 32);
  CHECK(s.model.top_k == 4);
  CHECK(s.model.routing == model::Routing::force_balanced);
  // The layout's 4 virtual stages of 2 layers over pp 2.
  CHECK(s.parallelism.pp == 2);
  CHECK(s.parallelism.schedule == model::Schedule::interleaved);
  CHECK(s.parallelism.virtual_stages == 2);
  CHECK(s.parallelism.stage_layers == std::vector<int>{2, 2, 2, 2});
  // Folded experts: pp 2 · lcm(1, ep 8 · expert tp 1) = 16 GPUs, two DGX B200; dp 16 / 2 = 8.
  CHECK(s.cluster.nodes == 2);
  CHECK(s.parallelism.dp == 8);
  CHECK(s.parallelism.expert_folding);
  CHECK(s.parallelism.expert_tensor_parallel() == 1);
  // mla_up_proj (16) | layernorm (8), RecomputeModule's bits.
  CHECK(s.parallelism.recompute_modules == 16 + 8);
  CHECK(s.training.precision == topo::Precision::fp8);
  const model::Framework& fw = s.parallelism.framework;
  CHECK(fw.moe_dispatcher == model::MoeDispatcher::hybridep);
  CHECK(fw.cuda_graphs);          // cuda_graph_scope full_iteration: the whole step one graph
  CHECK(fw.fused_grouped_mlp);    // the op fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, in fp8
  CHECK_FALSE(fw.moe_host_sync);  // the paged stash: no wait on the host for the token counts
  // false leaves a switch out (moe_router_pre_softmax); --lr prices nothing.
  CHECK(imported.ignored_flags == std::vector<std::string>{"--lr"});
  CHECK(imported.not_priced.empty());
}

TEST_CASE("a recipe's per-layer CUDA graphs are priced eager and said so; the fused MLP needs its variable") {
  MegatronImport imported;
  const Scenario partial =
      import_recipe(replaced(replaced(kRecipe, "cuda_graph_scope: full_iteration",
                                      "cuda_graph_scope:\n  - attn\n  - moe_router"),
                             "cuda_graph_impl: local", "cuda_graph_impl: transformer_engine"),
                    &imported);
  CHECK_FALSE(partial.parallelism.framework.cuda_graphs);
  CHECK(imported.not_priced ==
        std::vector<std::string>{"CUDA graphs of attn, moe_router (per-layer graphs: priced eager)"});
  CHECK(imported.yaml.find("# Read, but not priced (trainsim does not model what they change):") !=
        std::string::npos);
  CHECK(imported.yaml.find("CUDA graphs of attn") != std::string::npos);
  CHECK_FALSE(import_recipe(replaced(kRecipe, "NVTE_CUTEDSL_FUSED_GROUPED_MLP: '1'",
                                     "NVTE_CUTEDSL_FUSED_GROUPED_MLP: '0'"))
                  .parallelism.framework.fused_grouped_mlp);
  // A launch script sets it as a command's prefix or an export.
  const std::string script = "export NVTE_CUTEDSL_FUSED_GROUPED_MLP=1\ntorchrun pretrain_gpt.py " + kMoe +
                             " --fp8-format e4m3 --fp8-recipe mxfp8 --use-transformer-engine-op-fuser\n";
  CHECK(load_scenario_text(import_megatron_args(script, "run.sh", {.node = "dgx-b200", .nodes = 2}).yaml,
                           "run.yaml")
            .parallelism.framework.fused_grouped_mlp);
}

TEST_CASE("layers per virtual stage with the embedding and the loss counted as layers") {
  // Qwen3-235B's H100 recipe: 94 layers + embedding + loss = 96, 3 a virtual stage over pp 8: 4 virtual
  // stages a rank; the first holds the embedding and 2 layers, the last 2 layers and the loss.
  const std::string qwen =
      "--num-layers 94 --hidden-size 4096 --num-attention-heads 64 --seq-length 4096 --vocab-size 151936 "
      "--global-batch-size 2048 --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 3 "
      "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split\n";
  const Scenario s =
      load_scenario_text(import_megatron_args(qwen, "qwen.args", {.nodes = 1}).yaml, "qwen.yaml");
  CHECK(s.parallelism.virtual_stages == 4);
  std::vector<int> expected(32, 3);
  expected.front() = 2;
  expected.back() = 2;
  CHECK(s.parallelism.stage_layers == expected);
  CHECK_THROWS_WITH_AS(
      import_megatron_args(replaced(qwen, "stage 3", "stage 5"), "qwen.args", {}),
      "--num-layers-per-virtual-pipeline-stage 5 does not divide --num-layers over the pipeline stages "
      "(the embedding and the loss counted as layers)",
      InputError);
}

TEST_CASE("a recipe whose ARGS is not a mapping is an error at its line") {
  CHECK_THROWS_WITH_AS(import_megatron_args("ENV_VARS: {}\nARGS:\n  - --num-layers\n", "r.yaml", {}),
                       doctest::Contains("r.yaml:3:3: ARGS: expected a mapping of Megatron-LM arguments"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      import_megatron_args("ARGS:\n  num_layers: {a: 1}\n", "r.yaml", {}),
      doctest::Contains("ARGS.num_layers: expected a value or a list of values, found a mapping"),
      InputError);
}

TEST_CASE("graphs, DeepEP's old switch, blockwise FP8 and layouts as Megatron-LM takes or refuses them") {
  const auto fw = [](const std::string& extra) { return import_moe(extra).parallelism.framework; };
  // --moe-enable-deepep: DeepEP under the flex dispatcher; Megatron-Core refuses it with another type.
  CHECK(fw("--moe-token-dispatcher-type flex --moe-enable-deepep").moe_dispatcher ==
        model::MoeDispatcher::deepep);
  CHECK_THROWS_WITH_AS(import_moe("--moe-token-dispatcher-type alltoall --moe-enable-deepep"),
                       doctest::Contains("--moe-enable-deepep needs --moe-token-dispatcher-type flex"),
                       InputError);
  // A whole-step graph: --cuda-graph-impl full_iteration, or the full_iteration scope under local.
  CHECK(fw("--cuda-graph-impl full_iteration").cuda_graphs);
  CHECK(fw("--cuda-graph-impl local --cuda-graph-modules full_iteration").cuda_graphs);
  CHECK_THROWS_WITH_AS(import_moe("--cuda-graph-impl transformer_engine --cuda-graph-scope full_iteration"),
                       doctest::Contains("--cuda-graph-scope full_iteration needs --cuda-graph-impl local"),
                       InputError);
  // Per-layer graphs (--external-cuda-graph: TransformerEngine's, whole layers) are priced eager and listed.
  const MegatronImport external =
      import_megatron_args(kMoe + "--external-cuda-graph", "moe.args", {.nodes = 2});
  CHECK_FALSE(load_scenario_text(external.yaml, "moe.yaml").parallelism.framework.cuda_graphs);
  CHECK(external.not_priced ==
        std::vector<std::string>{"CUDA graphs of whole layers (per-layer graphs: priced eager)"});
  // FP8 blockwise scaling is priced as fp8 and said so; the fused grouped MLP is MXFP8's only.
  const MegatronImport blockwise =
      import_megatron_args(kMoe + "--fp8-format e4m3 --fp8-recipe blockwise", "moe.args", {.nodes = 2});
  CHECK(
      blockwise.not_priced ==
      std::vector<std::string>{"--fp8-recipe blockwise (block-scaled GEMMs priced as fp8 GEMMs; its casts as "
                               "training.fp8_recipe prices them)"});
  // --fp8-recipe is training.fp8_recipe under fp8; absent, Megatron's default (delayed) is left unwritten.
  CHECK(load_scenario_text(blockwise.yaml, "moe.yaml").training.fp8_recipe ==
        trainsim::model::Fp8Recipe::blockwise);
  CHECK_FALSE(import_moe("--fp8-format e4m3").training.fp8_recipe.has_value());
  CHECK_THROWS_WITH_AS(
      import_megatron_args(kMoe + "--fp8-format e4m3 --fp8-recipe custom", "moe.args", {.nodes = 2}),
      doctest::Contains("--fp8-recipe custom is not modelled (delayed, tensorwise, blockwise, mxfp8)"),
      InputError);
  const std::string fuser =
      "NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 " + kMoe + "--fp8-format e4m3 --use-transformer-engine-op-fuser ";
  CHECK_FALSE(
      load_scenario_text(
          import_megatron_args(fuser + "--fp8-recipe blockwise", "moe.args", {.nodes = 2}).yaml, "moe.yaml")
          .parallelism.framework.fused_grouped_mlp);
  CHECK_THROWS_WITH_AS(
      import_megatron_args(fuser + "--fp8-recipe mxfp8 --tensor-model-parallel-size 2 --sequence-parallel",
                           "moe.args", {.nodes = 2}),
      doctest::Contains("needs one rank an expert, --expert-tensor-parallel-size 1"), InputError);
  // A layout beside the flags it replaces is refused, as Megatron-LM refuses it.
  CHECK_THROWS_WITH_AS(
      import_moe("--pipeline-model-parallel-layout 'Et*4|t*4L' --account-for-loss-in-pipeline-split"),
      doctest::Contains("Megatron-LM refuses it beside --num-layers-per-virtual-pipeline-stage"), InputError);
  // The virtual stages as a count (--num-virtual-stages-per-pipeline-rank): 8 layers, pp 2, 2 a rank.
  CHECK(import_moe("--num-virtual-stages-per-pipeline-rank 2").parallelism.virtual_stages == 2);
  // One replica past 1e8 GPUs is refused before any product overflows.
  CHECK_THROWS_WITH_AS(import_moe("--tensor-model-parallel-size 999983 --context-parallel-size 999979"),
                       doctest::Contains("one replica of this layout needs more than 100000000 GPUs"),
                       InputError);
}

TEST_CASE("DeepSeek-V3's Megatron-LM arguments import to its published 671B parameters") {
  // The arguments of Megatron-LM's DeepSeek-V3 recipes (examples/moe_recipes), without the MTP module:
  // MLA with its ranks, 3 dense first layers then 58 MoE layers, 256 experts and one shared expert of
  // width 2,048, the tokenizer's 128,815 entries padded to a multiple of 3,232 (129,280).
  const std::string deepseek =
      "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
      "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
      "--qk-pos-emb-head-dim 64 --v-head-dim 128 --qk-layernorm --num-experts 256 "
      "--moe-layer-freq ([0]*3+[1]*58) --moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
      "--moe-router-topk 8 --moe-router-num-groups 8 --moe-router-group-topk 4 --swiglu --normalization "
      "RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
      "--tokenizer-type HuggingFaceTokenizer --make-vocab-size-divisible-by 3232 --seq-length 4096 "
      "--expert-model-parallel-size 8 --global-batch-size 64\n";
  const Scenario s = load_scenario_text(
      import_megatron_args(deepseek, "deepseek.args", {.nodes = 1, .vocab_size = 128815}).yaml, "ds.yaml");
  CHECK(s.model.vocab == 129280);
  // 671,026,404,352 by hand (tests/models/workload/attention_projections_test.cpp): the published 671B.
  CHECK(model::parameter_count(s.model) == 671026404352.0);
}
