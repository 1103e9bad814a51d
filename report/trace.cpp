#include "report/trace.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "sim/error.hpp"
#include "sim/json_input.hpp"
#include "sim/trace.hpp"

namespace trainsim::report {

namespace {

/// Trace times are microseconds.
constexpr double kSecondsPerTraceUnit = 1e-6;

// Readers that take a field of the expected type or fall back: a trace is input, and a field of another
// type must not stop the page (nlohmann's value() throws on a type mismatch).
double number(const nlohmann::ordered_json& j, const char* key, double fallback = 0) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string text(const nlohmann::ordered_json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The path through `slices` (in path order), each entered at its start or where the one before it ended.
std::vector<PathStep> entered(const IterationTrace& trace, const std::vector<std::size_t>& slices) {
  const auto& s = trace.slices;
  std::vector<PathStep> path;
  for (const std::size_t i : slices) {
    const double from = path.empty() ? s[i].start : std::max(s[i].start, s[path.back().slice].end);
    path.push_back({i, std::min(from, s[i].end)});
  }
  return path;
}

const nlohmann::ordered_json& args_of(const nlohmann::ordered_json& e) {
  static const nlohmann::ordered_json kNone = nlohmann::ordered_json::object();
  const auto it = e.find("args");
  return it != e.end() && it->is_object() ? *it : kNone;
}

}  // namespace

IterationTrace read_trace(const std::string& json, const std::string& file_label) {
  const nlohmann::ordered_json j = sim::parse_json_input(json, file_label);
  const auto bad = [&](const std::string& why) {
    return InputError({Diagnostic{.file = file_label, .message = why}});
  };
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array())
    throw bad("expected a Chrome trace: a JSON object with a \"traceEvents\" array");

  // Names and sort keys of processes and threads first ("M" events), then slices and counters.
  struct Process {
    std::string name;
    double sort = 0;
  };
  struct Thread {
    std::string name;
    double sort = 0;
  };
  std::map<long long, Process> processes;
  std::map<std::pair<long long, long long>, Thread> threads;
  for (const auto& e : j["traceEvents"]) {
    if (!e.is_object()) throw bad("a traceEvents entry is not an object");
    const std::string ph = text(e, "ph");
    const auto pid = static_cast<long long>(number(e, "pid"));
    const auto tid = static_cast<long long>(number(e, "tid"));
    const nlohmann::ordered_json& args = args_of(e);
    if (ph == "M") {
      const std::string what = text(e, "name");
      if (what == "process_name") processes[pid].name = text(args, "name");
      if (what == "process_sort_index") processes[pid].sort = number(args, "sort_index");
      if (what == "thread_name") threads[{pid, tid}].name = text(args, "name");
      if (what == "thread_sort_index") threads[{pid, tid}].sort = number(args, "sort_index");
    } else if (ph == "X") {
      processes.try_emplace(pid);
      threads.try_emplace(std::pair{pid, tid});
    } else if (ph == "C") {
      processes.try_emplace(pid);
    }
  }

  IterationTrace trace;
  std::vector<long long> pids;
  pids.reserve(processes.size());
  for (const auto& [pid, p] : processes) pids.push_back(pid);
  std::stable_sort(pids.begin(), pids.end(),
                   [&](long long a, long long b) { return processes[a].sort < processes[b].sort; });
  std::map<long long, std::size_t> process_index;
  for (const long long pid : pids) {
    process_index[pid] = trace.processes.size();
    const std::string& name = processes[pid].name;
    trace.processes.push_back(name.empty() ? "process " + std::to_string(pid) : name);
  }
  std::vector<std::pair<long long, long long>> keys;
  keys.reserve(threads.size());
  for (const auto& [key, t] : threads) keys.push_back(key);
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    const std::size_t pa = process_index[a.first], pb = process_index[b.first];
    return pa != pb ? pa < pb : threads[a].sort < threads[b].sort;
  });
  // The checkpoint track (models/run/checkpoint_trace.hpp) follows the iteration rather than being part
  // of it: its threads and slices are left out.
  std::map<std::pair<long long, long long>, std::size_t> lane_index;
  for (const auto& key : keys) {
    const std::string& name = threads[key].name;
    if (name.rfind("checkpoint", 0) == 0) continue;
    lane_index[key] = trace.lanes.size();
    trace.lanes.push_back(
        {process_index[key.first], name.empty() ? "thread " + std::to_string(key.second) : name});
  }

  trace.peak_memory.assign(trace.processes.size(), 0.0);
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = text(e, "ph");
    const auto pid = static_cast<long long>(number(e, "pid"));
    if (ph == "X") {
      const double start = number(e, "ts") * kSecondsPerTraceUnit;
      const double end = start + number(e, "dur") * kSecondsPerTraceUnit;
      if (!(end > start)) continue;
      const auto tid = static_cast<long long>(number(e, "tid"));
      const auto lane = lane_index.find({pid, tid});
      if (lane == lane_index.end()) continue;  // a checkpoint thread's
      static const std::string kPlaceKey(sim::kCriticalPathArg);
      const double place = number(args_of(e), kPlaceKey.c_str());
      trace.slices.push_back({.lane = lane->second,
                              .name = text(e, "name"),
                              .category = text(e, "cat"),
                              .start = start,
                              .end = end,
                              .path_place = place > 0 ? place : 0});
    } else if (ph == "C") {
      for (const auto& [key, value] : args_of(e).items()) {
        if (value.is_number())
          trace.peak_memory[process_index[pid]] =
              std::max(trace.peak_memory[process_index[pid]], value.get<double>());
      }
    }
  }
  std::stable_sort(trace.slices.begin(), trace.slices.end(),
                   [](const TraceSlice& a, const TraceSlice& b) { return a.start < b.start; });
  if (j.contains("otherData") && j["otherData"].is_object()) {
    const auto& other = j["otherData"];
    trace.truncated =
        other.contains("truncated") && other["truncated"].is_boolean() && other["truncated"].get<bool>();
  }
  return trace;
}

