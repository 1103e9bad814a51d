// A sweep over pricing.region whose prices are given beside the region: the keys given there win in every
// point, and the sweep says which (a note), or refuses when the rows would differ in the region's name only.
#include "scenarios/studies/region_sweep.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

// Two price tables of round numbers on TRAINSIM_PATH: test-b differs from test-a in the GPU-hour, the
// energy price and the carbon; storage and egress are the same.
class TwoRegions {
 public:
  TwoRegions() {
    std::filesystem::create_directories(dir_ / "regions");
    std::ofstream(dir_ / "regions" / "test-a.yaml") << R"(name: test-a
gpu_hour: {a100-sxm4-80gb: {value: "$3.00/h", source: "test", date: "2026-01"}}
storage: {value: "$0.05/GB-month", source: "test", date: "2026-01"}
egress: {value: "$0.07/GB", source: "test", date: "2026-01"}
energy: {value: "$0.10/kWh", source: "test", date: "2026-01"}
carbon: {value: "400 g/kWh", source: "test", date: "2026-01"}
)";
    std::ofstream(dir_ / "regions" / "test-b.yaml") << R"(name: test-b
gpu_hour: {a100-sxm4-80gb: {value: "$4.00/h", source: "test", date: "2026-01"}}
storage: {value: "$0.05/GB-month", source: "test", date: "2026-01"}
egress: {value: "$0.07/GB", source: "test", date: "2026-01"}
energy: {value: "$0.20/kWh", source: "test", date: "2026-01"}
carbon: {value: "300 g/kWh", source: "test", date: "2026-01"}
)";
    ::setenv("TRAINSIM_PATH", dir_.string().c_str(), 1);
  }
  ~TwoRegions() {
    ::unsetenv("TRAINSIM_PATH");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TwoRegions(const TwoRegions&) = delete;
  TwoRegions& operator=(const TwoRegions&) = delete;

 private:
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("trainsim_region_sweep_test_" + std::to_string(::getpid()));
};

const std::string layout = R"(model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 4, zero: 1}
training: {global_batch: 64, steps: 1000}
)";

// The note for `pricing` (a flow mapping's inside) swept over both regions; the sweep key is on line 7.
std::string note_for(const std::string& pricing, const std::vector<Override>& sets = {}) {
  const std::string text =
      layout + "pricing: {region: test-a" + pricing + "}\nsweep:\n  pricing.region: [test-a, test-b]\n";
  return check_region_sweep(text, "t.yaml", sets, load_scenario_text(text, "t.yaml").sweep);
}

}  // namespace

TEST_CASE("a region sweep with no price given beside the region compares the tables: nothing to say") {
  const TwoRegions regions;
  CHECK(note_for("").empty());
  // pue is not a price a table sets.
  CHECK(note_for(", energy: {pue: 1.2}").empty());
}

TEST_CASE("prices given beside a swept region are named; what the regions still differ in is said") {
  const TwoRegions regions;
  // The GPU-hour beside it: the rows still differ in the energy price (0.10 vs 0.20) and so in the bill.
  CHECK(note_for(", gpu_hour: \"$2.00\"") ==
        "sweep over pricing.region: pricing.gpu_hour is given beside the region, and a price given beside it "
        "wins over its table in every point; the rows compare the regions' other prices");
  // The GPU-hour and the energy price beside it (rented GPUs): storage and egress are alike in both tables,
  // so the bill is too; only the carbon (400 vs 300 g/kWh) differs.
  CHECK(
      note_for(", gpu_hour: \"$2.00\", energy: {price: \"$0/kWh\"}") ==
      "sweep over pricing.region: pricing.gpu_hour and pricing.energy.price are given beside the region, and "
      "a price given beside it wins over its table in every point; the regions agree on the other prices, so "
      "every row has the same bill (only the carbon differs)");
  // --set counts as given beside it.
  CHECK(note_for("", {{"pricing.gpu_hour", "\"$2.00\""}}).find("pricing.gpu_hour is given beside") !=
        std::string::npos);
}

TEST_CASE("a region sweep whose every price is given beside the region is refused at the sweep key") {
  const TwoRegions regions;
  // Line 7 is `  pricing.region: [...]`: the key at column 3.
  CHECK_THROWS_WITH_AS(
      (void)note_for(", gpu_hour: \"$2.00\", energy: {price: \"$0/kWh\", carbon: \"100 g/kWh\"}"),
      doctest::Contains(
          "t.yaml:7:3: sweep.pricing.region: every swept region ends with the same prices: "
          "pricing.gpu_hour, pricing.energy.price and pricing.energy.carbon are given beside the "
          "region, and a price given beside it wins over its table in every point, and the regions "
          "agree on the rest, so the rows would differ in the region's name only; remove those "
          "keys to price each point from its region's table, or sweep them instead"),
      InputError);
}
