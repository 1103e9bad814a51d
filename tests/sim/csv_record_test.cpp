// The one CSV record reader: RFC 4180 quoting followed, so a record torn anywhere, inside a quoted
// multi-line cell too, is told apart from a whole one.
#include "sim/csv_record.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using trainsim::sim::read_csv_record;

TEST_CASE("a record's cells are unquoted, and it ends at the first line end outside quotes") {
  const std::string text = "0,\"a, \"\"b\"\"\nc\",x\n1,y";
  const auto r = read_csv_record(text, 0);
  CHECK(r.ended);
  CHECK(r.error.empty());
  CHECK(r.cells == std::vector<std::string>{"0", "a, \"b\"\nc", "x"});
  CHECK(r.next == 17);  // past the '\n' after x: 2 + 12 (the quoted cell) + 3
  const auto last = read_csv_record(text, r.next);
  CHECK_FALSE(last.ended);  // no line end: a last line without one, or a torn record
  CHECK_FALSE(last.in_quotes);
  CHECK(last.cells == std::vector<std::string>{"1", "y"});
  CHECK(read_csv_record("a,b\r\nc", 0).next == 5);  // CRLF ends a record too
}

TEST_CASE("a record torn inside a quoted multi-line cell has not ended, whatever newlines it holds") {
  // The writer was cut off after the newline inside the cell: a reader counting lines sees a whole line.
  const auto r = read_csv_record("5,fp,\"first line\n", 0);
  CHECK_FALSE(r.ended);
  CHECK(r.in_quotes);
}

TEST_CASE("quotes where RFC 4180 allows none are errors with their offset") {
  const auto inside = read_csv_record("ab\"c,d\n", 0);
  CHECK(inside.error.find("double quote inside a cell") != std::string::npos);
  CHECK(inside.error_at == 2);
  const auto after = read_csv_record("\"ab\"c,d\n", 0);
  CHECK(after.error.find("text after the closing quote") != std::string::npos);
  CHECK(after.error_at == 4);
}
