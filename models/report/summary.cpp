#include "models/report/summary.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

#include "sim/csv_field.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

const SummaryField* Summary::find(const std::string& name) const {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::optional<double> Summary::number(const std::string& name) const {
  const SummaryField* f = find(name);
  if (f == nullptr || f->unit == FieldUnit::text) return std::nullopt;
  return f->number;
}

namespace {

class FieldList {
 public:
  explicit FieldList(std::vector<SummaryField>& out) : out_(out) {}
  void group(std::string g) { group_ = std::move(g); }
  void num(std::string name, FieldUnit unit, double value) {
    TRAINSIM_CHECK(std::isfinite(value), "summary field " + name + " is not finite");
    out_.push_back(SummaryField{.name = std::move(name), .unit = unit, .number = value, .group = group_});
  }
  void flag(std::string name, bool value) { num(std::move(name), FieldUnit::flag, value ? 1.0 : 0.0); }
  void text(std::string name, std::string value) {
    out_.push_back(SummaryField{
        .name = std::move(name), .unit = FieldUnit::text, .text = std::move(value), .group = group_});
  }

 private:
  std::vector<SummaryField>& out_;
  std::string group_;
};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

using U = FieldUnit;

// The "iteration" group: the memory verdict, feasibility, the step's sizes, rates and time shares (`run`,
// when given, adds its feasibility and reason). The verdict leads: a layout that does not fit is not
// feasible, though its time is still reported (what it would take).
void iteration_fields(FieldList& f, const StepReport& step, const RunReport* run) {
  f.group("iteration");
  f.flag("fits", step.fits);
  f.flag("feasible", step.feasible && step.fits && (run == nullptr || run->feasible));
  std::string reason = step.reason;
  if (run != nullptr && !run->reason.empty()) reason += (reason.empty() ? "" : "; ") + run->reason;
  f.text("reason", reason);
  f.text("framework", step.framework);
  f.text("step_mode", step.step_mode);
  f.num("gpus", U::count, static_cast<double>(step.gpus));
  f.num("parameters", U::count, step.parameters);
  f.num("parameters_active", U::count, step.parameters_active);
  f.num("parameters_mtp", U::count, step.parameters_mtp);
  f.num("model_flops_per_step", U::flops, step.model_flops_per_step);
  f.num("hardware_flops_per_step", U::flops, step.hardware_flops_per_step);
  f.num("micro_batches", U::count, static_cast<double>(step.micro_batches));
  f.num("iteration_time", U::seconds, step.iteration_time);
  f.num("tokens_per_s", U::per_second, step.tokens_per_s);
  f.num("tokens_per_s_per_gpu", U::per_second, step.tokens_per_s_per_gpu);
  f.num("model_tflops_per_gpu", U::tflops, step.model_tflops_per_gpu);
  f.num("hardware_tflops_per_gpu", U::tflops, step.hardware_tflops_per_gpu);
  f.num("mfu", U::fraction, step.mfu);
  f.num("hfu", U::fraction, step.hfu);
  f.num("mfu_fp8", U::fraction, step.mfu_fp8);
  f.num("bubble_fraction", U::fraction, step.bubble_fraction);
  f.num("compute", U::seconds, step.time.compute);
  f.num("exposed_tp_comm", U::seconds, step.time.exposed_tp_comm);
  f.num("exposed_ep_comm", U::seconds, step.time.exposed_ep_comm);
  f.num("exposed_dp_comm", U::seconds, step.time.exposed_dp_comm);
  f.num("exposed_pp_comm", U::seconds, step.time.exposed_pp_comm);
  f.num("optimizer", U::seconds, step.time.optimizer);
  f.num("bubble", U::seconds, step.time.bubble);
}

// The "memory" group: the busiest GPU's memory by part, against its capacity (whether it fits leads the
// iteration group).
void memory_fields(FieldList& f, const StepReport& step) {
  f.group("memory");
  f.num("memory_per_gpu", U::bytes, step.memory_per_gpu);
  f.num("weights", U::bytes, step.memory.weights);
  f.num("grads", U::bytes, step.memory.grads);
  f.num("optimizer_state", U::bytes, step.memory.optimizer_state);
  f.num("activations", U::bytes, step.memory.activations);
  f.num("buffers", U::bytes, step.memory.buffers);
  f.num("memory_capacity", U::bytes, step.memory_capacity);
}

// The "run" group: length, checkpoints, failures, and when modelled convergence, tuning and the spread.
void run_fields(FieldList& f, const RunReport& run) {
  f.group("run");
  f.num("steps", U::count, static_cast<double>(run.steps));
  f.num("tokens", U::count, run.tokens);
  f.num("training_time", U::seconds, run.training_time);
  f.num("run_time", U::seconds, run.run_time);
  f.num("gpu_hours", U::count, run.gpu_hours);
  f.num("checkpoint_size", U::bytes, run.checkpoint_size);
  f.num("checkpoint_write_time", U::seconds, run.checkpoint_write_time);
  f.num("checkpoint_stall", U::seconds, run.checkpoint_stall);
  f.num("checkpoint_restore_time", U::seconds, run.checkpoint_restore_time);
  f.num("checkpoints", U::count, static_cast<double>(run.checkpoints));
  f.num("checkpoint_interval", U::seconds, run.checkpoint_interval);
  f.num("recommended_checkpoint_interval", U::seconds, run.recommended_checkpoint_interval);
  f.num("failures_expected", U::count, run.failures_expected);
  f.num("rollbacks_expected", U::count, run.rollbacks_expected);
  f.num("lost_work", U::seconds, run.lost_work);
  f.num("goodput", U::fraction, run.goodput);
  if (run.convergence) {
    f.num("target_loss", U::count, run.target_loss);
    f.num("initial_loss", U::count, run.initial_loss);
    f.num("law_tokens", U::count, run.law_tokens);
    f.num("tokens_min", U::count, run.tokens_min);
    f.num("critical_batch_tokens", U::count, run.critical_batch_tokens);
    f.num("optimizer_speedup", U::count, run.optimizer_speedup);
    f.num("optimizer_speedup_low", U::count, run.optimizer_speedup_low);
    f.num("optimizer_speedup_high", U::count, run.optimizer_speedup_high);
    f.num("tokens_range_low", U::count, run.tokens_range_low);
    f.num("tokens_range_high", U::count, run.tokens_range_high);
    f.num("cost_total_range_low", U::usd, run.cost_total_range_low);
    f.num("cost_total_range_high", U::usd, run.cost_total_range_high);
    if (run.next_target_loss > 0) {
      f.num("next_target_loss", U::count, run.next_target_loss);
      f.num("schedule_extra_tokens", U::count, run.schedule_extra_tokens);
    }
  }
  if (run.tuning) {
    f.num("tuning_trial_equivalents", U::count, run.tuning_trial_equivalents);
    f.num("tuning_gpu_hours", U::count, run.tuning_gpu_hours);
    f.num("tuning_time", U::seconds, run.tuning_time);
  }
  if (run.run_time_spread.mean > 0) {
    f.num("run_time_p5", U::seconds, run.run_time_spread.p5);
    f.num("run_time_p95", U::seconds, run.run_time_spread.p95);
    f.num("cost_total_p5", U::usd, run.cost_spread.p5);
    f.num("cost_total_p95", U::usd, run.cost_spread.p95);
  }
}

// The "cost" group: the bill by part, energy and emissions, spot and the budget's violations.
void cost_fields(FieldList& f, const RunReport& run) {
  f.group("cost");
  f.text("region", run.region);
  f.num("cost_total", U::usd, run.cost_total);
  f.num("cost_compute", U::usd, run.cost_compute);
  f.num("cost_storage", U::usd, run.cost_storage);
  f.num("cost_network", U::usd, run.cost_network);
  f.num("cost_energy", U::usd, run.cost_energy);
  f.num("cost_wasted", U::usd, run.cost_wasted);
  f.num("cost_per_token", U::usd, run.cost_per_token);
  f.num("cost_per_pflop", U::usd, run.cost_per_pflop);
  if (run.convergence) f.num("cost_per_loss_point", U::usd, run.cost_per_loss_point);
  if (run.tuning) f.num("cost_tuning", U::usd, run.cost_tuning);
  if (run.data) f.num("cost_data", U::usd, run.cost_data);
  if (run.people) f.num("cost_people", U::usd, run.cost_people);
  f.num("cost_elastic", U::usd, run.cost_elastic);
  if (run.commitment) {
    f.num("cost_fixed", U::usd, run.cost_fixed);
    f.num("cost_fixed_idle", U::usd, run.cost_fixed_idle);
    f.num("committed_idle_gpu_hours", U::count, run.committed_idle_gpu_hours);
  }
  f.num("energy_kwh", U::kwh, run.energy_kwh);
  f.num("co2_kg", U::kg, run.co2_kg);
  if (run.spot) {
    f.num("spot_run_time", U::seconds, run.spot_run_time);
    f.num("spot_cost_total", U::usd, run.spot_cost_total);
  }
  f.text("budget_violations", join(run.budget_violations, "; "));
}

// The "budget" group, when the budget sets alerts: alert k (1-based, in ascending fraction): its fraction
// of max_cost, the amount, and when the campaign's spend reaches it (no time when it never does).
void budget_alert_fields(FieldList& f, const RunReport& run) {
  f.group("budget");
  for (std::size_t k = 0; k < run.budget_alerts.size(); ++k) {
    const BudgetAlert& a = run.budget_alerts[k];
    const std::string name = fmt::format("budget_alert_{}_", k + 1);
    f.num(name + "fraction", U::count, a.fraction);
    f.num(name + "cost", U::usd, a.usd);
    f.flag(name + "reached", a.reached);
    if (a.reached) f.num(name + "time", U::seconds, a.time);
  }
}

}  // namespace

Summary summarize(const Labels& labels, const StepReport& step, const RunReport* run) {
  Summary summary;
  FieldList f(summary.fields);
  f.group("labels");
  for (const auto& [key, value] : labels) f.text(key, value);

  iteration_fields(f, step, run);
  memory_fields(f, step);
  if (run == nullptr) return summary;
  run_fields(f, *run);
  cost_fields(f, *run);
  if (!run->budget_alerts.empty()) budget_alert_fields(f, *run);
  return summary;
}

namespace {

/// Every field summarize() can write for a step and its run, the optional groups switched on.
const Summary& full_schema() {
  static const Summary kSchema = [] {
    RunReport run;  // every optional group switched on, so that its fields are listed too
    run.run_time_spread.mean = 1;
    run.spot = true;
    run.convergence = true;
    run.tuning = true;
    run.data = true;
    run.people = true;
    run.commitment = true;
    return summarize({}, StepReport{}, &run);
  }();
  return kSchema;
}

}  // namespace

const std::vector<std::string>& numeric_field_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const SummaryField& f : full_schema().fields)
      if (f.unit != FieldUnit::text && f.unit != FieldUnit::flag) out.push_back(f.name);
    return out;
  }();
  return kNames;
}

