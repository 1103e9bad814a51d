#include "scenarios/studies/node_price_sweep.hpp"

#include <map>

#include "models/report/summary.hpp"
#include "scenarios/studies/sweep.hpp"

namespace trainsim::scenario {

namespace {
constexpr std::string_view kNodeKey = "cluster.node";
}  // namespace

std::string check_node_price_sweep(std::string_view text, const std::string& path,
                                   const std::vector<Override>& overrides, const SweepSpec& sweep) {
  // GPU type -> the single price that billed it (only points priced by one pricing.gpu_hour for all).
  std::map<std::string, double> single;
  for (const SweptValue& v : load_swept_values(text, path, overrides, sweep, kNodeKey)) {
    const Scenario& s = v.scenario;
    if (s.pricing.gpu_hour_single) single.emplace(s.cluster.node.gpu.name, s.pricing.gpu_hour_usd);
  }
  if (single.size() < 2) return "";
  // GPU types that share one price: the first price shared by two or more.
  std::map<double, std::vector<std::string>> by_price;
  for (const auto& [gpu, price] : single) by_price[price].push_back(gpu);
  for (const auto& [price, gpus] : by_price) {
    if (gpus.size() < 2) continue;
    std::string names;
    for (std::size_t i = 0; i < gpus.size(); ++i) names += (i ? ", " : "") + gpus[i];
    return "sweep over " + std::string(kNodeKey) + ": one pricing.gpu_hour (" +
           model::format_human(model::FieldUnit::usd, price) +
           " per GPU-hour) prices every GPU type swept (" + names +
           "); give each node its own, e.g. pricing.gpu_hour: {dgx-h100: \"$2.50\", dgx-b200: \"$4.50\"}, or "
           "a "
           "pricing.region whose table prices them";
  }
  return "";
}

}  // namespace trainsim::scenario
