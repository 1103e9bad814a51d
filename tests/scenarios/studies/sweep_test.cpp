#include "scenarios/studies/sweep.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

SweepSpec two_by_three(SweepMode mode = SweepMode::grid) {
  SweepSpec s;
  s.mode = mode;
  s.axes = {SweepAxis{"cluster.nodes", {"16", "32"}},
            SweepAxis{"training.optimizer", {"adamw", "adafactor", "sgd-momentum"}}};
  return s;
}

std::string values(const SweepPoint& p) {
  std::string out;
  for (const auto& o : p.overrides) out += (out.empty() ? "" : " ") + o.key_path + "=" + o.yaml_value;
  return out;
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), std::int64_t{0});
  return v;
}

}  // namespace

TEST_CASE("a grid sweep is the cartesian product with the first axis varying slowest") {
  const SweepSpec s = two_by_three();
  CHECK(sweep_size(s) == 6);
  const auto points = expand_sweep(s);
  REQUIRE(points.size() == 6);
  CHECK(values(points[0]) == "cluster.nodes=16 training.optimizer=adamw");
  CHECK(values(points[1]) == "cluster.nodes=16 training.optimizer=adafactor");
  CHECK(values(points[2]) == "cluster.nodes=16 training.optimizer=sgd-momentum");
  CHECK(values(points[3]) == "cluster.nodes=32 training.optimizer=adamw");
  CHECK(values(points[5]) == "cluster.nodes=32 training.optimizer=sgd-momentum");
  for (std::size_t i = 0; i < points.size(); ++i) CHECK(points[i].index == static_cast<std::int64_t>(i));
}

TEST_CASE("a point computed directly equals the same point of the full expansion") {
  SweepSpec s = two_by_three();
  s.axes.push_back(SweepAxis{"parallelism.tp", {"1", "2", "4", "8"}});
  const auto points = expand_sweep(s);
  REQUIRE(points.size() == 24);
  // index 17 = (1, 1, 1) in radices (2, 3, 4): 1*12 + 1*4 + 1.
  CHECK(values(sweep_point(s, 17)) == "cluster.nodes=32 training.optimizer=adafactor parallelism.tp=2");
  CHECK(values(points[17]) == values(sweep_point(s, 17)));
}

TEST_CASE("a zip sweep walks its lists in lock-step") {
  SweepSpec s;
  s.mode = SweepMode::zip;
  s.axes = {SweepAxis{"cluster.nodes", {"16", "32", "64"}}, SweepAxis{"parallelism.pp", {"2", "4", "8"}}};
  CHECK(sweep_size(s) == 3);
  const auto points = expand_sweep(s);
  CHECK(values(points[0]) == "cluster.nodes=16 parallelism.pp=2");
  CHECK(values(points[2]) == "cluster.nodes=64 parallelism.pp=8");
}

TEST_CASE("zip lists of different lengths are bad input naming both keys") {
  SweepSpec s = two_by_three(SweepMode::zip);
  try {
    (void)sweep_size(s);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cluster.nodes has 2 values, training.optimizer has 3") !=
          std::string::npos);
  }
}

TEST_CASE("a swept key without values is bad input and a sweep without keys is one point") {
  SweepSpec s;
  s.axes = {SweepAxis{"cluster.nodes", {}}};
  CHECK_THROWS_AS((void)sweep_size(s), InputError);
  const SweepSpec none;
  CHECK(sweep_size(none) == 1);
  CHECK(sweep_point(none, 0).overrides.empty());
}

TEST_CASE("shards are parsed from i/N and split points round-robin without overlap") {
  const Shard s = parse_shard("1/3");
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  CHECK(s.contains(1));
  CHECK(s.contains(4));
  CHECK_FALSE(s.contains(3));
  for (const char* bad : {"3/3", "-1/2", "1", "a/2", "1/0", "1/2x", "/2"}) {
    CHECK_THROWS_AS((void)parse_shard(bad), InputError);
  }
  for (std::int64_t p = 0; p < 20; ++p) {
    int owners = 0;
    for (int i = 0; i < 4; ++i) owners += Shard{i, 4}.contains(p) ? 1 : 0;
    CHECK(owners == 1);
  }
}

