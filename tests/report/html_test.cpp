#include "report/html.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "models/report/summary.hpp"
#include "sim/error.hpp"

using namespace trainsim;

namespace {

bool has(const std::string& html, const std::string& what) {
  return html.find(what) != std::string::npos;
}

// A run's summary with round numbers to check the headline by hand: 3.6e6 s is 41.7 days; $1.5M; $1e-6
// per token is $1.00 per million; 60 of 80 GiB leaves 20.0 GiB; goodput 97 %.
const char* const kSummary = R"({"scenario": "hand", "fidelity": "event", "feasible": true, "reason": "",
  "gpus": 64, "iteration_time": 8.1, "mfu": 0.45, "model_tflops_per_gpu": 445.0, "bubble_fraction": 0.1,
  "compute": 7.0, "exposed_tp_comm": 0.3, "exposed_dp_comm": 0.0, "exposed_pp_comm": 0.0, "optimizer": 0.0,
  "bubble": 0.8, "memory_per_gpu": 64424509440, "weights": 1e10, "memory_capacity": 85899345920, "fits": true,
  "steps": 1000, "tokens": 1.5e12, "training_time": 3.5e6, "run_time": 3.6e6, "failures_expected": 3.0,
  "lost_work": 7200, "goodput": 0.97, "cost_total": 1.5e6, "cost_compute": 1.2e6, "cost_energy": 3e5,
  "cost_wasted": 1e5, "cost_per_token": 1e-6, "budget_violations": ""})";

}  // namespace

TEST_CASE("a run's page opens with the headline figures in human units") {
  const std::string html = report::run_report_html("dir", kSummary, {}, std::nullopt);
  CHECK(has(html, "<title>Run: hand</title>"));
  CHECK(has(html, R"(<div class="v">41.7 d</div>)"));    // run time 3.6e6 s / 86400
  CHECK(has(html, R"(<div class="v">$1.50M</div>)"));    // the bill
  CHECK(has(html, R"(<div class="v">$1.00</div>)"));     // 1e-6 $/token x 1e6 tokens
  CHECK(has(html, R"(<div class="v">45.0 %</div>)"));    // MFU
  CHECK(has(html, R"(<div class="v">20.0 GiB</div>)"));  // 80 - 60 GiB of headroom
  CHECK(has(html, R"(<div class="v">97.0 %</div>)"));    // goodput
  CHECK(has(html, "80 % compute"));                      // 1.2M of 1.5M
  // 7.0 of 8.1 s of compute is 86 %: compute-bound.
  CHECK(has(html, "<b>Bound by compute:</b> compute 86 % of the step"));
  CHECK(has(html, R"(data-chart="step-time")"));
  CHECK(has(html, R"(data-chart="memory-breakdown")"));
  CHECK(has(html, R"(data-chart="bill")"));
  CHECK_FALSE(has(html, R"(data-chart="pipeline-timeline")"));  // no trace given
  // Every figure, labelled, in human units beside the file's own value.
  CHECK(has(html, R"(<tr><td>iteration time</td><td class="n">8.1 s</td>)"));
  CHECK_FALSE(has(html, "<script"));
}

TEST_CASE("a summary.json with the unit in its names gives the page one without them gave") {
  const auto before = nlohmann::ordered_json::parse(kSummary);
  nlohmann::ordered_json now;
  for (const auto& [key, value] : before.items()) now[model::column_name(key)] = value;
  REQUIRE(now.contains("iteration_time_s"));
  REQUIRE(now.contains("memory_per_gpu_bytes"));
  REQUIRE(now.contains("cost_total_usd"));
  CHECK(report::run_report_html("dir", now.dump(), {}, std::nullopt) ==
        report::run_report_html("dir", kSummary, {}, std::nullopt));
}

