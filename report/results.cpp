#include "report/results.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "models/report/column_reading.hpp"
#include "models/report/summary.hpp"

namespace trainsim::report {

Results::Results(const Table& table)
    : table_(&table),
      feasible_(table.column("feasible")),
      fits_(table.column("fits")),
      reason_(table.column("reason")) {
  // The labels end where the verdict begins: `fits` then `feasible`, or `feasible` in older files.
  int end = static_cast<int>(table.columns.size());
  for (const int c : {feasible_, fits_})
    if (c >= 0) end = std::min(end, c);
  for (int c = 0; c < end; ++c) {
    const std::string& name = table.columns[static_cast<std::size_t>(c)];
    if (name.find('.') != std::string::npos && name.rfind("tags.", 0) != 0) keys_.push_back(c);
  }
  for (const int c : keys_) {
    const std::string& name = table.columns[static_cast<std::size_t>(c)];
    const std::string tail = name.substr(name.rfind('.') + 1);
    const auto same_tail = std::count_if(keys_.begin(), keys_.end(), [&](int other) {
      const std::string& o = table.columns[static_cast<std::size_t>(other)];
      return o.substr(o.rfind('.') + 1) == tail;
    });
    short_names_.push_back(same_tail == 1 ? tail : name);
  }
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    for (std::size_t i = 1; i < table.rows.size(); ++i) {
      if (key_value(i, k) != key_value(0, k)) {
        varying_.push_back(k);
        break;
      }
    }
  }
  if (varying_.empty()) {
    for (std::size_t k = 0; k < keys_.size(); ++k) varying_.push_back(k);
  }
  // Each field under its column name, or under the names of files written before it carried its unit.
  for (const std::string& field : model::numeric_field_names()) {
    for (const model::ColumnReading& r : model::columns_read(field)) {
      if (const int c = table.column(r.column); c >= 0) {
        fields_[field] = {c, r.to_si};
        break;
      }
    }
  }
}

const std::string& Results::key_name(std::size_t k) const {
  return table_->columns[static_cast<std::size_t>(keys_[k])];
}

const std::string& Results::cell(std::size_t row, int column) const {
  return table_->rows[row][static_cast<std::size_t>(column)];
}

const std::string& Results::key_value(std::size_t row, std::size_t k) const {
  return cell(row, keys_[k]);
}

model::Verdict Results::verdict(std::size_t row) const {
  auto flag = [&](int column) {
    return column < 0 ? std::nullopt : std::optional(cell(row, column) == "true");
  };
  return model::read_verdict(flag(feasible_), flag(fits_), si(row, "memory_per_gpu").value_or(0));
}

bool Results::built(std::size_t row) const {
  return verdict(row) != model::Verdict::infeasible;
}

bool Results::runs(std::size_t row) const {
  return verdict(row) == model::Verdict::runs;
}

std::string Results::reason(std::size_t row) const {
  return reason_ < 0 ? std::string() : cell(row, reason_);
}

std::optional<double> Results::si(std::size_t row, const std::string& field) const {
  const auto it = fields_.find(field);
  if (it == fields_.end()) return std::nullopt;
  const auto v = number_of(cell(row, it->second.column));
  if (!v) return std::nullopt;
  return *v * it->second.to_si;
}

std::string Results::layout(std::size_t row) const {
  std::string out;
  for (const std::size_t k : varying_) {
    if (key_value(row, k).empty()) continue;  // a key this row leaves unset (a search's shard_group)
    if (!out.empty()) out += " · ";
    out += short_names_[k] + " " + key_value(row, k);
  }
  return out;
}

std::string Results::shared_keys() const {
  std::string out;
  if (table_->rows.empty()) return out;
  for (std::size_t k = 0; k < keys_.size(); ++k) {
    if (std::find(varying_.begin(), varying_.end(), k) != varying_.end() || key_value(0, k).empty()) continue;
    if (!out.empty()) out += " · ";
    out += short_names_[k] + " " + key_value(0, k);
  }
  return out;
}

model::StepShares Results::shares(std::size_t row) const {
  return model::step_shares([&](std::string_view f) { return si(row, std::string(f)).value_or(0); });
}

std::string human_column(const std::string& column) {
  const auto unit = model::read_unit_suffix(column);
  return unit ? column.substr(0, column.size() - unit->suffix.size()) : column;
}

std::string human_cell(const std::string& column, const std::string& cell) {
  const auto v = number_of(cell);
  if (!v) return cell;
  if (const auto unit = model::read_unit_suffix(column))
    return model::format_human(unit->unit, *v * unit->to_si);
  // Other figures with a fraction (GPU-hours to the last digit) read as counts: "2926", "181.0K".
  return *v == std::floor(*v) ? cell : model::format_human(model::FieldUnit::count, *v);
}

}  // namespace trainsim::report
