#pragma once
// Megatron-LM's two pattern arguments, read as Megatron-LM reads them, for `trainsim import megatron`:
//  - --moe-layer-freq (megatron/training/arguments.py, moe_freq_type): an integer N puts experts on the
//    layers whose index is a multiple of N; a Python list expression ("([0]*3+[1]*58)", "([1]*3+[0]*2)*2",
//    "[0,1,0,1]") gives each layer's 1 (MoE) or 0 (dense).
//  - --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py,
//    parse_str_to_list): virtual stages split by '|', each a string of E (embedding), t (a decoder layer),
//    m (an MTP module) and L (the loss); "(...)*n" and "x*n" repeat, commas are cosmetic.
// Errors are InputError naming the flag and what it expected.
#include <cstdint>
#include <string_view>
#include <vector>

namespace trainsim::scenario {

/// Each layer's 1 (experts) or 0 (dense), `layers` of them, from --moe-layer-freq's text; more than a
/// million layers, or an expression whose repeats do more than a few million layers' worth of work, is
/// refused.
[[nodiscard]] std::vector<int> moe_layer_pattern(std::string_view text, std::int64_t layers);

/// The pattern as trainsim's model holds it: `dense_layers` dense first layers, then every
/// `moe_layer_step`-th layer a MoE layer (the step's last), the others dense
/// (model::TransformerSpec::dense_layers_in). An error when the pattern is not of that form.
struct MoeLayerSplit {
  std::int64_t dense_layers = 0;
  std::int64_t moe_layer_step = 1;
};
[[nodiscard]] MoeLayerSplit moe_layer_split(const std::vector<int>& pattern);

/// The decoder layers of each virtual stage (pp · virtual stages of them, in Megatron's order: stage k on
/// pipeline rank k mod pp) from --pipeline-model-parallel-layout. As Megatron-LM requires, the embedding is
/// the first layer symbol and the loss the last, each once; `layers` decoder layers and `mtp_layers` MTP
/// modules in all. A layout longer than 64 KiB, or one expanding past a million symbols, is refused.
[[nodiscard]] std::vector<int> layout_stage_layers(std::string_view layout, std::int64_t layers,
                                                   std::int64_t mtp_layers, std::int64_t pp);

}  // namespace trainsim::scenario