TEST_CASE("a run's page draws the pipeline timeline, memory per stage and the cost over the run") {
  const report::Table timeline = report::parse_csv(
      "time_s,step,event,cost_total_usd\n0,0,start,0\n3600,10,checkpoint,100\n5000,14,failure,140\n7200,20,"
      "end,200\n",
      "run.csv");
  report::IterationTrace trace;
  trace.processes = {"stage 0", "stage 1"};
  trace.lanes = {{0, "compute"}, {1, "compute"}};
  trace.slices = {{0, "F mb0", "compute", 0, 1}, {1, "F mb0", "compute", 1, 2}};
  trace.peak_memory = {6e10, 3e10};
  const std::string html = report::run_report_html("dir", kSummary, timeline, trace);
  CHECK(has(html, R"(data-chart="pipeline-timeline")"));
  CHECK(has(html, R"(data-chart="memory-per-stage")"));
  CHECK(has(html, R"(data-chart="cumulative-cost")"));
  CHECK(has(html, "checkpoint (1)"));
  CHECK(has(html, "failure (1)"));
  CHECK(has(html, "failure at 83.3 min: $140.00 spent so far"));  // 5000 s
  // Both slices are on the critical path, back to back: 2 s of compute, no wait.
  CHECK(has(html, "iteration&#39;s length: compute 2 s."));
}

TEST_CASE("a commitment's term is two lines of the bill: what was used, and what stood idle") {
  // $100 committed, $40 of it idle: used $60, idle $40; $50 wasted in all; spot as a whole bill of $90.
  const std::string summary =
      R"({"cost_total": 200, "cost_compute": 100, "cost_fixed": 100, "cost_fixed_idle": 40,
      "committed_idle_gpu_hours": 20, "cost_wasted": 50, "spot_cost_total": 90, "spot_run_time": 7200})";
  const std::string html = report::run_report_html("dir", summary, {}, std::nullopt);
  CHECK(has(html, "committed, used — committed, used: $60.00"));
  CHECK(has(html, "committed, idle — committed, idle: $40.00"));
  CHECK(has(html,
            "$50.00 of it paid for work lost to failures, checkpoint stalls and bubbles, and for the "
            "commitment&#39;s 20 idle GPU-hours ($40.00)."));
  CHECK(has(html, "On spot capacity the whole bill would be $90.00, the run taking 2.0 h."));
  CHECK(has(html, "wasted on failures, stalls and bubbles and an idle commitment"));
}

TEST_CASE("a run that does not fit or misses its budget says so first") {
  std::string summary = kSummary;
  summary.replace(summary.find(R"("fits": true)"), 12, R"("fits": false)");
  summary.replace(summary.find(R"("budget_violations": "")"), 23,
                  R"("budget_violations": "cost $1.5M over $1M")");
  summary.replace(summary.find(R"("reason": "")"), 12, R"("reason": "needs 91 GiB")");
  const std::string html = report::run_report_html("dir", summary, {}, std::nullopt);
  CHECK(has(html, "Does not fit in memory: needs 91 GiB"));
  CHECK(has(html, "Budget missed: cost $1.5M over $1M"));
  CHECK_THROWS_AS(report::run_report_html("dir", "[1]", {}, std::nullopt), InputError);
  // A summary with hardly anything in it still makes a page, with dashes for what it lacks.
  const std::string sparse =
      report::run_report_html("dir", R"({"cost_total": 5, "run_time": "x"})", {}, std::nullopt);
  CHECK(has(sparse, R"(<div class="v">$5.00</div>)"));
  CHECK(has(sparse, R"(<div class="v">—</div>)"));
}

TEST_CASE("a sweep of one key puts it on the x axis, as written, and lists the Pareto front") {
  // A checkpoint-interval sweep: 30 min to 6 h spans 12x, so a log axis with ticks labelled as written.
  const auto t = report::parse_csv(
      "point,scenario,checkpoint.interval,feasible,reason,run_time_s,cost_total_usd,memory_per_gpu_gib,fits\n"
      "0,ck,30 min,true,,3900000,1750000,31.9,true\n"
      "1,ck,3 h,true,,4100000,1820000,31.9,true\n"
      "2,ck,6 h,true,,4300000,1910000,31.9,true\n",
      "ck.csv");
  const std::string html = report::sweep_report_html("ck.csv", t);
  CHECK(has(html, "<title>Sweep: ck</title>"));
  CHECK(has(html, R"(data-chart="pareto")"));
  CHECK(has(html, R"(data-chart="sweep-checkpoint.interval-run_time")"));
  CHECK(has(html, R"(data-chart="sweep-checkpoint.interval-cost_total")"));
  CHECK(has(html, R"(data-chart="sweep-checkpoint.interval-memory_per_gpu")"));
  CHECK(has(html, ">30 min</text>"));
  CHECK(has(html, "checkpoint.interval (log scale)"));
  // 30 min is both fastest and cheapest: the front is that one point.
  CHECK(has(html, R"(<div class="v">1 point</div>)"));
  CHECK(has(html, R"(<div class="v">45.1 d</div>)"));  // 3.9e6 s
  CHECK_FALSE(has(html, "<script"));
}

