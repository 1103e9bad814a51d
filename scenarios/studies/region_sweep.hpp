#pragma once
// A sweep over `pricing.region` (SPEC `pricing:` and `sweep:`). The contract for a single scenario stays:
// a price written beside `region:` wins over the region's table. In a sweep that rule applies to every
// point alike, so such a key takes the region's part out of the comparison; this is where a sweep says so
// instead of writing rows whose bills differ in nothing but the region's name.
//
// Each swept region is loaded as the sweep's first point with that region (the other axes at their first
// value, --set applied). A region's price is overridden when the table has it and the point's price is not
// the table's: pricing.gpu_hour (the cluster's GPU), pricing.storage.hot, pricing.egress,
// pricing.energy.price, pricing.energy.carbon. Then:
//  - nothing overridden: nothing to say ("");
//  - overridden, and every swept region ends with the same five prices (the rows would differ in the
//    region's name only): InputError at the sweep key naming the overriding keys;
//  - otherwise a note naming them, which adds when the regions still give every row the same bill (equal
//    GPU-hour, storage, egress and energy prices: only the carbon differs).
// A region whose point does not load is left out here; its rows carry the reason.
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/loader.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// The note for a sweep of `sweep` over the scenario `text` (read from `path`, `overrides` being --set),
/// "" when there is none. Throws InputError as above.
[[nodiscard]] std::string check_region_sweep(std::string_view text, const std::string& path,
                                             const std::vector<Override>& overrides, const SweepSpec& sweep);

}  // namespace trainsim::scenario
