#include "scenarios/scenario_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "models/report/run_labels.hpp"
#include "models/report/summary.hpp"
#include "models/run/tuning_search_space.hpp"
#include "models/spec/human_units.hpp"
#include "models/step/layout_rules.hpp"
#include "models/workload/attention_kernel.hpp"
#include "models/workload/optimizer.hpp"
#include "scenarios/block_fields.hpp"
#include "scenarios/campaign_block.hpp"
#include "scenarios/cluster_background.hpp"
#include "scenarios/framework_block.hpp"
#include "scenarios/framework_choice.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/node_count_rules.hpp"
#include "scenarios/parallelism_fields.hpp"
#include "scenarios/preset_blocks.hpp"
#include "scenarios/region_block.hpp"

namespace trainsim::scenario {
namespace {

using Kind = YamlValue::Kind;

/// The largest share of a GPU's HBM budget.memory_headroom may keep free, as a fraction or as a size: beyond
/// it nothing would fit beside the headroom.
constexpr double kMaxHeadroomFraction = 0.95;

/// The names a `measured:` block may name: the summary's own numeric fields (models/report/summary.hpp).
const std::vector<std::string>& measurable_fields() {
  return model::numeric_field_names();
}

/// Locations of the values the cluster's checks point at (the top of the file when a key is absent).
struct Anchors {
  const YamlValue* root = nullptr;
  const YamlValue* gpus_per_node = nullptr;
  const YamlValue* nodes = nullptr;
};

/// A scenario's YAML tree to a Scenario, block by block.
class ScenarioConverter {
 public:
  ScenarioConverter(Diagnostics& d, bool cross_checks, PresetLibrary& presets)
      : d_(d), cross_checks_(cross_checks), presets_{presets} {}

  Scenario convert(const YamlValue& root, const std::string& default_name) {
    Scenario s;
    s.name = default_name;
    a_.root = &root;
    MapReader r(
        d_, root, "",
        {"name", "tags", "model", "cluster", "parallelism", "training", "checkpoint", "failures", "pricing",
         "budget", "sweep", "measured", "framework", "memory", "convergence", "tuning", "data", "people"});
    if (!r.valid()) return s;
    r.require({"model", "cluster", "training"});
    r.string("name", s.name);
    if (const YamlValue* v = r.get("tags")) read_tags(*v, s);
    const std::size_t before_model = d_.size();
    if (const YamlValue* v = r.get("model")) s.model = read_model_value(d_, *v, "model", presets_);
    const bool model_ok = r.has("model") && d_.size() == before_model;
    const std::size_t before_cluster = d_.size();
    if (const YamlValue* v = r.get("cluster")) read_cluster(*v, s.cluster);
    const bool cluster_ok = r.has("cluster") && d_.size() == before_cluster;
    const std::size_t before_plan = d_.size();
    if (const YamlValue* v = r.get("parallelism")) read_parallelism(*v, s.parallelism);
    if (const YamlValue* v = r.get("memory")) read_memory_block(d_, *v, s.parallelism);
    const YamlValue* plan = r.get("parallelism");
    s.overlap_grad_reduce_given = plan != nullptr && plan->is_mapping() && plan->find("overlap_grad_reduce");
    if (const YamlValue* v = r.get("framework")) {
      s.framework_named = true;
      if (v->is_mapping() && v->find("preset") == nullptr)
        s.unnamed_framework_block = std::make_shared<const YamlValue>(*v);
      read_framework_block(d_, *v, s.parallelism, s.overlap_grad_reduce_given);
    }
    const bool plan_ok = d_.size() == before_plan;
    const std::size_t before_training = d_.size();
    if (const YamlValue* v = r.get("training")) read_training(*v, s.training);
    const bool training_ok = r.has("training") && d_.size() == before_training;
    if (const YamlValue* v = r.get("checkpoint")) read_checkpoint(*v, s.checkpoint);
    if (const YamlValue* v = r.get("failures")) read_failures(*v, s.failures);
    if (const YamlValue* v = r.get("pricing"))
      read_pricing(*v, s.pricing, cluster_ok ? s.cluster.node.gpu.name : "",
                   cluster_ok ? s.cluster.node.name : "", cluster_ok && s.cluster.node.gpu_replaced);
    if (const YamlValue* v = r.get("budget")) read_budget(*v, s.budget);
    if (const YamlValue* v = r.get("convergence")) {
      s.convergence = read_convergence_block(d_, *v);
      const model::TrainingSpec& t = s.training;
      if (t.tokens || t.steps || t.epochs) {
        d_.add(*v, "convergence",
               "the target loss sets the run's length: remove training.tokens, steps or epochs");
      }
    }
    if (const YamlValue* v = r.get("tuning")) {
      s.tuning = read_tuning_block(d_, *v);
      if (s.tuning && s.tuning->trials == 0 && training_ok) trials_from_search_space(*v, s);
      if (s.tuning && cluster_ok) check_concurrent_trials(*v, *s.tuning, s.cluster);
    }
    if (const YamlValue* v = r.get("data")) s.data = read_data_block(d_, *v);
    if (const YamlValue* v = r.get("people")) s.people = read_people_block(d_, *v);
    if (const YamlValue* v = r.get("sweep")) read_sweep_block(*v, s.sweep);
    if (const YamlValue* v = r.get("measured")) read_measured(*v, s);
    // Cross-field checks only make sense when the blocks they combine were read without error.
    if (model_ok && cluster_ok && plan_ok) {
      choose_framework(s);
      check_layout(s, training_ok);
    }
    return s;
  }

