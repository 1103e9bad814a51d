#pragma once
// How readers find the summary's fields in outputs of every version, beside the names the writer gives
// them (summary.hpp's column_name). Outputs written before fields carried their unit named a field by its
// plain name (summary.json, JSON Lines) or, for bytes, `<name>_gib` in GiB (CSV); the HTML report still
// reads them, and this file is the one place that knows those names.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/report/summary.hpp"

namespace trainsim::model {

/// A column a field may be found under, and the factor that turns its values into the field's SI unit.
struct ColumnReading {
  std::string column;
  double to_si = 1;
};

/// Where to look for the field `name`, in order: its column name (column_name: "memory_per_gpu_bytes"),
/// then its plain name ("memory_per_gpu") and, for bytes, "<name>_gib" (x 2^30). A label or unknown name
/// is looked for under itself only.
[[nodiscard]] std::vector<ColumnReading> columns_read(const std::string& name);

/// The field a column of any version holds: column_schema(column), else the field of that plain name;
/// null for labels and unknown columns.
[[nodiscard]] const SummaryField* schema_of_any_column(const std::string& column);

/// The unit a column's name ends with, as a reader of any version's rows takes it: `_s` seconds, `_bytes`
/// bytes, `_usd` dollars and the older `_gib` (bytes, x 2^30). Units written in a name the writer keeps
/// (energy_kwh, gpu_hours) and unitless columns give none; so does a name that is only the suffix.
struct UnitSuffix {
  std::string_view suffix;  ///< "_s", "_bytes", "_usd", "_gib"
  FieldUnit unit;
  double to_si;
};
[[nodiscard]] std::optional<UnitSuffix> read_unit_suffix(std::string_view column);

/// What a row of any version says of its layout. Since the summary leads with `fits`, `feasible` is false
/// for a layout that does not fit; before, it stayed true beside `fits: false`. A layout the layout rules
/// refused has no memory estimated (memory_per_gpu 0); one that does not fit has its estimate.
enum class Verdict { runs, does_not_fit, infeasible };
/// The verdict of a row's `feasible`, `fits` (each absent: true) and memory_per_gpu (bytes).
[[nodiscard]] Verdict read_verdict(std::optional<bool> feasible, std::optional<bool> fits,
                                   double memory_per_gpu);

}  // namespace trainsim::model
