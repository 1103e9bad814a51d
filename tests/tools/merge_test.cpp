// `trainsim sweep --shard i/N` and `trainsim merge`, end to end through the binary.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "binary_harness.hpp"

namespace fs = std::filesystem;
using Folder = trainsim::e2e::TempDir;
using trainsim::e2e::read_file;
using trainsim::e2e::shell;
using trainsim::e2e::trainsim_command;

namespace {

// 3 node counts x 3 optimizers x 2 micro-batch sizes = 18 points.
constexpr const char* sweep = R"(name: merge-test
model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 1}
parallelism: {tp: 2, pp: 1, dp: auto, micro_batch: 1, zero: 1}
training: {global_batch: 512, precision: bf16, optimizer: adamw, tokens: 26e9}
pricing: {gpu_hour: "$2.50"}
sweep:
  cluster.nodes: [1, 2, 4]
  training.optimizer: [adamw, adafactor, sgd-momentum]
  parallelism.micro_batch: [1, 2]
)";

std::string run_shards(const Folder& dir, const std::string& scenario, int n, const std::string& extension) {
  std::string shards;
  for (int i = 0; i < n; ++i) {
    const std::string out = dir.file("shard" + std::to_string(i) + extension);
    REQUIRE(shell(trainsim_command() + " sweep " + scenario + " --shard " + std::to_string(i) + "/" +
                  std::to_string(n) + " -o " + out) == 0);
    shards += " " + out;
  }
  return shards;
}

}  // namespace

TEST_CASE("shards hold disjoint round-robin slices of the points") {
  const Folder dir;
  const std::string scenario = dir.file("s.yaml");
  std::ofstream(scenario) << sweep;
  run_shards(dir, scenario, 4, ".csv");
  const std::string shard1 = read_file(dir.file("shard1.csv"));
  // Shard 1 of 4 holds points 1, 5, 9, 13, 17.
  std::istringstream in(shard1);
  std::string line;
  std::getline(in, line);
  CHECK(line.starts_with("point,"));
  for (const int expected : {1, 5, 9, 13, 17}) {
    REQUIRE(std::getline(in, line));
    CHECK(line.starts_with(std::to_string(expected) + ","));
  }
  CHECK_FALSE(std::getline(in, line));
}

TEST_CASE("merged shard outputs equal the unsharded run, in CSV and in JSON Lines") {
  const Folder dir;
  const std::string scenario = dir.file("s.yaml");
  std::ofstream(scenario) << sweep;
  for (const std::string extension : {".csv", ".jsonl"}) {
    REQUIRE(shell(trainsim_command() + " sweep " + scenario + " -o " + dir.file("whole" + extension)) == 0);
    const std::string shards = run_shards(dir, scenario, 3, extension);
    REQUIRE(shell(trainsim_command() + " merge " + dir.file("merged" + extension) + shards +
                  " 2>/dev/null") == 0);
    CHECK(read_file(dir.file("merged" + extension)) == read_file(dir.file("whole" + extension)));
  }
}

TEST_CASE("merge refuses shards of different sweeps and points that disagree") {
  const Folder dir;
  std::ofstream(dir.file("a.csv")) << "point,sweep_fingerprint,x\n0,f,1\n";
  std::ofstream(dir.file("b.csv")) << "point,y\n1,f,1\n";
  std::ofstream(dir.file("c.csv")) << "point,sweep_fingerprint,x\n0,f,2\n";
  std::ofstream(dir.file("d.csv")) << "point,sweep_fingerprint,x\n1,f,5\n0,f,1\n";
  CHECK(shell(trainsim_command() + " merge " + dir.file("out.csv") + " " + dir.file("a.csv") + " " +
              dir.file("b.csv") + " 2>/dev/null") == 2);
  CHECK(shell(trainsim_command() + " merge " + dir.file("out.csv") + " " + dir.file("a.csv") + " " +
              dir.file("c.csv") + " 2>/dev/null") == 2);
  // Same columns, another sweep: the rows' fingerprints differ.
  std::ofstream(dir.file("e.csv")) << "point,sweep_fingerprint,x\n1,g,1\n";
  CHECK(shell(trainsim_command() + " merge " + dir.file("out.csv") + " " + dir.file("a.csv") + " " +
              dir.file("e.csv") + " 2>/dev/null") == 2);
  CHECK_FALSE(fs::exists(dir.file("out.csv")));
  // The same point twice with the same row (a shard run twice) is kept once; rows come out sorted.
  REQUIRE(shell(trainsim_command() + " merge " + dir.file("out.csv") + " " + dir.file("a.csv") + " " +
                dir.file("d.csv") + " 2>/dev/null") == 0);
  CHECK(read_file(dir.file("out.csv")) == "point,sweep_fingerprint,x\n0,f,1\n1,f,5\n");
}

TEST_CASE("a torn last row or a missing point is a warning with counts, and --strict makes it exit 1") {
  const Folder dir;
  std::ofstream(dir.file("a.csv")) << "point,sweep_fingerprint,x\n0,f,1\n2,f,3\n";
  std::ofstream(dir.file("b.csv"))
      << "point,sweep_fingerprint,x\n1,f,2\n3,f,";  // the shard's writer died mid-row
  const std::string err = dir.file("err.txt");
  CHECK(shell(trainsim_command() + " merge " + dir.file("m.csv") + " " + dir.file("a.csv") + " " +
              dir.file("b.csv") + " 2>" + err) == 0);
  CHECK(read_file(dir.file("m.csv")) == "point,sweep_fingerprint,x\n0,f,1\n1,f,2\n2,f,3\n");
  CHECK(read_file(err).find("ends in a torn row (4 bytes) that is left out") != std::string::npos);
  CHECK(shell(trainsim_command() + " merge --strict " + dir.file("m.csv") + " " + dir.file("a.csv") + " " +
              dir.file("b.csv") + " 2>/dev/null") == 1);
  std::ofstream(dir.file("c.csv")) << "point,sweep_fingerprint,x\n0,f,1\n2,f,3\n";  // point 1 is in no shard
  CHECK(shell(trainsim_command() + " merge --strict " + dir.file("m.csv") + " " + dir.file("c.csv") + " 2>" +
              err) == 1);
  CHECK(read_file(err).find("1 of points 0..2 are missing") != std::string::npos);
  CHECK(shell(trainsim_command() + " merge --strict " + dir.file("m.csv") + " " + dir.file("a.csv") +
              " 2>/dev/null") == 1);
}
