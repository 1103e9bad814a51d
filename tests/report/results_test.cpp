#include "report/results.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace trainsim;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A sweep over nodes with the optimizer fixed: a point that runs, one that cannot be built and one that
// does not fit, as sweeps wrote CSV before every output named its units alike: memory in GiB.
const char* const kCsv =
    "point,sweep_fingerprint,scenario,cluster.nodes,training.optimizer,tags.team,feasible,reason,run_time_s,"
    "memory_per_gpu_gib,cost_total_usd,fits\n"
    "0,f,s,8,adamw,llm,true,,86400,2,1000,true\n"
    "1,f,s,16,adamw,llm,false,tp does not divide the heads,,,,false\n"
    "2,f,s,32,adamw,llm,true,stage 0 needs 90 GiB,43200,90,900,false\n";

}  // namespace

TEST_CASE("the key columns are the dotted paths before feasible, tags excepted") {
  const report::Table t = report::parse_csv(kCsv, "s.csv");
  const report::Results r(t);
  REQUIRE(r.keys().size() == 2);
  CHECK(r.key_name(0) == "cluster.nodes");
  CHECK(r.short_key_name(0) == "nodes");
  CHECK(r.short_key_name(1) == "optimizer");
  CHECK(r.varying_keys() == std::vector<std::size_t>{0});
  CHECK(r.shared_keys() == "optimizer adamw");
  CHECK(r.layout(2) == "nodes 32");
}

TEST_CASE("a row runs when it is feasible and fits") {
  const report::Table t = report::parse_csv(kCsv, "s.csv");
  const report::Results r(t);
  CHECK(r.runs(0));
  CHECK_FALSE(r.built(1));
  CHECK_FALSE(r.runs(1));
  CHECK(r.built(2));
  CHECK_FALSE(r.runs(2));
  CHECK(r.reason(1) == "tp does not divide the heads");
}

TEST_CASE("rows written since the verdict leads: fits, then feasible false for a layout that does not fit") {
  // The same three points as sweeps write them now: the labels end at `fits`; the point that does not fit
  // says feasible false beside its memory estimate, the one that cannot be built has no estimate.
  const report::Table t = report::parse_csv(
      "point,sweep_fingerprint,scenario,cluster.nodes,training.optimizer,tags.team,fits,feasible,reason,"
      "run_time_s,memory_per_gpu_bytes,cost_total_usd\n"
      "0,f,s,8,adamw,llm,true,true,,86400,2147483648,1000\n"
      "1,f,s,16,adamw,llm,false,false,tp does not divide the heads,,0,\n"
      "2,f,s,32,adamw,llm,false,false,stage 0 needs 90 GiB,43200,96636764160,900\n",
      "s.csv");
  const report::Results r(t);
  REQUIRE(r.keys().size() == 2);
  CHECK(r.key_name(0) == "cluster.nodes");
  CHECK(r.runs(0));
  CHECK_FALSE(r.built(1));
  CHECK(r.built(2));  // it only does not fit
  CHECK_FALSE(r.runs(2));
  CHECK(r.verdict(2) == model::Verdict::does_not_fit);
}

namespace {

/// A sweep of one point read from CSV and from JSON Lines: 2 GiB of memory, a day, no cost in JSON.
void check_reads_si(const std::string& csv_text, const std::string& jsonl_text) {
  const report::Table csv = report::parse_csv(csv_text, "s.csv");
  const report::Results from_csv(csv);
  CHECK(from_csv.si(0, "memory_per_gpu") == 2 * kGiB);
  CHECK(from_csv.si(0, "run_time") == 86400.0);
  CHECK_FALSE(from_csv.si(0, "mfu"));  // no such column
  const report::Table jsonl = report::parse_json_lines(jsonl_text, "s.jsonl");
  const report::Results from_json(jsonl);
  CHECK(from_json.si(0, "memory_per_gpu") == 2 * kGiB);
  CHECK(from_json.si(0, "run_time") == 86400.0);
  CHECK_FALSE(from_json.si(0, "cost_total"));
}

}  // namespace

TEST_CASE("figures come out in SI units from the column names CSV and JSON Lines share") {
  check_reads_si(
      "point,sweep_fingerprint,scenario,cluster.nodes,feasible,reason,run_time_s,memory_per_gpu_bytes,"
      "cost_total_usd,fits\n0,f,s,8,true,,86400,2147483648,1000,true\n",
      R"({"cluster.nodes": 8, "feasible": true, "run_time_s": 86400, "memory_per_gpu_bytes": 2147483648, "cost_total_usd": null})");
  CHECK(report::human_cell("memory_per_gpu_bytes", "2147483648") == "2.0 GiB");
  CHECK(report::human_column("memory_per_gpu_bytes") == "memory_per_gpu");
}

TEST_CASE("files written before the unit suffixes still read: GiB CSV columns and plain JSON Lines names") {
  check_reads_si(
      kCsv,
      R"({"cluster.nodes": 8, "feasible": true, "run_time": 86400, "memory_per_gpu": 2147483648, "cost_total": null})");
  const report::Table csv = report::parse_csv(kCsv, "s.csv");
  CHECK_FALSE(report::Results(csv).si(1, "run_time"));  // empty cell
}

TEST_CASE("a CSV cell reads in human units by its column's unit suffix") {
  CHECK(report::human_cell("wait_s", "7200") == "2.0 h");
  CHECK(report::human_cell("cost_usd", "1500") == "$1.5k");
  CHECK(report::human_cell("memory_gib", "80") == "80.0 GiB");
  CHECK(report::human_cell("gpu_hours", "2925.57") == "2926");
  CHECK(report::human_cell("nodes", "16") == "16");
  CHECK(report::human_cell("job", "llm-a") == "llm-a");
  CHECK(report::human_column("wait_s") == "wait");
  CHECK(report::human_column("cost_usd") == "cost");
  CHECK(report::human_column("nodes") == "nodes");
}