TEST_CASE("a sweep draws small multiples per key, and keys that move together share one axis") {
  const auto grid = report::parse_csv(
      "point,scenario,cluster.nodes,training.optimizer,feasible,reason,run_time_s,cost_total_usd,fits\n"
      "0,g,8,adamw,true,,100,10,true\n1,g,8,adam8bit,true,,110,11,true\n"
      "2,g,16,adamw,true,,60,12,true\n3,g,16,adam8bit,true,,65,12.5,true\n",
      "g.csv");
  const std::string g = report::sweep_report_html("g.csv", grid);
  CHECK(has(g, "Against cluster.nodes"));
  CHECK(has(g, "Against training.optimizer"));
  CHECK(has(g, "lowest at 16: 60 s"));  // the line through the lowest run time at each node count
  // mode: zip — a GPU type and its node count, two points: one axis naming both.
  const auto zip = report::parse_csv(
      "point,scenario,cluster.node,cluster.nodes,feasible,reason,run_time_s,cost_total_usd,fits\n"
      "0,z,dgx-h100,64,true,,100,10,true\n1,z,dgx-a100-80gb,128,true,,150,9,true\n",
      "z.csv");
  const std::string z = report::sweep_report_html("z.csv", zip);
  CHECK(has(z, "Against cluster.node · cluster.nodes"));
  CHECK(has(z, ">dgx-h100 · 64</text>"));
  CHECK_FALSE(has(z, "Against cluster.nodes<"));
}

TEST_CASE("a sweep's points that do not run are shown apart, grouped by reason") {
  const auto t = report::parse_csv(
      "point,scenario,cluster.nodes,feasible,reason,run_time_s,cost_total_usd,memory_per_gpu_gib,"
      "memory_capacity_gib,fits\n"
      "0,s,8,true,,100,10,40,80,true\n"
      "1,s,16,false,the cluster's 128 GPUs are not divisible by 24,,,,,false\n"
      "2,s,32,false,the cluster's 256 GPUs are not divisible by 24,,,,,false\n"
      "3,s,64,true,stage 0 needs 90 GiB,50,12,90,80,false\n",
      "s.csv");
  const std::string html = report::sweep_report_html("s.csv", t);
  CHECK(has(html, "1 run; 1 do not fit; 2 infeasible"));
  CHECK(has(html, "<h3>Infeasible: 2 points</h3>"));
  // One reason up to its numbers: one row, two points, the first point's words.
  CHECK(has(html, "<td>the cluster&#39;s 128 GPUs are not divisible by 24</td><td class=\"n\">2</td>"));
  CHECK(has(html, "<h3>Do not fit in memory: 1 point</h3>"));
  CHECK(has(html, "90.0 GiB"));
}

TEST_CASE("a search's page lists the top layouts with what bounds each") {
  const auto t = report::parse_csv(
      "rank,on_pareto,fidelity,cluster.nodes,parallelism.tp,budget,feasible,reason,compute_s,bubble_s,"
      "run_time_s,cost_total_usd,fits\n"
      "1,true,event,128,4,ok,true,,3.4,0.1,1700000,1540000,true\n"
      "2,false,event,128,8,missed,true,,2.4,1.0,1800000,1600000,true\n"
      ",true,analytic,64,4,ok,true,,3.4,0.1,3300000,1500000,true\n",
      "q.csv");
  REQUIRE(report::is_search_output(t));
  const std::string html = report::search_report_html("q.csv", t);
  CHECK(has(html, R"(data-chart="pareto")"));
  CHECK(has(html, R"(data-chart="layout-steps")"));
  CHECK(has(html, "#2 (misses the budget)"));
  // 3.4 of 3.5 s is 97 % compute; 1.0 of 3.4 s of bubble is 29 % with compute at 71 %.
  CHECK(has(html, "bound by <b>compute</b>: compute 97 % of the step"));
  CHECK(has(html, "bound by <b>bubble</b>: bubble 29 % of the step"));
  CHECK(has(html, R"(<div class="v">2 layouts</div>)"));  // the front: rank 1 and the 64-node layout
  CHECK_FALSE(report::is_search_output(report::parse_csv("point,feasible\n0,true\n", "s.csv")));
  // Two node counts (128 and 64): the front is a trade, said so; no scenario column: titled by the file.
  CHECK(has(html, "over 2 node counts (128, 64): trading time against money"));
  CHECK_FALSE(has(html, "one node count"));
  CHECK(has(html, "<title>Search: q.csv"));
}

