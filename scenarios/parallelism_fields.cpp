#include "scenarios/parallelism_fields.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "scenarios/loader.hpp"

namespace trainsim::scenario {

using P = model::ParallelPlan;

namespace {

// Each item of `list` one of `table`'s names, none twice (the repeat is an error at `path`, naming it as a
// `what`); nullopt after reporting the first problem.
template <class Enum, std::size_t N>
std::optional<std::vector<Enum>> read_distinct_choices(Diagnostics& d, const YamlValue& list,
                                                       const std::string& path,
                                                       const EnumNames<Enum, N>& table,
                                                       const std::string& what) {
  const std::vector<std::string> names = names_of(table);
  std::vector<Enum> out;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const auto index = read_choice(d, list.items[i], path + "[" + std::to_string(i) + "]", names);
    if (!index) return std::nullopt;
    const Enum value = table[*index].value;
    if (std::find(out.begin(), out.end(), value) != out.end()) {
      d.add(list.items[i], path, what + " " + names[*index] + " appears twice");
      return std::nullopt;
    }
    out.push_back(value);
  }
  return out;
}

/// Reads a row's value where the block gives it; `path` is the key's path for the messages.
using ValueReader = void (*)(MapReader& r, const YamlValue& v, const std::string& path, P& p);

// A structured row (its value has a shape of its own) with its own read and text.
Field<P> own_row(std::string_view key, std::string_view shape, std::string_view help, ValueReader read,
                 std::function<std::optional<std::string>(const P&)> text) {
  Field<P> row = structured_field<P>(key, shape, help);
  row.read = [key, read](MapReader& r, P& p) {
    if (const YamlValue* v = r.get(key)) read(r, *v, r.child_path(key), p);
  };
  row.text = std::move(text);
  return row;
}

// A `modules:` row of `table`'s names, each named once, kept as one bit each in the member `bits`; `chosen`
// is called after the list is read without error. Written as the names whose bits are set, in the table's
// order; not written when none is.
template <class Enum, std::size_t N>
Field<P> modules_row(std::uint8_t P::*bits, const EnumNames<Enum, N>& table, std::string_view example,
                     std::string_view help, void (*chosen)(P&)) {
  const auto* names = &table;
  Field<P> row = structured_field<P>("modules", "list", help);
  row.read = [=, key = row.info.key](MapReader& r, P& p) {
    const YamlValue* list = r.get(key);
    if (list == nullptr) return;
    const std::string path = r.child_path(key);
    if (!list->is_sequence() || list->items.empty()) {
      r.diagnostics().add(*list, path, "expected a list of modules, e.g. " + std::string(example));
      return;
    }
    const auto modules = read_distinct_choices(r.diagnostics(), *list, path, *names, "module");
    if (!modules) return;
    std::uint8_t set = 0;
    for (const Enum m : *modules) set = static_cast<std::uint8_t>(set | static_cast<std::uint8_t>(m));
    p.*bits = set;
    chosen(p);
  };
  row.text = [=](const P& p) -> std::optional<std::string> {
    if (p.*bits == 0) return std::nullopt;
    std::vector<std::string_view> set;
    for (const auto& entry : *names)
      if ((p.*bits & static_cast<std::uint8_t>(entry.value)) != 0) set.push_back(entry.name);
    return flow_list(set, [](std::string_view name) { return name; });
  };
  return required(std::move(row));
}

// A `{modules: [...]}` mapping at `v`, read by `table` (one required modules row).
void read_modules_mapping(MapReader& parent, const YamlValue& v, const std::string& path,
                          const FieldTable<P>& table, P& p) {
  MapReader r(parent.diagnostics(), v, path, field_keys(table));
  if (require_fields(r, table)) read_fields(r, table, p);
}

// dp: a whole number of replicas, or auto (the GPUs over the model-parallel size, resolved with the
// cluster by the scenario reader).
Field<P> dp_row() {
  return own_row(
      "dp", "integer or auto",
      "data-parallel replicas, 1 to 1e+08; auto (default): the GPUs over tp·pp·cp·ep",
      [](MapReader& r, const YamlValue& v, const std::string& path, P& p) {
        if (v.is_scalar() && v.scalar == "auto") {
          p.dp_auto = true;
        } else if (auto dp = read_count(r.diagnostics(), v, path, 1, kMaxTotalGpus)) {
          p.dp = *dp;
          p.dp_auto = false;
        }
      },
      [](const P& p) { return p.dp_auto ? std::string("auto") : std::to_string(p.dp); });
}

// stage_layers: auto (empty), or layers per stage or per virtual stage (where 0 may stand for an
// embedding-only or head-only first or last virtual stage: layout_rules checks where).
Field<P> stage_layers_row() {
  return own_row(
      "stage_layers", "auto or list", "layers per stage, or per virtual stage; auto (default): spread evenly",
      [](MapReader& r, const YamlValue& v, const std::string& path, P& p) {
        if (v.is_scalar() && v.scalar == "auto") return;
        if (!v.is_sequence() || v.items.empty()) {
          r.diagnostics().add(v, path, "expected auto or a list of layers per stage, e.g. [7, 8, 8, 7]");
          return;
        }
        for (std::size_t i = 0; i < v.items.size(); ++i) {
          const auto k =
              read_count(r.diagnostics(), v.items[i], path + "[" + std::to_string(i) + "]", 0, 1e6);
          if (k) p.stage_layers.push_back(static_cast<int>(*k));
        }
      },
      [](const P& p) {
        if (p.stage_layers.empty()) return std::string("auto");
        return flow_list(p.stage_layers, [](int layers) { return std::to_string(layers); });
      });
}

// zero: the stage by its number, 0-3 (models/spec/parallel_plan.hpp's kZeroStageNames).
Field<P> zero_row() {
  static constexpr std::string_view kKey = "zero";
  return {FieldInfo{
              .key = kKey,
              .kind = FieldKind::count,
              .min = 0,
              .max = 3,
              .help = "the ZeRO stage: what the data-parallel ranks shard (3: FSDP's full shard); default 0"},
          [](MapReader& r, P& p) {
            int stage = model::stage_number(p.zero);
            r.count(kKey, stage, 0, 3);
            p.zero = model::zero_stage_numbered(stage).value_or(p.zero);
          },
          [](const P& p) { return std::string(model::to_string(p.zero)); }};
}

// recompute: a mode's name, or {modules: [...]} (selective recompute of those modules).
Field<P> recompute_row() {
  return own_row(
      "recompute", "name or mapping",
      "what the backward recomputes: none (default), selective, full, op; or {modules: [...]}",
      [](MapReader& r, const YamlValue& v, const std::string& path, P& p) {
        if (v.is_mapping()) {
          read_modules_mapping(r, v, path, parallelism_recompute_fields(), p);
        } else {
          if (auto i = read_choice(r.diagnostics(), v, path, names_of(model::kRecomputeNames)))
            p.recompute = model::kRecomputeNames[*i].value;
        }
      },
      [](const P& p) { return recompute_to_yaml(p); });
}

// offload: {modules: [...]}; not written when no module is offloaded.
Field<P> offload_row() {
  return own_row(
      "offload", "mapping", "the modules whose saved inputs go to host memory; default none",
      [](MapReader& r, const YamlValue& v, const std::string& path, P& p) {
        read_modules_mapping(r, v, path, parallelism_offload_fields(), p);
      },
      [](const P& p) -> std::optional<std::string> {
        if (p.offload_modules == 0) return std::nullopt;
        return "{" + flow_fields(parallelism_offload_fields(), p) + "}";
      });
}

// order: the five axes, each once, innermost first.
Field<P> order_row() {
  return own_row(
      "order", "list",
      "rank placement, innermost first: the five axes, each once; default [tp, cp, ep, dp, pp]",
      [](MapReader& r, const YamlValue& v, const std::string& path, P& p) {
        if (!v.is_sequence() || v.items.size() != model::kParallelAxisNames.size()) {
          r.diagnostics().add(v, path,
                              "expected a list of the five axes, innermost first, e.g. [tp, cp, ep, dp, pp]");
          return;
        }
        if (auto order = read_distinct_choices(r.diagnostics(), v, path, model::kParallelAxisNames, "axis"))
          p.order = std::move(*order);
      },
      [](const P& p) {
        return flow_list(p.order, [](model::ParallelAxis a) { return model::to_string(a); });
      });
}

}  // namespace

