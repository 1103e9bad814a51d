#pragma once
// One CSV record read as RFC 4180 (and csv_field.hpp) writes it: cells split at commas outside double
// quotes, a doubled quote inside quotes as one, a line break inside quotes as part of the cell, and the
// record ended by "\n" or "\r\n" outside quotes. The one reader of every CSV trainsim reads back (a sweep's
// output on --resume and merge, the report's tables), so that a record torn anywhere, inside a quoted
// multi-line cell too, is told apart from a whole one.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::sim {

struct CsvRecord {
  std::vector<std::string> cells;  ///< unquoted
  std::size_t next = 0;            ///< offset just past the record's line end (or the end of the text)
  /// The record's line end was read. False when the text ends first: a torn record (a writer cut off) or a
  /// last line written without a line end; `in_quotes` tells the two apart.
  bool ended = false;
  bool in_quotes = false;  ///< the text ended inside a quoted cell (never a whole record)
  std::string error;  ///< non-empty: not CSV (a quote inside an unquoted cell, text after a closing quote)
  std::size_t error_at = 0;  ///< offset of that problem in the text
};

/// Reads the record that starts at `pos` (< text.size()).
[[nodiscard]] CsvRecord read_csv_record(std::string_view text, std::size_t pos);

}  // namespace trainsim::sim
