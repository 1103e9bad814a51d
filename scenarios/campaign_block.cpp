#include "scenarios/campaign_block.hpp"

#include <cstdlib>
#include <vector>

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

std::optional<model::ConvergenceSpec> read_convergence_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "convergence",
              {"target_loss", "law", "batch", "optimizer_efficiency", "next_target_loss"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  r.require({"target_loss"});
  model::ConvergenceSpec c;
  r.number("target_loss", c.target_loss, 1e-6, 100);
  r.number("next_target_loss", c.next_target_loss, 1e-6, 100);
  if (c.next_target_loss && r.has("target_loss") && !(*c.next_target_loss < c.target_loss)) {
    d.add(*r.get("next_target_loss"), r.child_path("next_target_loss"),
          "must be a lower loss than target_loss (the target the campaign moves on to)");
  }
  if (const YamlValue* law = r.get("law")) {
    if (law->is_scalar()) {
      r.choice("law", c.law, model::kLossLawNames);
    } else {
      MapReader lr(d, *law, "convergence.law", {"E", "A", "B", "alpha", "beta"});
      if (lr.valid() && lr.require({"E", "A", "B", "alpha", "beta"})) {
        c.law = model::LossLawName::custom;
        lr.number("E", c.e, 0, 100);
        lr.number("A", c.a, 0, 1e12);
        lr.number("B", c.b, 0, 1e12);
        lr.number("alpha", c.alpha, 1e-3, 10);
        lr.number("beta", c.beta, 1e-3, 10);
      }
    }
  }
  if (const YamlValue* batch = r.get("batch")) {
    MapReader br(d, *batch, "convergence.batch", {"critical"});
    if (const YamlValue* critical = br.get("critical"); critical != nullptr) {
      if (!(critical->is_scalar() && critical->scalar == "auto")) {
        br.number("critical", c.critical_batch_tokens, 1, 1e15);
      }
    }
  }
  if (const YamlValue* eff = r.get("optimizer_efficiency")) {
    const bool named = eff->is_scalar() && (eff->scalar == "optimistic" || eff->scalar == "fair-tuned");
    char* end = nullptr;
    const bool numeric = eff->is_scalar() && !eff->scalar.empty() &&
                         (static_cast<void>(std::strtod(eff->scalar.c_str(), &end)), *end == '\0');
    if (named) {
      r.choice("optimizer_efficiency", c.optimizer_efficiency.basis, model::kEfficiencyBasisNames);
    } else if (!numeric) {
      d.add(
          *eff, r.child_path("optimizer_efficiency"),
          "expected optimistic, fair-tuned or a number (the optimizer's speedup over AdamW in tokens to the "
          "target)");
    } else {
      c.optimizer_efficiency.basis = model::EfficiencyBasis::given;
      r.number("optimizer_efficiency", c.optimizer_efficiency.speedup, 1e-3, 1e3);
    }
  }
  if (d.size() != before) return std::nullopt;
  return c;
}

std::optional<model::TuningSpec> read_tuning_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "tuning", {"trials", "trial", "early_stopping", "concurrent"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  model::TuningSpec t;  // trials 0: from the optimizer's search space (scenario_reader.cpp)
  r.count("trials", t.trials, 1, 1e6);
  r.count("concurrent", t.concurrent, 1, 1e6);
  if (const YamlValue* trial = r.get("trial")) {
    MapReader tr(d, *trial, "tuning.trial", {"fraction"});
    tr.number("fraction", t.fraction, 1e-9, 1);
  }
  if (const YamlValue* stop = r.get("early_stopping")) {
    MapReader sr(d, *stop, "tuning.early_stopping", {"policy", "eta", "min_fraction"});
    if (sr.valid()) {
      sr.require({"policy"});
      sr.choice("policy", t.early_stopping, model::kEarlyStoppingNames);
      sr.number("eta", t.eta, 1.0 + 1e-9, 1e3);
      sr.number("min_fraction", t.min_fraction, 1e-9, 1);
    }
  }
  if (d.size() != before) return std::nullopt;
  return t;
}

std::optional<model::DataSpec> read_data_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "data", {"raw", "preprocessing", "storage", "transfer"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  model::DataSpec data;
  r.quantity("raw", data.raw_bytes, Dimension::bytes, Bound::non_negative);
  if (const YamlValue* p = r.get("preprocessing")) {
    MapReader pr(d, *p, "data.preprocessing", {"core_hours_per_tb", "core_hour"});
    pr.number("core_hours_per_tb", data.core_hours_per_tb, 0, 1e9);
    pr.quantity("core_hour", data.core_hour_usd, Dimension::usd_per_hour, Bound::non_negative);
  }
  if (const YamlValue* st = r.get("storage")) {
    MapReader sr(d, *st, "data.storage", {"price", "months"});
    sr.quantity("price", data.storage_usd_per_gb_month, Dimension::usd_per_gb_month, Bound::non_negative);
    sr.number("months", data.storage_months, 0, 1200);
  }
  if (const YamlValue* t = r.get("transfer")) {
    MapReader tr(d, *t, "data.transfer", {"volume", "price"});
    tr.quantity("volume", data.transfer_bytes, Dimension::bytes, Bound::non_negative);
    tr.quantity("price", data.transfer_usd_per_gb, Dimension::usd_per_gb, Bound::non_negative);
  }
  if (d.size() != before) return std::nullopt;
  return data;
}