 private:
  Diagnostics& d_;
  bool cross_checks_;
  PresetScope presets_;
  Anchors a_;

  void read_tags(const YamlValue& v, Scenario& s) {
    if (!v.is_mapping()) {
      d_.add(v, "tags", "expected a mapping of tag names to values, e.g. {team: llm}");
      return;
    }
    for (const YamlEntry& e : v.entries) {
      const std::string path = join_path("tags", e.key);
      // `trainsim run` writes a tag under its own key beside the built-in fields
      // (models/report/run_labels.hpp): a key one of them already has would be two columns of one name in the
      // table, or one silently overwritten in summary.json.
      if (const auto column = model::tag_column_clash(e.key)) {
        d_.add(Diagnostic{v.file ? *v.file : "", e.key_line, e.key_column, path,
                          "a tag cannot be called \"" + e.key +
                              "\": `trainsim run` writes each tag as a column of its summary under the tag's "
                              "key, and the summary already has the column " +
                              *column + "; rename the tag"});
        continue;
      }
      if (auto text = read_string(d_, e.value, path)) s.tags.emplace_back(e.key, *text);
    }
  }

  void read_cluster(const YamlValue& v, topo::ClusterSpec& c) {
    MapReader r(d_, v, "cluster", field_keys(cluster_fields()));
    if (!r.valid()) return;
    require_fields(r, cluster_fields());
    if (const YamlValue* n = r.get("node")) c.node = read_node_value(d_, *n, "cluster.node", presets_);
    a_.nodes = r.get("nodes");
    a_.gpus_per_node = r.get("gpus_per_node");
    read_fields(r, cluster_fields(), c);
    if (const YamlValue* n = r.get("network")) {
      MapReader nr(d_, *n, "cluster.network", field_keys(cluster_network_fields()));
      read_fields(nr, cluster_network_fields(), c.network);
      if (const YamlValue* dims = nr.get("torus_dims")) read_torus_dims(*dims, c);
    }
    if (const YamlValue* b = r.get("background")) read_cluster_background(d_, *b, c);
    if (const YamlValue* st = r.get("stragglers")) read_cluster_stragglers(d_, *st, c);
    if (const YamlValue* dg = r.get("degraded")) read_cluster_degraded(d_, *dg, c);
    if (const YamlValue* va = r.get("variability")) read_cluster_variability(d_, *va, c);
    if (const YamlValue* st = r.get("storage")) {
      MapReader sr(d_, *st, "cluster.storage", field_keys(cluster_storage_fields()));
      read_fields(sr, cluster_storage_fields(), c.storage);
    }
  }

