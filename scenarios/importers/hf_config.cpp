#include "scenarios/importers/hf_config.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "scenarios/sliding_window_keys.hpp"
#include "sim/json_input.hpp"

namespace trainsim::scenario {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using sim::json_excerpt;

// Families whose decoder layer is the spec's: pre-norm RMSNorm, rotary positions, grouped-query attention
// without biases, a SwiGLU MLP or top-k routed SwiGLU experts, no shared expert; deepseek_v3: multi-head
// latent attention, shared experts beside the routed ones, dense first layers; gpt_oss: biases on every
// projection and expert, an attention sink per head, sliding-window layers named by layer_types; qwen3 and
// qwen3_moe: a norm over each query and key head (qk_norm).
constexpr std::array<std::string_view, 8> kFamilies{"llama", "mistral",   "mixtral",     "qwen2",
                                                    "qwen3", "qwen3_moe", "deepseek_v3", "gpt_oss"};

// Families people ask for whose structure the spec cannot hold yet, and why.
struct Unsupported {
  std::string_view family;
  std::string_view why;
};
constexpr std::array<Unsupported, 3> kUnsupported{{
    {"deepseek_v2", "its softmax-gated group-limited routing and its layer layout (not yet checked)"},
    {"qwen2_moe", "a shared expert beside the routed ones"},
    {"gemma3", "alternating sliding-window layers and GeGLU with a scaled embedding"},
}};

// Fields that do not change what a step costs: token ids, numerics, initialisation, rope frequencies,
// bookkeeping. Read nothing from them.
// DeepSeek-V3's routing details other than its groups (scores, scaling, auxiliary loss) are skipped too.
constexpr std::array<std::string_view, 30> kSkipped{"architectures",        "bos_token_id",
                                                    "eos_token_id",         "pad_token_id",
                                                    "torch_dtype",          "dtype",
                                                    "transformers_version", "initializer_range",
                                                    "rope_theta",           "rope_scaling",
                                                    "rms_norm_eps",         "use_cache",
                                                    "pretraining_tp",       "max_window_layers",
                                                    "_name_or_path",        "router_aux_loss_coef",
                                                    "output_router_logits", "norm_topk_prob",
                                                    "router_jitter_noise",  "tokenizer_class",
                                                    "model_type",           "use_sliding_window",
                                                    "topk_method",          "routed_scaling_factor",
                                                    "scoring_func",         "seq_aux",
                                                    "aux_loss_alpha",       "ep_size",
                                                    "quantization_config",  "auto_map"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

class ConfigReader {
 public:
  ConfigReader(Diagnostics& d, const YamlValue& at, std::string path, const json& config)
      : d_(d), at_(at), path_(std::move(path)), config_(config) {}

  void fail(std::string_view field, const std::string& message) {
    d_.add(at_, path_, std::string(field.empty() ? "" : "field \"" + std::string(field) + "\": ") + message);
  }

  /// A positive integer field of at most `max` (the bound the YAML key has); nullopt (with a diagnostic
  /// when `required`) when absent or null.
  std::optional<std::int64_t> count(std::string_view field, bool required, double max) {
    const auto it = config_.find(field);
    if (it == config_.end() || it->is_null()) {
      if (required) fail(field, "missing: it is needed to size the model");
      return std::nullopt;
    }
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 ||
        static_cast<double>(it->get<std::int64_t>()) > max) {
      fail(field, "expected a positive integer of at most " + std::to_string(static_cast<std::int64_t>(max)) +
                      ", found " + json_excerpt(*it));
      return std::nullopt;
    }
    return it->get<std::int64_t>();
  }

  /// The field is given and is not the integer 0 (count() then reads it, refusing what is not a count).
  [[nodiscard]] bool present_nonzero(std::string_view field) const {
    const auto it = config_.find(field);
    return it != config_.end() && !it->is_null() &&
           !(it->is_number_integer() && it->get<std::int64_t>() == 0);
  }

  std::optional<bool> flag(std::string_view field) {
    const auto it = config_.find(field);
    if (it == config_.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) {
      fail(field, "expected true or false, found " + json_excerpt(*it));
      return std::nullopt;
    }
    return it->get<bool>();
  }

 private:
  Diagnostics& d_;
  const YamlValue& at_;
  std::string path_;
  const json& config_;
};

// One count field of config.json and the model field it fills (0 when absent), read in the order given.
struct CountField {
  std::int64_t model::TransformerSpec::*field;
  std::string_view key;
  bool required;
  double max;
};

void read_counts(ConfigReader& r, model::TransformerSpec& m, std::initializer_list<CountField> fields) {
  for (const CountField& f : fields) m.*f.field = r.count(f.key, f.required, f.max).value_or(0);
}

// Fields the reader maps (besides the skipped ones).
constexpr std::array<std::string_view, 21> kMapped{"hidden_size",
                                                   "num_hidden_layers",
                                                   "num_attention_heads",
                                                   "num_key_value_heads",
                                                   "head_dim",
                                                   "intermediate_size",
                                                   "vocab_size",
                                                   "tie_word_embeddings",
                                                   "max_position_embeddings",
                                                   "hidden_act",
                                                   "attention_bias",
                                                   "mlp_bias",
                                                   "attention_dropout",
                                                   "num_local_experts",
                                                   "num_experts",
                                                   "num_experts_per_tok",
                                                   "moe_intermediate_size",
                                                   "decoder_sparse_step",
                                                   "mlp_only_layers",
                                                   "sliding_window",
                                                   "layer_types"};

// Fields mapped for deepseek_v3 only (refused in the other families' configs, where they would mean an
// architecture the reader does not take them for).
constexpr std::array<std::string_view, 12> kDeepSeekMapped{
    "n_routed_experts",         "n_shared_experts", "first_k_dense_replace",
    "moe_layer_freq",           "q_lora_rank",      "kv_lora_rank",
    "qk_nope_head_dim",         "qk_rope_head_dim", "v_head_dim",
    "num_nextn_predict_layers", "n_group",          "topk_group"};

// Fields of gpt_oss only that change no cost: experts_per_token repeats num_experts_per_tok,
// initial_context_length is the context before YaRN, swiglu_limit clamps the gated activation.
constexpr std::array<std::string_view, 3> kGptOssSkipped{"experts_per_token", "initial_context_length",
                                                         "swiglu_limit"};

// Sliding windows. gpt_oss: the window on the layers layer_types names sliding_attention (absent: every
// other layer from the first, transformers' GptOssConfig default); mistral and mixtral: on every layer (or as
// layer_types says) while use_sliding_window is not false. The window is kept whatever its length: one at
// least the scenario's seq_len long changes nothing (TransformerSpec::is_windowed), and a scenario may run
// longer than max_position_embeddings. Qwen's use_sliding_window (windows below max_window_layers) is
// refused.
void read_sliding_window(ConfigReader& r, const json& config, const std::string& family,
                         model::TransformerSpec& m) {
  const bool qwen = family.rfind("qwen", 0) == 0;
  const bool window_on = r.flag("use_sliding_window").value_or(!qwen);
  const auto w = config.find("sliding_window");
  const std::int64_t window =
      window_on && w != config.end() && !w->is_null() ? r.count("sliding_window", false, 1e9).value_or(0) : 0;
  if (window > 0) {
    if (qwen) {
      r.fail("use_sliding_window", "Qwen's sliding window (below max_window_layers) is not modelled");
    }
    m.sliding_window = window;
  }
  const auto types = config.find("layer_types");
  if (types == config.end() || types->is_null()) {
    if (family == "gpt_oss" && m.sliding_window > 0) {
      m.window_layers.assign(static_cast<std::size_t>(std::max<std::int64_t>(m.layers, 0)), false);
      for (std::size_t i = 0; i < m.window_layers.size(); i += 2) m.window_layers[i] = true;
    }
    return;
  }
  if (!types->is_array()) {
    r.fail("layer_types", "expected a list of layer types, found " + json_excerpt(*types));
    return;
  }
  std::vector<bool> pattern;
  for (const json& t : *types) {
    const auto windowed = t.is_string() ? layer_type_is_windowed(t.get<std::string>()) : std::nullopt;
    if (!windowed) {
      r.fail("layer_types", "layers of kind " + json_excerpt(t) + " are not modelled (" +
                                std::string(kSlidingLayerType) + " | " + std::string(kFullLayerType) + ")");
      return;
    }
    pattern.push_back(*windowed);
  }
  if (static_cast<std::int64_t>(pattern.size()) != m.layers) {
    r.fail("layer_types", "expected one entry per layer (" + std::to_string(m.layers) + "), found " +
                              std::to_string(pattern.size()));
    return;
  }
  const bool any_windowed = std::find(pattern.begin(), pattern.end(), true) != pattern.end();
  if (any_windowed && window == 0) {
    r.fail("layer_types", "names sliding_attention layers but the config gives no sliding_window in use");
  }
  if (m.sliding_window > 0) m.window_layers = std::move(pattern);
}

// DeepSeek-V3's multi-head latent attention, shared experts and dense first layers (its config.json:
// q_lora_rank may be null for no query compression, as in DeepSeek-V2-Lite; moe_layer_freq 1 puts experts
// on every layer after the first first_k_dense_replace).
void read_deepseek_v3(ConfigReader& r, model::TransformerSpec& m) {
  using T = model::TransformerSpec;
  read_counts(r, m,
              {{&T::q_lora_rank, "q_lora_rank", false, 1e7},
               {&T::kv_lora_rank, "kv_lora_rank", true, 1e7},
               {&T::qk_nope_head_dim, "qk_nope_head_dim", true, 1e5},
               {&T::qk_rope_head_dim, "qk_rope_head_dim", true, 1e5},
               {&T::v_head_dim, "v_head_dim", true, 1e5}});
  // 0 (or absent): no shared expert, no dense first layer.
  for (const CountField& f : {CountField{&T::shared_experts, "n_shared_experts", false, 1e6},
                              CountField{&T::dense_layers, "first_k_dense_replace", false, 1e6}}) {
    if (r.present_nonzero(f.key)) m.*f.field = r.count(f.key, f.required, f.max).value_or(0);
  }
  // Node-limited routing (n_group groups of experts, a token's from topk_group of them); 1 group: none.
  if (const std::int64_t groups = r.count("n_group", false, 1e6).value_or(1); groups > 1) {
    m.routing_groups = groups;
    m.routing_group_top_k = r.count("topk_group", true, 1e6).value_or(0);
  }
  // Multi-token-prediction modules (DeepSeek-V3: 1; the published 671B leave it out, the hub's 685B count
  // it with its copies of the embedding and the head); 0 or absent: none.
  if (r.present_nonzero("num_nextn_predict_layers")) {
    m.mtp_layers = r.count("num_nextn_predict_layers", false, 1e3).value_or(0);
  }
  if (r.count("moe_layer_freq", false, 1e6).value_or(1) != 1) {
    r.fail("moe_layer_freq",
           "experts on every layer after the dense first ones only: other layouts are "
           "not modelled");
  }
  if (m.dense_layers >= m.layers && m.layers > 0) {
    r.fail("first_k_dense_replace",
           "must be fewer than num_hidden_layers (" + std::to_string(m.layers) + ")");
  }
}

// gpt_oss: biases on the attention projections (attention_bias) and on every expert's projections (always),
// a learned sink logit per head in every layer's softmax, and the experts' SwiGLU clamped at swiglu_limit.
void read_gpt_oss(ConfigReader& r, const json& config, model::TransformerSpec& m) {
  m.bias = r.flag("attention_bias").value_or(false);
  m.attention_sinks = true;
  if (!m.bias) r.fail("attention_bias", "gpt_oss without attention biases is not a released shape");
  // The experts' SwiGLU clamps its gate and up inputs at swiglu_limit (7.0 in the released configs).
  if (const auto limit = config.find("swiglu_limit"); limit != config.end() && !limit->is_null()) {
    if (!limit->is_number() || limit->get<double>() <= 0) {
      r.fail("swiglu_limit", "expected a positive number, found " + json_excerpt(*limit));
    } else {
      m.swiglu_limit = limit->get<double>();
    }
  }
}

}  // namespace

