#include "models/run/pricing.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::model {

double gpu_power_w(const topo::GpuSpec& gpu, double busy_fraction) {
  const double busy = std::clamp(busy_fraction, 0.0, 1.0);
  // A board under a power limit draws at most the limit at full load.
  const double full = gpu.power_limit_w > 0 ? std::min(gpu.tdp_w, gpu.power_limit_w) : gpu.tdp_w;
  return gpu.idle_w + (full - gpu.idle_w) * busy;
}

EnergyUse energy_use(const topo::ClusterSpec& cluster, double busy_fraction, double training_s, double idle_s,
                     const EnergyPricing& pricing) {
  TRAINSIM_CHECK(training_s >= 0 && idle_s >= 0, "energy over a negative time");
  const double gpus = static_cast<double>(cluster.total_gpus());
  const double nodes = static_cast<double>(cluster.nodes);
  const double joules = gpus * (gpu_power_w(cluster.node.gpu, busy_fraction) * training_s +
                                gpu_power_w(cluster.node.gpu, 0.0) * idle_s) +
                        nodes * cluster.node.host_power_w * (training_s + idle_s);
  EnergyUse use;
  use.kwh = joules * pricing.pue / 3.6e6;
  use.co2_kg = use.kwh * pricing.carbon_g_per_kwh / 1000.0;
  use.cost_usd = use.kwh * pricing.usd_per_kwh;
  return use;
}

StorageUse checkpoint_storage(double bytes, std::int64_t checkpoints, double wall_interval, double run_time,
                              int keep, const StoragePricing& pricing) {
  StorageUse use;
  if (checkpoints <= 0 || bytes <= 0) return use;
  TRAINSIM_CHECK(keep >= 1, "checkpoint.keep must be at least 1");
  const double gb = bytes / 1e9;
  const double cold_after =
      pricing.cold_after_s.value_or(run_time + wall_interval * static_cast<double>(keep));
  auto add_lifetime = [&](double lifetime, double copies) {
    lifetime = std::max(lifetime, 0.0);
    const double hot = std::min(lifetime, cold_after);
    use.hot_gb_months += copies * gb * hot / kSecondsPerBillingMonth;
    use.cold_gb_months += copies * gb * (lifetime - hot) / kSecondsPerBillingMonth;
  };
  // Checkpoints superseded during the run live keep intervals; the newest `keep` live until the end.
  const std::int64_t superseded = std::max<std::int64_t>(checkpoints - keep, 0);
  add_lifetime(wall_interval * keep, static_cast<double>(superseded));
  for (std::int64_t i = superseded; i < checkpoints; ++i) {
    add_lifetime(run_time - wall_interval * static_cast<double>(i + 1), 1.0);
  }
  use.cost_usd =
      use.hot_gb_months * pricing.hot_usd_per_gb_month + use.cold_gb_months * pricing.cold_usd_per_gb_month;
  return use;
}

}  // namespace trainsim::model
