#include "scenarios/campaign_block.hpp"

#include <vector>

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

std::optional<model::ConvergenceSpec> read_convergence_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "convergence", {"target_loss", "law", "batch"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  r.require({"target_loss"});
  model::ConvergenceSpec c;
  r.number("target_loss", c.target_loss, 1e-6, 100);
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
  if (d.size() != before) return std::nullopt;
  return c;
}

std::optional<model::TuningSpec> read_tuning_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "tuning", {"trials", "trial", "early_stopping", "concurrent"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  r.require({"trials"});
  model::TuningSpec t;
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

}  // namespace trainsim::scenario
