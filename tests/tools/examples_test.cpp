// Every scenario in scenarios/examples runs through the real binary (`trainsim run FILE -o DIR --format
// json`) and writes the three documented outputs: summary.json with SPEC's field names and finite numbers,
// trace.json in Chrome Trace Event form, run.csv with its documented header. Examples are discovered at run
// time, so a new example is covered without editing this file.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "binary_harness.hpp"
#include "report/table.hpp"

using nlohmann::json;
using trainsim::e2e::describe;
using trainsim::e2e::example_scenarios;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::shell;
using trainsim::e2e::TempDir;
using trainsim::e2e::trainsim_command;

namespace {

// Examples that show an infeasible plan or a violated budget on purpose, so `run` exits 1; every other
// example must exit 0. Adding such an example means adding it here, with why.
const std::map<std::string, std::string> expected_exit_1 = {
    {"llama3-405b-8k-standard-attention", "standard attention keeps 8K x 8K scores: does not fit in 80 GB"},
};

// SPEC "Outputs": the per-iteration and per-run fields every summary carries, all numbers except `fits`,
// under their column names (the unit in the name).
// clang-format off
const std::vector<std::string> spec_number_fields = {
    "parameters", "model_flops_per_step", "iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu",
    "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu", "bubble_fraction", "compute_s",
    "exposed_tp_comm_s", "exposed_ep_comm_s", "exposed_dp_comm_s", "exposed_pp_comm_s", "optimizer_s", "bubble_s",
    "memory_per_gpu_bytes", "weights_bytes", "grads_bytes", "optimizer_state_bytes", "activations_bytes",
    "buffers_bytes", "steps", "run_time_s", "gpu_hours", "checkpoint_size_bytes", "checkpoint_write_time_s",
    "checkpoint_stall_s", "failures_expected", "lost_work_s", "goodput", "cost_total_usd", "cost_compute_usd",
    "cost_storage_usd", "cost_network_usd", "cost_energy_usd", "cost_wasted_usd", "energy_kwh", "co2_kg",
    "recommended_checkpoint_interval_s"};
// clang-format on

// models/run/run_timeline.hpp documents this header for run.csv; the scenario's tags follow it.
constexpr const char* run_csv_header =
    "time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,cost_tuning_usd,"
    "cost_data_usd,cost_people_usd,cost_fixed_usd,cost_total_usd";

void check_summary(const std::string& example, const json& summary) {
  REQUIRE_MESSAGE(summary.is_object(), example);
  for (const auto& field : spec_number_fields) {
    INFO(example << ": field " << field);
    REQUIRE(summary.contains(field));
    // nlohmann-json writes NaN and infinity as null, so a non-number here is a non-finite value.
    REQUIRE(summary[field].is_number());
    CHECK(std::isfinite(summary[field].get<double>()));
  }
  REQUIRE_MESSAGE(summary.contains("fits"), example);
  CHECK_MESSAGE(summary["fits"].is_boolean(), example);
  // Every number the summary carries is finite, not only SPEC's list.
  for (const auto& [key, value] : summary.items()) {
    INFO(example << ": field " << key);
    CHECK_FALSE(value.is_null());
    if (value.is_number()) CHECK(std::isfinite(value.get<double>()));
  }
  if (!summary["fits"].get<bool>()) {
    REQUIRE(summary.contains("reason"));
    CHECK_MESSAGE(!summary["reason"].get<std::string>().empty(), example << ": an infeasible plan names why");
  }
}

void check_trace(const std::string& example, const json& trace) {
  INFO(example << ": trace.json");
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  REQUIRE(trace["traceEvents"].is_array());
  std::set<long long> named_processes;
  std::set<std::pair<long long, long long>> named_threads;
  // (pid, tid) -> slices as (start, -duration) so that at equal starts the longer (outer) slice sorts first.
  std::map<std::pair<long long, long long>, std::vector<std::pair<double, double>>> slices;
  std::size_t complete_events = 0;
  std::size_t malformed_events = 0;  // counted, not asserted one by one: traces hold tens of thousands
  for (const auto& event : trace["traceEvents"]) {
    REQUIRE(event.contains("ph"));
    REQUIRE(event.contains("pid"));
    const std::string phase = event["ph"].get<std::string>();
    const auto pid = event["pid"].get<long long>();
    if (pid < 0 || pid > 0x7fffffffLL) ++malformed_events;  // Perfetto: pid/tid fit in 32 bits
    if (phase == "M") {
      const std::string name = event["name"].get<std::string>();
      if (name == "process_name") named_processes.insert(pid);
      if (name == "thread_name") named_threads.insert({pid, event["tid"].get<long long>()});
      if ((name == "process_name" || name == "thread_name") && !event["args"]["name"].is_string())
        ++malformed_events;
    } else if (phase == "X") {
      ++complete_events;
      // Perfetto drops an X event without dur.
      if (!event.contains("tid") || !event.contains("ts") || !event.contains("dur") ||
          !event["ts"].is_number() || !event["dur"].is_number() || !event["tid"].is_number_integer()) {
        ++malformed_events;
        continue;
      }
      const double ts = event["ts"].get<double>();
      const double dur = event["dur"].get<double>();
      const auto tid = event["tid"].get<long long>();
      if (!std::isfinite(ts) || !std::isfinite(dur) || ts < 0.0 || dur < 0.0 || tid < 0 || tid > 0x7fffffffLL)
        ++malformed_events;
      slices[{pid, tid}].emplace_back(ts, -dur);
    }
  }
  CHECK(malformed_events == 0);
  CHECK(complete_events > 0);
  for (const auto& [lane, lane_slices] : slices) {
    INFO("pid " << lane.first << " tid " << lane.second);
    CHECK(named_processes.count(lane.first) == 1);
    CHECK(named_threads.count(lane) == 1);
  }
  // Slices on one (pid, tid) nest strictly or follow one another: no partial overlap. Times are printed in
  // microseconds with nanosecond resolution, so allow 2 ns of rounding.
  constexpr double rounding_us = 0.002;
  std::size_t partial_overlaps = 0;
  for (auto& [lane, lane_slices] : slices) {
    std::sort(lane_slices.begin(), lane_slices.end());
    std::vector<double> open_ends;
    for (const auto& [start, negative_duration] : lane_slices) {
      const double end = start - negative_duration;
      while (!open_ends.empty() && open_ends.back() <= start + rounding_us) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back() + rounding_us) ++partial_overlaps;
      open_ends.push_back(end);
    }
  }
  CHECK(partial_overlaps == 0);
}