  // One size per dimension of the torus (2 for torus-2d, 3 for torus-3d), multiplying to the node count
  // (every run checks it, not only those that build the cluster graph).
  void read_torus_dims(const YamlValue& dims, topo::ClusterSpec& c) {
    const std::string path = "cluster.network.torus_dims";
    if (!dims.is_sequence() || dims.items.empty()) {
      d_.add(dims, path, "expected a list of sizes, e.g. [8, 8, 16]");
      return;
    }
    const topo::FabricTopology t = c.network.topology;
    const std::size_t want = t == topo::FabricTopology::torus_2d   ? 2
                             : t == topo::FabricTopology::torus_3d ? 3
                                                                   : 0;
    if (want == 0) {
      d_.add(dims, path,
             "applies to a torus-2d or torus-3d topology; this one is " + std::string(to_string(t)));
      return;
    }
    if (dims.items.size() != want) {
      d_.add(dims, path,
             "a " + std::string(to_string(t)) + " needs " + std::to_string(want) + " sizes, not " +
                 std::to_string(dims.items.size()));
      return;
    }
    for (std::size_t i = 0; i < dims.items.size(); ++i) {
      const auto k = read_count(d_, dims.items[i], path + "[" + std::to_string(i) + "]", 1, 1e6);
      if (!k) return;
      c.network.torus_dims.push_back(static_cast<int>(*k));
    }
    if (std::string problem = torus_dims_problem(c.network.torus_dims, c.nodes); !problem.empty())
      d_.add(dims, path, problem);
  }

  void read_parallelism(const YamlValue& v, model::ParallelPlan& p) {
    MapReader r(d_, v, "parallelism", field_keys(parallelism_fields()));
    read_fields(r, parallelism_fields(), p);
  }

  void read_optimizer(const YamlValue& v, model::OptimizerSpec& o) {
    const std::string path = "training.optimizer";
    if (!v.is_mapping()) {
      read_optimizer_kind(d_, v, path, o);
      return;
    }
    MapReader r(d_, v, path, field_keys(training_optimizer_fields()));
    require_fields(r, training_optimizer_fields());
    read_fields(r, training_optimizer_fields(), o);
  }

  void read_training(const YamlValue& v, model::TrainingSpec& t) {
    MapReader r(d_, v, "training", field_keys(training_fields()));
    if (!r.valid()) return;
    require_fields(r, training_fields());
    read_fields(r, training_fields(), t);
    if (const YamlValue* recipe = r.get("fp8_recipe");
        recipe != nullptr && t.precision != topo::Precision::fp8) {
      d_.add(
          *recipe, "training.fp8_recipe",
          "an fp8 recipe needs precision: fp8, found precision " + std::string(topo::to_string(t.precision)));
    }
    if (const YamlValue* o = r.get("optimizer")) read_optimizer(*o, t.optimizer);
    if (const YamlValue* sch = r.get("schedule")) {
      if (sch->is_scalar()) {
        r.choice("schedule", t.schedule, model::kLrScheduleNames);
      } else {
        MapReader sr(d_, *sch, "training.schedule", field_keys(training_schedule_fields()));
        if (sr.valid() && require_fields(sr, training_schedule_fields())) {
          read_fields(sr, training_schedule_fields(), t);
          if (sr.has("decay_fraction") && t.schedule != model::LrSchedule::wsd) {
            d_.add(*sch, "training.schedule.decay_fraction", "decay_fraction is only used with kind: wsd");
          }
        }
      }
    }
    const int lengths = int{r.has("tokens")} + int{r.has("steps")} + int{r.has("epochs")};
    if (lengths > 1) {
      d_.add(v, "training", "give only one of tokens, steps or epochs (the run length)");
    }
    if (r.has("epochs") && !r.has("dataset_tokens")) {
      d_.add(v, "training.dataset_tokens", "missing key \"dataset_tokens\" (needed with epochs)");
    }
    if (r.has("dataset_tokens") && !r.has("epochs")) {
      d_.add(*r.get("dataset_tokens"), "training.dataset_tokens", "dataset_tokens is only used with epochs");
    }
  }

  void read_checkpoint(const YamlValue& v, model::CheckpointSpec& c) {
    MapReader r(d_, v, "checkpoint", field_keys(checkpoint_fields()));
    if (!r.valid()) return;
    c.enabled = true;
    read_fields(r, checkpoint_fields(), c);
    // Beyond 1e9 s (31 years) the interval in steps overflowed into a checkpoint every step.
    if (const YamlValue* i = r.get("interval"); i != nullptr && c.interval_s > 1e9) {
      d_.add(*i, "checkpoint.interval",
             "expected at most 1e9 s (31 years); to write no checkpoint, remove the "
             "checkpoint block");
      c.interval_s = 0;
    }
    if (r.has("interval") == r.has("every_steps")) {
      d_.add(v, "checkpoint",
             "give exactly one of interval (a duration, e.g. \"2 h\") or every_steps (a count)");
    }
  }

