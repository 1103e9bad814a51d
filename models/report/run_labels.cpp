#include "models/report/run_labels.hpp"

#include <string_view>

namespace trainsim::model {
namespace {

constexpr const char* kScenario = "scenario";
constexpr const char* kFidelity = "fidelity";
// Alert k's fields are named budget_alert_<k>_fraction, _cost, _reached, _time (summarize()); k has no
// bound, so the whole prefix is kept for them.
constexpr std::string_view kAlertPrefix = "budget_alert_";

}  // namespace

Labels run_labels(const std::string& scenario, const std::string& fidelity, const Labels& tags) {
  Labels out = {{kScenario, scenario}, {kFidelity, fidelity}};
  out.insert(out.end(), tags.begin(), tags.end());
  return out;
}

std::optional<std::string> tag_column_clash(const std::string& key) {
  if (key == kScenario || key == kFidelity) return key;
  if (const SummaryField* f = field_schema(key)) return column_name(*f);
  if (const SummaryField* f = column_schema(key)) return column_name(*f);
  if (key.starts_with(kAlertPrefix)) return key;
  return std::nullopt;
}

}  // namespace trainsim::model
