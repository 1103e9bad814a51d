#pragma once
// `trainsim import nemo RECIPE.yaml`: a NeMo 2 recipe as NeMo-Run writes it to YAML (Hydra `_target_`
// syntax: `model.config`, `trainer.strategy`, `trainer.plugins`, `trainer.callbacks`, `data`, `optim`) to a
// scenario, so a user starts from the recipe they already run.
//
// What is read (NeMo's nemo/collections/llm/recipes/CONFIGURATION-HIERARCHY.md names every key):
//   model.config: `_target_` names the model (Llama 2/3/3.1, Mixtral, GPT-3 175B, DeepSeek-V3 configs map to
//     trainsim's presets); num_layers, hidden_size, num_attention_heads, num_query_groups, kv_channels,
//     ffn_hidden_size, seq_length, vocab_size, hidden_dropout, add_bias_linear, gated_linear_unit,
//     normalization, share_embeddings_and_output_weights, num_moe_experts, moe_router_topk,
//     moe_ffn_hidden_size override it (another class needs the first three); recompute_granularity and
//     enable_cuda_graph set the recompute and the framework's CUDA graphs;
//   trainer: num_nodes, devices (must be the node preset's GPUs), max_steps;
//   trainer.strategy: tensor/pipeline/virtual-pipeline/context/expert parallel sizes, sequence_parallel;
//     ddp: overlap_grad_reduce, overlap_param_gather, grad_reduce_in_fp32, data_parallel_sharding_strategy
//     (optim_grads_params: ZeRO-3, optim_grads: ZeRO-2, optim: ZeRO-1);
//   trainer.plugins (MegatronMixedPrecision): precision (bf16-mixed, 16-mixed, 32), fp8 (set: fp8 GEMMs),
//     grad_reduce_in_fp32;
//   trainer.callbacks: MegatronCommOverlapCallback's tp_comm_overlap, overlap_grad_reduce and
//     overlap_param_gather;
//   data: seq_length, micro_batch_size, global_batch_size; optim.config: optimizer,
//   use_distributed_optimizer.
// The scenario's framework is `nemo` with the recipe's overlap flags. NeMo's defaults apply where a key is
// absent (MegatronStrategy: every size 1, no sequence parallelism; DistributedDataParallelConfig: no
// overlap). Keys known to price nothing (logging, checkpoint callbacks, learning rates, data paths; the
// table in nemo_recipe.cpp) are listed, each by its key path, in the output's header. Any other key in a
// section read (a misspelt context_paralel_size would silently become cp 1) is an error naming the
// nearest known key, unless `lenient`: then it is left out and listed too.
//
// Errors (InputError, with file:line:col and the key path): a recipe without `model.config`, a model
// class that is neither mapped nor sized, a value of the wrong type, a section read that is not a mapping
// (trainer.strategy: auto), an unknown key (above), devices that are not the node's.
#include <string>
#include <vector>

namespace trainsim::scenario {

/// Where the imported run is placed: the recipe gives nodes and GPUs per node, not the node type.
struct NemoImportOptions {
  std::string node = "dgx-h100";  ///< node preset
  bool lenient = false;           ///< unknown keys are left out and listed instead of refused
};

struct NemoImport {
  std::string yaml;                   ///< the scenario, loadable as it is
  std::vector<std::string> left_out;  ///< every key path read and left out (unknown ones too when lenient)
  std::vector<std::string> unknown;   ///< key paths not known to the importer, left out (lenient only)
};

/// The scenario of a NeMo 2 recipe in YAML; `source` names it in errors and the output's header.
[[nodiscard]] NemoImport import_nemo_recipe(const std::string& text, const std::string& source,
                                            const NemoImportOptions& options);

}  // namespace trainsim::scenario