void check_run_csv(const std::string& example, const std::string& text) {
  INFO(example << ": run.csv");
  REQUIRE(!text.empty());
  const std::string header = text.substr(0, text.find('\n'));
  CHECK(header.rfind(run_csv_header, 0) == 0);
  const std::string tags = header.substr(std::min(header.size(), std::string(run_csv_header).size()));
  CHECK((tags.empty() || tags.rfind(",tags.", 0) == 0));
  std::istringstream rows(text);
  std::string row;
  std::getline(rows, row);
  std::size_t data_rows = 0;
  const auto columns = static_cast<std::size_t>(std::count(header.begin(), header.end(), ',')) + 1;
  while (std::getline(rows, row)) {
    ++data_rows;
    CHECK(static_cast<std::size_t>(std::count(row.begin(), row.end(), ',')) + 1 == columns);
  }
  CHECK(data_rows >= 2);  // at least the start and the end of the run
}

}  // namespace

TEST_CASE("the examples folder holds the scenarios the documentation names") {
  std::set<std::string> stems;
  for (const auto& file : example_scenarios()) stems.insert(file.stem().string());
  CHECK(stems.count("gpt3-175b-1024-a100") == 1);
  CHECK(stems.count("llama3-405b-8k-16k-h100") == 1);
  CHECK(stems.count("llama3-405b-8k-standard-attention") == 1);
  for (const auto& [stem, why] : expected_exit_1) CHECK_MESSAGE(stems.count(stem) == 1, stem);
}