  void read_failures(const YamlValue& v, model::FailureSpec& f) {
    MapReader r(d_, v, "failures", field_keys(failures_fields()));
    if (!r.valid()) return;
    f.enabled = true;
    read_fields(r, failures_fields(), f);
    if (!r.has("node_mtbf") && !r.has("gpu_mtbf")) {
      d_.add(v, "failures", "give node_mtbf or gpu_mtbf (a duration, e.g. \"5000 h\")");
    }
  }

  // `gpu` and `node` are the cluster's GPU and node preset names, "" when the cluster did not read (its
  // errors are reported); `gpu_replaced`: the node preset's GPU was replaced (topo::NodeSpec::gpu_replaced).
  void read_pricing(const YamlValue& v, model::PricingSpec& p, const std::string& gpu,
                    const std::string& node, bool gpu_replaced) {
    MapReader r(d_, v, "pricing", field_keys(pricing_fields()));
    if (!r.valid()) return;
    p.enabled = true;
    // The region's table first: every key written beside it is read after it and wins.
    if (const YamlValue* region = r.get("region")) read_region(*region, p, gpu, r.has("gpu_hour"));
    if (const YamlValue* g = r.get("gpu_hour")) read_gpu_hour(*g, p, gpu, node, gpu_replaced);
    if (const YamlValue* c = r.get("commitment")) {
      MapReader cr(d_, *c, "pricing.commitment", field_keys(pricing_commitment_fields()));
      if (cr.valid() && require_fields(cr, pricing_commitment_fields())) {
        p.commitment.enabled = true;
        read_fields(cr, pricing_commitment_fields(), p.commitment);
      }
    }
    if (const YamlValue* s = r.get("spot")) {
      MapReader sr(d_, *s, "pricing.spot", field_keys(pricing_spot_fields()));
      if (sr.valid()) {
        p.spot.enabled = true;
        require_fields(sr, pricing_spot_fields());
        read_fields(sr, pricing_spot_fields(), p.spot);
      }
    }
    if (const YamlValue* s = r.get("storage")) {
      MapReader sr(d_, *s, "pricing.storage", field_keys(pricing_storage_fields()));
      read_fields(sr, pricing_storage_fields(), p.storage);
    }
    read_fields(r, pricing_fields(), p);
    if (const YamlValue* e = r.get("energy")) {
      MapReader er(d_, *e, "pricing.energy", field_keys(pricing_energy_fields()));
      read_fields(er, pricing_energy_fields(), p.energy);
    }
  }

  // One price ("$2.50/h") for any hardware, or a price per node or GPU preset ({dgx-h100: "$2.50",
  // dgx-b200: "$4.50"}): the cluster's node preset first, then its GPU preset. A node preset whose GPU the
  // scenario replaced is priced by its GPU alone: the preset's price is for the preset's GPUs.
  void read_gpu_hour(const YamlValue& v, model::PricingSpec& p, const std::string& gpu,
                     const std::string& node, bool gpu_replaced) {
    const std::string path = "pricing.gpu_hour";
    if (!v.is_mapping()) {
      if (const auto price = read_quantity(d_, v, path, Dimension::usd_per_hour, Bound::non_negative)) {
        p.gpu_hour_usd = *price;
        p.gpu_hour_single = true;
      }
      return;
    }
    if (v.entries.empty()) {
      d_.add(v, path,
             "expected a price, or a price per node preset, e.g. {dgx-h100: \"$2.50\", dgx-b200: \"$4.50\"}");
      return;
    }
    // A node preset whose GPU was replaced is priced by its GPU's key alone: no key names its node.
    const std::string priced_node = gpu_replaced ? std::string() : node;
    const YamlEntry* chosen = nullptr;
    double chosen_price = 0;
    std::string names;
    for (const YamlEntry& e : v.entries) {
      names += (names.empty() ? "" : ", ") + e.key;
      const auto price =
          read_quantity(d_, e.value, join_path(path, e.key), Dimension::usd_per_hour, Bound::non_negative);
      if (!price) continue;
      if (e.key == priced_node || (e.key == gpu && (chosen == nullptr || chosen->key != priced_node))) {
        chosen = &e;
        chosen_price = *price;
      }
    }
    if (node.empty() && gpu.empty()) return;  // the cluster's own errors are reported
    if (chosen == nullptr && gpu_replaced) {
      d_.add(v, path,
             "no price for the cluster's GPU " + gpu + " (the node preset " + node +
                 " with its GPU replaced, which the preset's price does not cover): the map prices " + names +
                 "; add one for " + gpu);
      return;
    }
    if (chosen == nullptr) {
      d_.add(v, path,
             "no price for the cluster's node " + node + " (GPU " + gpu + "): the map prices " + names +
                 "; add one for " + node);
      return;
    }
    p.gpu_hour_usd = chosen_price;
  }