TEST_CASE("a search's page is titled by the scenario its rows name, and one node count says so") {
  const auto t = report::parse_csv(
      "scenario,rank,on_pareto,fidelity,cluster.nodes,parallelism.tp,budget,feasible,reason,compute_s,"
      "run_time_s,cost_total_usd,fits\n"
      "llama-70b,1,true,event,64,4,ok,true,,3.4,1700000,1540000,true\n"
      "llama-70b,2,false,event,64,8,ok,true,,2.4,1800000,1600000,true\n",
      "rows.csv");
  const std::string html = report::search_report_html("rows.csv", t);
  CHECK(has(html, "<title>Search: llama-70b"));
  CHECK(has(html, "layouts from rows.csv"));
  CHECK(has(html, "one node count: cost follows time"));
}

namespace {

// Two llm jobs (100 and 300 GPU-hours, waits of 1 h and 3 h) and one vision job (50 GPU-hours, no wait);
// two hours of 4 nodes, 2 then 4 busy.
const report::Table kClusterJobs = report::parse_csv(
    "job,team,wait_s,gpu_hours,cost_usd\na,llm,3600,100,200\nb,llm,10800,300,600\nc,vision,0,50,100\n",
    "jobs.csv");
const report::Table kClusterHours = report::parse_csv(
    "start_s,busy_nodes,idle_nodes,down_nodes,utilisation,waiting_jobs\n0,2,2,0,0.5,1\n3600,4,0,0,1,0\n",
    "cluster.csv");

}  // namespace

TEST_CASE("a cluster report charts the nodes over the period and totals each team by hand") {
  // Two llm jobs (100 and 300 GPU-hours, waits of 1 h and 3 h) and one vision job (50 GPU-hours, no
  // wait): llm 400 GPU-hours, $800, mean wait 2 h; vision 50, $100, no wait. Two hours of 4 nodes: 2 then 4
  // busy, so 6 of 8 node-hours busy, 75.0 %.
  const report::Table& jobs = kClusterJobs;
  const report::Table& cluster = kClusterHours;
  const std::string html = report::cluster_report_html("cluster", jobs, cluster);
  CHECK(has(html, "3 jobs; mean utilisation 75.0 %"));
  CHECK(has(
      html,
      R"(<td>llm</td><td class="n">2</td><td class="n">400</td><td class="n">$800.00</td><td class="n">2.0 h</td>)"));
  CHECK(has(
      html,
      R"(<td>vision</td><td class="n">1</td><td class="n">50</td><td class="n">$100.00</td><td class="n">0 s</td>)"));
  CHECK(has(html, R"(<div class="v">75.0 %</div>)"));
  CHECK(has(html, R"(<td class="n">3.0 h</td>)"));  // job b's wait in human units
  CHECK(has(html, "<th>wait</th>"));                // and its column without the unit suffix
  CHECK(has(html, R"(data-chart="cluster-nodes")"));
  CHECK(has(html, R"(data-chart="cluster-teams")"));
  CHECK_FALSE(has(html, "<script"));
}

