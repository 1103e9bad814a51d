#include "scenarios/studies/scenario_explanation.hpp"

#include <nlohmann/json.hpp>
#include <optional>

#include "models/report/explain_bound.hpp"
#include "models/report/explain_campaign.hpp"
#include "models/report/explain_groups.hpp"
#include "models/report/explain_headroom.hpp"
#include "models/report/explain_moe_settings.hpp"
#include "models/report/explain_ops.hpp"
#include "models/report/explain_time.hpp"
#include "scenarios/studies/simulation.hpp"

namespace trainsim::scenario {

model::Explanation explain_scenario(const Scenario& s, ExplainExtras extras) {
  const double hbm = s.cluster.node.gpu.hbm_bytes;
  const std::optional<double> headroom = s.budget.headroom_fraction(hbm);
  model::Explanation e =
      model::explain(s.model, s.parallelism, s.training, s.cluster.node.gpu, headroom.value_or(0.0));
  if (!e.sections.empty() && e.memory_per_gpu > 0)
    e.sections.push_back(model::explain_headroom(headroom, e.memory_per_gpu, hbm));
  const model::StepInput in = step_input_of(s);
  e.sections.push_back(model::explain_time(in));
  // The groups of a plan that is a layout (the time section then has lines).
  if (!e.sections.back().lines.empty()) {
    if (extras.ops) e.sections.push_back(model::explain_ops(in));
    e.sections.push_back(model::explain_groups(s.parallelism, s.cluster));
    e.sections.push_back(model::explain_bound(in));
    if (auto moe = model::explain_moe_settings(in)) e.sections.push_back(std::move(*moe));
  }
  if (s.convergence) {
    e.sections.push_back(model::explain_convergence(s.model, s.training.global_batch,
                                                    s.training.optimizer.kind, *s.convergence));
  }
  if (s.tuning) e.sections.push_back(model::explain_tuning(*s.tuning));
  return e;
}

std::string explanation_json(const model::Explanation& e, int indent) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : e.sections) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : s.lines) {
      lines.push_back({{"label", l.label}, {"formula", l.formula}, {"value", l.value}, {"unit", l.unit}});
    }
    sections.push_back({{"title", s.title}, {"lines", lines}, {"notes", s.notes}});
  }
  const nlohmann::json j = {{"fits", e.fits}, {"reason", e.reason}, {"sections", sections}};
  return j.dump(indent);
}

}  // namespace trainsim::scenario