const FieldTable<P>& parallelism_fields() {
  static const FieldTable<P> kTable{
      count_field("tp", &P::tp, 1, 1e6, "tensor-parallel ranks splitting each layer's matrices; default 1"),
      count_field("pp", &P::pp, 1, 1e6, "pipeline stages; default 1"),
      dp_row(),
      count_field("cp", &P::cp, 1, 1e6, "context-parallel ranks splitting each sequence; default 1"),
      count_field("ep", &P::ep, 1, 1e6, "expert-parallel ranks, on a mixture-of-experts model; default 1"),
      flag_field("expert_folding", &P::expert_folding,
                 "the ep ranks are the attention's cp × dp ranks (MoE parallel folding); default false"),
      count_field("expert_tp", &P::expert_tp, 1, 1e6, "ranks splitting one expert's matrices; default tp",
                  Written::unless_zero),
      choice_field("schedule", &P::schedule, model::kScheduleNames, "the pipeline schedule; default 1f1b"),
      count_field("virtual_stages", &P::virtual_stages, 1, 1e4,
                  "model chunks per pipeline rank, with schedule: interleaved; default 1"),
      stage_layers_row(),
      count_field("micro_batch", &P::micro_batch, 1, 1e7,
                  "sequences per micro-batch per data-parallel rank; default 1"),
      flag_field("sequence_parallel", &P::sequence_parallel,
                 "the tp ranks split the activations outside the matmuls along the sequence; default false"),
      zero_row(),
      count_field("shard_group", &P::shard_group, 1, kMaxTotalGpus,
                  "ZeRO >= 1 (HSDP): dp ranks per sharding group, dividing dp; default all of them",
                  Written::unless_zero),
      recompute_row(),
      offload_row(),
      flag_field("overlap_grad_reduce", &P::overlap_grad_reduce,
                 "gradient buckets reduced during the backward; default the framework's"),
      quantity_field("bucket", &P::bucket_bytes, Dimension::bytes, Bound::positive,
                     "the gradient bucket's size; default 40 MB"),
      order_row(),
  };
  return kTable;
}

const FieldTable<P>& parallelism_recompute_fields() {
  static const FieldTable<P> kTable{
      modules_row(
          &P::recompute_modules, model::kRecomputeModuleNames, "[core_attn, mla_up_proj, moe_act]",
          "the modules run again in the backward, each named once: Megatron-Core's --recompute-modules",
          [](P& p) { p.recompute = model::Recompute::selective; }),
  };
  return kTable;
}

const FieldTable<P>& parallelism_offload_fields() {
  static const FieldTable<P> kTable{
      modules_row(&P::offload_modules, model::kOffloadModuleNames, "[core_attn, attn_proj, expert_fc1]",
                  "the modules whose saved input is copied to host memory, each named once: Megatron-Core's "
                  "--offload-modules",
                  [](P& /*p*/) {}),
  };
  return kTable;
}

std::string recompute_to_yaml(const model::ParallelPlan& p) {
  if (p.recompute != model::Recompute::selective || p.recompute_modules == 0) {
    return std::string(to_string(p.recompute));
  }
  return "{" + flow_fields(parallelism_recompute_fields(), p) + "}";
}

}  // namespace trainsim::scenario
