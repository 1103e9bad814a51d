#pragma once
// A sweep over `cluster.node` (SPEC `pricing:` and `sweep:`): one `pricing.gpu_hour` price covers every
// node preset swept, so a B200 point would be billed at the H100's rate. The sweep says so, naming the GPU
// types that share the price and how to give each node its own (`pricing.gpu_hour: {dgx-h100: "$2.50",
// dgx-b200: "$4.50"}`) — a map per preset, or a region's table, prices each point at its hardware's price.
//
// Each swept node is loaded as the sweep's first point with that node (the other axes at their first value,
// --set applied), as scenarios/studies/region_sweep.hpp loads its regions. A node whose point does not load
// is left out here; its rows carry the reason.
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// The note for a sweep of `sweep` over the scenario `text` (read from `path`, `overrides` being --set),
/// "" when no two swept GPU types share one single pricing.gpu_hour.
[[nodiscard]] std::string check_node_price_sweep(std::string_view text, const std::string& path,
                                                 const std::vector<Override>& overrides,
                                                 const SweepSpec& sweep);

}  // namespace trainsim::scenario
