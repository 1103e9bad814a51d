#pragma once
// Internal to the scenarios library: a region price preset file (models/regions/NAME.yaml), and applying
// it to a scenario's pricing block.
//
//   name: us-east
//   description: "AWS us-east-1 (N. Virginia) list prices; Virginia's electricity"
//   gpu_hour:                       # by GPU preset name
//     h100-sxm: {value: "$12.29/h", source: "AWS p5.48xlarge on-demand $98.32/h / 8 GPUs, …", date:
//     "2023-07-27"}
//   storage: {value: "$0.023/GB-month", source: "…", date: "2024-06"}
//   egress:  {value: "$0.09/GB", source: "…", date: "…"}
//   energy:  {value: "$0.0892/kWh", source: "…", date: "…"}
//   carbon:  {value: "300 g/kWh", source: "assumed: …", date: "…"}
//
// Every entry needs its value, its source (a publication, or "assumed: why") and its date (YYYY-MM or
// YYYY-MM-DD). Problems are added to the Diagnostics.
#include <string>

#include "models/spec/region_prices.hpp"
#include "models/spec/run_spec.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

[[nodiscard]] model::RegionPrices read_region_file(Diagnostics& d, const YamlValue& v,
                                                   const std::string& path);

/// Sets the prices `region` has in `pricing`: the GPU-hour of GPU preset `gpu`, storage (hot tier), egress,
/// the energy price and the carbon intensity. Returns false when the table has no GPU-hour for `gpu` (the
/// caller decides whether an explicit gpu_hour makes up for it).
bool apply_region(const model::RegionPrices& region, const std::string& gpu, model::PricingSpec& pricing);

/// "h100-sxm, a100-sxm4-40gb": the GPUs a region prices, for messages.
[[nodiscard]] std::string priced_gpus(const model::RegionPrices& region);

}  // namespace trainsim::scenario
