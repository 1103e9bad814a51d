// The one JSON reader: nesting capped while parsing, duplicate keys refused, messages placed (line and
// column counted by hand in each text below) and bounded, with bad bytes escaped.
#include "sim/json_input.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/error.hpp"

using trainsim::Diagnostic;
using trainsim::InputError;
using trainsim::sim::json_excerpt;
using trainsim::sim::kMaxJsonDepth;
using trainsim::sim::parse_json_input;

namespace {

/// The one diagnostic parse_json_input throws for `text`.
Diagnostic refusal(const std::string& text, int first_line = 1) {
  try {
    (void)parse_json_input(text, "f.json", first_line);
  } catch (const InputError& e) {
    REQUIRE(e.diagnostics().size() == 1);
    return e.diagnostics().front();
  }
  FAIL("accepted: " << text.substr(0, 80));
  return {};
}

}  // namespace

TEST_CASE("a JSON object is read in its order, nested values included") {
  const auto j = parse_json_input(R"({"b": 1, "a": [true, {"c": "x"}]})", "f.json");
  REQUIRE(j.is_object());
  CHECK(j.begin().key() == "b");
  CHECK(j["a"][1]["c"] == "x");
}

TEST_CASE("nesting is capped while parsing: 100,000 nested arrays are refused at the first past the cap") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const Diagnostic d = refusal(deep);
  CHECK(d.file == "f.json");
  CHECK(d.line == 1);
  CHECK(d.column == kMaxJsonDepth + 1);  // the 65th '[' is the first too deep
  CHECK(d.message.find("nested deeper than 64 levels") != std::string::npos);
  // The cap itself is accepted: 64 levels.
  CHECK_NOTHROW((void)parse_json_input(std::string(64, '[') + std::string(64, ']'), "f.json"));
  // Objects count as levels too: {"a": {"a": ...}} at 65 levels, the last '{' on line 2.
  std::string objects;
  for (int i = 0; i < 64; ++i) objects += "{\"a\":";
  objects += "\n{}";
  for (int i = 0; i < 64; ++i) objects += "}";
  const Diagnostic o = refusal(objects);
  CHECK(o.line == 2);
  CHECK(o.column == 1);
}

TEST_CASE("a key given twice in one object is an error at the second, naming the first") {
  // Line 3, column 3 is the second "hidden_size"'s opening quote; the first is at line 2, column 3.
  const Diagnostic d = refusal("{\n  \"hidden_size\": 1,\n  \"hidden_size\": 2\n}");
  CHECK(d.line == 3);
  CHECK(d.column == 3);
  CHECK(d.message.find("the key \"hidden_size\" is given twice in one object (first at line 2, column 3)") !=
        std::string::npos);
  // The same key in two different objects is fine, and so is an escaped quote inside a key.
  CHECK_NOTHROW((void)parse_json_input(R"({"a": {"k": 1}, "b": {"k": 2}, "q\"k": 1, "k": 3})", "f.json"));
  const Diagnostic escaped = refusal(R"({"q\"k": 1, "q\"k": 2})");
  CHECK(escaped.column == 13);
}

TEST_CASE("a JSON Lines line is placed on its line of the file") {
  const Diagnostic d = refusal("{\"a\": 1, \"a\": 2}", 7);
  CHECK(d.line == 7);
  CHECK(d.column == 10);
}

TEST_CASE("syntax errors are placed; invalid UTF-8 and long tokens are escaped and cut") {
  const Diagnostic d = refusal("{\"a\": tru}");
  CHECK(d.line == 1);
  CHECK(d.message.find("invalid literal") != std::string::npos);
  // A string with an invalid UTF-8 byte (0xff) and 10,000 more bytes: the message holds \xff, never the
  // raw byte, and stays short.
  const std::string bad = "{\"a\": \"\xff" + std::string(10000, 'x') + "\"}";
  const Diagnostic u = refusal(bad);
  CHECK(u.message.find('\xff') == std::string::npos);
  CHECK(u.message.find("\\xff") != std::string::npos);
  CHECK(u.message.size() < 400);
  CHECK(u.column == 8);  // the bad byte
  // A number too large for a double is refused, its digits cut.
  const Diagnostic big = refusal("[" + std::string(2000, '1') + "]");
  CHECK(big.message.find("number overflow") != std::string::npos);
  CHECK(big.message.find("[json.exception") == std::string::npos);
  CHECK(big.message.size() < 300);
  // Trailing content after the value is refused.
  CHECK(refusal("{} {}").message.find("syntax error") != std::string::npos);
}

TEST_CASE("a value's excerpt is bounded") {
  std::string many = "[1";
  for (int i = 0; i < 2000; ++i) many += ",1";
  const auto j = parse_json_input(many + "]", "f.json");
  CHECK(json_excerpt(j).size() <= 63);
  CHECK(json_excerpt(j).ends_with("..."));
  CHECK(json_excerpt(parse_json_input("\"silu\"", "f.json")) == "\"silu\"");
}