  void read_region(const YamlValue& v, model::PricingSpec& p, const std::string& gpu,
                   bool explicit_gpu_hour) {
    const std::string path = "pricing.region";
    if (!v.is_scalar()) {
      d_.add(v, path, "expected the name of a region price table, e.g. us-east (`trainsim list regions`)");
      return;
    }
    const std::size_t before = d_.size();
    const model::RegionPrices region = read_region_value(d_, v, path, presets_);
    if (d_.size() != before) return;
    const bool priced = apply_region(region, gpu, p);
    if (!priced && !explicit_gpu_hour && !gpu.empty()) {
      d_.add(v, path,
             "region " + region.name + " has no GPU-hour price for the cluster's GPU " + gpu +
                 " (it prices " + priced_gpus(region) + "); give pricing.gpu_hour beside it");
    }
  }

  void read_budget(const YamlValue& v, model::BudgetSpec& b) {
    MapReader r(d_, v, "budget", field_keys(budget_fields()));
    read_fields(r, budget_fields(), b);
    if (const YamlValue* h = r.get("memory_headroom")) read_memory_headroom(*h, b);
    if (const YamlValue* a = r.get("alerts")) read_alerts(*a, r.has("max_cost"), b);
  }

  // A fraction of HBM ("0.1") or a size ("8 GiB"): either is what must stay free on each GPU.
  void read_memory_headroom(const YamlValue& v, model::BudgetSpec& b) {
    const std::string path = "budget.memory_headroom";
    const std::string expected = fmt::format(
        "expected a fraction of HBM from 0 to {:g} (e.g. 0.1) or a size with a unit (e.g. \"8 GiB\")",
        kMaxHeadroomFraction);
    if (!v.is_scalar()) {
      d_.add(v, path, expected);
      return;
    }
    if (const QuantityResult n = try_parse_number(v.scalar, 0, kMaxHeadroomFraction); n.ok()) {
      b.memory_headroom = n.value;
      return;
    }
    if (const QuantityResult q = try_parse_quantity(v.scalar, Dimension::bytes, Bound::non_negative);
        q.ok()) {
      b.memory_headroom_bytes = q.value;
      return;
    }
    if (try_parse_number(v.scalar, 0, 1e300).ok()) {
      d_.add(v, path,
             fmt::format("a fraction of HBM must be at most {:g}, found \"", kMaxHeadroomFraction) +
                 v.scalar + "\"; or give a size with a unit, like \"8 GiB\"");
      return;
    }
    d_.add(v, path, expected + ", found \"" + v.scalar + "\"");
  }

  // Fractions of max_cost, any order (kept ascending); each > 0 and given once. Above 1 is allowed: an
  // alert past the budget says how far past it the spend goes.
  void read_alerts(const YamlValue& v, bool has_max_cost, model::BudgetSpec& b) {
    const std::string path = "budget.alerts";
    constexpr std::size_t kMaxAlerts = 64;
    if (!v.is_sequence() || v.items.empty() || v.items.size() > kMaxAlerts) {
      d_.add(v, path,
             "expected a list of 1 to " + std::to_string(kMaxAlerts) +
                 " fractions of max_cost, e.g. [0.5, 0.8, 1.0]");
      return;
    }
    if (!has_max_cost) {
      d_.add(v, path, "alerts are fractions of budget.max_cost: give max_cost beside them");
      return;
    }
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      const std::string item = path + "[" + std::to_string(i) + "]";
      const auto x = read_number(d_, v.items[i], item, 0, 1e6);
      if (!x) continue;
      if (*x <= 0) {
        d_.add(v.items[i], item,
               "must be greater than zero (a fraction of max_cost), found \"" + v.items[i].scalar + "\"");
      } else if (std::find(b.alerts.begin(), b.alerts.end(), *x) != b.alerts.end()) {
        d_.add(v.items[i], item, "fraction " + format_number(*x) + " is given twice");
      } else {
        b.alerts.push_back(*x);
      }
    }
    std::sort(b.alerts.begin(), b.alerts.end());
  }

