#include "scenarios/studies/cluster_queue.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <utility>

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
};

class TimingMemo {
 public:
  explicit TimingMemo(const ClusterFile& file) : file_(file) {}

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
    return t;
  }

  const ClusterFile& file_;
  std::map<std::pair<std::string, std::int64_t>, Timing> memo_;
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
  TimingMemo memo(file);
  for (const ClusterJobEntry& j : file.jobs) {
    const Timing& t = memo.get(j.scenario, j.nodes, j.where);
    q.jobs.push_back(queue_job(t, j.name, team_index(q.teams, j.team), j.submit, j.nodes, j.priority));
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
  }
  study.simulations = memo.size();
  return study;
}

std::vector<std::string> cluster_study_notes(const ClusterStudy& study) {
  return {
      "contention-free: each job runs at its own step model's speed; jobs placed side by side do not share "
      "fabric links (the fabric between jobs is not modelled yet)",
      "memoised: each distinct (scenario, node count) was simulated once (analytic fidelity): " +
          std::to_string(study.simulations) + " simulations for " + std::to_string(study.spec.jobs.size()) +
          " jobs",
  };
}

}  // namespace trainsim::scenario
