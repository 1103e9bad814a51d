// dump_scenario (scenarios/loader.hpp): a loaded scenario as YAML that loads back to equal structs.
#include <string>
#include <string_view>

#include "scenarios/block_fields.hpp"
#include "scenarios/campaign_block.hpp"
#include "scenarios/cluster_background.hpp"
#include "scenarios/framework_block.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/model_fields.hpp"
#include "scenarios/parallelism_fields.hpp"
#include "scenarios/preset_blocks.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/scenario_reader.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {
namespace {

std::string q(std::string_view s) {
  return yaml_quote(s);
}

// A quantity as the reader reads it back (format_quantity), quoted.
std::string qty(double x, Dimension dim) {
  return q(format_quantity(x, dim));
}

// `tags:`, a flow map of the scenario's tags; nothing when it has none.
std::string tags_to_yaml(const Scenario& s) {
  std::string out;
  if (!s.tags.empty()) {
    out += "tags: {";
    for (std::size_t i = 0; i < s.tags.size(); ++i) {
      out += (i ? ", " : "") + q(s.tags[i].first) + ": " + q(s.tags[i].second);
    }
    out += "}\n";
  }
  return out;
}

// `cluster:`: the node, its count, the network, background traffic, stragglers, degraded NICs, variability,
// storage.
std::string cluster_to_yaml(const Scenario& s) {
  std::string out;
  const auto& c = s.cluster;
  out += "cluster:\n  node: " + node_to_yaml(c.node) + "\n" + block_fields(cluster_fields(), c, "  ");
  const auto& n = c.network;
  out += "  network: {" + flow_fields(cluster_network_fields(), n);
  if (!n.torus_dims.empty()) {
    out += ", torus_dims: [";
    for (std::size_t i = 0; i < n.torus_dims.size(); ++i)
      out += (i ? ", " : "") + std::to_string(n.torus_dims[i]);
    out += "]";
  }
  out += "}\n";
  if (c.background_fraction > 0)
    out += "  background: {fraction: " + format_number(c.background_fraction) + "}\n";
  if (!c.stragglers.empty()) {
    out += "  stragglers: [";
    for (std::size_t i = 0; i < c.stragglers.size(); ++i) {
      out += (i ? ", " : "") + std::string("{node: ") + std::to_string(c.stragglers[i].node) +
             ", slowdown: " + format_number(c.stragglers[i].slowdown) + "}";
    }
    out += "]\n";
  }
  if (!c.degraded.empty()) {
    out += "  degraded: [";
    for (std::size_t i = 0; i < c.degraded.size(); ++i) {
      const topo::DegradedNic& d = c.degraded[i];
      out += (i ? ", " : "") + std::string("{node: ") + std::to_string(d.node) +
             ", nic: " + std::to_string(d.nic) +
             ", bandwidth: " + qty(d.bytes_per_s, Dimension::bytes_per_s) + "}";
    }
    out += "]\n";
  }
  if (c.variability >= 0 || c.variability_seed != 0) {
    out += "  variability: {";
    if (c.variability >= 0) out += "spread: " + format_number(c.variability) + ", ";
    out += "seed: " + std::to_string(c.variability_seed) + "}\n";
  }
  out += "  storage: {" + flow_fields(cluster_storage_fields(), c.storage, {"latency"}) + "}\n";
  return out;
}

// `parallelism:` and the framework block that follows it.
std::string parallelism_to_yaml(const Scenario& s) {
  return "parallelism:\n" +
         block_fields(parallelism_fields(), s.parallelism, "  ", {"shard_group", "offload"}) +
         framework_to_yaml(s.parallelism);
}

// `training:`: batch, precision, optimizer, the run's length and the learning-rate schedule.
std::string training_to_yaml(const Scenario& s) {
  const model::TrainingSpec& t = s.training;
  std::string out = "training:\n";
  for (const Field<model::TrainingSpec>& f : training_fields()) {
    const std::string key(f.info.key);
    if (key == "optimizer") {
      out += "  optimizer: {" + flow_fields(training_optimizer_fields(), t.optimizer) + "}\n";
    } else if (key == "schedule") {
      out += "  schedule: {" + flow_fields(training_schedule_fields(), t) + "}\n";
    } else if (const auto value = f.text(t)) {
      out += "  " + key + ": " + *value + "\n";
    }
  }
  return out;
}

// `checkpoint:`, only when checkpointing is enabled.
std::string checkpoint_to_yaml(const Scenario& s) {
  std::string out;
  if (s.checkpoint.enabled) {
    out += "checkpoint: {" + flow_fields(checkpoint_fields(), s.checkpoint) + "}\n";
  }
  return out;
}

// `failures:`, only when failures are simulated.
std::string failures_to_yaml(const Scenario& s) {
  std::string out;
  if (s.failures.enabled) {
    out += "failures: {" + flow_fields(failures_fields(), s.failures) + "}\n";
  }
  return out;
}

// `pricing:`, only when the run is priced.
std::string pricing_to_yaml(const Scenario& s) {
  std::string out;
  if (s.pricing.enabled) {
    const auto& pr = s.pricing;
    out += "pricing:\n";
    // The region's name, then every value explicitly: they override its table, so they load back as they are.
    if (!pr.region.empty()) out += "  region: " + q(pr.region) + "\n";
    out += "  gpu_hour: " + qty(pr.gpu_hour_usd, Dimension::usd_per_hour) + "\n";
    if (pr.commitment.enabled)
      out += "  commitment: {" + flow_fields(pricing_commitment_fields(), pr.commitment) + "}\n";
    if (pr.spot.enabled) out += "  spot: {" + flow_fields(pricing_spot_fields(), pr.spot) + "}\n";
    out += "  storage: {" + flow_fields(pricing_storage_fields(), pr.storage) + "}\n";
    out += block_fields(pricing_fields(), pr, "  ");
    out += "  energy: {" + flow_fields(pricing_energy_fields(), pr.energy) + "}\n";
  }
  return out;
}

// `budget:`, only when some limit is set.
std::string budget_to_yaml(const Scenario& s) {
  std::string out;
  const auto& bu = s.budget;
  if (bu.max_cost_usd || bu.deadline_s || bu.memory_headroom || bu.memory_headroom_bytes) {
    std::string parts = flow_fields(budget_fields(), bu);
    if (bu.memory_headroom)
      parts +=
          (parts.empty() ? "" : ", ") + std::string("memory_headroom: ") + format_number(*bu.memory_headroom);
    if (bu.memory_headroom_bytes)
      parts += (parts.empty() ? "" : ", ") + std::string("memory_headroom: ") +
               qty(*bu.memory_headroom_bytes, Dimension::bytes);
    if (!bu.alerts.empty()) {
      parts += (parts.empty() ? "" : ", ") + std::string("alerts: [");
      for (std::size_t i = 0; i < bu.alerts.size(); ++i)
        parts += (i ? ", " : "") + format_number(bu.alerts[i]);
      parts += "]";
    }
    out += "budget: {" + parts + "}\n";
  }
  return out;
}

// `sweep:`, only when the scenario sweeps.
std::string sweep_to_yaml(const Scenario& s) {
  std::string out;
  if (!s.sweep.empty()) {
    out += "sweep:\n" + block_fields(sweep_fields(), s.sweep, "  ");
    for (const SweepAxis& axis : s.sweep.axes) {
      out += "  " + axis.key_path + ": [";
      for (std::size_t i = 0; i < axis.values.size(); ++i) out += (i ? ", " : "") + axis.values[i];
      out += "]\n";
    }
  }
  return out;
}

// `measured:`, only when the scenario carries measurements.
std::string measured_to_yaml(const Scenario& s) {
  std::string out;
  if (s.measured) {
    const auto& m = *s.measured;
    out += "measured:\n" + block_fields(measured_fields(), m, "  ");
    for (const auto& [name, value] : m.values) out += "  " + name + ": " + format_number(value) + "\n";
    if (m.tolerance_per_metric.empty()) {
      out += "  tolerance: " + format_number(m.tolerance) + "\n";
    } else {
      out += "  tolerance: {";
      bool first = true;
      for (const auto& [name, value] : m.tolerance_per_metric) {
        out += (first ? "" : ", ") + name + ": " + format_number(value);
        first = false;
      }
      out += "}\n";
    }
  }
  return out;
}

}  // namespace

std::string dump_scenario(const Scenario& s) {
  std::string out = "# written by trainsim: every preset expanded, every default explicit\n";
  out += "name: " + q(s.name) + "\n";
  out += tags_to_yaml(s);
  out += "model: " + model_to_yaml(s.model) + "\n";
  out += cluster_to_yaml(s);
  out += parallelism_to_yaml(s);
  out += training_to_yaml(s);
  out += checkpoint_to_yaml(s);
  out += failures_to_yaml(s);
  out += pricing_to_yaml(s);
  out += budget_to_yaml(s);
  out += convergence_to_yaml(s.convergence);
  out += tuning_to_yaml(s.tuning);
  out += data_to_yaml(s.data);
  out += people_to_yaml(s.people);
  out += sweep_to_yaml(s);
  out += measured_to_yaml(s);
  return out;
}

}  // namespace trainsim::scenario