TEST_CASE("with queue.json the cluster page heads with the idle cost, the worst p95 wait, failures, quotas") {
  const report::Table& jobs = kClusterJobs;
  const report::Table& cluster = kClusterHours;
  // 16 idle GPU-hours at $2.00: $32; llm's p95 wait 3 h is the worse one; 2 node failures lost 12 GPU-hours.
  const std::string queue = R"({"cluster": {"idle_gpu_hours": 16, "idle_cost_usd": 32,
    "node_failures": 2, "lost_gpu_hours_failures": 12},
    "teams": [{"team": "llm", "quota": 0.6, "p95_wait_s": 10800},
              {"team": "vision", "quota": 0, "p95_wait_s": 0}]})";
  const std::string html = report::cluster_report_html("cluster", jobs, cluster, {}, queue);
  CHECK(has(
      html,
      R"(<div class="k">Idle cost</div><div class="v">$32.00</div><div class="d">16 idle GPU-hours, paid for</div>)"));
  CHECK(has(
      html,
      R"(<div class="k">p95 wait</div><div class="v">3.0 h</div><div class="d">worst team: llm; mean wait 80.0 min</div>)"));
  CHECK(has(html, R"(<div class="v">2</div><div class="d">node failures; 12 GPU-hours of work lost</div>)"));
  CHECK(has(
      html,
      R"(<td>llm</td><td class="n">2</td><td class="n">400</td><td class="n">$800.00</td><td class="n">2.0 h</td><td class="n">3.0 h</td><td class="n">60.0 %</td>)"));
  CHECK(has(html, R"(<td class="n">0 s</td><td>-</td>)"));  // vision: no wait, no quota
  CHECK_THROWS_AS((void)report::cluster_report_html("cluster", jobs, cluster, {}, "[1]"), InputError);
}

// Under contention: jobs a and b lost $30 and $12 to neighbours ($42 in all); cluster.csv's hourly cost of it
// is charted, and links.csv's row shown in human units.
TEST_CASE("a cluster report under contention totals its cost, charts it over time and lists the links") {
  const report::Table jobs = report::parse_csv(
      "job,team,wait_s,gpu_hours,cost_usd,contention_slowdown,contention_gpu_hours,contention_cost_usd\n"
      "a,llm,0,100,200,1.2,15,30\nb,llm,0,300,600,1.05,6,12\n",
      "jobs.csv");
  const report::Table cluster = report::parse_csv(
      "start_s,busy_nodes,idle_nodes,down_nodes,utilisation,waiting_jobs,contention_gpus,contention_cost_usd_"
      "per_"
      "h\n0,2,2,0,0.5,1,15,30\n3600,4,0,0,1,0,6,12\n",
      "cluster.csv");
  const report::Table links = report::parse_csv(
      "link,leaf,shared_hours,most_jobs,contention_gpu_hours\nleaf 8 uplinks,8,2,2,21\n", "links.csv");
  const std::string html = report::cluster_report_html("cluster", jobs, cluster, links);
  CHECK(has(html, R"(<div class="v">$42.00</div>)"));
  CHECK(has(html, R"(data-chart="cluster-contention")"));
  CHECK(has(html, "Busiest links"));
  CHECK(has(html, "<td>leaf 8 uplinks</td>"));
  // Without the contention columns, none of it.
  const std::string plain = report::cluster_report_html(
      "cluster", report::parse_csv("job,team,wait_s,gpu_hours,cost_usd\na,llm,0,1,2\n", "jobs.csv"), cluster);
  CHECK_FALSE(has(plain, "Busiest links"));
  CHECK_FALSE(has(plain, ">Contention<"));
}

TEST_CASE("a run's page gives the error band of its time and bill, and where it comes from") {
  auto summary = nlohmann::ordered_json::parse(kSummary);
  // A band of 0.9-1.2 x: 3.6e6 s is 41.7 d, so 37.5 d to 50.0 d; $1.5M gives $1.35M to $1.80M.
  summary["run_time_low_s"] = 0.9 * 3.6e6;
  summary["run_time_high_s"] = 1.2 * 3.6e6;
  summary["cost_total_low_usd"] = 0.9 * 1.5e6;
  summary["cost_total_high_usd"] = 1.2 * 1.5e6;
  summary["error_band"] =
      "from 5 validation cases (x / y / dense 3D / 64 GPUs): measured 0.90-1.20 x predicted";
  const std::string html = report::run_report_html("dir", summary.dump(), {}, std::nullopt);
  CHECK(has(html, "likely 37.5 d to 50.0 d"));
  CHECK(has(html, "likely $1.35M to $1.80M"));
  CHECK(has(html, "<b>Error band:</b> from 5 validation cases"));
  // Without one, nothing is said.
  CHECK_FALSE(has(report::run_report_html("dir", kSummary, {}, std::nullopt), "likely"));
}