  void read_sweep_block(const YamlValue& v, SweepSpec& sweep) {
    if (!v.is_mapping()) {
      d_.add(v, "sweep", "expected a mapping of dotted keys to lists, e.g. {cluster.nodes: [16, 32]}");
      return;
    }
    // The table's keys, and any other key as a swept key path.
    const std::vector<std::string> table_keys = field_keys(sweep_fields());
    const auto is_axis = [&](const std::string& key) {
      return std::find(table_keys.begin(), table_keys.end(), key) == table_keys.end();
    };
    std::vector<std::string> allowed = table_keys;
    for (const YamlEntry& e : v.entries) allowed.push_back(e.key);
    MapReader r(d_, v, "sweep", allowed);
    read_fields(r, sweep_fields(), sweep);
    std::size_t zip_length = 0;
    for (const YamlEntry& e : v.entries) {
      if (!is_axis(e.key)) continue;
      const std::string path = join_path("sweep", e.key);
      if (!e.value.is_sequence() || e.value.items.empty()) {
        d_.add(e.value, path, "expected a non-empty list of values, e.g. [16, 32, 64]");
        continue;
      }
      SweepAxis axis{e.key, {}};
      for (const YamlValue& item : e.value.items) axis.values.push_back(to_yaml_text(item));
      if (zip_length == 0) zip_length = axis.values.size();
      sweep.axes.push_back(std::move(axis));
    }
    if (sweep.mode == SweepMode::zip) {
      for (const YamlEntry& e : v.entries) {
        if (is_axis(e.key) && e.value.is_sequence() && e.value.items.size() != zip_length) {
          d_.add(e.value, join_path("sweep", e.key),
                 "with mode: zip every list has the same length; this one has " +
                     std::to_string(e.value.items.size()) + ", the first has " + std::to_string(zip_length));
        }
      }
    }
  }

  void read_measured(const YamlValue& v, Scenario& s) {
    if (!v.is_mapping()) {
      d_.add(v, "measured", "expected a mapping: source, metric values and tolerance");
      return;
    }
    MeasuredSpec m;
    std::vector<std::string> allowed = measurable_fields();
    for (const std::string& key : field_keys(measured_fields())) allowed.push_back(key);
    MapReader r(d_, v, "measured", allowed);
    require_fields(r, measured_fields());
    read_fields(r, measured_fields(), m);
    if (const YamlValue* t = r.get("tolerance")) {
      if (t->is_mapping()) {
        for (const YamlEntry& e : t->entries) {
          const std::string path = join_path("measured.tolerance", e.key);
          if (std::find(measurable_fields().begin(), measurable_fields().end(), e.key) ==
              measurable_fields().end()) {
            d_.add(Diagnostic{
                t->file ? *t->file : "", e.key_line, e.key_column, path,
                "unknown metric \"" + e.key + "\"" +
                    (closest_match(e.key, measurable_fields()).empty()
                         ? std::string()
                         : " (did you mean \"" + closest_match(e.key, measurable_fields()) + "\"?)")});
            continue;
          }
          if (auto x = read_number(d_, e.value, path, 0, 100)) m.tolerance_per_metric[e.key] = *x;
        }
      } else if (auto x = read_number(d_, *t, "measured.tolerance", 0, 100)) {
        m.tolerance = *x;
      }
    }
    bool metric_given = false;  // a metric's key, read or refused: the block does name what it measures
    for (const YamlEntry& e : v.entries) {
      if (std::find(measurable_fields().begin(), measurable_fields().end(), e.key) ==
          measurable_fields().end()) {
        continue;  // a key of the table, or an unknown one the MapReader reported
      }
      metric_given = true;
      // Above 0, as a relative error needs; a fraction (mfu, goodput, ...) at most 1, as a percentage given
      // by mistake would be scored as a number a hundred times the prediction.
      const model::SummaryField* field = model::field_schema(e.key);
      const bool fraction = field != nullptr && field->unit == model::FieldUnit::fraction;
      const std::string path = join_path("measured", e.key);
      if (auto x = read_number(d_, e.value, path, 0, fraction ? 1.0 : 1e30)) {
        if (*x <= 0) {
          d_.add(e.value, path, "must be above 0: the error against a measured 0 is undefined");
          continue;
        }
        m.values.emplace_back(e.key, *x);
      }
    }
    if (!metric_given && r.valid())
      d_.add(v, "measured", "no measured metric given (e.g. iteration_time: 13.75)");
    s.measured = std::move(m);
  }

