#include "report/table.hpp"

#include <doctest/doctest.h>

#include <chrono>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("CSV with quoted commas, doubled quotes and CRLF line ends parses into cells") {
  const auto t = report::parse_csv("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n1,2\n", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][0] == "x, y");
  CHECK(t.rows[0][1] == "say \"hi\"");
  CHECK(t.column("b") == 1);
  CHECK(t.column("c") == -1);
}

TEST_CASE("a CSV row with the wrong number of fields is an error naming its line") {
  CHECK_THROWS_WITH_AS(report::parse_csv("a,b\n1\n", "s.csv"), "s.csv:2: expected 2 CSV fields, found 1",
                       InputError);
  CHECK_THROWS_AS(report::parse_csv("", "s.csv"), InputError);
  CHECK_THROWS_AS(report::parse_csv("a\n\"open\n", "s.csv"), InputError);
}

TEST_CASE("JSON Lines become a table whose columns appear in first-seen order") {
  const auto t =
      report::parse_json_lines("{\"gpus\": 8, \"x\": \"a\"}\n\n{\"gpus\": 16, \"y\": true}\n", "s.jsonl");
  CHECK(t.columns == std::vector<std::string>{"gpus", "x", "y"});
  CHECK(t.rows[1][0] == "16");
  CHECK(t.rows[1][1].empty());
  CHECK(t.rows[1][2] == "true");
  CHECK_THROWS_AS(report::parse_json_lines("[1]\n", "s.jsonl"), InputError);
  CHECK_THROWS_WITH_AS(report::parse_json_lines("{\"a\": 1}\nnot json\n", "s.jsonl"),
                       doctest::Contains("s.jsonl:2:2: not JSON trainsim reads: syntax error"), InputError);
}

TEST_CASE("a JSON array of objects (search --format json) is read like JSON Lines") {
  const auto t = report::parse_json_lines(
      "[\n {\"rank\": \"1\", \"run_time\": 5.5},\n {\"rank\": \"\", \"cost_total\": null}\n]\n", "q.json");
  CHECK(t.columns == std::vector<std::string>{"rank", "run_time", "cost_total"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][1] == "5.5");
  CHECK(t.rows[1][2] == "null");
  CHECK_THROWS_AS(report::parse_json_lines("[{\"a\": 1},", "q.json"), InputError);
}

TEST_CASE("a cell is a number only when the whole of it is a finite number") {
  CHECK(report::number_of("1.5e3") == 1500.0);
  CHECK(report::number_of("-2") == -2.0);
  CHECK_FALSE(report::number_of(""));
  CHECK_FALSE(report::number_of("12 GiB"));
  CHECK_FALSE(report::number_of("null"));
  CHECK_FALSE(report::number_of("nan"));
  CHECK_FALSE(report::number_of("inf"));
}

TEST_CASE("a CSV of 200,000 rows is read in linear time (line numbers are counted as the rows go)") {
  std::string text = "point,x\n";
  for (int i = 0; i < 200000; ++i) text += std::to_string(i) + ",a\n";
  const auto start = std::chrono::steady_clock::now();
  const auto t = report::parse_csv(text, "big.csv");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(t.rows.size() == 200000);
  // Counting each row's line from the start of the text was ~2e11 byte reads here (minutes); a linear read
  // is well under a second even on a loaded machine.
  CHECK(seconds < 5.0);
}
