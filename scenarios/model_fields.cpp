#include "scenarios/model_fields.hpp"

#include <functional>
#include <optional>
#include <utility>

#include "scenarios/sliding_window_keys.hpp"

namespace trainsim::scenario {

namespace {

using M = model::TransformerSpec;

/// `row`, written only for a model `applies` holds for (the key means nothing otherwise, and its reader
/// refuses it or its value is left at "none").
Field<M> written_when(Field<M> row, std::function<bool(const M&)> applies) {
  row.text = [text = std::move(row.text), applies = std::move(applies)](const M& m) {
    return applies(m) ? text(m) : std::nullopt;
  };
  return row;
}

bool routed_by_capacity(const M& m) {
  return m.routing != model::Routing::dropless;
}

}  // namespace

const FieldTable<M>& model_fields() {
  static const FieldTable<M> kTable = [] {
    // layer_types is a list of layer-type names (sliding_window_keys.hpp), written with a window only.
    Field<M> layer_types = structured_field<M>(
        "layer_types", "list",
        "which layers are windowed: sliding_attention or full_attention, one per layer or a pattern that "
        "divides the layers; default every layer when sliding_window is set");
    layer_types.read = read_layer_types;
    layer_types.text = layer_types_to_yaml;
    // preset, hf_config and source: keys the reader accepts whose value it reads itself, before the table's
    // rows (or not at all), and the dump does not write.
    return FieldTable<M>{
        structured_field<M>("preset", "name",
                            "a model preset (`trainsim list models`) whose keys the others override"),
        info_only<M>(FieldInfo{.key = "hf_config",
                               .kind = FieldKind::text,
                               .help =
                                   "a HuggingFace config.json, relative to this file, whose keys the others "
                                   "override; not with preset"}),
        text_field("name", &M::name, "the model's name; default the preset's, or custom"),
        info_only<M>(FieldInfo{
            .key = "source", .kind = FieldKind::text, .help = "where the numbers come from; not read"}),
        required(count_field("layers", &M::layers, 1, 1e6, "transformer layers")),
        required(count_field("hidden", &M::hidden, 1, 1e7, "the model width")),
        required(count_field("heads", &M::heads, 1, 1e6, "attention (query) heads")),
        count_field("kv_heads", &M::kv_heads, 1, 1e6,
                    "key and value heads, dividing heads (grouped-query attention); default heads",
                    Written::unless_zero),
        count_field("head_dim", &M::head_dim, 1, 1e5, "the width of one head; default hidden / heads",
                    Written::unless_zero),
        count_field("ffn_hidden", &M::ffn_hidden, 1, 1e8, "the MLP's inner width; default 4 × hidden",
                    Written::unless_zero),
        required(count_field("vocab", &M::vocab, 1, 1e9, "the vocabulary's tokens")),
        required(count_field("seq_len", &M::seq_len, 1, 1e9, "tokens per sequence")),
        choice_field("mlp", &M::mlp, model::kMlpNames, "the MLP's activation; default gelu"),
        written_when(number_field("swiglu_limit", &M::swiglu_limit, 0.0, 1e6,
                                  "swiglu: the gate and up inputs clamped at it (GPT-OSS: 7); 0 (default): "
                                  "none"),
                     [](const M& m) { return m.swiglu_limit > 0; }),
        choice_field("norm", &M::norm, model::kNormNames, "the normalisation; default layernorm"),
        choice_field("position", &M::position, model::kPositionNames,
                     "the position embedding; default learned"),
        flag_field("bias", &M::bias, "linear layers carry biases; default true"),
        flag_field("tied_embeddings", &M::tied_embeddings,
                   "the output head shares the input embedding's weights; default false"),
        count_field("experts", &M::experts, 0, 1e6, "routed experts per MoE layer; 0 (default): dense"),
        count_field("top_k", &M::top_k, 0, 1e6, "experts each token is routed to, 1 to experts"),
        written_when(number_field("capacity_factor", &M::capacity_factor, 1e-3, 1e3,
                                  "force-balanced, capacity: each expert's input as a multiple of the "
                                  "mean; default 1"),
                     routed_by_capacity),
        written_when(choice_field("routing", &M::routing, model::kRoutingNames,
                                  "how the router spreads the token slots over the experts; default "
                                  "force-balanced"),
                     [](const M& m) { return m.routing != model::Routing::force_balanced; }),
        written_when(number_field("imbalance", &M::imbalance, 1.0, 1e3,
                                  "dropless: the busiest expert-parallel rank's slots over the mean; "
                                  "default 1"),
                     [](const M& m) { return !routed_by_capacity(m); }),
        count_field("expert_ffn_hidden", &M::expert_ffn_hidden, 0, 1e8,
                    "an expert's MLP width; 0 (default): ffn_hidden"),
        count_field("routing_groups", &M::routing_groups, 0, 1e6,
                    "group-limited routing: the experts' equal groups, dividing experts; 0 (default): none",
                    Written::unless_zero),
        count_field("routing_group_top_k", &M::routing_group_top_k, 0, 1e6,
                    "group-limited routing: the groups a token's experts come from, 1 to routing_groups and "
                    "at most top_k",
                    Written::unless_zero),
        count_field("shared_experts", &M::shared_experts, 0, 1e6,
                    "expert MLPs every token passes besides its top_k; default 0", Written::unless_zero),
        count_field("dense_layers", &M::dense_layers, 0, 1e6,
                    "the first layers, dense MLPs of ffn_hidden, fewer than layers; default 0",
                    Written::unless_zero),
        written_when(count_field("moe_layer_step", &M::moe_layer_step, 1, 1e6,
                                 "of the layers after the dense first ones every moe_layer_step-th is MoE, "
                                 "the others dense MLPs of ffn_hidden (Llama 4 Maverick: 2); default 1"),
                     [](const M& m) { return m.moe_layer_step != 1; }),
        count_field("mtp_layers", &M::mtp_layers, 0, 1e3,
                    "multi-token-prediction modules after the last layer; default 0", Written::unless_zero),
        written_when(count_field("q_lora_rank", &M::q_lora_rank, 0, 1e7,
                                 "MLA: the queries' low-rank width; 0 (default): projected from hidden",
                                 Written::unless_zero),
                     &M::is_mla),
        count_field("kv_lora_rank", &M::kv_lora_rank, 0, 1e7,
                    "multi-head latent attention: the keys' and values' low-rank width; 0 (default): off",
                    Written::unless_zero),
        written_when(count_field("qk_nope_head_dim", &M::qk_nope_head_dim, 0, 1e5,
                                 "MLA: a head's query and key width without rotary embedding (required "
                                 "with kv_lora_rank, at least 1)"),
                     &M::is_mla),
        written_when(count_field("qk_rope_head_dim", &M::qk_rope_head_dim, 0, 1e5,
                                 "MLA: a head's query and key width with rotary embedding (required with "
                                 "kv_lora_rank, at least 1)"),
                     &M::is_mla),
        written_when(count_field("v_head_dim", &M::v_head_dim, 0, 1e5,
                                 "MLA: a head's value width (required with kv_lora_rank, at least 1)"),
                     &M::is_mla),
        count_field("sliding_window", &M::sliding_window, 0, 1e9,
                    "tokens a windowed layer's query attends to, itself included; 0 (default): none",
                    Written::unless_zero),
        std::move(layer_types),
        written_when(flag_field("attention_sinks", &M::attention_sinks,
                                "a learned logit per head joins every layer's softmax; default false"),
                     [](const M& m) { return m.attention_sinks; }),
        written_when(flag_field("qk_norm", &M::qk_norm,
                                "an RMSNorm over each query and key head before the rotary embedding "
                                "(Qwen3, GLM-4.5); default false"),
                     [](const M& m) { return m.qk_norm; }),
        choice_field("attention", &M::attention, model::kAttentionNames,
                     "the attention kernel; flash (default): the framework's or the GPU's fused one"),
        flag_field("causal", &M::causal, "a causal mask; default true"),
        number_field("dropout", &M::dropout, 0.0, 0.99, "the dropout probability; default 0.1"),
    };
  }();
  return kTable;
}

std::string model_to_yaml(const M& m) {
  return "{" + flow_fields(model_fields(), m) + "}";
}

}  // namespace trainsim::scenario
