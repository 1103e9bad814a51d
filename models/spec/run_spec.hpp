#pragma once
// The whole-run blocks of a scenario: checkpoints, failures, prices, budget. Plain data, SI units
// (seconds, bytes), money in US dollars.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.hpp"

namespace trainsim::model {

enum class CheckpointMode { sync, async };

inline constexpr EnumNames<CheckpointMode, 2> kCheckpointModeNames{
    {{"sync", CheckpointMode::sync}, {"async", CheckpointMode::async}}};

constexpr std::string_view to_string(CheckpointMode m) {
  return name_in(kCheckpointModeNames, m);
}

struct CheckpointSpec {
  bool enabled = false;
  std::optional<double> interval_s;         ///< checkpoint every this many seconds of training …
  std::optional<std::int64_t> every_steps;  ///< … or every this many steps
  CheckpointMode mode = CheckpointMode::async;
  int keep = 1;  ///< copies retained
};

struct FailureSpec {
  bool enabled = false;
  double node_mtbf_s = 0;  ///< mean time between failures of one node (0: none)
  double gpu_mtbf_s = 0;   ///< of one GPU, on top of node failures (0: none)
  double restart_s = 0;    ///< time to detect, reschedule and restart, before the restore
  std::uint64_t seed = 1;
  int trials = 0;  ///< 0: expected values; N: seeded Monte-Carlo over N runs
};

struct SpotPricing {
  bool enabled = false;
  double gpu_hour_usd = 0;
  double preemptions_per_s = 0;  ///< preemption rate of the whole allocation
};

struct StoragePricing {
  double hot_usd_per_gb_month = 0;
  double cold_usd_per_gb_month = 0;
  std::optional<double> cold_after_s;
};

struct EnergyPricing {
  double usd_per_kwh = 0;
  double pue = 1.0;
  double carbon_g_per_kwh = 0;
};

/// Capacity reserved for a term at a fixed rate (`pricing.commitment`): paid whether used or not; use
/// beyond it (more GPUs, or past the term) is billed on demand.
struct Commitment {
  bool enabled = false;
  double gpus = 0;
  double term_s = 0;
  double gpu_hour_usd = 0;
};

struct PricingSpec {
  bool enabled = false;
  std::string region;       ///< the region price table the values came from (`pricing.region`); "" when none
  double gpu_hour_usd = 0;  ///< on-demand price per GPU-hour
  /// pricing.gpu_hour was one price for any hardware (not a map per preset, not a region's table): a
  /// sweep over cluster.node then prices every GPU type alike, and says so.
  bool gpu_hour_single = false;
  SpotPricing spot;
  StoragePricing storage;
  double egress_usd_per_gb = 0;
  double egress_bytes = 0;  ///< data moved across the priced boundary over the run
  EnergyPricing energy;
  Commitment commitment;
};

struct BudgetSpec {
  std::optional<double> max_cost_usd;
  std::optional<double> deadline_s;
  std::optional<double> memory_headroom;        ///< fraction of HBM that must stay free, e.g. 0.1
  std::optional<double> memory_headroom_bytes;  ///< or bytes of it ("8 GiB"); at most one of the two is set
  /// The fraction of a GPU's HBM that must stay free: the one given, as a fraction or in bytes (capped at
  /// the whole HBM); none when the scenario gives neither.
  [[nodiscard]] std::optional<double> headroom_fraction(double hbm_bytes) const {
    if (memory_headroom) return memory_headroom;
    if (memory_headroom_bytes && hbm_bytes > 0) return std::min(1.0, *memory_headroom_bytes / hbm_bytes);
    return std::nullopt;
  }
  /// Fractions of max_cost (> 0, ascending, distinct) at which the campaign's spend is reported: a row of
  /// run.csv and budget_alert_* fields in the summary. Only with max_cost.
  std::vector<double> alerts;
};

}  // namespace trainsim::model
