#include "scenarios/cluster_file.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "scenarios/preset_blocks.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

namespace {

namespace fs = std::filesystem;

// The engine's picosecond clock holds about 106 days (models/cluster/queue_simulator.hpp).
constexpr double kMaxPeriod = 100.0 * 86400.0;
constexpr double kMaxPriority = 1e6;
// What one period may hold, bounded at the keys that set it as a sweep bounds its grid: every job is held
// in memory and written as a row of jobs.csv, every node failure is an event. The expected counts are
// checked (a Poisson stream's draws stay within a few standard deviations of them): arrivals are
// rate x period, failures at most nodes x period / node_mtbf (a repair only lowers it).
constexpr double kMaxJobs = 1e6;
constexpr double kMaxNodeFailures = 1e6;

Diagnostic location(const YamlValue& v, const std::string& path) {
  Diagnostic at;
  at.file = v.file ? *v.file : "";
  at.line = v.line;
  at.column = v.column;
  at.key_path = path;
  return at;
}

class ClusterReader {
 public:
  ClusterReader(Diagnostics& d, fs::path folder) : d_(d), folder_(std::move(folder)) {}

  ClusterFile read(const YamlValue& root) {
    ClusterFile c;
    MapReader r(d_, root, "", {"cluster", "period", "scheduler", "jobs", "arrivals", "failures", "pricing"});
    if (!r.valid()) return c;
    r.require({"cluster", "period"});
    if (!r.has("jobs") && !r.has("arrivals")) d_.add(root, "", "expected `jobs:`, `arrivals:` or both");
    if (const YamlValue* v = r.get("cluster")) read_cluster(*v, c);
    if (const YamlValue* v = r.get("period")) {
      if (auto p = read_quantity(d_, *v, "period", Dimension::seconds)) {
        if (*p > kMaxPeriod) {
          d_.add(*v, "period", "expected at most 100 d (the event clock's range)");
        } else {
          c.period = *p;
        }
      }
    }
    if (const YamlValue* v = r.get("jobs")) {
      read_list(d_, *v, "jobs", "a list of jobs, e.g. [{scenario: s.yaml, team: a, nodes: 4}]",
                [&](const YamlValue& item, const std::string& path) { read_job(item, path, c); });
    }
    if (const YamlValue* v = r.get("arrivals")) {
      read_list(d_, *v, "arrivals", "a list of arrival streams, e.g. [{team: a, rate: \"6/d\", mix: [...]}]",
                [&](const YamlValue& item, const std::string& path) { read_stream(item, path, c); });
      check_total_jobs(*v, c);
    }
    if (const YamlValue* v = r.get("scheduler")) read_scheduler(*v, c);
    if (const YamlValue* v = r.get("failures")) {
      MapReader f(d_, *v, "failures", {"node_mtbf", "repair", "seed"});
      f.require({"node_mtbf", "repair"});
      f.quantity("node_mtbf", c.node_mtbf, Dimension::seconds);
      f.quantity("repair", c.repair, Dimension::seconds, Bound::non_negative);
      f.count("seed", c.failure_seed, 0, 9e15);
      if (const YamlValue* m = f.get("node_mtbf")) check_failures(*m, c);
    }
    if (const YamlValue* v = r.get("pricing")) {
      MapReader p(d_, *v, "pricing", {"gpu_hour"});
      p.require({"gpu_hour"});
      p.quantity("gpu_hour", c.gpu_hour_usd, Dimension::usd_per_hour, Bound::non_negative);
    }
    return c;
  }

 private:
  void read_cluster(const YamlValue& v, ClusterFile& c) {
    MapReader r(d_, v, "cluster", {"node", "nodes", "network", "contention"});
    if (!r.valid()) return;
    r.require({"node", "nodes"});
    if (const YamlValue* n = r.get("node")) {
      const std::size_t before = d_.size();
      c.node = read_node_value(d_, *n, "cluster.node", PresetScope{presets_});
      if (d_.size() == before) c.node_yaml = node_to_yaml(c.node);
    }
    r.count("nodes", c.nodes, 1, 1e6);
    r.boolean("contention", c.contention);
    if (const YamlValue* n = r.get("contention")) c.contention_where = location(*n, "cluster.contention");
    if (const YamlValue* n = r.get("network")) {
      if (n->is_mapping()) {
        c.network_yaml = to_yaml_text(*n);
      } else {
        d_.add(*n, "cluster.network", "expected a mapping, e.g. {topology: fat-tree, oversubscription: 2}");
      }
    }
  }