  /// Trials run side by side on 1/concurrent of the nodes each: more of them than nodes would share nodes
  /// that do not exist.
  /// tuning.trials left out: one coordinate-descent pass over the optimizer's published search space
  /// (models/run/tuning_search_space.hpp), or an error where none is published.
  void trials_from_search_space(const YamlValue& tuning, Scenario& s) {
    const model::OptimizerKind kind = s.training.optimizer.kind;
    const auto space = model::search_space(kind);
    if (!space) {
      d_.add(tuning, "tuning.trials",
             "no published search space for the optimizer " + std::string(model::optimizer_info(kind).name) +
                 " gives a default trial count: give trials, e.g. trials: 64 (adamw, adam-8bit, lion, muon "
                 "and soap have one)");
      return;
    }
    s.tuning->trials = model::coordinate_descent_trials(*space);
    s.tuning->trials_source = std::string(space->source);
  }

  void check_concurrent_trials(const YamlValue& tuning, const model::TuningSpec& t,
                               const topo::ClusterSpec& c) {
    const std::string problem = concurrent_trials_problem(t.concurrent, c.nodes);
    if (problem.empty()) return;
    const YamlValue* at = tuning.is_mapping() ? tuning.find("concurrent") : nullptr;
    d_.add(at != nullptr ? *at : tuning, "tuning.concurrent", problem);
  }

  void check_layout(Scenario& s, bool training_ok) {
    auto& c = s.cluster;
    auto& p = s.parallelism;
    const auto& m = s.model;
    if (std::string problem = c.gpus_per_node_problem(); !problem.empty()) {
      d_.add(*a_.gpus_per_node, "cluster.gpus_per_node", std::move(problem));
      return;
    }
    const double total = static_cast<double>(c.nodes) * c.gpus_in_use_per_node();
    if (total > kMaxTotalGpus) {
      d_.add(a_.nodes ? *a_.nodes : *a_.root, "cluster.nodes",
             "the cluster has " + format_number(total) + " GPUs; trainsim simulates at most " +
                 format_number(kMaxTotalGpus));
      return;
    }
    if (!cross_checks_) {
      if (p.dp_auto) p.dp = std::max<std::int64_t>(1, c.total_gpus() / p.model_parallel_size());
      return;
    }
    const std::int64_t gpus = c.total_gpus();
    const std::int64_t mp = p.model_parallel_size();
    if (p.dp_auto && gpus % mp == 0) p.dp = gpus / mp;
    model::TrainingSpec training = s.training;
    if (!training_ok) training.global_batch = 0;  // its own error is reported already
    for (model::LayoutProblem& problem : model::layout_rules(m, p, training, gpus))
      d_.add(anchor(problem.key), model::key_path(problem.key), std::move(problem.message));
    check_dispatcher_sms(p.framework, c.node.gpu);
    check_hardware(s);
  }

