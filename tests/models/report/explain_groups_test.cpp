// explain's communicator groups: each axis's group with its span, as the placement gives it (hand-derived
// in tests/models/step/communicators_test.cpp).
#include "models/report/explain_groups.hpp"

#include <doctest/doctest.h>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("explain names each group's size and span: tp 8 × dp 4 × pp 2 on 8 DGX H100") {
  // rank = tp + 8·dp + 32·pp: tp on node 0; the pipeline pair ranks 0 and 32 (nodes 0 and 4); the
  // data-parallel group ranks 0, 8, 16, 24, one on each of nodes 0–3.
  ParallelPlan p;
  p.tp = 8;
  p.dp = 4;
  p.pp = 2;
  const ExplainSection s = explain_groups(p, testing::dgx_h100(8));
  CHECK(s.title.find("tp-cp-ep-dp-pp") != std::string::npos);
  REQUIRE(s.lines.size() == 3);
  CHECK(s.lines[0].label == "tensor parallel (tp)");
  CHECK(s.lines[0].value == 8);
  CHECK(s.lines[0].formula.find("8 per node on 1 node ") != std::string::npos);
  CHECK(s.lines[1].label == "pipeline (pp)");
  CHECK(s.lines[1].formula.find("on 2 nodes") != std::string::npos);
  CHECK(s.lines[2].value == 4);
  CHECK(s.lines[2].formula.find("1 per node on 4 nodes") != std::string::npos);
}
