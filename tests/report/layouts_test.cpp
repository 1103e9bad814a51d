#include "report/layouts.hpp"

#include <doctest/doctest.h>

using namespace trainsim;

TEST_CASE("the Pareto front keeps the rows nothing beats on both run time and cost, fastest first") {
  // (run time, cost): a (10 s, $100), b (20 s, $50), c (15 s, $120) is beaten by a, d (30 s, $50) by b;
  // e does not fit and f has no run, so neither counts.
  const report::Table t = report::parse_csv(
      "cluster.nodes,feasible,fits,run_time_s,cost_total_usd\n"
      "a,true,true,10,100\nb,true,true,20,50\nc,true,true,15,120\nd,true,true,30,50\ne,true,false,1,1\nf,"
      "true,true,,\n",
      "s.csv");
  const report::Results r(t);
  const auto running = report::running_rows(r);
  CHECK(running == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(report::pareto_rows(r, running) == std::vector<std::size_t>{0, 1});
  const std::string table = report::layouts_table(r, {0}, "rank", {"#1"});
  CHECK(table.find("<td>#1</td>") != std::string::npos);
  CHECK(table.find("10 s") != std::string::npos);
  CHECK(table.find("$100.00") != std::string::npos);
}
