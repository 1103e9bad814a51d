#include "sim/csv_record.hpp"

namespace trainsim::sim {

CsvRecord read_csv_record(std::string_view text, std::size_t pos) {
  CsvRecord r;
  std::string cell;
  bool quoted = false;      // inside a quoted cell
  bool was_quoted = false;  // the current cell was quoted and its closing quote read
  std::size_t i = pos;
  const auto fail = [&](std::size_t at, std::string why) {
    if (r.error.empty()) {
      r.error = std::move(why);
      r.error_at = at;
    }
  };
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        cell += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else {
        quoted = false;
        was_quoted = true;
      }
      continue;
    }
    if (c == ',') {
      r.cells.push_back(std::move(cell));
      cell.clear();
      was_quoted = false;
    } else if (c == '\n' || (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) {
      r.cells.push_back(std::move(cell));
      r.next = i + (c == '\r' ? 2 : 1);
      r.ended = true;
      return r;
    } else if (c == '"') {
      if (cell.empty() && !was_quoted) {
        quoted = true;
      } else {
        fail(i, "a double quote inside a cell that does not start with one (RFC 4180 quotes the whole cell)");
        cell += c;
      }
    } else {
      if (was_quoted) fail(i, "text after the closing quote of a cell (expected a comma or a line end)");
      cell += c;
    }
  }
  r.cells.push_back(std::move(cell));
  r.next = text.size();
  r.in_quotes = quoted;
  return r;
}

}  // namespace trainsim::sim
