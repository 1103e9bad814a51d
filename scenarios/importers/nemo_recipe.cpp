#include "scenarios/importers/nemo_recipe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/importers/import_comment.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/yaml_tree.hpp"
#include "sim/error.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::scenario {

namespace {

// NeMo's model config classes (nemo/collections/llm/gpt/model/*.py) whose architecture a shipped model
// preset holds. Llama 3.1 8B and 70B differ from Llama 3 only in their RoPE scaling.
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kModelPresets{{
    {"Llama2Config7B", "llama2-7b"},
    {"Llama2Config13B", "llama2-13b"},
    {"Llama2Config70B", "llama2-70b"},
    {"Llama3Config8B", "llama3-8b"},
    {"Llama3Config70B", "llama3-70b"},
    {"Llama31Config8B", "llama3-8b"},
    {"Llama31Config70B", "llama3-70b"},
    {"Llama31Config405B", "llama3-405b"},
    {"MixtralConfig8x7B", "mixtral-8x7b"},
    {"GPTConfig175B", "gpt3-175b"},
    {"DeepSeekV3Config", "deepseek-v3"},
}};

// Every mapping the importer reads, with the keys it maps (`read`; a nested mapping of this table is read
// too) and the keys NeMo, Megatron-Core or Lightning define there that price nothing (`unpriced`: learning
// rates, fusions that change no kernel count, data paths, checkpointing, logging). Keys starting with '_'
// (Hydra's _target_, _partial_, _call_) are structure. Anything else is unknown: a misspelt key would
// silently take NeMo's default (context_paralel_size: cp 1), so it is refused unless lenient.
struct Section {
  std::string_view path;
  std::vector<std::string_view> read;
  std::vector<std::string_view> unpriced;
};

const std::vector<Section>& sections() {
  static const std::vector<Section> kSections{
      {"", {"model", "trainer", "data", "optim"}, {"log", "resume", "tokenizer", "peft"}},
      {"model", {"config"}, {"tokenizer", "model_transform", "optim"}},
      {"model.config",
       {"num_layers",
        "hidden_size",
        "num_attention_heads",
        "num_query_groups",
        "kv_channels",
        "ffn_hidden_size",
        "vocab_size",
        "num_moe_experts",
        "moe_router_topk",
        "moe_ffn_hidden_size",
        "hidden_dropout",
        "add_bias_linear",
        "gated_linear_unit",
        "share_embeddings_and_output_weights",
        "normalization",
        "seq_length",
        "recompute_granularity",
        "recompute_method",
        "recompute_num_layers",
        "enable_cuda_graph"},
       {"cross_entropy_fusion_impl",
        "cross_entropy_loss_fusion",
        "init_method_std",
        "layernorm_epsilon",
        "rotary_base",
        "rotary_percent",
        "seq_len_interpolation_factor",
        "make_vocab_size_divisible_by",
        "attention_dropout",
        "apply_rope_fusion",
        "bias_activation_fusion",
        "bias_dropout_fusion",
        "masked_softmax_fusion",
        "persist_layer_norm",
        "gradient_accumulation_fusion",
        "scale_factor",
        "low_freq_factor",
        "high_freq_factor",
        "old_context_len",
        "moe_aux_loss_coeff",
        "moe_router_load_balancing_type",
        "moe_z_loss_coeff",
        "attention_softmax_in_fp32",
        "apply_query_key_layer_scaling",
        "fp16_lm_cross_entropy"}},
      {"trainer",
       {"num_nodes", "devices", "max_steps", "strategy", "plugins", "callbacks"},
       {"accelerator", "limit_val_batches", "limit_test_batches", "val_check_interval", "log_every_n_steps",
        "use_distributed_sampler", "max_epochs", "num_sanity_val_steps", "enable_checkpointing", "logger",
        "gradient_clip_val", "accumulate_grad_batches", "benchmark", "deterministic", "enable_progress_bar",
        "enable_model_summary"}},
      {"trainer.strategy",
       {"tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
        "context_parallel_size", "expert_model_parallel_size", "sequence_parallel", "ddp"},
       {"pipeline_dtype", "gradient_as_bucket_view", "ckpt_async_save", "ckpt_parallel_load",
        "ckpt_include_optimizer", "ckpt_load_optimizer", "save_ckpt_format", "ckpt_parallel_save",
        "ckpt_parallel_save_optim", "ckpt_load_strictness", "ckpt_load_directly_on_device",
        "use_te_rng_tracker", "progress_interval", "setup_optimizers", "init_model_parallel",
        "replace_progress_bar"}},
      {"trainer.strategy.ddp",
       {"overlap_grad_reduce", "overlap_param_gather", "grad_reduce_in_fp32",
        "data_parallel_sharding_strategy"},
       {"check_for_nan_in_grad", "bucket_size", "average_in_collective", "use_distributed_optimizer",
        "align_param_gather", "num_distributed_optimizer_instances"}},
      {"trainer.plugins",
       {"precision", "fp8", "grad_reduce_in_fp32"},
       {"fp8_recipe", "params_dtype", "pipeline_dtype", "autocast_enabled", "fp8_margin",
        "fp8_amax_history_len", "fp8_amax_compute_algo", "fp8_param_gather", "fp8_wgrad",
        "fp8_dot_product_attention", "fp8_multi_head_attention", "first_last_layers_bf16",
        "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16"}},
      {"data",
       {"seq_length", "micro_batch_size", "global_batch_size"},
       {"paths",
        "weights",
        "tokenizer",
        "num_workers",
        "pin_memory",
        "persistent_workers",
        "split",
        "index_mapping_dir",
        "seed",
        "reset_position_ids",
        "reset_attention_mask",
        "eod_mask_loss",
        "num_dataset_builder_threads",
        "create_attention_mask",
        "dataset_kwargs",
        "rampup_batch_size",
        "num_train_samples",
        "num_val_samples",
        "num_test_samples",
        "mmap_bin_files"}},
      {"optim", {"config"}, {"lr_scheduler"}},
      {"optim.config",
       {"optimizer", "use_distributed_optimizer"},
       {"lr", "min_lr", "bf16", "fp16", "params_dtype", "weight_decay", "adam_beta1", "adam_beta2",
        "adam_eps", "clip_grad", "sgd_momentum", "loss_scale", "initial_loss_scale", "min_loss_scale",
        "loss_scale_window", "hysteresis", "overlap_param_gather_with_optimizer_step",
        "use_precision_aware_optimizer", "decoupled_weight_decay"}},
  };
  return kSections;
}

// MegatronCommOverlapCallback's keys: read, and priced nothing.
const Section kCommOverlapCallback{
    "",
    {"tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather"},
    {"overlap_param_gather_with_optimizer_step", "tp_comm_overlap_cfg", "tp_comm_bootstrap_backend",
     "overlap_p2p_comm", "batch_p2p_comm", "bucket_size", "defer_embedding_wgrad_compute",
     "wgrad_deferral_limit", "align_param_gather"}};

bool contains(const std::vector<std::string_view>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// A recipe read key by key: absent and null values are "not given"; a wrong type is a diagnostic at the
// value's place, naming its key path.
class Recipe {
 public:
  Recipe(const YamlValue& root, Diagnostics& d) : root_(root), d_(d) {}

  /// The node at a dotted path ("trainer.strategy.ddp"), nullptr when a step is absent or null.
  [[nodiscard]] const YamlValue* at(std::string_view path) const {
    const YamlValue* v = &root_;
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t dot = path.find('.', start);
      const std::string_view key =
          path.substr(start, dot == std::string_view::npos ? path.npos : dot - start);
      if (!v->is_mapping()) return nullptr;
      v = v->find(key);
      if (v == nullptr || is_null(*v)) return nullptr;
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    return v;
  }

  std::optional<std::int64_t> count(std::string_view path, double min = 1, double max = 1e9) {
    const YamlValue* v = at(path);
    return v != nullptr ? read_count(d_, *v, std::string(path), min, max) : std::nullopt;
  }
  std::optional<double> number(std::string_view path, double min, double max) {
    const YamlValue* v = at(path);
    return v != nullptr ? read_number(d_, *v, std::string(path), min, max) : std::nullopt;
  }
  std::optional<bool> boolean(std::string_view path) {
    const YamlValue* v = at(path);
    return v != nullptr ? read_bool(d_, *v, std::string(path)) : std::nullopt;
  }
  std::optional<std::string> text(std::string_view path) {
    const YamlValue* v = at(path);
    return v != nullptr ? read_string(d_, *v, std::string(path)) : std::nullopt;
  }
  Diagnostics& diagnostics() { return d_; }

 private:
  static bool is_null(const YamlValue& v) {
    return v.kind == YamlValue::Kind::null ||
           (v.is_scalar() && !v.quoted && (v.scalar == "null" || v.scalar == "~" || v.scalar.empty()));
  }
  const YamlValue& root_;
  Diagnostics& d_;
};

// The class name of a `_target_` ("nemo.collections.llm.gpt.model.llama.Llama3Config8B" → "Llama3Config8B").
std::string class_name(const std::string& target) {
  const auto dot = target.rfind('.');
  return dot == std::string::npos ? target : target.substr(dot + 1);
}

std::string yes_no(bool b) {
  return b ? "true" : "false";
}

/// The keys left out that are known to price nothing (left_out without the unknown ones).
std::vector<std::string> known_left_out(const NemoImport& out) {
  std::vector<std::string> known;
  for (const std::string& k : out.left_out) {
    if (std::find(out.unknown.begin(), out.unknown.end(), k) == out.unknown.end()) known.push_back(k);
  }
  return known;
}

/// Sorts every key of the mapping `v` at `path` against `section`: read keys pass, unpriced ones go to
/// `left_out`, unknown ones are an error with the nearest known key (lenient: to `unknown` and `left_out`).
void check_keys(const YamlValue& v, const std::string& path, const Section& section, bool lenient,
                Diagnostics& d, NemoImport& out) {
  const std::string prefix = path.empty() ? "" : path + ".";
  for (const YamlEntry& e : v.entries) {
    if (e.key.starts_with('_') || contains(section.read, e.key)) continue;
    const std::string key_path = prefix + sim::escaped_excerpt(e.key, 100);
    if (contains(section.unpriced, e.key)) {
      out.left_out.push_back(key_path);
      continue;
    }
    if (lenient) {
      out.unknown.push_back(key_path);
      out.left_out.push_back(key_path);
      continue;
    }
    std::vector<std::string> known(section.read.begin(), section.read.end());
    known.insert(known.end(), section.unpriced.begin(), section.unpriced.end());
    const std::string near = closest_match(e.key, known);
    d.add(e.value, key_path,
          "not a key this importer knows" + (near.empty() ? std::string() : " (did you mean " + near + "?)") +
              "; give --lenient to import the rest and list the keys left out");
  }
}

/// Every mapping of sections() present in the recipe checked; one that is there and not a mapping is an
/// error (a strategy given as a string would otherwise import NeMo's defaults).
void check_recipe_keys(const Recipe& r, const YamlValue& root, bool lenient, Diagnostics& d,
                       NemoImport& out) {
  for (const Section& section : sections()) {
    const YamlValue* v = section.path.empty() ? &root : r.at(section.path);
    if (v == nullptr) continue;
    if (!v->is_mapping()) {
      d.add(*v, std::string(section.path),
            "expected a mapping (its keys: " + std::string(section.read.front()) + ", ...), found " +
                (v->is_scalar() ? "\"" + sim::escaped_excerpt(v->scalar) + "\"" : std::string("a list")));
      continue;
    }
    check_keys(*v, std::string(section.path), section, lenient, d, out);
  }
  const YamlValue* callbacks = r.at("trainer.callbacks");
  if (callbacks == nullptr) return;
  if (!callbacks->is_sequence()) {
    d.add(*callbacks, "trainer.callbacks", "expected a list of callbacks");
    return;
  }
  for (std::size_t i = 0; i < callbacks->items.size(); ++i) {
    const YamlValue& cb = callbacks->items[i];
    const std::string path = fmt::format("trainer.callbacks[{}]", i);
    const YamlValue* t = cb.is_mapping() ? cb.find("_target_") : nullptr;
    const std::string cls = t != nullptr && t->is_scalar() ? class_name(t->scalar) : "";
    if (cls == "MegatronCommOverlapCallback") {
      check_keys(cb, path, kCommOverlapCallback, lenient, d, out);
    } else {
      out.left_out.push_back(path + (cls.empty() ? "" : " (" + sim::escaped_excerpt(cls) + ")"));
    }
  }
}

/// Megatron's recompute_method and recompute_num_layers under full granularity: uniform chunks of one layer
/// recompute every layer from its input, what `recompute: full` prices; a block of N layers per stage, or
/// chunks of several layers, keep other activations than that and are refused, naming the key. Without full
/// granularity Megatron-Core refuses them (TransformerConfig: a recompute method needs full granularity).
void read_recompute_method(Recipe& r, const std::string& granularity) {
  Diagnostics& d = r.diagnostics();
  const std::optional<std::string> method = r.text("model.config.recompute_method");
  const std::optional<std::int64_t> layers = r.count("model.config.recompute_num_layers");
  if (!method && !layers) return;
  const std::string key = method ? "model.config.recompute_method" : "model.config.recompute_num_layers";
  if (granularity != "full") {
    d.add(*r.at(key), key,
          "needs recompute_granularity: full (Megatron-Core uses it with full granularity only)");
  } else if (method && *method != "uniform" && *method != "block") {
    d.add(*r.at(key), key, "expected uniform or block, got \"" + *method + "\"");
  } else if (method.value_or("uniform") != "uniform" || layers.value_or(1) != 1) {
    d.add(
        *r.at(key), key,
        "only uniform chunks of one layer (recompute_num_layers: 1), every layer recomputed from its input, "
        "are what recompute: full prices; a block of layers, or chunks of several, is not modelled");
  }
}

/// The scenario's model block ("key: value" entries) and recompute, from model.config and data: a mapped
/// NeMo config class is a preset and every recipe key overrides it.
struct NemoModel {
  std::vector<std::string> entries;
  std::string target;  ///< model.config._target_
  std::string cls;     ///< its class name
  std::string recompute = "none";
};

NemoModel read_model(Recipe& r, const YamlValue& config) {
  Diagnostics& d = r.diagnostics();
  NemoModel out;
  std::vector<std::string>& model = out.entries;
  out.target = r.text("model.config._target_").value_or("");
  out.cls = class_name(out.target);
  std::optional<std::string_view> preset;
  for (const auto& [name, p] : kModelPresets) {
    if (name == out.cls) preset = p;
  }
  if (preset) {
    model.push_back(fmt::format("preset: {}", *preset));
  } else {
    // Without a preset the recipe must size the model; the vocabulary is otherwise only the tokenizer's.
    const YamlValue* at = r.at("model.config._target_");
    for (const char* key : {"num_layers", "hidden_size", "num_attention_heads", "vocab_size"}) {
      if (r.at(std::string("model.config.") + key) == nullptr) {
        d.add(at != nullptr ? *at : config, std::string("model.config.") + key,
              fmt::format("missing: {} has no trainsim preset; give num_layers, hidden_size, "
                          "num_attention_heads and vocab_size",
                          out.cls.empty() ? "the model config" : out.cls));
      }
    }
    // The keys absent fall back to GPTConfig's defaults. A subclass (Llama32Config1B, ...) sets its own,
    // which the importer does not know: it must give those that shape the model.
    if (!out.cls.empty() && out.cls != "GPTConfig") {
      std::vector<std::string> missing;
      for (const char* key : {"gated_linear_unit", "normalization", "add_bias_linear", "num_query_groups",
                              "share_embeddings_and_output_weights", "hidden_dropout"}) {
        if (r.at(std::string("model.config.") + key) == nullptr) missing.emplace_back(key);
      }
      if (!missing.empty()) {
        d.add(at != nullptr ? *at : config, "model.config." + missing.front(),
              fmt::format("missing: {} has no trainsim preset and sets its own defaults, which the importer "
                          "does not read; give {}",
                          out.cls, fmt::join(missing, ", ")));
      }
    }
    d.throw_if_any();
  }
  auto field = [&](std::string_view key, std::string_view recipe_key) {
    if (auto v = r.count(fmt::format("model.config.{}", recipe_key), 0, 1e9))
      model.push_back(fmt::format("{}: {}", key, *v));
  };
  field("layers", "num_layers");
  field("hidden", "hidden_size");
  field("heads", "num_attention_heads");
  field("kv_heads", "num_query_groups");
  field("head_dim", "kv_channels");
  field("ffn_hidden", "ffn_hidden_size");
  field("vocab", "vocab_size");
  field("experts", "num_moe_experts");
  field("top_k", "moe_router_topk");
  field("expert_ffn_hidden", "moe_ffn_hidden_size");
  if (auto v = r.number("model.config.hidden_dropout", 0, 1)) model.push_back(fmt::format("dropout: {}", *v));
  if (auto v = r.boolean("model.config.add_bias_linear")) model.push_back("bias: " + yes_no(*v));
  if (auto v = r.boolean("model.config.gated_linear_unit"))
    model.push_back(std::string("mlp: ") + (*v ? "swiglu" : "gelu"));
  if (auto v = r.boolean("model.config.share_embeddings_and_output_weights"))
    model.push_back("tied_embeddings: " + yes_no(*v));
  if (auto v = r.text("model.config.normalization")) {
    if (*v != "LayerNorm" && *v != "RMSNorm") {
      d.add(*r.at("model.config.normalization"), "model.config.normalization",
            "expected LayerNorm or RMSNorm, got \"" + *v + "\"");
    } else {
      model.push_back(std::string("norm: ") + (*v == "RMSNorm" ? "rmsnorm" : "layernorm"));
    }
  }
  const std::optional<std::int64_t> seq = r.count("data.seq_length");
  const std::optional<std::int64_t> model_seq = r.count("model.config.seq_length");
  if (seq || model_seq) model.push_back(fmt::format("seq_len: {}", seq ? *seq : *model_seq));

  if (auto g = r.text("model.config.recompute_granularity")) {
    if (*g != "full" && *g != "selective") {
      d.add(*r.at("model.config.recompute_granularity"), "model.config.recompute_granularity",
            "expected full or selective, got \"" + *g + "\"");
    } else {
      out.recompute = *g;
    }
  }
  read_recompute_method(r, out.recompute);
  return out;
}

/// The cluster and the layout (MegatronStrategy's defaults: every size 1), the ZeRO stage and the overlap
/// flags.
struct NemoLayout {
  std::int64_t nodes = 1, tp = 1, pp = 1, cp = 1, ep = 1, vp = 0;
  bool sp = false;
  int zero = 0;
  bool overlap_grad_reduce = false, overlap_param_gather = false, tp_comm_overlap = false;
};

NemoLayout read_layout(Recipe& r, const NemoImportOptions& options) {
  Diagnostics& d = r.diagnostics();
  NemoLayout l;
  const topo::NodeSpec node = node_preset(options.node);
  l.nodes = r.count("trainer.num_nodes").value_or(1);
  if (auto devices = r.count("trainer.devices"); devices && *devices != node.gpus_per_node) {
    d.add(*r.at("trainer.devices"), "trainer.devices",
          fmt::format("{} GPUs per node, but node preset {} has {} (choose another with --node)", *devices,
                      options.node, node.gpus_per_node));
  }
  l.tp = r.count("trainer.strategy.tensor_model_parallel_size").value_or(1);
  l.pp = r.count("trainer.strategy.pipeline_model_parallel_size").value_or(1);
  l.cp = r.count("trainer.strategy.context_parallel_size").value_or(1);
  l.ep = r.count("trainer.strategy.expert_model_parallel_size").value_or(1);
  l.vp = r.count("trainer.strategy.virtual_pipeline_model_parallel_size").value_or(0);
  if (l.vp > 1 && l.pp == 1) {  // Megatron-Core refuses it: virtual stages need a pipeline
    const std::string key = "trainer.strategy.virtual_pipeline_model_parallel_size";
    r.diagnostics().add(*r.at(key), key, "needs pipeline_model_parallel_size above 1");
  }
  l.sp = r.boolean("trainer.strategy.sequence_parallel").value_or(false);

  l.zero = r.boolean("optim.config.use_distributed_optimizer").value_or(false) ? 1 : 0;
  if (auto s = r.text("trainer.strategy.ddp.data_parallel_sharding_strategy")) {
    if (*s == "optim_grads_params") {
      l.zero = 3;
    } else if (*s == "optim_grads") {
      l.zero = 2;
    } else if (*s == "optim") {
      l.zero = std::max(l.zero, 1);
    } else if (*s != "no_shard") {
      d.add(*r.at("trainer.strategy.ddp.data_parallel_sharding_strategy"),
            "trainer.strategy.ddp.data_parallel_sharding_strategy",
            "expected no_shard, optim, optim_grads or optim_grads_params, got \"" + *s + "\"");
    }
  }

  // Overlap flags: the strategy's DDP config, then MegatronCommOverlapCallback's, which NeMo applies last.
  l.overlap_grad_reduce = r.boolean("trainer.strategy.ddp.overlap_grad_reduce").value_or(false);
  l.overlap_param_gather = r.boolean("trainer.strategy.ddp.overlap_param_gather").value_or(false);
  if (const YamlValue* callbacks = r.at("trainer.callbacks");
      callbacks != nullptr && callbacks->is_sequence()) {
    for (std::size_t i = 0; i < callbacks->items.size(); ++i) {
      const YamlValue& cb = callbacks->items[i];
      const YamlValue* t = cb.is_mapping() ? cb.find("_target_") : nullptr;
      if (t == nullptr || !t->is_scalar() || class_name(t->scalar) != "MegatronCommOverlapCallback") continue;
      const std::string path = fmt::format("trainer.callbacks[{}]", i);
      auto flag = [&](const char* key, bool& target_flag) {
        const YamlValue* v = cb.find(key);
        if (v == nullptr || (v->is_scalar() && !v->quoted && v->scalar == "null")) return;
        if (auto b = read_bool(d, *v, path + "." + key)) target_flag = *b;
      };
      flag("tp_comm_overlap", l.tp_comm_overlap);
      flag("overlap_grad_reduce", l.overlap_grad_reduce);
      flag("overlap_param_gather", l.overlap_param_gather);
    }
  }
  return l;
}

/// Precision, optimizer, batch and length.
struct NemoTraining {
  std::string precision = "bf16";
  bool fp32_reduce = false;
  std::string optimizer = "adamw";
  std::optional<std::int64_t> global_batch;
  std::int64_t micro_batch = 1;
  std::optional<std::int64_t> steps;
  bool cuda_graphs = false;
};

NemoTraining read_training(Recipe& r, const YamlValue& root) {
  Diagnostics& d = r.diagnostics();
  NemoTraining t;
  // Precision: MegatronMixedPrecision's precision, with fp8 GEMMs when its fp8 recipe is set.
  if (auto p = r.text("trainer.plugins.precision")) {
    if (*p == "bf16-mixed" || *p == "bf16") {
      t.precision = "bf16";
    } else if (*p == "16-mixed" || *p == "16") {
      t.precision = "fp16";
    } else if (*p == "32" || *p == "32-true") {
      t.precision = "fp32";
    } else {
      d.add(*r.at("trainer.plugins.precision"), "trainer.plugins.precision",
            "expected bf16-mixed, 16-mixed or 32, got \"" + *p + "\"");
    }
  }
  if (r.at("trainer.plugins.fp8") != nullptr) t.precision = "fp8";
  t.fp32_reduce = r.boolean("trainer.plugins.grad_reduce_in_fp32")
                      .value_or(r.boolean("trainer.strategy.ddp.grad_reduce_in_fp32").value_or(false));

  if (auto o = r.text("optim.config.optimizer")) {
    if (*o == "sgd") {
      t.optimizer = "sgd-momentum";
    } else if (*o != "adam") {
      d.add(*r.at("optim.config.optimizer"), "optim.config.optimizer",
            "expected adam or sgd, got \"" + *o + "\"");
    }
  }
  t.global_batch = r.count("data.global_batch_size");
  if (!t.global_batch) d.add(root, "data.global_batch_size", "missing: the recipe's global batch");
  t.micro_batch = r.count("data.micro_batch_size").value_or(1);
  t.steps = r.count("trainer.max_steps");
  t.cuda_graphs = r.boolean("model.config.enable_cuda_graph").value_or(false);
  return t;
}

/// The scenario's YAML, its header naming the source and what was left out.
std::string scenario_yaml(const std::string& source, const NemoImportOptions& options, const NemoImport& out,
                          const NemoModel& m, const NemoLayout& l, const NemoTraining& t) {
  std::string y;
  y += "# Imported by `trainsim import nemo` from " + source + " (NeMo 2 recipe" +
       (m.target.empty() ? std::string() : ", model " + m.cls) + ").\n";
  y += comment_list("# Read and left out (they price nothing):", known_left_out(out));
  y += comment_list("# Not known to this importer, left out (--lenient):", out.unknown);
  y += fmt::format("# The node type is not in the recipe: {} x {} (trainsim import nemo --node).\n", l.nodes,
                   options.node);
  y += "name: " + std::filesystem::path(source).stem().string() + "\n";
  y += fmt::format("model: {{{}}}\n", fmt::join(m.entries, ", "));
  y += fmt::format("cluster: {{node: {}, nodes: {}}}\n", options.node, l.nodes);
  y += "parallelism:\n";
  y += fmt::format("  tp: {}\n  pp: {}\n  cp: {}\n  ep: {}\n  dp: auto\n", l.tp, l.pp, l.cp, l.ep);
  y += fmt::format("  micro_batch: {}\n", t.micro_batch);
  if (l.pp > 1) y += std::string("  schedule: ") + (l.vp > 1 ? "interleaved" : "1f1b") + "\n";
  if (l.pp > 1 && l.vp > 1) y += fmt::format("  virtual_stages: {}\n", l.vp);
  y += "  sequence_parallel: " + yes_no(l.sp) + "\n";
  y += "  recompute: " + m.recompute + "\n";
  y += fmt::format("  zero: {}\n", l.zero);
  y += "  overlap_grad_reduce: " + yes_no(l.overlap_grad_reduce) + "\n";
  y += "training:\n";
  y += fmt::format("  global_batch: {}\n", *t.global_batch);
  y += "  precision: " + t.precision + "\n";
  y += "  optimizer: " + t.optimizer + "\n";
  y += fmt::format("  steps: {}\n", t.steps.value_or(1));
  y += "framework:\n  preset: nemo\n";
  y += "  tp_comm_overlap: " + yes_no(l.tp_comm_overlap) + "\n";
  y += "  overlap_param_gather: " + yes_no(l.overlap_param_gather) + "\n";
  y += "  cuda_graphs: " + yes_no(t.cuda_graphs) + "\n";
  if (t.fp32_reduce) y += "  grad_reduce_dtype: fp32\n";
  return y;
}

}  // namespace

NemoImport import_nemo_recipe(const std::string& text, const std::string& source,
                              const NemoImportOptions& options) {
  Diagnostics d;
  const std::optional<YamlValue> root = parse_yaml_tree(text, source, d);
  d.throw_if_any();
  if (!root->is_mapping()) {
    d.add(*root, "", "expected a NeMo recipe (a mapping with model, trainer and data)");
    d.throw_if_any();
  }
  Recipe r(*root, d);
  const YamlValue* config = r.at("model.config");
  if (config == nullptr || !config->is_mapping()) {
    d.add(*root, "model.config", "missing: the recipe's model config (model.config with its _target_)");
    d.throw_if_any();
  }

  NemoImport out;
  check_recipe_keys(r, *root, options.lenient, d, out);
  d.throw_if_any();
  const NemoModel model = read_model(r, *config);
  const NemoLayout layout = read_layout(r, options);
  const NemoTraining training = read_training(r, *root);
  d.throw_if_any();
  out.yaml = scenario_yaml(source, options, out, model, layout, training);
  return out;
}

}  // namespace trainsim::scenario
