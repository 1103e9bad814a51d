#include "report/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "sim/csv_record.hpp"
#include "sim/error.hpp"
#include "sim/json_input.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::report {

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Table parse_csv(const std::string& text, const std::string& file_label) {
  std::vector<std::vector<std::string>> records;
  std::vector<int> lines;  // where each record starts
  int line = 1;            // counted as the records go: one count from the start each would be quadratic
  for (std::size_t pos = 0; pos < text.size();) {
    sim::CsvRecord r = sim::read_csv_record(text, pos);
    if (!r.error.empty()) {
      throw InputError({Diagnostic{
          .file = file_label, .line = sim::line_and_column(text, r.error_at).first, .message = r.error}});
    }
    if (r.in_quotes) {
      throw InputError({Diagnostic{.file = file_label,
                                   .line = line,
                                   .message = "unterminated quoted CSV field: the row is cut off inside a "
                                              "quoted cell (a torn row?)"}});
    }
    records.push_back(std::move(r.cells));
    lines.push_back(line);
    line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(pos),
                                        text.begin() + static_cast<std::ptrdiff_t>(r.next), '\n'));
    pos = r.next;
  }
  if (records.empty())
    throw InputError({Diagnostic{.file = file_label, .message = "empty CSV: expected a header row"}});
  Table table;
  table.columns = std::move(records.front());
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() == 1 && records[r][0].empty()) continue;  // blank line
    if (records[r].size() != table.columns.size()) {
      throw InputError({Diagnostic{.file = file_label,
                                   .line = lines[r],
                                   .message = fmt::format("expected {} CSV fields, found {}",
                                                          table.columns.size(), records[r].size())}});
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

Table parse_json_lines(const std::string& text, const std::string& file_label) {
  Table table;
  std::map<std::string, std::size_t, std::less<>> column_of;  // each key's column, first seen first
  std::vector<nlohmann::ordered_json> objects;
  auto add = [&](nlohmann::ordered_json j, int line) {
    if (!j.is_object()) {
      throw InputError({Diagnostic{.file = file_label,
                                   .line = line,
                                   .message = "expected JSON objects (one per line, or an array of them)"}});
    }
    for (const auto& [key, value] : j.items()) {
      if (column_of.emplace(key, table.columns.size()).second) table.columns.push_back(key);
    }
    objects.push_back(std::move(j));
  };
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    // One JSON array of objects (`trainsim search --format json`).
    nlohmann::ordered_json all = sim::parse_json_input(text, file_label);
    if (!all.is_array())
      throw InputError({Diagnostic{.file = file_label, .message = "expected a JSON array of objects"}});
    for (auto& j : all) add(std::move(j), 0);
  } else {
    std::istringstream in(text);
    std::string line_text;
    int line = 0;
    while (std::getline(in, line_text)) {
      ++line;
      if (line_text.find_first_not_of(" \t\r") == std::string::npos) continue;
      add(sim::parse_json_input(line_text, file_label, line), line);
    }
  }
  for (const auto& j : objects) {
    std::vector<std::string> row(table.columns.size());
    for (const auto& [key, v] : j.items()) {
      row[column_of.find(key)->second] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::optional<double> number_of(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end == cell.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace trainsim::report
