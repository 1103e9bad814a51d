#pragma once
// `trainsim import megatron ARGS`: a Megatron-LM argument list (pretrain_gpt.py's flags, as a launch
// script or a file of them) to a scenario, so a user starts from the run they already launch.
//
// The text is split as a shell would split a script's words: `#` comments, backslash line ends and bash
// array syntax (`NAME=(` … `)`) are dropped, quotes removed. Every `--flag` that decides the step's time,
// memory or length becomes a scenario key (the table in megatron_args.cpp); flags that decide nothing
// trainsim prices (learning rate, data paths, logging; a list of them in megatron_args.cpp) are listed, by
// name, in a comment of the output. Any other flag (a misspelt one would price another run) is an error
// naming the nearest known flag, unless `lenient`: then it is left out and listed too.
// A flag known to price something that this importer does not model (--offload-optimizer-states) is an
// error saying so, unless `lenient`: then it is left out and listed as unknown. A few flags whose effect is
// small or not modelled (--fp8-param-gather, the paged stash's capacity factor, per-layer CUDA graphs,
// FP8 blockwise scaling) are read and listed in a header comment of their own, `not_priced`.
// The text may also be a Megatron-LM recipe file (examples/moe_recipes: ARGS and ENV_VARS,
// megatron_recipe.hpp); a script's NAME=value words are its environment.
// MoE runs (--num-experts) read the dispatcher (--moe-token-dispatcher-type, its flex backend
// --moe-flex-dispatcher-backend: framework.moe_dispatcher; its SMs --moe-flex-dispatcher-num-sms or the
// deprecated --moe-deepep-num-sms / --moe-hybridep-num-sms: framework.moe_dispatcher_sms),
// --overlap-moe-expert-parallel-comm (framework.ep_comm_overlap), --delay-wgrad-compute
// (framework.delay_wgrad_compute), group-limited routing (--moe-router-num-groups and
// --moe-router-group-topk: model.routing_groups, routing_group_top_k) and the routing
// (--moe-router-force-load-balancing: force-balanced, padded to
// --moe-expert-capacity-factor only under --moe-pad-expert-input-to-capacity; a capacity factor: capacity;
// else dropless), where the experts are (--moe-layer-freq: model.dense_layers and moe_layer_step,
// megatron_patterns.hpp), the shared experts (--moe-shared-expert-intermediate-size, in expert widths),
// multi-head latent attention (--multi-latent-attention and its ranks, Megatron-LM's defaults where absent)
// and --qk-layernorm (model.qk_norm; under MLA the latents' norms, which MLA holds). The expert group is
// folded into the attention's ranks as Megatron-Core places it (parallelism.expert_folding, expert_tp from
// --expert-tensor-parallel-size). The step's CUDA graphs are whole (framework.cuda_graphs) under
// --cuda-graph-impl full_iteration or the full_iteration scope only; the fused grouped MLP needs
// --use-transformer-engine-op-fuser, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 and MXFP8 (--fp8-recipe mxfp8), with
// one rank an expert; --moe-paged-stash drops the layer's host wait
// (framework.moe_host_sync false). The pipeline split is --pipeline-model-parallel-layout's
// (parallelism.stage_layers), or the layers per virtual stage (or --num-virtual-stages-per-pipeline-rank)
// with --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split counting the
// embedding and the loss as a layer each; one replica takes at most 1e8 GPUs.
// Any run reads --recompute-modules under selective granularity (recompute: {modules}),
// --offload-modules under --fine-grained-activation-offloading (offload: {modules}), the Adam moments'
// --exp-avg-dtype and --exp-avg-sq-dtype under --use-precision-aware-optimizer (one state_precision:
// they must agree) and --mtp-num-layers (model.mtp_layers); a module or type trainsim does not model is
// an error listing those it does.
// Megatron's own defaults apply where a flag is absent: no sequence parallelism, no recompute, fp32, no
// distributed optimizer, the allgather dispatcher and dropless routing (transformer_config.py), fp32
// moments, no overlap (--overlap-grad-reduce, --overlap-param-gather and --tp-comm-overlap
// are off unless given), FFN 4·hidden (SwiGLU: 2/3 of it, rounded down to a multiple of 64), tied
// embeddings, learned positions, LayerNorm, biases, GPT-2 BPE vocabulary padded to a multiple of
// 128·tp (--make-vocab-size-divisible-by; another tokenizer's size is --vocab-size, in the list or as
// MegatronImportOptions::vocab_size).
//
// A flag given twice counts as its last value, as argparse reads it.
//
// Errors (InputError): an unknown flag (above), a flag that needs a value and has none, a value that is
// not a number where one is needed, a count outside [0, 1e12] (a parallel size outside [1, 1e6]) or a
// size, batch or length of 0 (Megatron-LM refuses them too), a model that the list does not size
// (--num-layers, --hidden-size, --num-attention-heads, --seq-length), and a vocabulary it does not give
// (another tokenizer without --vocab-size).
#include <string>
#include <vector>

namespace trainsim::scenario {

/// Where the imported run is placed: the cluster is not in Megatron's arguments (the launcher gives it).
struct MegatronImportOptions {
  std::string node = "dgx-h100";  ///< node preset
  int nodes = 0;                  ///< 0: the fewest nodes that hold one model replica
  int gpus_per_node = 0;          ///< GPUs of each node used (an NVL72 rack's 64); 0: the preset's
  bool lenient = false;           ///< unknown flags are left out and listed instead of refused
  long long vocab_size = 0;       ///< the tokenizer's vocabulary where the list gives none (0: required)
};

struct MegatronImport {
  std::string yaml;                        ///< the scenario, loadable as it is
  std::vector<std::string> ignored_flags;  ///< flags read and left out (they price nothing)
  std::vector<std::string> unknown_flags;  ///< flags not known, left out (lenient only)
  std::vector<std::string> not_priced;     ///< "flag (what it does)": read, its effect not priced
};

/// Splits a launch script or argument file into its words (comments, line continuations and bash array
/// brackets dropped, quotes removed).
[[nodiscard]] std::vector<std::string> shell_words(const std::string& text);

/// The scenario of a Megatron-LM argument list; `source` names it in the output's header comment.
[[nodiscard]] MegatronImport import_megatron_args(const std::string& text, const std::string& source,
                                                  const MegatronImportOptions& options);

}  // namespace trainsim::scenario