TEST_CASE("results are released in point order whatever order the threads finish in") {
  const auto points = iota(200);
  std::vector<std::int64_t> seen;
  const auto evaluate = [](std::int64_t p) {
    // Early points are the slowest, so completion order is roughly reversed.
    if (p < 4) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return std::to_string(p * p);
  };
  const auto emitted = run_in_order(points, 4, evaluate, [&](std::int64_t p, std::string&& r) {
    CHECK(r == std::to_string(p * p));
    seen.push_back(p);
  });
  CHECK(emitted == 200);
  CHECK(seen == points);
}

TEST_CASE("a stop request ends the run with an in-order prefix of the points") {
  // Points from 200 on wait until the stop is requested (at point 100's emission), so however the threads
  // are scheduled the run cannot finish every point before the stop: at most one point per worker is
  // started past 200 before the stop, and at most one more per worker as it races with the request.
  // (Without the wait, on a loaded machine the workers could evaluate all 10,000 trivial points before
  // point 0's thread emitted anything; emitting them all would then be correct, and the check flaky.)
  constexpr int kThreads = 3;
  const auto points = iota(10000);
  std::stop_source stop;
  std::atomic<int> evaluated{0};
  std::vector<std::int64_t> seen;
  const auto emitted = run_in_order(
      points, kThreads,
      [&](std::int64_t p) {
        ++evaluated;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (p >= 200 && !stop.stop_requested() && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
        return std::to_string(p);
      },
      [&](std::int64_t p, std::string&&) {
        seen.push_back(p);
        if (p == 100) stop.request_stop();
      },
      stop.get_token());
  CHECK(emitted == static_cast<std::int64_t>(seen.size()));
  CHECK(emitted >= 101);
  CHECK(evaluated.load() <= 200 + 2 * kThreads);
  CHECK(emitted <= evaluated.load());
  for (std::size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == static_cast<std::int64_t>(i));
}

TEST_CASE("an exception from one point stops the run and reaches the caller") {
  const auto points = iota(1000);
  CHECK_THROWS_AS(run_in_order(
                      points, 2,
                      [](std::int64_t p) -> std::string {
                        if (p == 500) throw std::runtime_error("boom");
                        return "";
                      },
                      [](std::int64_t, std::string&&) {}),
                  std::runtime_error);
}

TEST_CASE("the point index is read back from whole rows only") {
  CHECK(row_point_index("12,gpt3,16\n", RowFormat::csv) == 12);
  CHECK(row_point_index("12,gpt3,16", RowFormat::csv) == -1);  // torn: no newline
  CHECK(row_point_index("point,scenario\n", RowFormat::csv) == -1);
  CHECK(row_point_index("{\"point\":7,\"scenario\":\"x\"}\n", RowFormat::jsonl) == 7);
  CHECK(row_point_index("{\"point\":7,\"scen", RowFormat::jsonl) == -1);
  CHECK(row_point_index("\n", RowFormat::jsonl) == -1);
}

TEST_CASE("a swept tag is one column, among the swept keys, holding each point's value") {
  // The tags are labels of every row (`tags.<key>`); a sweep over one of them already names that column as
  // its key path, so the row writes it once: scenario, tags.team (swept), tags.project (not), then fields.
  const auto path = std::filesystem::temp_directory_path() /
                    ("trainsim_swept_tag_test_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << R"(tags: {team: infra, project: p}
model: gpt3-125m
cluster: {node: dgx-a100-80gb, nodes: 1}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 64, precision: bf16, optimizer: adamw, tokens: 1e9}
pricing: {gpu_hour: "$2.50"}
sweep: {tags.team: [infra, research]}
)";
  const SweepTable table(path.string(), model::Fidelity::analytic, RowFormat::csv);
  CHECK(table.header().starts_with("point,sweep_fingerprint,scenario,tags.team,tags.project,fits,feasible,"));
  std::vector<std::string> cells;
  std::stringstream row(table.row(1));
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  REQUIRE(cells.size() > 5);
  CHECK(cells[3] == "research");
  CHECK(cells[4] == "p");
  CHECK(cells[5] == "true");
  std::filesystem::remove(path);
}