TEST_CASE("each committed sweep output is byte for byte what the binary writes for its scenario") {
  // An example's sweep output committed beside it (X.csv for X.yaml) is written by the command in its
  // header comment, from the source folder (reasons name the file as given): `trainsim sweep
  // scenarios/examples/X.yaml -o X.csv` at the default (analytic) fidelity.
  int compared = 0;
  for (const auto& file : example_scenarios()) {
    std::filesystem::path committed = file;
    committed.replace_extension(".csv");
    if (!std::filesystem::exists(committed)) continue;
    INFO(committed.string());
    const TempDir out;
    REQUIRE(shell("cd '" TRAINSIM_SOURCE_DIR "' && " + trainsim_command() + " sweep scenarios/examples/" +
                  file.filename().string() + " -o '" + out.file("sweep.csv") + "' 2>/dev/null") == 0);
    CHECK(read_file(out.file("sweep.csv")) == read_file(committed.string()));
    ++compared;
  }
  CHECK(compared >= 1);
}

TEST_CASE("every example runs through the binary and writes a summary, a Chrome trace and a run timeline") {
  for (const auto& file : example_scenarios()) {
    const std::string example = file.stem().string();
    SUBCASE(example.c_str()) {
      const TempDir out;
      const auto outcome =
          run_trainsim({"run", file.string(), "-o", out.path().string(), "--format", "json"}, 60.0);
      const bool infeasible_on_purpose = expected_exit_1.count(example) == 1;
      INFO(example << ": " << describe(outcome));
      CHECK(outcome.exit_code == (infeasible_on_purpose ? 1 : 0));

      const json printed = json::parse(outcome.out);
      const json summary = json::parse(read_file(out.path() / "summary.json"));
      CHECK(printed == summary);
      check_summary(example, summary);
      // Exit 1 means a plan that does not fit or a budget that is violated, and nothing else.
      const bool fails_a_check =
          !summary["fits"].get<bool>() || !summary.value("budget_violations", std::string{}).empty();
      CHECK(fails_a_check == infeasible_on_purpose);

      check_trace(example, json::parse(read_file(out.path() / "trace.json")));
      check_run_csv(example, read_file(out.path() / "run.csv"));
    }
  }
}

TEST_CASE("analytic fidelity: every example writes the closed form's Chrome trace, ending at its step") {
  for (const auto& file : example_scenarios()) {
    const std::string example = file.stem().string();
    SUBCASE(example.c_str()) {
      const TempDir out;
      const auto outcome = run_trainsim(
          {"run", file.string(), "-o", out.path().string(), "--format", "json", "--fidelity", "analytic"},
          60.0);
      INFO(example << ": " << describe(outcome));
      CHECK(outcome.exit_code == (expected_exit_1.count(example) == 1 ? 1 : 0));
      const json summary = json::parse(read_file(out.path() / "summary.json"));
      REQUIRE(summary["iteration_time_s"].is_number());
      const json trace = json::parse(read_file(out.path() / "trace.json"));
      check_trace(example, trace);
      CHECK(trace["otherData"]["fidelity"] == "analytic");
      double last_end_us = 0;
      std::size_t unmarked = 0;
      for (const auto& event : trace["traceEvents"]) {
        if (event["ph"] != "X") continue;
        const bool checkpoint = event.value("cat", std::string{}) == "checkpoint";  // after the iteration
        if (!checkpoint)
          last_end_us = std::max(last_end_us, event["ts"].get<double>() + event["dur"].get<double>());
        if (event.value("args", json::object()).value("fidelity", std::string{}) != "analytic") ++unmarked;
      }
      CHECK(unmarked == 0);
      // µs with ns resolution, start and duration each rounded: 2 ns.
      CHECK(std::abs(last_end_us - summary["iteration_time_s"].get<double>() * 1e6) <= 0.002);
    }
  }
}

