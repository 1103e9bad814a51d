#include "tools/report_html.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("CSV with quoted commas, doubled quotes and CRLF line ends parses into cells") {
  const auto t = cli::parse_csv("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n1,2\n", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][0] == "x, y");
  CHECK(t.rows[0][1] == "say \"hi\"");
  CHECK(t.column("b") == 1);
}

TEST_CASE("a CSV row with the wrong number of fields is an error naming its line") {
  CHECK_THROWS_WITH_AS(cli::parse_csv("a,b\n1\n", "s.csv"), "s.csv:2: expected 2 CSV fields, found 1",
                       InputError);
}

TEST_CASE("JSON Lines become a table whose columns appear in first-seen order") {
  const auto t =
      cli::parse_json_lines("{\"gpus\": 8, \"x\": \"a\"}\n\n{\"gpus\": 16, \"y\": true}\n", "s.jsonl");
  CHECK(t.columns == std::vector<std::string>{"gpus", "x", "y"});
  CHECK(t.rows[1][0] == "16");
  CHECK(t.rows[1][1].empty());
  CHECK_THROWS_AS(cli::parse_json_lines("[1]\n", "s.jsonl"), InputError);
}

TEST_CASE("a run report is one self-contained page with charts and no scripts") {
  const auto timeline =
      cli::parse_csv("time_s,step,event,cost_total_usd\n0,0,start,0\n86400,10,end,100\n", "run.csv");
  const std::string html = cli::run_report_html(
      "r", R"({"compute": 10, "bubble": 2, "weights": 1e9, "memory_capacity": 8e10, "cost_total": 100})",
      timeline);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("Cumulative cost") != std::string::npos);
}

TEST_CASE("a sweep report lists infeasible points with their reason") {
  const auto t = cli::parse_csv(
      "gpus,feasible,reason,iteration_time_s,run_time_s,cost_total_usd\n8,true,,1.5,100,10\n16,false,does "
      "not fit,0,0,0\n",
      "s.csv");
  const std::string html = cli::sweep_report_html("s", t);
  CHECK(html.find("2 points, 1 feasible") != std::string::npos);
  CHECK(html.find("does not fit") != std::string::npos);
}

TEST_CASE("a cluster report charts the nodes over the period and totals each team by hand") {
  // Two llm jobs (100 and 300 GPU-hours, waits of 1 h and 3 h) and one vision job (50 GPU-hours, no
  // wait): llm 400 GPU-hours, mean wait 2.00 h; vision 50, 0.00 h. Two hours of 4 nodes: 2 then 4 busy,
  // so 6 of 8 node-hours busy, 75.0 %.
  const cli::Table jobs = cli::parse_csv(
      "job,team,wait_s,gpu_hours,cost_usd\na,llm,3600,100,200\nb,llm,10800,300,600\nc,vision,0,50,100\n",
      "jobs.csv");
  const cli::Table cluster = cli::parse_csv(
      "start_s,busy_nodes,idle_nodes,down_nodes,utilisation,waiting_jobs\n0,2,2,0,0.5,1\n3600,4,0,0,1,0\n",
      "cluster.csv");
  const std::string html = cli::cluster_report_html("cluster", jobs, cluster);
  CHECK(html.find("3 jobs; mean utilisation 75.0 %") != std::string::npos);
  CHECK(html.find("<td class=\"l\">llm</td><td>2</td><td>400</td><td>800</td><td>2.00</td>") !=
        std::string::npos);
  CHECK(html.find("<td class=\"l\">vision</td><td>1</td><td>50</td><td>100</td><td>0.00</td>") !=
        std::string::npos);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}