std::vector<model::PersonSpec> read_people_block(Diagnostics& d, const YamlValue& v) {
  std::vector<model::PersonSpec> people;
  read_list(d, v, "people", "a list of roles, e.g. [{role: engineer, count: 4, rate: \"$110/h\"}]",
            [&](const YamlValue& item, const std::string& path) {
              MapReader r(d, item, path, {"role", "count", "rate", "hours_per_week", "coverage"});
              if (!r.valid()) return;
              r.require({"role", "rate"});
              model::PersonSpec p;
              r.string("role", p.role);
              r.count("count", p.count, 1, 1e6);
              r.quantity("rate", p.rate_usd_per_hour, Dimension::usd_per_hour, Bound::non_negative);
              r.number("hours_per_week", p.hours_per_week, 0, 168);
              if (const YamlValue* c = r.get("coverage")) {
                if (read_choice(d, *c, r.child_path("coverage"), {"24x7"})) p.round_the_clock = true;
                if (r.has("hours_per_week"))
                  d.add(*c, r.child_path("coverage"), "give coverage or hours_per_week, not both");
              }
              people.push_back(std::move(p));
            });
  return people;
}

std::string convergence_to_yaml(const std::optional<model::ConvergenceSpec>& c) {
  if (!c) return "";
  std::string out = "convergence:\n  target_loss: " + format_number(c->target_loss) + "\n  law: ";
  if (c->law == model::LossLawName::custom) {
    out += "{E: " + format_number(c->e) + ", A: " + format_number(c->a) + ", B: " + format_number(c->b) +
           ", alpha: " + format_number(c->alpha) + ", beta: " + format_number(c->beta) + "}\n";
  } else {
    out += std::string(name_in(model::kLossLawNames, c->law)) + "\n";
  }
  out += "  batch: {critical: " +
         (c->critical_batch_tokens ? format_number(*c->critical_batch_tokens) : std::string("auto")) + "}\n";
  const model::OptimizerEfficiencySpec& e = c->optimizer_efficiency;
  out += "  optimizer_efficiency: " +
         (e.basis == model::EfficiencyBasis::given
              ? format_number(e.speedup)
              : std::string(name_in(model::kEfficiencyBasisNames, e.basis))) +
         "\n";
  if (c->next_target_loss) out += "  next_target_loss: " + format_number(*c->next_target_loss) + "\n";
  return out;
}

std::string tuning_to_yaml(const std::optional<model::TuningSpec>& t) {
  if (!t) return "";
  return "tuning:\n  trials: " + std::to_string(t->trials) +
         "\n  trial: {fraction: " + format_number(t->fraction) +
         "}\n  concurrent: " + std::to_string(t->concurrent) + "\n  early_stopping: {policy: " +
         std::string(name_in(model::kEarlyStoppingNames, t->early_stopping)) +
         ", eta: " + format_number(t->eta) + ", min_fraction: " + format_number(t->min_fraction) + "}\n";
}

std::string data_to_yaml(const std::optional<model::DataSpec>& data) {
  if (!data) return "";
  return "data:\n  raw: \"" + format_quantity(data->raw_bytes, Dimension::bytes) +
         "\"\n  preprocessing: {core_hours_per_tb: " + format_number(data->core_hours_per_tb) +
         ", core_hour: \"" + format_quantity(data->core_hour_usd, Dimension::usd_per_hour) +
         "\"}\n  storage: {price: \"" +
         format_quantity(data->storage_usd_per_gb_month, Dimension::usd_per_gb_month) +
         "\", months: " + format_number(data->storage_months) + "}\n  transfer: {volume: \"" +
         format_quantity(data->transfer_bytes, Dimension::bytes) + "\", price: \"" +
         format_quantity(data->transfer_usd_per_gb, Dimension::usd_per_gb) + "\"}\n";
}

std::string people_to_yaml(const std::vector<model::PersonSpec>& people) {
  if (people.empty()) return "";
  std::string out = "people:\n";
  for (const model::PersonSpec& p : people) {
    out += "  - {role: " + yaml_quote(p.role) + ", count: " + std::to_string(p.count) + ", rate: \"" +
           format_quantity(p.rate_usd_per_hour, Dimension::usd_per_hour) + "\", " +
           (p.round_the_clock ? std::string("coverage: \"24x7\"")
                              : "hours_per_week: " + format_number(p.hours_per_week)) +
           "}\n";
  }
  return out;
}

}  // namespace trainsim::scenario
