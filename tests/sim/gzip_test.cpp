#include "sim/gzip.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("gunzip reads back what gzip wrote") {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "slice " + std::to_string(i) + "\n";  // about 1.2 MB, many chunks
  CHECK(sim::gunzip(sim::gzip(text), text.size(), "t.gz") == text);
  CHECK(sim::gunzip(sim::gzip(""), 0, "t.gz").empty());
}

TEST_CASE("gunzip refuses data that is not gzip, is cut short, or inflates beyond the limit") {
  const std::string gz = sim::gzip(std::string(100000, 'a'));
  CHECK_THROWS_AS((void)sim::gunzip("plain text, not gzip", 1000, "t.gz"), InputError);
  CHECK_THROWS_AS((void)sim::gunzip(gz.substr(0, gz.size() / 2), 1000000, "t.gz"), InputError);
  // 100,000 bytes from a member of a few hundred: refused once past the limit, not read to the end.
  CHECK_THROWS_WITH_AS((void)sim::gunzip(gz, 1000, "t.gz"),
                       doctest::Contains("inflates to more than 1000 bytes"), InputError);
}
