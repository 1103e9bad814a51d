#include "scenarios/presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "scenarios/gpu_preset_fields.hpp"
#include "scenarios/importers/hf_config.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/model_fields.hpp"
#include "scenarios/preset_blocks.hpp"
#include "scenarios/region_block.hpp"
#include "scenarios/routing_group_keys.hpp"
#include "scenarios/shipped_data.hpp"
#include "scenarios/sliding_window_keys.hpp"
#include "topologies/comm_calibration.hpp"

namespace trainsim::scenario {
namespace {

namespace fs = std::filesystem;

std::string_view sub_folder(PresetKind kind) {
  switch (kind) {
    case PresetKind::gpu:
      return "gpus";
    case PresetKind::node:
      return "nodes";
    case PresetKind::model:
      return "models";
    case PresetKind::region:
      return "regions";
  }
  return "models";
}

std::string_view kind_noun(PresetKind kind) {
  switch (kind) {
    case PresetKind::gpu:
      return "GPU";
    case PresetKind::node:
      return "node";
    case PresetKind::model:
      return "model";
    case PresetKind::region:
      return "region";
  }
  return "model";
}

/// Preset names are file stems: a restricted alphabet keeps a name from walking out of its folder.
bool valid_name(std::string_view name) {
  if (name.empty() || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

std::string unknown_message(PresetKind kind, const std::string& name);

/// The file of preset `name`: the first regular file NAME.yaml in the folders searched (preset_folders),
/// or the problem that stops the lookup. A preset of the same name later in the search (on TRAINSIM_PATH)
/// would be silently unused, and an entry that is not a readable file would read as an unknown name: both
/// are problems named with their paths.
struct FoundPreset {
  std::string file;
  std::string problem;  ///< non-empty when there is no usable file
};

FoundPreset find_file(PresetKind kind, const std::string& name) {
  if (!valid_name(name)) return {.problem = unknown_message(kind, name)};
  FoundPreset found;
  for (const std::string& folder : preset_folders(kind)) {
    const fs::path candidate = fs::path(folder) / (name + ".yaml");
    std::error_code ec;
    const bool present = fs::exists(fs::symlink_status(candidate, ec));
    if (!present) continue;
    const bool regular = fs::is_regular_file(candidate, ec);
    if (found.file.empty()) {
      if (!regular) {
        return {.problem = "the " + std::string(kind_noun(kind)) + " preset \"" + name + "\" at " +
                           candidate.string() + " is not a readable file"};
      }
      found.file = candidate.string();
    } else {
      return {.problem = candidate.string() + " has the name of the " + std::string(kind_noun(kind)) +
                         " preset " + found.file +
                         ", which is found first and would be used instead; "
                         "give it another name"};
    }
  }
  if (found.file.empty()) found.problem = unknown_message(kind, name);
  return found;
}

std::string unknown_message(PresetKind kind, const std::string& name) {
  const std::vector<std::string> names = preset_names(kind);
  std::string message = "unknown " + std::string(kind_noun(kind)) + " preset \"" + name + "\"";
  const std::string suggestion = closest_match(name, names);
  if (!suggestion.empty()) message += " (did you mean \"" + suggestion + "\"?)";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return message + "; known: " + (list.empty() ? "(none found)" : list);
}

// Presets may derive from presets (`preset:` inside a preset file); a cycle stops here.
constexpr int kMaxPresetDepth = 8;

}  // namespace

struct PresetLibrary::Files {
  std::mutex mutex;
  /// Parsed presets by file path, one map per spec type (std::get by type picks a reader's own).
  std::tuple<std::map<std::string, model::TransformerSpec>, std::map<std::string, topo::GpuSpec>,
             std::map<std::string, topo::NodeSpec>, std::map<std::string, model::RegionPrices>>
      caches;
};

namespace {

/// A spec's reader: a value (a preset name or a mapping) at a key path, its presets resolved in a scope.
template <class Spec>
using SpecReader = Spec (*)(Diagnostics&, const YamlValue&, const std::string&, const PresetScope&);

template <class Spec>
std::optional<Spec> load_preset(Diagnostics& d, const YamlValue& at, const std::string& path, PresetKind kind,
                                const std::string& name, const PresetScope& presets, SpecReader<Spec> read) {
  PresetLibrary::Files& files = presets.library.files();
  std::map<std::string, Spec>& cache = std::get<std::map<std::string, Spec>>(files.caches);
  const FoundPreset found = find_file(kind, name);
  if (!found.problem.empty()) {
    d.add(at, path, found.problem);
    return std::nullopt;
  }
  const std::optional<std::string> file = found.file;
  {
    std::lock_guard lock(files.mutex);
    if (auto it = cache.find(*file); it != cache.end()) return it->second;
  }
  if (presets.depth >= kMaxPresetDepth) {
    d.add(at, path,
          "presets derive from each other more than " + std::to_string(kMaxPresetDepth) +
              " levels deep (a cycle?) at \"" + name + "\"");
    return std::nullopt;
  }
  Diagnostics local;
  std::optional<Spec> spec;
  if (auto text = read_text_file(*file, local)) {
    if (auto tree = parse_yaml_tree(*text, *file, local)) {
      Spec s = read(local, *tree, "", PresetScope{presets.library, presets.depth + 1});
      if (s.name.empty() || s.name == "custom") s.name = name;
      spec = std::move(s);
    }
  }
  if (!local.empty()) {
    for (const Diagnostic& diag : local.list()) d.add(diag);
    return std::nullopt;
  }
  std::lock_guard lock(files.mutex);
  cache.emplace(*file, *spec);
  return spec;
}

template <class Spec>
Spec preset_or_throw(PresetKind kind, const std::string& name, PresetLibrary& library,
                     SpecReader<Spec> read) {
  Diagnostics d;
  YamlValue at;
  std::optional<Spec> spec = load_preset(d, at, "", kind, name, PresetScope{library}, read);
  d.throw_if_any();
  return *spec;
}

template <class Spec>
Spec load_file_or_throw(const std::string& path, SpecReader<Spec> read) {
  Diagnostics d;
  Spec spec;
  PresetLibrary library;
  if (auto text = read_text_file(path, d)) {
    if (auto tree = parse_yaml_tree(*text, path, d)) spec = read(d, *tree, "", PresetScope{library});
  }
  d.throw_if_any();
  if (spec.name.empty() || spec.name == "custom") spec.name = fs::path(path).stem().string();
  return spec;
}

/// The `preset:` of a mapping, loaded, or a default spec when there is none.
template <class Spec>
Spec base_of(Diagnostics& d, const MapReader& r, PresetKind kind, const PresetScope& presets,
             SpecReader<Spec> read) {
  const YamlValue* p = r.get("preset");
  if (p == nullptr) return Spec{};
  const auto name = read_string(d, *p, r.child_path("preset"));
  if (!name) return Spec{};
  return load_preset(d, *p, r.child_path("preset"), kind, *name, presets, read).value_or(Spec{});
}

std::string q(std::string_view s) {
  return yaml_quote(s);
}

}  // namespace

// Shared experts and dense first layers belong to a MoE model, and at least one layer stays MoE.
void check_moe_layout_keys(Diagnostics& d, const MapReader& r, const model::TransformerSpec& m) {
  if (m.experts == 0 && m.shared_experts > 0) {
    add_at_first_key(d, r, {"shared_experts", "experts"},
                     "shared_experts is set but experts is 0 (a dense model)");
  }
  if (m.experts == 0 && m.expert_ffn_hidden > 0) {
    add_at_first_key(d, r, {"expert_ffn_hidden", "experts"},
                     "expert_ffn_hidden is set but experts is 0 (a dense model: ffn_hidden sizes its MLP)");
  }
  if (m.experts == 0 && m.dense_layers > 0) {
    add_at_first_key(d, r, {"dense_layers", "experts"},
                     "dense_layers is set but experts is 0 (every layer is already dense)");
  }
  if (m.experts == 0 && m.moe_layer_step != 1) {
    add_at_first_key(d, r, {"moe_layer_step", "experts"},
                     "moe_layer_step is set but experts is 0 (a dense model has no MoE layers to space)");
  }
  if (m.experts > 0 && m.dense_layers < m.layers && m.first_moe_layer() >= m.layers) {
    add_at_first_key(d, r, {"moe_layer_step", "dense_layers", "layers"},
                     "no layer would be MoE: the first is layer dense_layers + moe_layer_step - 1 = " +
                         std::to_string(m.first_moe_layer()) + ", and the model has " +
                         std::to_string(m.layers) + " layers");
  }
  if (m.experts > 0 && m.dense_layers >= m.layers) {
    add_at_first_key(d, r, {"dense_layers", "layers"},
                     "dense_layers must be fewer than layers (" + std::to_string(m.layers) + "), found " +
                         std::to_string(m.dense_layers) + ": for a dense model set experts: 0");
  }
  // The routing names which of capacity_factor and imbalance sizes the busiest rank's slots.
  if (m.experts == 0 && (r.has("routing") || r.has("imbalance"))) {
    add_at_first_key(d, r, {"routing", "imbalance"},
                     "routes tokens to experts, but experts is 0 (a dense model)");
  }
  if (m.routing == model::Routing::dropless && r.has("capacity_factor")) {
    add_at_first_key(d, r, {"capacity_factor"},
                     "dropless routing has no capacity: give imbalance, or routing: capacity");
  }
  if (m.routing != model::Routing::dropless && r.has("imbalance")) {
    add_at_first_key(d, r, {"imbalance"},
                     "applies to routing: dropless only (found routing: " +
                         std::string(model::to_string(m.routing)) + ")");
  }
}

// Multi-head latent attention: kv_lora_rank turns it on and then needs the three head widths; the other
// MLA keys mean nothing without it.
void check_latent_attention_keys(Diagnostics& d, const MapReader& r, const YamlValue& v,
                                 const std::string& path, const model::TransformerSpec& m) {
  const std::array<std::pair<const char*, std::int64_t>, 3> widths{{{"qk_nope_head_dim", m.qk_nope_head_dim},
                                                                    {"qk_rope_head_dim", m.qk_rope_head_dim},
                                                                    {"v_head_dim", m.v_head_dim}}};
  if (m.kv_lora_rank > 0) {
    for (const auto& [key, value] : widths) {
      if (value == 0) {
        d.add(
            v, join_path(path, key),
            std::string(key) + " must be given (at least 1) with kv_lora_rank (multi-head latent attention)");
      }
    }
    return;
  }
  for (const auto& [key, value] : widths) {
    if (value > 0) {
      add_at_first_key(d, r, {key, "kv_lora_rank"},
                       std::string(key) + " needs kv_lora_rank (multi-head latent attention)");
    }
  }
  if (m.q_lora_rank > 0) {
    add_at_first_key(d, r, {"q_lora_rank", "kv_lora_rank"},
                     "q_lora_rank needs kv_lora_rank (multi-head latent attention)");
  }
}

// The rules between a model's keys, once each was read without a problem; the parallel layout's
// divisibility is checked with the scenario.
void check_model_keys(Diagnostics& d, const MapReader& r, const YamlValue& v, const std::string& path,
                      const model::TransformerSpec& m) {
  if (m.head_dim == 0 && m.kv_lora_rank == 0 && m.hidden % m.heads != 0) {
    add_at_first_key(d, r, {"hidden", "heads"},
                     "hidden (" + std::to_string(m.hidden) + ") must be divisible by heads (" +
                         std::to_string(m.heads) + "), or head_dim given");
  }
  if (m.kv_heads > m.heads || (m.kv_heads > 0 && m.heads % m.kv_heads != 0)) {
    add_at_first_key(d, r, {"kv_heads", "heads"},
                     "heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads (" +
                         std::to_string(m.kv_heads) + ")");
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    add_at_first_key(d, r, {"top_k", "experts"},
                     "top_k must be between 1 and experts (" + std::to_string(m.experts) +
                         ") for a mixture-of-experts model, found " + std::to_string(m.top_k));
  }
  if (m.experts == 0 && m.top_k > 0) {
    add_at_first_key(d, r, {"top_k", "experts"}, "top_k is set but experts is 0 (a dense model)");
  }
  if (m.swiglu_limit > 0 && m.mlp != model::Mlp::swiglu) {
    add_at_first_key(
        d, r, {"swiglu_limit", "mlp"},
        "swiglu_limit clamps a SwiGLU MLP's inputs, but mlp is " + std::string(to_string(m.mlp)));
  }
  check_moe_layout_keys(d, r, m);
  check_routing_group_keys(d, r, m);
  check_latent_attention_keys(d, r, v, path, m);
  check_sliding_window(d, v, path, m);
}

model::TransformerSpec read_model_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                                        const PresetScope& presets) {
  if (v.is_scalar()) {
    return load_preset(d, v, path, PresetKind::model, v.scalar, presets, read_model_value)
        .value_or(model::TransformerSpec{});
  }
  MapReader r(d, v, path, field_keys(model_fields()));
  if (!r.valid()) return {};
  const std::size_t errors_before = d.size();
  model::TransformerSpec m = base_of(d, r, PresetKind::model, presets, read_model_value);
  if (const YamlValue* hf = r.get("hf_config")) {
    const std::string hf_path = r.child_path("hf_config");
    if (r.has("preset")) {
      d.add(*hf, hf_path, "give either a preset or an hf_config, not both");
    } else if (const auto file = read_string(d, *hf, hf_path)) {
      if (auto spec = read_hf_config(d, *hf, hf_path, *file)) m = std::move(*spec);
    }
  } else if (!r.has("preset")) {
    m.name = "custom";
    require_fields(r, model_fields());
  }
  read_fields(r, model_fields(), m);
  if (d.size() == errors_before && m.heads > 0) check_model_keys(d, r, v, path, m);
  return m;
}

namespace {

// A GPU's power keys, a preset's and its overrides' together: idle below the TDP, and a power limit
// above idle (at or below it no power is left for compute: the clock rule's (limit − idle) is not positive)
// and at most the TDP (a board's limit cannot be raised past its maximum; `nvidia-smi -pl` refuses it).
void check_gpu_power_keys(Diagnostics& d, const MapReader& r, const topo::GpuSpec& g) {
  const auto w = [](double watts) { return fmt::format("{:g} W", watts); };
  if (g.tdp_w > 0 && g.idle_w >= g.tdp_w) {
    add_at_first_key(d, r, {"idle", "tdp"},
                     "idle (" + w(g.idle_w) + ") must be below tdp (" + w(g.tdp_w) + ")");
  }
  if (g.power_limit_w <= 0) return;
  if (g.power_limit_w <= g.idle_w) {
    add_at_first_key(d, r, {"power_limit", "idle"},
                     "power_limit (" + w(g.power_limit_w) + ") must be above idle (" + w(g.idle_w) +
                         "): at or below it no power is left for compute");
  } else if (g.tdp_w > 0 && g.power_limit_w > g.tdp_w) {
    add_at_first_key(d, r, {"power_limit", "tdp"},
                     "power_limit (" + w(g.power_limit_w) + ") is above tdp (" + w(g.tdp_w) +
                         "): a board's limit cannot be raised past it");
  }
}

// A GPU block read over `base` when it names no preset: a node preset's GPU, whose keys a `gpu:` mapping
// without `preset:` overrides one by one (as `--set cluster.node.gpu.KEY` writes it); without a base such a
// block is a whole GPU and needs its sizes.
topo::GpuSpec read_gpu_over(Diagnostics& d, const YamlValue& v, const std::string& path,
                            const PresetScope& presets, const topo::GpuSpec* base) {
  if (v.is_scalar()) {
    return load_preset(d, v, path, PresetKind::gpu, v.scalar, presets, read_gpu_value)
        .value_or(topo::GpuSpec{});
  }
  std::vector<std::string> top_keys{"preset", "name", "source", "peak", "efficiency"};
  for (std::string& key : gpu_block_keys(GpuBlock::top)) top_keys.push_back(std::move(key));
  MapReader r(d, v, path, std::move(top_keys));
  if (!r.valid()) return {};
  const bool over_base = base != nullptr && !r.has("preset");
  topo::GpuSpec g = over_base ? *base : base_of(d, r, PresetKind::gpu, presets, read_gpu_value);
  if (!r.has("preset") && !over_base) r.require({"peak", "hbm", "hbm_bandwidth", "tdp"});
  r.string("name", g.name);
  read_gpu_block(r, GpuBlock::top, g);
  if (const YamlValue* p = r.get("peak")) {
    MapReader pr(d, *p, r.child_path("peak"), gpu_block_keys(GpuBlock::peak));
    read_gpu_block(pr, GpuBlock::peak, g);
  }
  if (const YamlValue* e = r.get("efficiency")) {
    MapReader er(d, *e, r.child_path("efficiency"), gpu_block_keys(GpuBlock::efficiency));
    read_gpu_block(er, GpuBlock::efficiency, g);
  }
  check_gpu_power_keys(d, r, g);
  return g;
}

}  // namespace

topo::GpuSpec read_gpu_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                             const PresetScope& presets) {
  return read_gpu_over(d, v, path, presets, nullptr);
}

topo::NodeSpec read_node_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                               const PresetScope& presets) {
  if (v.is_scalar()) {
    return load_preset(d, v, path, PresetKind::node, v.scalar, presets, read_node_value)
        .value_or(topo::NodeSpec{});
  }
  MapReader r(d, v, path,
              {"preset", "name", "source", "gpu", "gpus_per_node", "fabric", "intra_bandwidth",
               "intra_latency", "in_switch_reduction", "nics_per_node", "nic", "pcie", "host_power"});
  if (!r.valid()) return {};
  topo::NodeSpec n = base_of(d, r, PresetKind::node, presets, read_node_value);
  if (!r.has("preset")) {
    n.name = "custom";
    r.require({"gpu", "gpus_per_node", "intra_bandwidth"});
  }
  r.string("name", n.name);
  if (const YamlValue* g = r.get("gpu")) {
    const topo::GpuSpec preset_gpu = n.gpu;
    n.gpu = read_gpu_over(d, *g, r.child_path("gpu"), presets, r.has("preset") ? &preset_gpu : nullptr);
    n.gpu_replaced = r.has("preset") && !r.has("name") && n.gpu.name != preset_gpu.name;
  }
  r.count("gpus_per_node", n.gpus_per_node, 1, 1024);
  r.choice("fabric", n.fabric, topo::kIntraNodeFabricNames);
  r.quantity("intra_bandwidth", n.intra_bytes_per_s, Dimension::bytes_per_s);
  r.quantity("intra_latency", n.intra_latency_s, Dimension::seconds, Bound::non_negative);
  r.boolean("in_switch_reduction", n.in_switch_reduction);
  r.count("nics_per_node", n.nics_per_node, 0, 1024);
  r.quantity("nic", n.nic_bytes_per_s, Dimension::bytes_per_s, Bound::non_negative);
  r.quantity("pcie", n.pcie_bytes_per_s, Dimension::bytes_per_s, Bound::non_negative);
  r.quantity("host_power", n.host_power_w, Dimension::watts, Bound::non_negative);
  // Collective efficiencies fitted to nccl-tests measurements per GPU type (topologies/README.md).
  topo::apply_comm_calibration(n);
  return n;
}

