#pragma once
// One flattening of a simulation's results into named fields, shared by every output: the human table of
// `trainsim run`, summary.json, sweep rows (CSV, JSON Lines) and validation (`measured:` uses the same
// names). Field names are the SPEC "Outputs" names. Machine outputs use SI units (JSON: seconds, bytes,
// USD); CSV columns carry their unit in the name (iteration_time_s, memory_per_gpu_gib, cost_total_usd).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/step/step_report.hpp"

namespace trainsim::model {

enum class FieldUnit { count, seconds, bytes, usd, fraction, flops, tflops, per_second, kwh, kg, flag, text };

struct SummaryField {
  std::string name;  ///< SPEC name, e.g. "iteration_time"
  FieldUnit unit = FieldUnit::count;
  double number = 0;  ///< SI value (for flag: 0 or 1); unused for text
  std::string text;   ///< for text fields (labels, reasons)
  std::string
      group;  ///< section of the human table ("labels", "iteration", "memory", "run", "cost", "budget")
};

struct Summary {
  std::vector<SummaryField> fields;  ///< in a fixed order: labels, iteration, memory, run, cost, budget

  [[nodiscard]] const SummaryField* find(const std::string& name) const;
  /// The numeric value of a field, if present and numeric.
  [[nodiscard]] std::optional<double> number(const std::string& name) const;
};

using Labels = std::vector<std::pair<std::string, std::string>>;

/// Flattens the results. `labels` are text columns put first (scenario, tags, swept values, in order).
/// `run` is null when only the iteration was simulated. Every number must be finite (checked).
Summary summarize(const Labels& labels, const StepReport& step, const RunReport* run);

/// Names of every numeric field summarize() can write for a step and its run (the optional Monte-Carlo
/// and spot fields included), in summary order: the names a validation case's `measured:` block may name.
[[nodiscard]] const std::vector<std::string>& numeric_field_names();

/// The heading of a field group in human outputs ("run" -> "Whole run"); unknown groups as they are.
[[nodiscard]] std::string group_title(const std::string& group);

/// A human-readable two-column table with human units ("13.8 s", "61.2 GiB", "$4.51M", "41.5 %").
std::string format_table(const Summary& summary);

/// One JSON object {"name": value, ...}: numbers in SI units, flags as booleans, text as strings.
std::string to_json(const Summary& summary, int indent = -1);

/// The CSV column name of a field: its name plus a unit suffix where the unit is not already in it
/// (_s for seconds, _gib for bytes, _usd for dollars).
std::string csv_column(const SummaryField& field);
/// Header line and one row (no trailing newline); text is quoted per RFC 4180 when needed.
std::string csv_header(const Summary& summary);
std::string csv_row(const Summary& summary);

/// The display unit of a value of this magnitude: value / divisor, written between prefix and suffix
/// ("$" … "M", "" … " d"). format_human and the report's chart axes both choose units here, so a table
/// and an axis beside it never disagree.
struct HumanScale {
  double divisor = 1;
  const char* prefix = "";
  const char* suffix = "";
};
[[nodiscard]] HumanScale human_scale(FieldUnit unit, double magnitude);

/// A value in human units, e.g. 49.3e9 bytes -> "45.9 GiB"; 3.6e6 s -> "41.7 d".
std::string format_human(FieldUnit unit, double value);

/// The field of this name as summarize() writes it for a run with every optional group, for its unit and
/// group (its value means nothing); null for labels and unknown names. Readers of summary.json and sweep
/// rows (the HTML report) learn a column's unit here.
[[nodiscard]] const SummaryField* field_schema(const std::string& name);

}  // namespace trainsim::model