  void read_scheduler(const YamlValue& v, ClusterFile& c) {
    MapReader r(d_, v, "scheduler", {"policy", "placement", "quotas", "preemption"});
    if (!r.valid()) return;
    r.choice("policy", c.policy, model::kQueuePolicyNames);
    r.choice("placement", c.placement, model::kPlacementRuleNames);
    r.boolean("preemption", c.preemption);
    if (c.preemption && c.policy != model::QueuePolicy::priority) {
      d_.add(*r.get("preemption"), "scheduler.preemption", "preemption needs `policy: priority`");
    }
    if (const YamlValue* q = r.get("quotas")) read_quotas(*q, c);
  }

  void read_quotas(const YamlValue& v, ClusterFile& c) {
    if (!v.is_mapping()) {
      d_.add(v, "scheduler.quotas", "expected a mapping of team to share, e.g. {llm: 0.6, vision: 0.4}");
      return;
    }
    double sum = 0;
    for (const YamlEntry& e : v.entries) {
      const std::string path = "scheduler.quotas." + e.key;
      auto share = read_number(d_, e.value, path, 0, 1);
      if (!share) continue;
      if (teams_.count(e.key) == 0) {
        d_.add(e.value, path, "no job or arrival stream belongs to team \"" + e.key + "\"");
      }
      c.quotas.emplace_back(e.key, *share);
      sum += *share;
    }
    if (sum > 1 + 1e-9)
      d_.add(v, "scheduler.quotas", "the shares add up to " + format_number(sum) + "; expected at most 1");
    for (const auto& [team, where] : teams_) {
      bool named = false;
      for (const auto& q : c.quotas) named = named || q.first == team;
      if (!named) d_.add(v, "scheduler.quotas", "team \"" + team + "\" has no share: quotas name every team");
    }
  }

  // The scenario path, resolved against the cluster file's folder; "" (and a diagnostic) when no file.
  std::string scenario_path(const MapReader& r) {
    const YamlValue* v = r.get("scenario");
    if (v == nullptr) return "";
    auto text = read_string(d_, *v, r.child_path("scenario"));
    if (!text) return "";
    const fs::path p = fs::path(*text).is_absolute() ? fs::path(*text) : folder_ / *text;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      d_.add(*v, r.child_path("scenario"), "no scenario file at " + p.lexically_normal().string());
      return "";
    }
    return p.lexically_normal().string();
  }

  void check_nodes(const YamlValue& at, const std::string& path, std::int64_t nodes, const ClusterFile& c) {
    if (c.nodes > 0 && nodes > c.nodes) {
      d_.add(at, path,
             "asks for " + std::to_string(nodes) + " nodes; the cluster has " + std::to_string(c.nodes));
    }
  }

  void read_job(const YamlValue& v, const std::string& path, ClusterFile& c) {
    MapReader r(d_, v, path, {"name", "scenario", "team", "submit", "nodes", "priority"});
    if (!r.valid()) return;
    r.require({"scenario", "team", "nodes"});
    ClusterJobEntry j;
    j.scenario = scenario_path(r);
    if (const YamlValue* s = r.get("scenario")) j.where = location(*s, r.child_path("scenario"));
    r.string("team", j.team);
    r.string("name", j.name);
    r.quantity("submit", j.submit, Dimension::seconds, Bound::non_negative);
    r.count("nodes", j.nodes, 1, 1e6);
    r.count("priority", j.priority, -kMaxPriority, kMaxPriority);
    if (const YamlValue* n = r.get("nodes")) check_nodes(*n, r.child_path("nodes"), j.nodes, c);
    if (const YamlValue* s = r.get("submit"); s != nullptr && c.period > 0 && j.submit >= c.period) {
      d_.add(*s, r.child_path("submit"), "the job is submitted after the period ends");
    }
    if (j.name.empty()) j.name = j.team + "-" + std::to_string(c.jobs.size());
    if (const YamlValue* t = r.get("team")) teams_.emplace(j.team, t);
    c.jobs.push_back(std::move(j));
  }

  void read_stream(const YamlValue& v, const std::string& path, ClusterFile& c) {
    MapReader r(d_, v, path, {"team", "rate", "mix", "seed", "priority"});
    if (!r.valid()) return;
    r.require({"team", "rate", "mix"});
    ArrivalStream s;
    r.string("team", s.team);
    r.quantity("rate", s.rate, Dimension::rate_per_s);
    if (const YamlValue* rate = r.get("rate")) check_arrivals(*rate, r.child_path("rate"), s, c);
    r.count("seed", s.seed, 0, 9e15);
    r.count("priority", s.priority, -kMaxPriority, kMaxPriority);
    if (const YamlValue* m = r.get("mix")) {
      read_list(
          d_, *m, r.child_path("mix"), "a list of {scenario, weight, nodes}",
          [&](const YamlValue& item, const std::string& item_path) { read_choice(item, item_path, s, c); });
      if (m->is_sequence() && m->items.empty())
        d_.add(*m, r.child_path("mix"), "expected at least one scenario");
    }
    if (const YamlValue* t = r.get("team")) teams_.emplace(s.team, t);
    c.arrivals.push_back(std::move(s));
  }

