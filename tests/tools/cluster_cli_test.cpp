// `trainsim cluster` through the real binary: a tiny cluster file with real scenario files (the shared
// cluster example's job scenarios), its three output files, byte-identical reruns, bad input at
// file:line:col, and every shipped cluster example.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "binary_harness.hpp"

using nlohmann::json;
using trainsim::e2e::describe;
using trainsim::e2e::example_cluster_files;
using trainsim::e2e::Outcome;
using trainsim::e2e::read_file;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

namespace {

const std::string jobs_dir = TRAINSIM_SOURCE_DIR "/scenarios/examples/shared-cluster/";

// 4 nodes for 3 days; two explicit jobs and a small stream, with failures: every output has content.
std::string tiny_cluster() {
  return "cluster: {node: dgx-h100, nodes: 4}\n"
         "period: \"3 d\"\n"
         "scheduler: {policy: backfill}\n"
         "jobs:\n"
         "  - {scenario: " +
         jobs_dir +
         "small.yaml, team: a, nodes: 4, name: wide}\n"
         "  - {scenario: " +
         jobs_dir +
         "small.yaml, team: b, nodes: 1, submit: \"1 h\"}\n"
         "arrivals:\n"
         "  - {team: b, rate: \"4/d\", seed: 2, mix: [{scenario: " +
         jobs_dir +
         "small.yaml, nodes: [1, 2]}]}\n"
         "failures: {node_mtbf: \"200 h\", repair: \"2 h\"}\n"
         "pricing: {gpu_hour: \"$2\"}\n";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("trainsim cluster prints the accounting and writes jobs.csv, cluster.csv and a per-node trace") {
  const TempDir dir;
  write(dir.file("c.yaml"), tiny_cluster());
  const Outcome o =
      run_trainsim({"cluster", dir.file("c.yaml"), "-o", dir.file("out"), "--format", "json"}, 60);
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const json r = json::parse(o.out);
  const json& c = r["cluster"];
  // 4 nodes x 8 GPUs x 72 h = 2,304 GPU-hours, all busy, idle or down.
  CHECK(c["total_gpu_hours"].get<double>() == doctest::Approx(2304));
  CHECK(c["busy_gpu_hours"].get<double>() + c["idle_gpu_hours"].get<double>() +
            c["down_gpu_hours"].get<double>() ==
        doctest::Approx(2304));
  CHECK(c["idle_cost_usd"].get<double>() == doctest::Approx(2 * c["idle_gpu_hours"].get<double>()));
  REQUIRE(r["notes"].size() == 2);
  CHECK(r["notes"][0].get<std::string>().find("contention-free") != std::string::npos);
  CHECK(r["notes"][1].get<std::string>().find("simulated once") != std::string::npos);
  const std::size_t jobs = r["jobs"].size();
  CHECK(jobs >= 3);
  CHECK(r["jobs"][0]["job"] == "wide");
  CHECK(r["teams"].size() == 2);

  const std::string jobs_csv = read_file(dir.file("out/jobs.csv"));
  CHECK(jobs_csv.rfind("job,scenario,team,nodes,", 0) == 0);
  CHECK(lines(jobs_csv) == jobs + 1);
  // The JSON's jobs and jobs.csv name their fields alike, in the same order, the unit in the name.
  std::string keys;
  const auto in_order = nlohmann::ordered_json::parse(o.out);  // json sorts its keys
  for (const auto& [key, value] : in_order["jobs"][0].items()) keys += (keys.empty() ? "" : ",") + key;
  CHECK(jobs_csv.rfind(keys + "\n", 0) == 0);
  CHECK(keys.find(",cost_usd,") != std::string::npos);
  const std::string cluster_csv = read_file(dir.file("out/cluster.csv"));
  CHECK(cluster_csv.rfind("start_s,busy_nodes,idle_nodes,down_nodes,utilisation,waiting_jobs\n", 0) == 0);
  CHECK(lines(cluster_csv) == 72 + 1);  // a row per hour
  const json trace = json::parse(read_file(dir.file("out/trace.json")));
  std::set<std::string> threads;
  std::size_t slices = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X") ++slices;
  }
  CHECK(threads.count("node 0") == 1);  // the wide job held all 4 nodes: a track each
  CHECK(threads.count("node 3") == 1);
  CHECK(slices >= jobs);
}

TEST_CASE("trainsim cluster is byte-identical from run to run") {
  const TempDir dir;
  write(dir.file("c.yaml"), tiny_cluster());
  const Outcome a = run_trainsim({"cluster", dir.file("c.yaml"), "-o", dir.file("a")}, 60);
  const Outcome b = run_trainsim({"cluster", dir.file("c.yaml"), "-o", dir.file("b")}, 60);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  for (const char* f : {"jobs.csv", "cluster.csv", "trace.json"}) {
    INFO(f);
    CHECK(read_file(dir.file(std::string("a/") + f)) == read_file(dir.file(std::string("b/") + f)));
  }
}

// Contention on a 4:1 fabric of leaves of 4 nodes: two 32-node llm-8b jobs share leaf 8's uplinks under
// first fit (nodes 2-33 and 34-65 after a 2-node job), so links.csv has that row, and reruns are
// byte-identical, links.csv included.
TEST_CASE("trainsim cluster with contention writes links.csv and is byte-identical from run to run") {
  const TempDir dir;
  write(dir.file("c.yaml"),
        "cluster: {node: dgx-h100, nodes: 72, contention: true,\n"
        "          network: {topology: fat-tree, oversubscription: 4, switch_radix: 5}}\n"
        "period: \"2 d\"\n"
        "jobs:\n"
        "  - {scenario: " +
            jobs_dir + "small.yaml, team: a, nodes: 2}\n  - {scenario: " + jobs_dir +
            "llm-8b.yaml, team: a, nodes: 32}\n  - {scenario: " + jobs_dir +
            "llm-8b.yaml, team: b, nodes: 32}\n"
            "pricing: {gpu_hour: \"$2\"}\n");
  const Outcome a = run_trainsim({"cluster", dir.file("c.yaml"), "-o", dir.file("a")}, 60);
  const Outcome b = run_trainsim({"cluster", dir.file("c.yaml"), "-o", dir.file("b")}, 60);
  INFO(describe(a));
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("leaf 8 uplinks") != std::string::npos);
  for (const char* f : {"jobs.csv", "cluster.csv", "trace.json", "links.csv"}) {
    INFO(f);
    CHECK(read_file(dir.file(std::string("a/") + f)) == read_file(dir.file(std::string("b/") + f)));
  }
  const std::string links = read_file(dir.file("a/links.csv"));
  CHECK(links.rfind("link,leaf,shared_hours,most_jobs,contention_gpu_hours\nleaf 8 uplinks,8,", 0) == 0);
  CHECK(lines(links) == 2);
  CHECK(read_file(dir.file("a/jobs.csv")).find(",contention_slowdown,") != std::string::npos);
}

TEST_CASE("a bad cluster file exits 2 naming file:line:col and the key path") {
  const TempDir dir;
  write(dir.file("small.yaml"), read_file(jobs_dir + "small.yaml"));
  write(dir.file("c.yaml"),
        "cluster: {node: dgx-h100, nodes: 4}\n"
        "period: \"3 d\"\n"
        "jobs:\n"
        "  - {scenario: small.yaml, team: a, nodes: lots}\n");
  const Outcome o = run_trainsim({"cluster", dir.file("c.yaml")});
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  // `  - {scenario: small.yaml, team: a, nodes: ` is 43 characters: lots starts at column 44.
  CHECK(o.err.find("c.yaml:4:44: jobs[0].nodes: ") != std::string::npos);
}

TEST_CASE("every shipped cluster example runs") {
  const auto files = example_cluster_files();
  CHECK(!files.empty());
  for (const auto& file : files) {
    INFO(file.string());
    const Outcome o = run_trainsim({"cluster", file.string(), "--format", "json"}, 120);
    INFO(describe(o));
    CHECK(o.exit_code == 0);
    const json r = json::parse(o.out);
    CHECK(r["cluster"]["utilisation"].get<double>() > 0);
  }
}
