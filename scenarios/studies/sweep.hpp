#pragma once
// Sweeps (SPEC `sweep:` block): expanding the swept keys into points, slicing the points into shards,
// evaluating points on many threads with results released in point order, and turning one point into one
// output row (CSV or JSON Lines).
//
// Point numbering (stable, documented for users who restore order or join shards):
//  - grid: the cartesian product with the FIRST axis (in file order) varying slowest and the last fastest,
//    like nested loops written in file order; point index = mixed-radix number of the value positions.
//  - zip: every axis has the same number of values; point i takes value i of each axis.
// A sweep without axes has exactly one point (index 0, no overrides): the scenario itself.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/studies/simulation.hpp"

namespace trainsim::scenario {

/// One point of a sweep: its index and the overrides (one per axis, in axis order) that make it.
struct SweepPoint {
  std::int64_t index = 0;
  std::vector<Override> overrides;
};

/// Number of points. Throws InputError when an axis has no values, zip axes differ in length, or the
/// grid has more than 100 million points (the most a sweep runs).
[[nodiscard]] std::int64_t sweep_size(const SweepSpec& sweep);
/// The point at `index` (0 <= index < sweep_size), computed directly: O(axes), no expansion.
[[nodiscard]] SweepPoint sweep_point(const SweepSpec& sweep, std::int64_t index);
/// Every point, in index order.
[[nodiscard]] std::vector<SweepPoint> expand_sweep(const SweepSpec& sweep);

/// One value of a swept key, loaded alone: the scenario `text` (read from `path`) as the sweep's first point
/// with `key` at that value (the other axes at their first value, `overrides` (--set) applied before, no
/// sweep block). Every value of the axis, in order; a value whose point does not load is left out (its rows
/// say why); empty when the sweep does not sweep `key`. How a study compares the swept values of one key
/// (scenarios/studies/region_sweep.hpp, node_price_sweep.hpp).
struct SweptValue {
  std::string value;
  Scenario scenario;
};
[[nodiscard]] std::vector<SweptValue> load_swept_values(std::string_view text, const std::string& path,
                                                        const std::vector<Override>& overrides,
                                                        const SweepSpec& sweep, std::string_view key);

/// A deterministic slice of the points: shard `index` of `count` holds the points whose index mod count
/// equals `index` (round-robin, so neighbouring — similarly expensive — points spread over shards).
/// `index` is 0-based, as Slurm's SLURM_ARRAY_TASK_ID with `--array=0-(N-1)`.
struct Shard {
  int index = 0;
  int count = 1;
  [[nodiscard]] bool contains(std::int64_t point) const { return point % count == index; }
};
/// Parses "i/N" (0 <= i < N). Throws InputError naming the expected form otherwise.
[[nodiscard]] Shard parse_shard(std::string_view text);

/// Evaluates `evaluate(points[k])` for every k on `threads` worker threads (std::jthread pulling from an
/// atomic work index) and passes each result to `emit(points[k], result)` in the order of `points`, not in
/// completion order; `emit` is called by one thread at a time. When `stop` is requested no new point is
/// started; results already contiguous from the start are still emitted. If `evaluate` or `emit` throws,
/// the remaining work is abandoned and the first exception is rethrown after all workers joined.
/// Returns the number of results emitted. threads <= 0 means std::thread::hardware_concurrency().
std::int64_t run_in_order(std::span<const std::int64_t> points, int threads,
                          const std::function<std::string(std::int64_t)>& evaluate,
                          const std::function<void(std::int64_t, std::string&&)>& emit,
                          std::stop_token stop = {});

enum class RowFormat { csv, jsonl };

/// Scenario YAML held in memory, and the label its messages and default name use (load_scenario_text).
struct ScenarioText {
  std::string yaml;
  std::string label;
};

/// Turns the points of one scenario file into output rows. Built once per sweep (reads and checks the
/// file once); row() is thread-safe and re-parses the scenario text with the point's overrides, so every
/// point goes through exactly the validation of a hand-written file.
///
/// Columns, in order: `point` (the index), `scenario`, one per swept key (named by its key path, e.g.
/// `cluster.nodes`, the value as written), one per tag (`tags.<key>`; a swept tag has its one column among
/// the swept keys), then the fields of model::summarize under their model::column_name in both formats
/// (iteration_time_s, memory_per_gpu_bytes, cost_total_usd, ...). A point that cannot be built (InputError)
/// or that is infeasible keeps its row: `feasible` false, the reason in `reason` (one line), the numeric
/// fields empty in CSV and null in JSON. A point that builds but does not fit keeps its numbers with `fits`
/// false. In JSON, swept values written as plain numbers are numbers; JSON numbers are always finite (a
/// non-finite value is an internal error). The columns are those of the base scenario's blocks (spot,
/// Monte-Carlo spread, alerts, convergence, tuning, data, people, commitment); columns a point's summary
/// lacks (e.g. spot columns when a point turns spot pricing off) are empty.
class SweepTable {
 public:
  /// `overrides` (--set) apply to the file before the sweep's own points do.
  SweepTable(const std::string& scenario_path, model::Fidelity fidelity, RowFormat format,
             std::vector<Override> overrides = {});
  /// The same from scenario text in memory (the Python module's YAML strings and dicts).
  SweepTable(const ScenarioText& scenario, model::Fidelity fidelity, RowFormat format,
             std::vector<Override> overrides = {});
  ~SweepTable();
  SweepTable(const SweepTable&) = delete;
  SweepTable& operator=(const SweepTable&) = delete;