std::vector<PathStep> critical_path(const IterationTrace& trace) {
  std::vector<std::size_t> on_path;
  for (std::size_t i = 0; i < trace.slices.size(); ++i) {
    if (trace.slices[i].path_place > 0) on_path.push_back(i);
  }
  if (on_path.empty()) return walked_path(trace);
  std::stable_sort(on_path.begin(), on_path.end(), [&](std::size_t a, std::size_t b) {
    return trace.slices[a].path_place < trace.slices[b].path_place;
  });
  return entered(trace, on_path);
}

std::vector<PathStep> walked_path(const IterationTrace& trace) {
  const auto& s = trace.slices;
  if (s.empty()) return {};
  std::vector<std::size_t> by_end(s.size());
  std::iota(by_end.begin(), by_end.end(), std::size_t{0});
  std::stable_sort(by_end.begin(), by_end.end(),
                   [&](std::size_t a, std::size_t b) { return s[a].end < s[b].end; });
  // The first of by_end whose slice ends after t.
  auto ending_after = [&](double t) {
    return std::upper_bound(by_end.begin(), by_end.end(), t,
                            [&](double v, std::size_t i) { return v < s[i].end; });
  };
  auto process_of = [&](std::size_t i) { return trace.lanes[s[i].lane].process; };
  std::vector<std::size_t> walk{by_end.back()};
  while (true) {
    const std::size_t current = walk.back();
    const auto first_after = ending_after(s[current].start + kTraceEpsilon);
    auto rank = [&](std::size_t i) {
      return std::tuple{s[i].category == "compute", s[i].lane == s[current].lane,
                        process_of(i) == process_of(current), s[i].end - s[i].start};
    };
    // Slices ending as the current one starts (within epsilon) that began before it, the best ranked.
    std::optional<std::size_t> best;
    for (auto it = first_after; it != by_end.begin();) {
      const std::size_t i = *--it;
      if (s[i].end < s[current].start - kTraceEpsilon) break;
      if (s[i].start >= s[current].start) continue;  // must begin earlier, so the walk always ends
      if (!best || rank(i) > rank(*best)) best = i;
    }
    if (!best) {
      // Nothing ends as this starts: the latest slice that ended before it (the stage was idle between).
      for (auto it = first_after; it != by_end.begin();) {
        const std::size_t i = *--it;
        if (s[i].end < s[current].start - kTraceEpsilon) {
          best = i;
          break;
        }
      }
    }
    if (!best) break;
    walk.push_back(*best);
    if (s[*best].category == "compute") continue;
    // Communication that began while compute of its stage ran and outlasted it: that compute is what it
    // waited for (the path enters the communication where the compute ended).
    std::optional<std::size_t> beside;
    for (auto it = ending_after(s[*best].end + kTraceEpsilon); it != by_end.begin();) {
      const std::size_t i = *--it;
      if (s[i].end <= s[*best].start) break;
      if (s[i].category == "compute" && process_of(i) == process_of(*best) && s[i].start < s[*best].start &&
          (!beside || s[i].end > s[*beside].end))
        beside = i;
    }
    if (beside) walk.push_back(*beside);
  }
  return entered(trace, std::vector<std::size_t>(walk.rbegin(), walk.rend()));
}

}  // namespace trainsim::report
