#pragma once
// A region's price table (`pricing: {region: NAME}`, a preset under models/regions/): what a GPU-hour, a
// GB-month of storage, a GB out and a kWh cost there, and how much CO2 its grid emits per kWh. Each number
// carries where it comes from and when, so that a bill built on it can say so. Plain data, US dollars and
// the units of models/spec/run_spec.hpp.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::model {

/// A number with its source (free text naming the publication, or "assumed: why") and the date it was
/// published or read (YYYY-MM or YYYY-MM-DD).
struct CitedNumber {
  double value = 0;
  std::string source;
  std::string date;
};

struct RegionPrices {
  std::string name;
  std::string description;
  /// On-demand price of one GPU-hour by GPU preset name (topologies/presets/gpus), in file order.
  std::vector<std::pair<std::string, CitedNumber>> gpu_hour_usd;
  std::optional<CitedNumber> storage_usd_per_gb_month;  ///< object storage, the hot tier
  std::optional<CitedNumber> egress_usd_per_gb;         ///< data out of the region
  std::optional<CitedNumber> energy_usd_per_kwh;
  std::optional<CitedNumber> carbon_g_per_kwh;

  /// The GPU-hour price of GPU preset `gpu`, when the table has one.
  [[nodiscard]] const CitedNumber* gpu_hour(const std::string& gpu) const {
    for (const auto& [priced, price] : gpu_hour_usd) {
      if (priced == gpu) return &price;
    }
    return nullptr;
  }
};

}  // namespace trainsim::model
