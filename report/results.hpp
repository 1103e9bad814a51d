#pragma once
// A sweep's or a search's output read as results, one row per layout: which columns say what differs
// between the rows (the swept keys, or the layout's keys), whether each row runs, and its summary figures in
// SI units, under their column names (model::column_name: iteration_time_s, memory_per_gpu_bytes) or, in
// files written before fields carried their unit, under the plain name (JSON) or in GiB (CSV `_gib`).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/report/column_reading.hpp"
#include "models/report/what_bounds.hpp"
#include "report/table.hpp"

namespace trainsim::report {

class Results {
 public:
  /// `table` must outlive the Results.
  explicit Results(const Table& table);

  [[nodiscard]] const Table& table() const { return *table_; }
  [[nodiscard]] std::size_t size() const { return table_->rows.size(); }
  /// The key columns: every column before `feasible` that is a dotted path into the scenario
  /// ("cluster.nodes", "parallelism.tp"), tags ("tags.team") excepted.
  [[nodiscard]] const std::vector<int>& keys() const { return keys_; }
  [[nodiscard]] const std::string& key_name(std::size_t k) const;
  /// The key's name without its section, when that is unambiguous among the keys ("nodes", "tp").
  [[nodiscard]] const std::string& short_key_name(std::size_t k) const { return short_names_[k]; }
  [[nodiscard]] const std::string& cell(std::size_t row, int column) const;
  [[nodiscard]] const std::string& key_value(std::size_t row, std::size_t k) const;

  /// What the row says of its layout (model::read_verdict: `feasible`, `fits`, memory_per_gpu).
  [[nodiscard]] model::Verdict verdict(std::size_t row) const;
  /// The point could be built: it runs or only does not fit (true when the columns are missing). Not the
  /// row's `feasible`, which is false too for a point that does not fit.
  [[nodiscard]] bool built(std::size_t row) const;
  /// Built and fits in memory.
  [[nodiscard]] bool runs(std::size_t row) const;
  [[nodiscard]] std::string reason(std::size_t row) const;
  /// A summary field (by its SPEC name, "run_time") in SI units; nullopt when absent or empty.
  [[nodiscard]] std::optional<double> si(std::size_t row, const std::string& field) const;
  /// The keys whose value differs between rows (every key when none does): the ones tables and hover
  /// texts show; the others are said once (shared_keys).
  [[nodiscard]] const std::vector<std::size_t>& varying_keys() const { return varying_; }
  /// "cp 1 · ep 1 · schedule 1f1b": the keys with one value in every row (empty ones left out).
  [[nodiscard]] std::string shared_keys() const;
  /// "nodes 64 · optimizer adamw": each varying key and its value in this row.
  [[nodiscard]] std::string layout(std::size_t row) const;
  /// The row's step breakdown and memory, for what_bounds().
  [[nodiscard]] model::StepShares shares(std::size_t row) const;

 private:
  struct FieldColumn {
    int column = -1;
    double to_si = 1;
  };
  const Table* table_;
  std::vector<int> keys_;
  std::vector<std::string> short_names_;
  std::vector<std::size_t> varying_;
  std::map<std::string, FieldColumn, std::less<>> fields_;
  int feasible_ = -1, fits_ = -1, reason_ = -1;
};

/// A CSV cell in human units, by its column name's unit suffix (model::unit_suffix's: _s seconds, _bytes
/// bytes, _usd dollars; _gib GiB): "7200" under wait_s reads "2.0 h". Other cells are returned as they are.
[[nodiscard]] std::string human_cell(const std::string& column, const std::string& cell);
/// The column's name for a table of human cells: the unit suffix dropped ("wait_s" -> "wait"), since each
/// cell now says its unit.
[[nodiscard]] std::string human_column(const std::string& column);

}  // namespace trainsim::report
