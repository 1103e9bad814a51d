#include "models/report/column_reading.hpp"

#include <array>

namespace trainsim::model {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::vector<ColumnReading> columns_read(const std::string& name) {
  const SummaryField* schema = field_schema(name);
  if (schema == nullptr) return {{name, 1}};
  std::vector<ColumnReading> out{{column_name(*schema), 1}};
  if (out.front().column != name) out.push_back({name, 1});
  if (schema->unit == FieldUnit::bytes) out.push_back({name + "_gib", kGiB});
  return out;
}

const SummaryField* schema_of_any_column(const std::string& column) {
  const SummaryField* schema = column_schema(column);
  return schema != nullptr ? schema : field_schema(column);
}

std::optional<UnitSuffix> read_unit_suffix(std::string_view column) {
  static constexpr std::array<UnitSuffix, 4> kSuffixes{{{"_s", FieldUnit::seconds, 1},
                                                        {"_bytes", FieldUnit::bytes, 1},
                                                        {"_gib", FieldUnit::bytes, kGiB},
                                                        {"_usd", FieldUnit::usd, 1}}};
  for (const UnitSuffix& u : kSuffixes) {
    if (column.size() > u.suffix.size() && column.ends_with(u.suffix)) return u;
  }
  return std::nullopt;
}

Verdict read_verdict(std::optional<bool> feasible, std::optional<bool> fits, double memory_per_gpu) {
  const bool valid = feasible.value_or(true), fit = fits.value_or(true);
  if (valid && fit) return Verdict::runs;
  if (!fit && (valid || memory_per_gpu > 0)) return Verdict::does_not_fit;
  return Verdict::infeasible;
}

}  // namespace trainsim::model
