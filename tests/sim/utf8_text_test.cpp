// UTF-8 well-formedness (RFC 3629 Table 3-7) and printable excerpts of input text.
#include "sim/utf8_text.hpp"

#include <doctest/doctest.h>

#include <string>

using trainsim::sim::escaped_excerpt;
using trainsim::sim::line_and_column;
using trainsim::sim::utf8_length;

TEST_CASE("UTF-8 sequences: lengths of well-formed ones, 0 for overlong, surrogate and truncated ones") {
  CHECK(utf8_length("a", 0) == 1);
  CHECK(utf8_length("\xc3\xa9", 0) == 2);          // é
  CHECK(utf8_length("\xe2\x82\xac", 0) == 3);      // €
  CHECK(utf8_length("\xf0\x9f\x98\x80", 0) == 4);  // U+1F600
  CHECK(utf8_length("\xc0\xaf", 0) == 0);          // overlong '/'
  CHECK(utf8_length("\xed\xa0\x80", 0) == 0);      // U+D800, a surrogate
  CHECK(utf8_length("\xe2\x82", 0) == 0);          // cut short
  CHECK(utf8_length("\xff", 0) == 0);
}

TEST_CASE("an excerpt keeps printable UTF-8, escapes the rest and is cut with an ellipsis") {
  CHECK(escaped_excerpt("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(escaped_excerpt("a\nb\tc\x01\xff") == "a\\nb\\tc\\x01\\xff");
  CHECK(escaped_excerpt(std::string(300, '9'), 10) == "9999999999...");
  CHECK(escaped_excerpt("", 10).empty());
}

TEST_CASE("line and column of a byte offset count from 1, columns in bytes") {
  CHECK(line_and_column("ab\ncd", 0) == std::pair{1, 1});
  CHECK(line_and_column("ab\ncd", 4) == std::pair{2, 2});
  CHECK(line_and_column("ab\ncd", 99) == std::pair{2, 3});  // past the end: the end
}
