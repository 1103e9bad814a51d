#include "sim/error.hpp"

#include <doctest/doctest.h>

using trainsim::Diagnostic;

TEST_CASE("a diagnostic prints file, line, column, key path and message") {
  const Diagnostic d{
      .file = "s.yaml", .line = 3, .column = 7, .key_path = "cluster.nodes", .message = "expected a count"};
  CHECK(d.to_string() == "s.yaml:3:7: cluster.nodes: expected a count");
}

TEST_CASE("a diagnostic leaves out the parts it does not know") {
  CHECK(Diagnostic{.message = "boom"}.to_string() == "boom");
  CHECK(Diagnostic{.file = "f", .message = "m"}.to_string() == "f: m");
}

TEST_CASE("a failed check throws an internal error naming the condition") {
  CHECK_THROWS_WITH_AS(TRAINSIM_CHECK(1 + 1 == 3, "arithmetic"), doctest::Contains("1 + 1 == 3"),
                       trainsim::InternalError);
}