  [[nodiscard]] const Scenario& base() const;
  [[nodiscard]] std::int64_t size() const;
  [[nodiscard]] RowFormat format() const;
  /// CSV: the header line with '\n'; JSON Lines: "" (every line is self-describing).
  [[nodiscard]] std::string header() const;
  /// 16 hex digits (FNV-1a, 64 bits) of the expanded scenario with its sweep block (dump_scenario, so
  /// preset contents count), the fidelity, the format and the column names. Every row carries it, second
  /// after the point (CSV column / JSON Lines field "sweep_fingerprint"), so --resume and merge can tell
  /// another sweep's rows apart even when its columns are the same; a CSV header line cannot hold it and
  /// still load as a table.
  [[nodiscard]] const std::string& fingerprint() const;
  /// What the user should know before reading the rows (scenarios/studies/region_sweep.hpp), one line
  /// each without "note: "; the command prints them.
  [[nodiscard]] const std::vector<std::string>& notes() const;
  /// What a row says at a glance, for a sweep's closing line.
  struct RowFacts {
    bool feasible = false;      ///< as the row's `feasible`: built, fits and its run simulated
    bool fits = false;          ///< built and fits in memory
    double iteration_time = 0;  ///< s (0 when not feasible)
  };
  /// One whole output line for a point, '\n' included; `facts` (optional) receives its headline. Never
  /// throws InputError (it becomes the reason).
  [[nodiscard]] std::string row(std::int64_t index, RowFacts* facts = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The most points a sweep runs: the runner lists the points it has to run (8 bytes each, 800 MB here),
/// and at the analytic fidelity's ~1,000 points/s per core this is more than a day on a 2,048-core cluster.
/// A row whose point is not below it belongs to no sweep.
inline constexpr std::int64_t max_sweep_points = 100'000'000;

/// The point index `cell` spells, or -1 when it is not one: a whole number from 0 to max_sweep_points - 1
/// (a negative or forged 9e18 point is no sweep's). The one parser of a row's point.
[[nodiscard]] std::int64_t point_index(std::string_view cell);
/// The point index a row line starts with (both formats begin with it), or -1 when the line is not a
/// complete row (torn, empty, or a CSV header).
[[nodiscard]] std::int64_t row_point_index(std::string_view line, RowFormat format);
/// The fingerprint a complete row line carries, or "" when it has none.
[[nodiscard]] std::string_view row_fingerprint(std::string_view line, RowFormat format);

}  // namespace trainsim::scenario
