#include "scenarios/studies/cluster_queue.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <utility>

#include "models/cluster/uplink_shares.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"
#include "topologies/placement.hpp"

namespace trainsim::scenario {

namespace {

struct Timing {
  std::string name;  // the scenario's
  double duration = 0;
  double checkpoint_interval = 0;
  double recovery = 0;
  double traffic_per_step = 0;  // bytes per GPU leaving its node per step (contention only)
};

using ScenarioKey = std::pair<std::string, std::int64_t>;  // (scenario path, nodes)

// A job's bytes per GPU per step through the NICs, from the step model's own costs: the largest pipeline
// rank's data-parallel collectives when its gradient group spans nodes, plus the pipeline hand-overs
// (forward activations and backward gradients of every micro-batch) when its stages sit on several nodes.
double traffic_per_step(const Scenario& s) {
  const model::StepInput in = step_input_of(s);
  const model::StepPlan plan = model::make_step_plan(in.model, in.cluster, in.plan, in.training);
  if (!plan.feasible) return 0;
  const model::StepCosts costs = model::step_costs(in, plan);
  double bytes = 0;
  if (costs.dp_crosses_nodes) {
    for (const model::StageCost& stage : costs.stages) bytes = std::max(bytes, stage.dp_bytes_per_step);
  }
  const bool stages_span_nodes = std::adjacent_find(costs.stage_node.begin(), costs.stage_node.end(),
                                                    std::not_equal_to<>()) != costs.stage_node.end();
  if (stages_span_nodes) bytes += 2.0 * static_cast<double>(plan.micro_batches) * costs.p2p_bytes;
  return bytes;
}

// Contention: a job's step at a share of the links it crosses, as the same scenario with the rest of the
// switch-to-switch links taken by background traffic (cluster.background), over its step alone; memoised
// per (scenario, nodes, share bucket).
class FabricPricer {
 public:
  static constexpr double kSamePace = 1e-6;

  void add(const ScenarioKey& key, const Scenario& s, double step_time) {
    scenarios_.emplace(key, std::make_pair(s, step_time));
  }
  double slowdown(const ScenarioKey& key, double share) {
    const auto bucket = static_cast<int>(std::lround(share * model::kShareBuckets));
    const auto memo_key = std::make_pair(key, bucket);
    if (auto it = memo_.find(memo_key); it != memo_.end()) return it->second;
    const auto& [scenario, alone] = scenarios_.at(key);
    Scenario shared = scenario;
    // The job's own background stays; of what it leaves, the job gets its share.
    const double own = scenario.cluster.background_fraction;
    shared.cluster.background_fraction = std::min(0.99, 1 - (1 - own) * share);
    const model::StepReport step = model::simulate_step(step_input_of(shared), model::Fidelity::analytic);
    double pace = 1;
    if (step.feasible && alone > 0) pace = step.iteration_time / alone;
    // A step within a millionth of the job's own is the same step (the closed form's rounding), not a
    // slowdown to report as hours of contention.
    if (!(pace > 1 + kSamePace)) pace = 1;
    return memo_.emplace(memo_key, pace).first->second;
  }
  [[nodiscard]] std::size_t repricings() const { return memo_.size(); }

 private:
  std::map<ScenarioKey, std::pair<Scenario, double>> scenarios_;
  std::map<std::pair<ScenarioKey, int>, double> memo_;
};

class TimingMemo {
 public:
  TimingMemo(const ClusterFile& file, FabricPricer* pricer) : file_(file), pricer_(pricer) {}

  const Timing& get(const std::string& path, std::int64_t nodes, const Diagnostic& where) {
    const auto key = std::make_pair(path, nodes);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    return memo_.emplace(key, simulate(path, nodes, where)).first->second;
  }
  [[nodiscard]] std::size_t size() const { return memo_.size(); }
  /// The cluster of the first scenario loaded (the file's node and network), for the leaf size.
  [[nodiscard]] const std::optional<topo::ClusterSpec>& cluster() const { return first_cluster_; }

 private:
  [[noreturn]] static void fail_at(const Diagnostic& where, const std::string& message) {
    Diagnostic d = where;
    d.message = message;
    throw InputError(std::vector<Diagnostic>{d});
  }

  Timing simulate(const std::string& path, std::int64_t nodes, const Diagnostic& where) {
    std::vector<Override> overrides = {{"cluster.node", file_.node_yaml},
                                       {"cluster.nodes", std::to_string(nodes)}};
    if (!file_.network_yaml.empty()) overrides.push_back({"cluster.network", file_.network_yaml});
    const std::string at = " at " + std::to_string(nodes) + " nodes: ";
    Scenario s;
    try {
      s = load_scenario_file(path, overrides);
    } catch (const InputError& e) {
      fail_at(where, "the scenario does not load" + at + e.what());
    }
    const double restart = s.failures.restart_s;
    if (file_.node_mtbf > 0) s.failures = {};  // the cluster's failures are events instead
    if (!first_cluster_) first_cluster_ = s.cluster;
    const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
    if (!r.step.feasible || !r.run.feasible) {
      fail_at(where, "infeasible" + at + (r.step.feasible ? r.run.reason : r.step.reason));
    }
    if (!r.step.fits) fail_at(where, "does not fit in memory" + at + r.step.reason);
    Timing t;
    t.name = s.name;
    t.duration = r.run.run_time;
    if (r.run.checkpoint_interval > 0)
      t.checkpoint_interval = r.run.checkpoint_interval + r.run.checkpoint_stall_each;
    t.recovery = restart + r.run.checkpoint_restore_time;
    if (!(t.duration > 0) || !std::isfinite(t.duration)) fail_at(where, "no finite run time" + at);
    if (pricer_ != nullptr) {
      t.traffic_per_step = traffic_per_step(s);
      pricer_->add({path, nodes}, s, r.step.iteration_time);
    }
    return t;
  }

