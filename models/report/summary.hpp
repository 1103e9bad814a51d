#pragma once
// One flattening of a simulation's results into named fields, shared by every output: the human table of
// `trainsim run`, summary.json, sweep and search rows (CSV, JSON Lines, JSON) and validation (`measured:`
// uses the same names). Field names are the SPEC "Outputs" names. Every machine-readable output writes a
// field under one name, column_name(): the field's name with its unit (iteration_time_s,
// memory_per_gpu_bytes, cost_total_usd), its value in that unit (seconds, bytes, dollars), so CSV, JSON
// Lines and summary.json share their keys and values.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/spec/human_units.hpp"
#include "models/step/step_report.hpp"

namespace trainsim::model {

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

/// One JSON object {"column_name": value, ...}: numbers in the column's unit, flags as booleans, text as
/// strings.
std::string to_json(const Summary& summary, int indent = -1);

/// The name every machine-readable output (CSV header, JSON key) gives a field: its name plus its unit's
/// suffix (_s seconds, _bytes bytes, _usd dollars, _kwh, _kg) unless the name already ends with it
/// (energy_kwh). Units written in the name itself (model_flops_per_step, tokens_per_s,
/// model_tflops_per_gpu, gpu_hours) and unitless fields (counts, fractions, flags, text) keep their name.
[[nodiscard]] std::string column_name(const SummaryField& field);
/// The unit suffix column_name() gives a field of this unit ("" when none).
[[nodiscard]] const char* unit_suffix(FieldUnit unit);
/// Header line and one row (no trailing newline); text is quoted per RFC 4180 when needed; numbers in the
/// column's unit with 10 significant digits.
std::string csv_header(const Summary& summary);
std::string csv_row(const Summary& summary);

/// The field of this name as summarize() writes it for a run with every optional group, for its unit and
/// group (its value means nothing); null for labels and unknown names. Readers of summary.json and sweep
/// rows (the HTML report) learn a column's unit here.
[[nodiscard]] const SummaryField* field_schema(const std::string& name);

/// The column name of the field called `name` (column_name of its schema); `name` itself for labels and
/// unknown names.
[[nodiscard]] std::string column_name(const std::string& name);
/// The field written under this column name (column_name's inverse over the schema); null for labels and
/// unknown columns.
[[nodiscard]] const SummaryField* column_schema(const std::string& column);

}  // namespace trainsim::model
