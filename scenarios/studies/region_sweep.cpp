#include "scenarios/studies/region_sweep.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "scenarios/presets.hpp"
#include "scenarios/studies/sweep.hpp"
#include "scenarios/yaml_tree.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {
namespace {

constexpr std::string_view kRegionKey = "pricing.region";

// The prices a region table sets, in the order of the keys that override them.
constexpr std::array<const char*, 5> kPriceKeys = {"pricing.gpu_hour", "pricing.storage.hot",
                                                   "pricing.egress", "pricing.energy.price",
                                                   "pricing.energy.carbon"};
constexpr std::size_t kCarbon = 4;  // the one that is not part of the bill

using Prices = std::array<double, kPriceKeys.size()>;

Prices prices_of(const model::PricingSpec& p) {
  return {p.gpu_hour_usd, p.storage.hot_usd_per_gb_month, p.egress_usd_per_gb, p.energy.usd_per_kwh,
          p.energy.carbon_g_per_kwh};
}

std::array<std::optional<double>, kPriceKeys.size()> table_of(const model::RegionPrices& r,
                                                              const std::string& gpu) {
  const auto value = [](const std::optional<model::CitedNumber>& n) {
    return n ? std::optional<double>(n->value) : std::nullopt;
  };
  const model::CitedNumber* gpu_hour = r.gpu_hour(gpu);
  return {gpu_hour ? std::optional<double>(gpu_hour->value) : std::nullopt, value(r.storage_usd_per_gb_month),
          value(r.egress_usd_per_gb), value(r.energy_usd_per_kwh), value(r.carbon_g_per_kwh)};
}

// Where the swept key is written, for the error; none when the sweep block did not come from the file.
Diagnostic at_sweep_key(std::string_view text, const std::string& path) {
  Diagnostic at{.file = path, .key_path = "sweep." + std::string(kRegionKey)};
  Diagnostics ignored;
  const auto tree = parse_yaml_tree(text, path, ignored);
  const YamlValue* sweep = tree ? tree->find("sweep") : nullptr;
  if (sweep == nullptr) return at;
  for (const YamlEntry& e : sweep->entries) {
    if (e.key == kRegionKey) {
      at.line = e.key_line;
      at.column = e.key_column;
    }
  }
  return at;
}

std::string join_and(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

std::string check_region_sweep(std::string_view text, const std::string& path,
                               const std::vector<Override>& overrides, const SweepSpec& sweep) {
  std::array<bool, kPriceKeys.size()> overridden{};
  std::vector<Prices> seen;
  for (const SweptValue& v : load_swept_values(text, path, overrides, sweep, kRegionKey)) {
    const Scenario& s = v.scenario;
    if (s.pricing.region.empty()) continue;
    const auto table = table_of(region_preset(s.pricing.region), s.cluster.node.gpu.name);
    const Prices prices = prices_of(s.pricing);
    for (std::size_t k = 0; k < kPriceKeys.size(); ++k) {
      if (table[k] && *table[k] != prices[k]) overridden[k] = true;
    }
    seen.push_back(prices);
  }
  std::vector<std::string> keys;
  for (std::size_t k = 0; k < kPriceKeys.size(); ++k) {
    if (overridden[k]) keys.emplace_back(kPriceKeys[k]);
  }
  if (keys.empty() || seen.size() < 2) return "";
  const auto same_as_first = [&](std::size_t k) {
    return std::all_of(seen.begin(), seen.end(), [&](const Prices& p) { return p[k] == seen.front()[k]; });
  };
  bool same_bill = true;
  for (std::size_t k = 0; k < kPriceKeys.size(); ++k) {
    if (k != kCarbon) same_bill = same_bill && same_as_first(k);
  }
  const std::string beside = join_and(keys) + (keys.size() == 1 ? " is" : " are") +
                             " given beside the region, and a price given beside it wins over its table in "
                             "every point";
  if (same_bill && same_as_first(kCarbon)) {
    Diagnostic d = at_sweep_key(text, path);
    d.message = "every swept region ends with the same prices: " + beside +
                ", and the regions agree on the rest, so the rows would differ in the region's name only; "
                "remove " +
                (keys.size() == 1 ? "that key" : "those keys") +
                " to price each point from its region's table, or sweep " +
                (keys.size() == 1 ? "it" : "them") + " instead";
    throw InputError(std::vector<Diagnostic>{d});
  }
  return "sweep over " + std::string(kRegionKey) + ": " + beside +
         (same_bill ? "; the regions agree on the other prices, so every row has the same bill (only the "
                      "carbon differs)"
                    : "; the rows compare the regions' other prices");
}

}  // namespace trainsim::scenario
