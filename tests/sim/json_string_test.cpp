// JSON string literals: what must be escaped is, and nothing else is touched.
#include "sim/json_string.hpp"

#include <doctest/doctest.h>

#include <string>

using trainsim::sim::append_json_string;

namespace {
std::string quoted(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}
}  // namespace

TEST_CASE("quotes, backslashes and control characters are escaped as RFC 8259 spells them") {
  CHECK(quoted("plain") == "\"plain\"");
  CHECK(quoted("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(quoted("l1\nl2\tx\r") == "\"l1\\nl2\\tx\\r\"");
  CHECK(quoted(std::string_view("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
  CHECK(quoted("Zürich ≥ 3") == "\"Zürich ≥ 3\"");  // UTF-8 passes through
}