const SummaryField* field_schema(const std::string& name) {
  return full_schema().find(name);
}

std::string column_name(const std::string& name) {
  const SummaryField* f = field_schema(name);
  return f != nullptr ? column_name(*f) : name;
}

const SummaryField* column_schema(const std::string& column) {
  for (const SummaryField& f : full_schema().fields)
    if (column_name(f) == column) return &f;
  return nullptr;
}

std::string group_title(const std::string& group) {
  static const std::vector<std::pair<std::string, std::string>> kTitles = {
      {"labels", "Scenario"}, {"iteration", "Iteration"},  {"memory", "Memory per GPU (worst GPU)"},
      {"run", "Whole run"},   {"cost", "Cost and energy"}, {"budget", "Budget alerts (campaign clock)"}};
  for (const auto& [g, t] : kTitles) {
    if (g == group) return t;
  }
  return group;
}

std::string format_table(const Summary& summary) {
  std::size_t width = 0;
  for (const auto& f : summary.fields) width = std::max(width, f.name.size());
  std::string out;
  std::string current;
  for (const auto& f : summary.fields) {
    if (f.unit == FieldUnit::text && f.text.empty()) continue;
    if (f.group != current) {
      current = f.group;
      out += fmt::format("{}{}\n", out.empty() ? "" : "\n", group_title(current));
    }
    const std::string value = f.unit == FieldUnit::text ? f.text : format_human(f.unit, f.number);
    out += fmt::format("  {:<{}}  {}\n", f.name, width, value);
  }
  return out;
}