  /// What the step asks of the hardware, placed at the key that asks it (the step's pricing would stop at
  /// its first kernel, with no place in the file): throughput at training.precision, a fused attention
  /// kernel the GPU runs, a memory headroom the GPU has, and NICs between nodes.
  void check_hardware(const Scenario& s) {
    const topo::GpuSpec& g = s.cluster.node.gpu;
    const topo::Precision precision = s.training.precision;
    if (g.peak.at(precision) <= 0) {
      const std::string name(topo::to_string(precision));
      d_.add(anchor_path("training.precision"), "training.precision",
             "the cluster's GPU " + g.name + " has no " + name + " throughput (its peak." + name + ")");
    }
    if (model::is_fused(s.model.attention)) {
      const model::Attention kernel = model::resolve_attention(s.model.attention, g.efficiency);
      if (model::attention_kernel_fraction(kernel, g.efficiency) <= 0) {
        const std::string name(model::to_string(kernel));
        d_.add(anchor_path("model.attention"), "model.attention",
               "the attention kernel " + name + " does not run on the cluster's GPU " + g.name +
                   " (it gives no efficiency." + name +
                   "_attention_fraction): name another kernel, or give it one");
      }
    }
    // A headroom as a size is held to what a fraction may be (read_memory_headroom).
    if (const auto bytes = s.budget.memory_headroom_bytes;
        bytes && g.hbm_bytes > 0 && *bytes > kMaxHeadroomFraction * g.hbm_bytes) {
      d_.add(anchor_path("budget.memory_headroom"), "budget.memory_headroom",
             model::format_human(model::FieldUnit::bytes, *bytes) +
                 fmt::format(" is more than {:g} of the cluster's GPU's ", kMaxHeadroomFraction) +
                 model::format_human(model::FieldUnit::bytes, g.hbm_bytes) +
                 " of HBM: nothing would fit beside it");
    }
    const topo::ClusterSpec& c = s.cluster;
    if (c.nodes > 1 && (c.nics_per_node() <= 0 || c.nic_bytes_per_s() <= 0)) {
      d_.add(anchor_path("cluster.node"), "cluster.node",
             "the cluster has " + std::to_string(c.nodes) + " nodes, but its node " + c.node.name +
                 " has no NIC bandwidth between them (nics_per_node, nic)");
    }
  }

  /// A flex dispatcher must leave the GPU some SMs for the kernels beside it (the other framework rules are
  /// layout rules, model::layout_rules).
  void check_dispatcher_sms(const model::Framework& f, const topo::GpuSpec& gpu) {
    if (std::string problem = model::dispatcher_sms_problem(f, gpu.sm_count, gpu.name); !problem.empty())
      d_.add(anchor(model::LayoutKey::moe_dispatcher_sms), "framework.moe_dispatcher_sms",
             std::move(problem));
  }

  /// Where in the file a layout problem is shown: the key it blames, found by its path; else the block
  /// the path starts in (parallelism, framework), else the top of the file (the top for
  /// training.global_batch).
  [[nodiscard]] const YamlValue& anchor(model::LayoutKey key) const {
    return anchor_path(model::key_path(key), key != model::LayoutKey::global_batch);
  }

  /// The key at `path` (dot-separated) where the file writes it; else, with `or_block`, the block the path
  /// starts in; else the top of the file.
  [[nodiscard]] const YamlValue& anchor_path(const std::string& path, bool or_block = true) const {
    const YamlValue* at = a_.root;
    for (std::size_t begin = 0; at != nullptr && begin <= path.size();) {
      const std::size_t dot = std::min(path.find('.', begin), path.size());
      at = at->is_mapping() ? at->find(std::string_view(path).substr(begin, dot - begin)) : nullptr;
      begin = dot + 1;
    }
    if (at != nullptr) return *at;
    const YamlValue* block =
        or_block ? a_.root->find(std::string_view(path).substr(0, path.find('.'))) : nullptr;
    return block != nullptr ? *block : *a_.root;
  }
};

}  // namespace

const std::vector<std::pair<std::string, model::OptimizerKind>>& optimizer_names() {
  using K = model::OptimizerKind;
  // Canonical names first (what the dump writes), then the aliases parse_optimizer accepts.
  static const std::vector<std::pair<std::string, K>> kTable = [] {
    std::vector<std::pair<std::string, K>> t;
    for (const model::OptimizerInfo& info : model::all_optimizers()) t.emplace_back(info.name, info.kind);
    for (const model::OptimizerAlias& a : model::optimizer_aliases()) t.emplace_back(a.alias, a.kind);
    return t;
  }();
  return kTable;
}

Scenario read_scenario(Diagnostics& d, const YamlValue& root, const std::string& default_name,
                       bool cross_checks, PresetLibrary& presets) {
  ScenarioConverter converter(d, cross_checks, presets);
  return converter.convert(root, default_name);
}

}  // namespace trainsim::scenario
