#pragma once
// The tables `trainsim report` reads: CSV (sweep and search outputs, run.csv, a cluster's jobs.csv and
// cluster.csv), JSON Lines (sweep outputs) and JSON arrays (search outputs), as rows of text cells under a
// header.
#include <optional>
#include <string>
#include <vector>

namespace trainsim::report {

/// A table of text cells with a header row, as read from a CSV file or JSON Lines.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  /// Index of a column, or -1.
  [[nodiscard]] int column(const std::string& name) const;
};

/// RFC 4180 CSV (quoted fields, doubled quotes, one header row). Throws InputError naming line numbers.
Table parse_csv(const std::string& text, const std::string& file_label);
/// JSON Lines (one object per line), or one JSON array of objects; columns in order of first appearance,
/// strings as they are, other values as JSON text (null as "null"). Throws InputError.
Table parse_json_lines(const std::string& text, const std::string& file_label);

/// A cell's number: the whole cell must be a finite decimal number; empty, text or "nan" give nullopt.
[[nodiscard]] std::optional<double> number_of(const std::string& cell);

}  // namespace trainsim::report