std::optional<model::TransformerSpec> read_hf_config(Diagnostics& d, const YamlValue& at,
                                                     const std::string& path, const std::string& file) {
  fs::path where(file);
  if (where.is_relative() && at.file && !at.file->empty()) where = fs::path(*at.file).parent_path() / where;
  const auto text = read_text_file(where.string(), d);
  if (!text) return std::nullopt;
  return read_hf_config_text(d, at, path, *text, where.string(), file);
}

std::optional<model::TransformerSpec> read_hf_config_text(Diagnostics& d, const YamlValue& at,
                                                          const std::string& path, const std::string& text,
                                                          const std::string& label, const std::string& file) {
  const std::size_t before = d.size();
  json config;
  try {
    config = sim::parse_json_input(text, label);
  } catch (const InputError& e) {
    d.add(at, path, e.what());
    return std::nullopt;
  }
  if (!config.is_object()) {
    d.add(at, path, label + ": expected a JSON object (a HuggingFace config.json)");
    return std::nullopt;
  }
  ConfigReader r(d, at, path, config);
  const auto type = config.find("model_type");
  if (type == config.end() || !type->is_string()) {
    r.fail("model_type", "missing: it names the architecture (e.g. \"llama\")");
    return std::nullopt;
  }
  const std::string family = type->get<std::string>();
  for (const Unsupported& u : kUnsupported) {
    if (family == u.family) {
      r.fail("model_type", "\"" + sim::escaped_excerpt(family) +
                               "\" is not read: the model spec cannot yet express " + std::string(u.why));
      return std::nullopt;
    }
  }
  if (!listed(kFamilies, family)) {
    r.fail("model_type", "\"" + sim::escaped_excerpt(family) +
                             "\" is not a family this reader knows (llama, mistral, mixtral, "
                             "qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss)");
    return std::nullopt;
  }
  for (const auto& [key, value] : config.items()) {
    const bool deepseek = family == "deepseek_v3" && listed(kDeepSeekMapped, key);
    const bool gpt_oss = family == "gpt_oss" && listed(kGptOssSkipped, key);
    if (!listed(kMapped, key) && !listed(kSkipped, key) && !deepseek && !gpt_oss) {
      r.fail(sim::escaped_excerpt(key),
             "not a field this reader knows for " + family +
                 "; it may change the architecture, so the config is refused rather than misread");
    }
  }

  model::TransformerSpec m;
  // config.json is named by its folder (a downloaded model), any other file by its stem.
  const fs::path named(file);
  m.name =
      named.filename() == "config.json" ? named.parent_path().filename().string() : named.stem().string();
  if (m.name.empty()) m.name = "hf-config";
  m.mlp = model::Mlp::swiglu;
  m.norm = model::Norm::rmsnorm;
  m.position = model::Position::rope;
  m.bias = false;
  m.dropout = 0.0;
  using T = model::TransformerSpec;
  read_counts(r, m,
              {{&T::layers, "num_hidden_layers", true, 1e6},
               {&T::hidden, "hidden_size", true, 1e7},
               {&T::heads, "num_attention_heads", true, 1e6},
               {&T::kv_heads, "num_key_value_heads", false, 1e6},
               {&T::head_dim, "head_dim", false, 1e5},
               {&T::ffn_hidden, "intermediate_size", true, 1e8},
               {&T::vocab, "vocab_size", true, 1e9},
               {&T::seq_len, "max_position_embeddings", true, 1e9}});
  m.tied_embeddings = r.flag("tie_word_embeddings").value_or(false);
  if (const auto act = config.find("hidden_act"); act != config.end() && *act != "silu" && *act != "swish") {
    r.fail("hidden_act",
           "expected \"silu\" (the gated SwiGLU MLP of these families), found " + json_excerpt(*act));
  }
  // Qwen3's attention normalises each query and key head (transformers' Qwen3Attention.q_norm, k_norm),
  // with no config key to say so.
  m.qk_norm = family == "qwen3" || family == "qwen3_moe";
  if (family == "gpt_oss") {
    read_gpt_oss(r, config, m);
  } else {
    for (const std::string_view bias : {"attention_bias", "mlp_bias"}) {
      if (r.flag(bias).value_or(false)) r.fail(bias, "biases on some projections only are not modelled");
    }
  }
  if (const auto p = config.find("attention_dropout"); p != config.end() && !p->is_null()) {
    if (!p->is_number() || p->get<double>() < 0 || p->get<double>() >= 1) {
      r.fail("attention_dropout", "expected a probability in [0, 1), found " + json_excerpt(*p));
    } else {
      m.dropout = p->get<double>();
    }
  }
  read_sliding_window(r, config, family, m);
  const bool local_experts = family == "mixtral" || family == "gpt_oss";
  const std::optional<std::int64_t> experts = local_experts ? r.count("num_local_experts", true, 1e6)
                                              : family == "qwen3_moe" ? r.count("num_experts", true, 1e6)
                                              : family == "deepseek_v3"
                                                  ? r.count("n_routed_experts", true, 1e6)
                                                  : std::nullopt;
  if (family == "deepseek_v3") read_deepseek_v3(r, m);
  if (experts) {
    m.experts = *experts;
    m.top_k = r.count("num_experts_per_tok", true, 1e6).value_or(0);
    m.expert_ffn_hidden = r.count("moe_intermediate_size", false, 1e8).value_or(0);
    m.capacity_factor = 1.0;  // dropless routing (Mixtral, Qwen3-MoE): every token reaches its top-k
    if (r.count("decoder_sparse_step", false, 1e6).value_or(1) != 1) {
      r.fail("decoder_sparse_step",
             "experts on every layer only: dense layers between MoE layers are not modelled");
    }
    if (const auto dense = config.find("mlp_only_layers");
        dense != config.end() && dense->is_array() && !dense->empty()) {
      r.fail("mlp_only_layers", "dense layers among the MoE layers are not modelled");
    }
  }
  if (d.size() != before) return std::nullopt;
  return m;
}

}  // namespace trainsim::scenario