TEST_CASE("the campaign example's summary.json and every row of its run.csv carry its tags") {
  const TempDir out;
  const std::string example = TRAINSIM_SOURCE_DIR "/scenarios/examples/llama2-7b-to-loss.yaml";
  REQUIRE(shell(trainsim_command() + " run '" + example + "' -o '" + out.path().string() + "' >/dev/null") ==
          0);
  // tags: {team: llm, project: campaign}: in run's summary under their own keys, after scenario and fidelity.
  const auto summary = nlohmann::ordered_json::parse(read_file(out.path() / "summary.json"));
  CHECK(summary["team"] == "llm");
  CHECK(summary["project"] == "campaign");
  auto key = summary.begin();
  CHECK(key.key() == "scenario");
  CHECK((++key).key() == "fidelity");
  CHECK((++key).key() == "team");
  CHECK((++key).key() == "project");
  // In run.csv as the last two columns of the header and of every row.
  std::istringstream rows(read_file(out.path() / "run.csv"));
  std::string row;
  std::getline(rows, row);
  CHECK(row.ends_with(",cost_total_usd,tags.team,tags.project"));
  std::size_t data_rows = 0;
  while (std::getline(rows, row)) {
    ++data_rows;
    CHECK(row.ends_with(",llm,campaign"));
  }
  CHECK(data_rows >= 2);
}

TEST_CASE(
    "the to-loss sweep example's report draws its Pareto front: the rows nothing beats on time and cost") {
  const TempDir out;
  REQUIRE(shell("cd '" TRAINSIM_SOURCE_DIR "' && " + trainsim_command() +
                " sweep scenarios/examples/gpt3-to-loss-sweep.yaml -o '" + out.file("sweep.csv") +
                "' 2>/dev/null && " + trainsim_command() + " report '" + out.file("sweep.csv") + "' -o '" +
                out.file("report.html") + "' >/dev/null 2>&1") == 0);
  const trainsim::report::Table t =
      trainsim::report::parse_csv(read_file(out.file("sweep.csv")), "sweep.csv");
  const int time = t.column("run_time_s"), cost = t.column("cost_total_usd"), fits = t.column("fits"),
            model = t.column("model");
  REQUIRE((time >= 0 && cost >= 0 && fits >= 0 && model >= 0));
  // The front, found here from the rows: a row that fits and that no other row matches or beats on both
  // run time and cost with one of them strictly better.
  std::vector<std::pair<double, double>> points;
  std::vector<std::string> models;
  for (const auto& row : t.rows) {
    const auto s = trainsim::report::number_of(row[static_cast<std::size_t>(time)]);
    const auto usd = trainsim::report::number_of(row[static_cast<std::size_t>(cost)]);
    if (row[static_cast<std::size_t>(fits)] != "true" || !s || !usd) continue;
    points.emplace_back(*s, *usd);
    models.push_back(row[static_cast<std::size_t>(model)]);
  }
  REQUIRE(points.size() == 12);  // 4 models x 3 cluster sizes, every one reaching the target
  std::size_t front = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool beaten = std::any_of(points.begin(), points.end(), [&](const auto& q) {
      return q.first <= points[i].first && q.second <= points[i].second && q != points[i];
    });
    if (beaten) continue;
    ++front;
    CHECK(models[i] == "gpt3-6.7b");  // the README's reading of this example
  }
  CHECK(front == 3);
  // The report marks each of them on its run time against cost chart, under the front's legend.
  const std::string html = read_file(out.file("report.html"));
  CHECK(html.find("Pareto front (nothing is both faster and cheaper)") != std::string::npos);
  std::size_t marks = 0;
  for (std::size_t at = html.find("Pareto front: "); at != std::string::npos;
       at = html.find("Pareto front: ", at + 1))
    ++marks;
  CHECK(marks == front);
}
