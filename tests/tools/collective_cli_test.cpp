// `trainsim collective` as users of nccl-tests read it (issue 4): `#` comment lines for the header, then one
// row per message size with the columns size (B), count (elements), type, time (us), algbw and busbw (GB/s),
// busbw last. The bandwidth bounds come from the node preset file (its NVLink bandwidth), not from the
// output.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "binary_harness.hpp"

namespace {

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;

struct Row {
  double size = 0.0;   // bytes
  double count = 0.0;  // elements
  std::string type;
  double time_us = 0.0;
  double algbw = 0.0;  // GB/s
  double busbw = 0.0;  // GB/s
};

struct Table {
  std::vector<std::string> comments;  // lines starting with '#'
  std::vector<Row> rows;
};

Table parse_table(const std::string& text) {
  Table table;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line.front() == '#') {
      table.comments.push_back(line);
      continue;
    }
    std::istringstream fields(line);
    Row row;
    fields >> row.size >> row.count >> row.type >> row.time_us >> row.algbw >> row.busbw;
    INFO("row: " << line);
    REQUIRE(!fields.fail());
    std::string extra;
    CHECK_FALSE(static_cast<bool>(fields >> extra));  // busbw is the last column
    table.rows.push_back(row);
  }
  return table;
}

/// The intra-node (NVLink) bandwidth per GPU and direction of a node preset, in GB/s, read from the preset
/// file that ships with the project (e.g. `intra_bandwidth: "450 GB/s"`).
double preset_intra_bandwidth_gbs(const std::string& node) {
  const std::string text =
      read_file(std::string(TRAINSIM_SOURCE_DIR) + "/topologies/presets/nodes/" + node + ".yaml");
  const std::regex key(R"(intra_bandwidth:\s*"([0-9.]+)\s*GB/s")");
  std::smatch match;
  REQUIRE(std::regex_search(text, match, key));
  return std::stod(match[1].str());
}

// Values are printed with two decimals: compare within half the printing resolution plus a relative margin
// (the time column is rounded too).
bool close(double a, double b) {
  return std::abs(a - b) <= 0.006 + 0.002 * std::abs(b);
}

}  // namespace

TEST_CASE("An all-reduce sweep on one DGX H100 prints one nccl-tests row per size from 8 B to 128 MiB") {
  const Outcome o = run_trainsim({"collective", "--cluster", "dgx-h100", "--nodes", "1", "--op", "all-reduce",
                                  "-b", "8", "-e", "128M", "-f", "2"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const Table table = parse_table(o.out);

  SUBCASE("the header is made of # comment lines naming the columns in nccl-tests order, busbw last") {
    bool found = false;
    for (const auto& line : table.comments) {
      const std::regex columns(R"(^#\s+size\s+count\s+type\s+time\s+algbw\s+busbw\s*$)");
      if (std::regex_match(line, columns)) found = true;
    }
    CHECK(found);
  }

  SUBCASE("sizes double from 8 B to 128 MiB, 25 rows, with count = size / 4 for float") {
    REQUIRE(table.rows.size() == 25);  // 2^3 .. 2^27
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
      const double expected = std::ldexp(1.0, static_cast<int>(i) + 3);
      CHECK(table.rows[i].size == expected);
      CHECK(table.rows[i].count == expected / 4.0);
      CHECK(table.rows[i].type == "float");
    }
  }

  SUBCASE("algbw is size over time, and busbw = algbw * 2(n-1)/n with n = 8 GPUs") {
    for (const auto& row : table.rows) {
      INFO("size " << row.size);
      REQUIRE(row.time_us > 0.0);
      // size B / (time us * 1e-6 s/us) / 1e9 B/GB; both bandwidths against it, as each is rounded on its own.
      const double algbw = row.size / (row.time_us * 1e3);
      CHECK(close(row.algbw, algbw));
      CHECK(close(row.busbw, algbw * 2.0 * 7.0 / 8.0));
      if (row.algbw >= 1.0) CHECK(row.busbw == doctest::Approx(row.algbw * 2.0 * 7.0 / 8.0).epsilon(0.01));
    }
  }

  SUBCASE("at large sizes busbw is a plausible fraction of the node's NVLink bandwidth") {
    // dgx-h100: 450 GB/s per GPU and direction (900 GB/s bidirectional, DGX H100 datasheet). No algorithm
    // moves a GPU's S bytes in less than S / B (with in-switch reduction each GPU still sends S once), so
    // algbw <= B. Published large-message plateaus for one DGX H100 are 370 GB/s (ring) and 480 GB/s
    // (NVLS) busbw (NVIDIA GTC24 S62129; ../shared/validation rows NCCL-GTC24-05/06): at least 0.6 B.
    const double link = preset_intra_bandwidth_gbs("dgx-h100");
    CHECK(link == 450.0);
    const Row& largest = table.rows.back();
    CHECK(largest.algbw <= link);
    CHECK(largest.busbw >= 0.6 * link);
    CHECK(largest.busbw <= 2.0 * 7.0 / 8.0 * link);
  }

  SUBCASE(
      "small messages are latency bound: 8 B moves at well under 1 GB/s and takes at least a microsecond") {
    const Row& smallest = table.rows.front();
    CHECK(smallest.busbw < 1.0);
    CHECK(smallest.time_us >= 1.0);
  }
}

TEST_CASE("One size with --size prints exactly one row") {
  const Outcome o = run_trainsim(
      {"collective", "--cluster", "dgx-h100", "--op", "all-reduce", "--algo", "ring", "--size", "1GiB"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const Table table = parse_table(o.out);
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].size == 1073741824.0);
  // A ring all-reduce moves 2(n-1)/n S per GPU over its link: busbw can not exceed the link bandwidth.
  CHECK(table.rows[0].busbw <= preset_intra_bandwidth_gbs("dgx-h100"));
}

TEST_CASE("An unknown cluster preset or operation is bad input: exit 2 with a message") {
  const Outcome cluster =
      run_trainsim({"collective", "--cluster", "no-such-node", "--op", "all-reduce", "--size", "1M"});
  INFO(describe(cluster));
  CHECK(cluster.exit_code == 2);
  CHECK(cluster.err.find("no-such-node") != std::string::npos);
  const Outcome op = run_trainsim({"collective", "--cluster", "dgx-h100", "--op", "all-mix", "--size", "1M"});
  INFO(describe(op));
  CHECK(op.exit_code == 2);
  CHECK_FALSE(op.err.empty());
}