model::RegionPrices read_region_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                                      const PresetScope& presets) {
  if (v.is_scalar()) {
    return load_preset(d, v, path, PresetKind::region, v.scalar, presets, read_region_value)
        .value_or(model::RegionPrices{});
  }
  return read_region_file(d, v, path);
}

std::string node_to_yaml(const topo::NodeSpec& n) {
  return "{name: " + q(n.name) + ", gpu: " + gpu_to_flow_yaml(n.gpu) +
         ", gpus_per_node: " + std::to_string(n.gpus_per_node) +
         ", fabric: " + std::string(to_string(n.fabric)) +
         ", intra_bandwidth: " + q(format_quantity(n.intra_bytes_per_s, Dimension::bytes_per_s)) +
         ", intra_latency: " + q(format_quantity(n.intra_latency_s, Dimension::seconds)) +
         ", in_switch_reduction: " + (n.in_switch_reduction ? "true" : "false") +
         ", nics_per_node: " + std::to_string(n.nics_per_node) +
         ", nic: " + q(format_quantity(n.nic_bytes_per_s, Dimension::bytes_per_s)) +
         ", pcie: " + q(format_quantity(n.pcie_bytes_per_s, Dimension::bytes_per_s)) +
         ", host_power: " + q(format_quantity(n.host_power_w, Dimension::watts)) + "}";
}