  const ClusterFile& file_;
  FabricPricer* pricer_;
  std::map<ScenarioKey, Timing> memo_;
  std::optional<topo::ClusterSpec> first_cluster_;
};

std::size_t team_index(std::vector<std::string>& teams, const std::string& team) {
  for (std::size_t i = 0; i < teams.size(); ++i)
    if (teams[i] == team) return i;
  teams.push_back(team);
  return teams.size() - 1;
}

model::QueueJob queue_job(const Timing& t, std::string name, std::size_t team, double submit,
                          std::int64_t nodes, int priority) {
  model::QueueJob q;
  q.name = std::move(name);
  q.scenario = t.name;
  q.team = team;
  q.submit = submit;
  q.nodes = nodes;
  q.priority = priority;
  q.duration = t.duration;
  q.checkpoint_interval = t.checkpoint_interval;
  q.recovery = t.recovery;
  q.traffic_per_step = t.traffic_per_step;
  return q;
}

// A uniform double in [0, 1) from 53 bits: the same on every platform (std distributions are not).
double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

ClusterStudy build_cluster_study(const ClusterFile& file) {
  ClusterStudy study;
  model::QueueSpec& q = study.spec;
  q.nodes = file.nodes;
  q.gpus_per_node = file.node.gpus_per_node;
  q.period = file.period;
  q.policy = file.policy;
  q.placement = file.placement;
  q.preemption = file.preemption;
  q.node_mtbf = file.node_mtbf;
  q.repair = file.repair;
  q.failure_seed = file.failure_seed;
  q.gpu_hour_usd = file.gpu_hour_usd;
  auto pricer = file.contention ? std::make_shared<FabricPricer>() : nullptr;
  TimingMemo memo(file, pricer.get());
  std::vector<ScenarioKey> job_keys;  // per job, for the pricer
  for (const ClusterJobEntry& j : file.jobs) {
    const Timing& t = memo.get(j.scenario, j.nodes, j.where);
    q.jobs.push_back(queue_job(t, j.name, team_index(q.teams, j.team), j.submit, j.nodes, j.priority));
    job_keys.emplace_back(j.scenario, j.nodes);
  }
  for (const ArrivalStream& s : file.arrivals) {
    const std::size_t team = team_index(q.teams, s.team);
    double total_weight = 0;
    for (const ArrivalChoice& c : s.mix) {
      total_weight += c.weight;
      for (const std::int64_t n : c.nodes) (void)memo.get(c.scenario, n, c.where);
    }
    std::mt19937_64 rng(s.seed);
    double t = 0;
    for (std::int64_t k = 0;; ++k) {
      t -= std::log1p(-uniform(rng)) / s.rate;
      if (t >= file.period) break;
      double pick = uniform(rng) * total_weight;
      std::size_t c = 0;
      while (c + 1 < s.mix.size() && pick >= s.mix[c].weight) pick -= s.mix[c++].weight;
      const ArrivalChoice& choice = s.mix[c];
      const auto n =
          choice.nodes[static_cast<std::size_t>(uniform(rng) * static_cast<double>(choice.nodes.size()))];
      const Timing& timing = memo.get(choice.scenario, n, choice.where);
      q.jobs.push_back(queue_job(timing, s.team + "-a" + std::to_string(k), team, t, n, s.priority));
      job_keys.emplace_back(choice.scenario, n);
    }
  }
  if (!file.quotas.empty()) {
    q.quotas.assign(q.teams.size(), 0.0);
    for (const auto& [team, share] : file.quotas) q.quotas[team_index(q.teams, team)] = share;
  }
  if (memo.cluster()) {
    topo::ClusterSpec whole = *memo.cluster();
    whole.nodes = file.nodes;
    q.nodes_per_leaf = topo::nodes_per_leaf(whole);
    const topo::FabricTopology fabric = whole.network.topology;
    if (file.contention && fabric != topo::FabricTopology::fat_tree &&
        fabric != topo::FabricTopology::fat_tree_3 && fabric != topo::FabricTopology::single_switch) {
      Diagnostic d = file.contention_where;
      d.message =
          "contention is modelled on leaf-and-spine fabrics (fat-tree, fat-tree-3, single-switch), not " +
          std::string(topo::to_string(fabric));
      throw InputError(std::vector<Diagnostic>{d});
    }
  }
  study.simulations = memo.size();
  if (pricer) {
    q.contention = true;
    q.slowdown = [pricer, keys = std::move(job_keys)](std::size_t job, double share) {
      return pricer->slowdown(keys.at(job), share);
    };
    study.repricings = [pricer] { return pricer->repricings(); };
  }
  return study;
}

std::vector<std::string> cluster_study_notes(const ClusterStudy& study) {
  std::vector<std::string> notes;
  if (study.spec.contention) {
    notes.push_back(
        "contention: steady-state shares of the leaf uplinks per placement epoch (weighted max-min over the "
        "running jobs, by traffic per step), not per-flow timing; each share priced as cluster.background in "
        "twentieths: " +
        std::to_string(study.repricings ? study.repricings() : 0) + " step repricings");
  } else {
    notes.push_back(
        "contention-free: each job runs at its own step model's speed; jobs placed side by side do not share "
        "fabric links (set cluster.contention: true to share them)");
  }
  notes.push_back("memoised: each distinct (scenario, node count) was simulated once (analytic fidelity): " +
                  std::to_string(study.simulations) + " simulations for " +
                  std::to_string(study.spec.jobs.size()) + " jobs");
  return notes;
}

}  // namespace trainsim::scenario
