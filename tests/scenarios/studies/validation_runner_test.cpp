// The validation runner's component cases: a MoE dispatch case is predicted by the step's own pricing of
// its expert-parallel all-to-all, on the expert group the case's cluster is; the two-node cases by hand.
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
  // elements · 2 bytes = 469,762,048 bytes of slots, 8 copies a token from 4 of 8 expert groups (the cases'
  // DeepSeek-V3 routing). Measured 5,774 us (all-to-all) and 1,485 us (HybridEP).
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
    model::Framework fw;
    fw.moe_dispatcher = dispatcher;
    const double t = model::expert_all_to_all_estimate(469762048.0, {8, 8, 4}, fw, group, cluster).time_s;
    CHECK(c.predicted == t);
    CHECK(c.error == doctest::Approx(t / measured - 1).epsilon(1e-12));
    CHECK(r.gpu == "h100-sxm");
  }
}

TEST_CASE("the EP16 H100 dispatch cases' predictions by hand: the network sets both") {
  // dgx-h100: 8 NICs of 400 Gb/s (50 GB/s) at 0.95 of line rate, NVLink 450 GB/s at 0.822
  // (topologies/comm_calibration.cpp, h100); a collective's launch 7.6 us, a network step 3.0 us plus one
  // switch of 0.6 us (CommEfficiency's and the network's defaults). Per rank B = 469,762,048 bytes of
  // slots (4096 tokens · 8 copies · 14,336 bytes), 2 nodes of 8 ranks.
  const std::string root = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/moe-dispatch/";
  const double latency_s = 7.6e-6 + 3.0e-6 + 0.6e-6;
  // All-to-all: each node sends 8 ranks · B · 8/16 = 4·B = 1,879,048,192 bytes off the node over its NICs,
  // 8 · 50e9 · 0.95 = 380 GB/s: 4.944863663 ms (NVLink's 7/16 · B at 369.9 GB/s is 0.556 ms).
  const CaseResult plain = run_case(root + "mcore-t7-h100-a2a-dispatch-ep16.yaml");
  REQUIRE(plain.checks.size() == 1);
  CHECK(plain.checks.front().predicted == doctest::Approx(latency_s + 4.944863663e-3).epsilon(1e-9));
  // HybridEP: each node holds 4 of the 8 expert groups, and a token crosses to the other node unless the 4
  // groups it picks are the home node's, 1 − 1/C(8, 4) = 69/70 of the B/8 = 58,720,256 token bytes:
  // 57,881,395.2 bytes a rank, through its own 50 GB/s NIC at 0.95 (every rank of the node sends at once):
  // 1.218555688 ms. The NVLink leg sends each token once to each of its distinct GPUs, 2 in each of the 4
  // groups (2 GPUs a group, 2 copies a group): 15 · (4/8) · (1 − (1 − 8/16)^2) · 16/15 = 6 GPUs, 7/8 of them
  // through the node's NVLink at 369.9 GB/s: 58,720,256 · 6 · 7/8 / 369.9e9 = 0.833 ms, under the network's.
  const CaseResult token = run_case(root + "mcore-t7-h100-hybridep-dispatch-ep16.yaml");
  REQUIRE(token.checks.size() == 1);
  CHECK(token.checks.front().predicted == doctest::Approx(latency_s + 1.218555688e-3).epsilon(1e-9));
}