std::vector<std::string> preset_folders(PresetKind kind) {
  std::vector<std::string> folders;
  folders.push_back(shipped_folder(kind == PresetKind::gpu      ? ShippedData::gpu_presets
                                   : kind == PresetKind::node   ? ShippedData::node_presets
                                   : kind == PresetKind::region ? ShippedData::region_presets
                                                                : ShippedData::model_presets));
  if (const char* env = std::getenv("TRAINSIM_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) folders.push_back((fs::path(dir) / sub_folder(kind)).string());
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  return folders;
}

std::vector<std::string> preset_names(PresetKind kind) {
  std::set<std::string> names;
  for (const std::string& folder : preset_folders(kind)) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml" && valid_name(it->path().stem().string())) {
        names.insert(it->path().stem().string());
      }
    }
  }
  return {names.begin(), names.end()};
}

std::string preset_file(PresetKind kind, const std::string& name) {
  FoundPreset found = find_file(kind, name);
  if (!found.problem.empty()) throw InputError(found.problem);
  return found.file;
}

PresetLibrary::PresetLibrary() : files_(std::make_unique<Files>()) {}
PresetLibrary::~PresetLibrary() = default;

topo::GpuSpec PresetLibrary::gpu(const std::string& name) {
  return preset_or_throw<topo::GpuSpec>(PresetKind::gpu, name, *this, read_gpu_value);
}
topo::NodeSpec PresetLibrary::node(const std::string& name) {
  return preset_or_throw<topo::NodeSpec>(PresetKind::node, name, *this, read_node_value);
}
model::TransformerSpec PresetLibrary::model(const std::string& name) {
  return preset_or_throw<model::TransformerSpec>(PresetKind::model, name, *this, read_model_value);
}
model::RegionPrices PresetLibrary::region(const std::string& name) {
  return preset_or_throw<model::RegionPrices>(PresetKind::region, name, *this, read_region_value);
}

topo::GpuSpec gpu_preset(const std::string& name) {
  return PresetLibrary().gpu(name);
}
topo::NodeSpec node_preset(const std::string& name) {
  return PresetLibrary().node(name);
}
model::TransformerSpec model_preset(const std::string& name) {
  return PresetLibrary().model(name);
}
model::RegionPrices region_preset(const std::string& name) {
  return PresetLibrary().region(name);
}

topo::GpuSpec load_gpu_preset_file(const std::string& path) {
  return load_file_or_throw<topo::GpuSpec>(path, read_gpu_value);
}
topo::NodeSpec load_node_preset_file(const std::string& path) {
  return load_file_or_throw<topo::NodeSpec>(path, read_node_value);
}
model::TransformerSpec load_model_preset_file(const std::string& path) {
  return load_file_or_throw<model::TransformerSpec>(path, read_model_value);
}

}  // namespace trainsim::scenario