  /// rate x period within kMaxJobs, at the stream's rate.
  void check_arrivals(const YamlValue& at, const std::string& path, const ArrivalStream& s,
                      const ClusterFile& c) {
    const double expected = s.rate * c.period;
    if (expected > kMaxJobs) {
      d_.add(at, path,
             "rate x period = " + format_number(s.rate) + " /s x " + format_number(c.period) +
                 " s = " + format_number(expected) + " expected arrivals; a cluster file simulates at most " +
                 format_number(kMaxJobs) + " jobs in its period: lower the rate or shorten the period");
    }
  }

  /// The listed jobs and every stream's expected arrivals together within kMaxJobs.
  void check_total_jobs(const YamlValue& at, const ClusterFile& c) {
    double expected = static_cast<double>(c.jobs.size());
    for (const ArrivalStream& s : c.arrivals) expected += s.rate * c.period;
    if (expected > kMaxJobs && std::all_of(c.arrivals.begin(), c.arrivals.end(), [&](const ArrivalStream& s) {
          return s.rate * c.period <= kMaxJobs;
        })) {
      d_.add(at, "arrivals",
             "the jobs listed and the streams' rate x period add up to " + format_number(expected) +
                 " expected jobs; a cluster file simulates at most " + format_number(kMaxJobs) +
                 " jobs in its period: lower the rates or shorten the period");
    }
  }

  /// nodes x period / node_mtbf within kMaxNodeFailures, at node_mtbf.
  void check_failures(const YamlValue& at, const ClusterFile& c) {
    if (c.node_mtbf <= 0) return;
    const double expected = static_cast<double>(c.nodes) * c.period / c.node_mtbf;
    if (expected > kMaxNodeFailures) {
      d_.add(at, "failures.node_mtbf",
             "nodes x period / node_mtbf = " + std::to_string(c.nodes) + " x " + format_number(c.period) +
                 " s / " + format_number(c.node_mtbf) + " s = " + format_number(expected) +
                 " expected node failures; a cluster file simulates at most " +
                 format_number(kMaxNodeFailures) + " in its period: raise node_mtbf or shorten the period");
    }
  }

  void read_choice(const YamlValue& v, const std::string& path, ArrivalStream& s, const ClusterFile& c) {
    MapReader r(d_, v, path, {"scenario", "weight", "nodes"});
    if (!r.valid()) return;
    r.require({"scenario", "nodes"});
    ArrivalChoice a;
    a.scenario = scenario_path(r);
    if (const YamlValue* sc = r.get("scenario")) a.where = location(*sc, r.child_path("scenario"));
    r.number("weight", a.weight, 1e-9, 1e9);
    if (const YamlValue* n = r.get("nodes")) {
      const std::string npath = r.child_path("nodes");
      if (n->is_sequence()) {
        if (n->items.empty()) d_.add(*n, npath, "expected at least one node count");
        for (std::size_t i = 0; i < n->items.size(); ++i) {
          const std::string ipath = npath + "[" + std::to_string(i) + "]";
          if (auto k = read_count(d_, n->items[i], ipath, 1, 1e6)) {
            check_nodes(n->items[i], ipath, *k, c);
            a.nodes.push_back(*k);
          }
        }
      } else if (auto k = read_count(d_, *n, npath, 1, 1e6)) {
        check_nodes(*n, npath, *k, c);
        a.nodes.push_back(*k);
      }
    }
    s.mix.push_back(std::move(a));
  }

  Diagnostics& d_;
  PresetLibrary presets_;
  fs::path folder_;
  std::map<std::string, const YamlValue*> teams_;
};

}  // namespace

ClusterFile load_cluster_text(std::string_view yaml, const std::string& file_label) {
  Diagnostics d;
  ClusterFile c;
  if (yaml.size() > max_cluster_file_bytes) {
    throw InputError(file_label + ": a cluster file is at most " + std::to_string(max_cluster_file_bytes) +
                     " bytes");
  }
  if (std::optional<YamlValue> tree = parse_yaml_tree(yaml, file_label, d)) {
    ClusterReader reader(d, fs::path(file_label).parent_path());
    c = reader.read(*tree);
  }
  d.throw_if_any();
  c.file = file_label;
  return c;
}

ClusterFile load_cluster_file(const std::string& path) {
  Diagnostics d;
  std::optional<std::string> text = read_text_file(path, d);
  d.throw_if_any();
  return load_cluster_text(*text, path);
}

}  // namespace trainsim::scenario