std::string to_json(const Summary& summary, int indent) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& f : summary.fields) {
    const std::string key = column_name(f);
    if (f.unit == FieldUnit::text) {
      j[key] = f.text;
    } else if (f.unit == FieldUnit::flag) {
      j[key] = f.number != 0;
    } else {
      TRAINSIM_CHECK(std::isfinite(f.number), "JSON field " + key + " is not finite");
      j[key] = f.number;
    }
  }
  return j.dump(indent);
}

const char* unit_suffix(FieldUnit unit) {
  switch (unit) {
    case FieldUnit::seconds:
      return "_s";
    case FieldUnit::bytes:
      return "_bytes";
    case FieldUnit::usd:
      return "_usd";
    case FieldUnit::kwh:
      return "_kwh";
    case FieldUnit::kg:
      return "_kg";
    default:
      return "";
  }
}

std::string column_name(const SummaryField& field) {
  const std::string_view suffix = unit_suffix(field.unit);
  const std::string& n = field.name;
  const bool has =
      n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  return has ? n : n + std::string(suffix);
}

std::string csv_header(const Summary& summary) {
  std::string out;
  for (const auto& f : summary.fields) {
    if (!out.empty()) out += ',';
    out += sim::csv_field(column_name(f));
  }
  return out;
}

std::string csv_row(const Summary& summary) {
  std::string out;
  bool first = true;
  for (const auto& f : summary.fields) {
    if (!first) out += ',';
    first = false;
    switch (f.unit) {
      case FieldUnit::text:
        out += sim::csv_field(f.text);
        break;
      case FieldUnit::flag:
        out += f.number != 0 ? "true" : "false";
        break;
      default:
        out += fmt::format("{:.10g}", f.number);
        break;
    }
  }
  return out;
}

}  // namespace trainsim::model
