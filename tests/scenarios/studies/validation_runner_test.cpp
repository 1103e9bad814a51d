// The validation runner's component cases: a MoE dispatch case is predicted by the step's own pricing of
// its expert-parallel all-to-all, on the expert group the case's cluster is.
#include "scenarios/studies/validation_runner.hpp"

#include <doctest/doctest.h>

#include <string>
#include <tuple>

#include "models/step/unit_pricing.hpp"
#include "scenarios/presets.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

TEST_CASE(
    "a dispatch case is priced by expert_all_to_all_estimate on its whole cluster as one expert group") {
  const std::string root = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/moe-dispatch/";
  // Two DGX H100 nodes, one 16-way expert group of 8 ranks on each; per rank 4096 tokens · 8 copies · 7168
  // elements · 2 bytes = 469,762,048 bytes of slots, 8 copies a token. Measured 5,774 us (all-to-all) and
  // 1,485 us (HybridEP).
  topo::ClusterSpec cluster;
  cluster.node = node_preset("dgx-h100");
  cluster.nodes = 2;
  const topo::CommGroup group{16, 8, 2, 1, 1};
  for (const auto& [file, dispatcher, measured] :
       {std::tuple{"mcore-t7-h100-a2a-dispatch-ep16.yaml", model::MoeDispatcher::all_to_all, 5774e-6},
        std::tuple{"mcore-t7-h100-hybridep-dispatch-ep16.yaml", model::MoeDispatcher::hybridep, 1485e-6}}) {
    CAPTURE(file);
    const CaseResult r = run_case(root + file);
    REQUIRE(r.failure.empty());
    REQUIRE(r.checks.size() == 1);
    const MetricCheck& c = r.checks.front();
    CHECK(c.metric == "time");
    CHECK(c.measured == doctest::Approx(measured).epsilon(1e-12));
    const double t = model::expert_all_to_all_estimate(469762048.0, 8, dispatcher, group, cluster).time_s;
    CHECK(c.predicted == t);
    CHECK(c.error == doctest::Approx(t / measured - 1).epsilon(1e-12));
    CHECK(r.gpu == "h100-sxm");
  }
}
