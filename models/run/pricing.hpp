#pragma once
// Money and energy of a run: GPU power from the preset, energy with PUE and carbon intensity, checkpoint
// retention on hot and cold storage tiers. Units: seconds, bytes, watts, US dollars; a "GB" in a price
// is 10^9 bytes and a "month" is 730 hours (the cloud billing convention).
#include <cstdint>
#include <optional>

#include "models/spec/run_spec.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

inline constexpr double kSecondsPerBillingMonth = 730.0 * 3600.0;

/// Board power of one GPU whose kernels are busy `busy_fraction` of the time: idle + (P − idle) · busy, with
/// P the TDP or the power limit when lower.
/// (GPUs draw close to TDP while dense kernels run and near idle power between them.)
double gpu_power_w(const topo::GpuSpec& gpu, double busy_fraction);

struct EnergyUse {
  double kwh = 0;  ///< at the wall, PUE included
  double co2_kg = 0;
  double cost_usd = 0;
};

/// Energy of the whole allocation: `training_s` seconds of training with kernels busy `busy_fraction` of
/// the time, and `idle_s` seconds idle (stalls, restarts). Node host power (CPUs, NICs) runs throughout.
EnergyUse energy_use(const topo::ClusterSpec& cluster, double busy_fraction, double training_s, double idle_s,
                     const EnergyPricing& pricing);

struct StorageUse {
  double hot_gb_months = 0;
  double cold_gb_months = 0;
  double cost_usd = 0;
};

/// Retention of `checkpoints` checkpoints of `bytes` each, written every `wall_interval` seconds of a run
/// lasting `run_time` seconds. A checkpoint is deleted when the `keep`-th newer one is written (or at the
/// end of the run); it sits on the hot tier for `cold_after` seconds and on the cold tier after that
/// (all hot when cold_after is not set). Data kept after the run ends is not charged.
StorageUse checkpoint_storage(double bytes, std::int64_t checkpoints, double wall_interval, double run_time,
                              int keep, const StoragePricing& pricing);

}  // namespace trainsim::model
