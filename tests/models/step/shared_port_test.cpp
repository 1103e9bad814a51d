#include "models/step/shared_port.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "models/step/analytic_step.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

namespace trainsim::model {
namespace {

using enum SharedPort::StreamId;

// A stream's last end is `want`: exactly 0 for a stream that never had a transfer, else within rounding
// (scale(0): relative to the value alone).
void check_end(double end, double want) {
  if (want == 0.0) {
    CHECK(end == 0.0);
  } else {
    CHECK(end == doctest::Approx(want).scale(0));
  }
}

// A transfer added to a port (SharedPort::add's arguments).
struct Added {
  SharedPort::StreamId stream;
  double issue, latency_s, bandwidth_s;
};

// Transfers added to a fresh port, and when each stream's last one ends (0: a stream that never had one).
struct PortCase {
  const char* what;
  std::vector<Added> added;
  double gathers_end, reductions_end;
};

TEST_CASE(
    "transfers on one port: shared evenly, queued on their stream, latency off the port, either end "
    "asked first") {
  const std::vector<PortCase> cases = {
      // 0.4 s and 0.3 s of bandwidth issued at once on the two streams: each at half speed until the
      // shorter ends at 2·0.3 = 0.6 s, the longer's last 0.1 s alone: 0.7 s = 0.4 + 0.3.
      {"two at once", {{gathers, 0.0, 0.0, 0.4}, {reductions, 0.0, 0.0, 0.3}}, 0.7, 0.6},
      // A latency keeps its transfer off the port: the reduction runs alone for the gather's 0.1 s of
      // latency (0.1 s of its 0.3 done), then both at half speed until the reduction's last 0.2 s end at
      // 0.1 + 0.4 = 0.5 s; the gather has 0.2 s left and ends at 0.7 s: the port never idles, so the two end
      // at 0.4 + 0.3.
      {"a latency", {{gathers, 0.0, 0.1, 0.4}, {reductions, 0.0, 0.0, 0.3}}, 0.7, 0.5},
      // One stream alone runs its transfers one after another, each from its issue or its predecessor's
      // end: 0.05 + 0.2 = 0.25, then 0.25 + 0.3 = 0.55, then 1.0 + 0.1 = 1.1.
      {"one stream",
       {{gathers, 0.0, 0.05, 0.2}, {gathers, 0.1, 0.0, 0.3}, {gathers, 1.0, 0.0, 0.1}},
       1.1,
       0.0},
      // A transfer issued after the port was last run waits on its stream, then runs alone: the first
      // reduction (0.3 s) shares with the gather's 0.4 s and ends at 0.6; the second, issued at 0.8, runs
      // 0.8–0.9, and the first is not run again.
      {"issued later",
       {{reductions, 0.0, 0.0, 0.3}, {reductions, 0.8, 0.0, 0.1}, {gathers, 0.0, 0.0, 0.4}},
       0.7,
       0.9},
      // A transfer of no latency and no bandwidth ends at its issue and takes nothing from the other
      // stream: the 0.4 s reduction runs alone 0–0.1, shares the port with the empty gather for no time,
      // and ends at 0.4.
      {"an empty transfer", {{reductions, 0.0, 0.0, 0.4}, {gathers, 0.1, 0.0, 0.0}}, 0.1, 0.4},
      {"an empty transfer alone", {{gathers, 0.5, 0.0, 0.0}}, 0.5, 0.0},
      // A gather issued at 0.3 while the stream's first (0.2 s, from 0) still runs beside a 1 s reduction:
      // the first ends at 2·0.2 = 0.4 (0.2 of the reduction done), the second starts then, not at its
      // issue, and ends at 0.4 + 2·0.2 = 0.8 (0.4 of the reduction done); the reduction's last 0.6 s alone
      // end at 1.4 = 0.2 + 0.2 + 1.
      {"queued behind a busy stream",
       {{reductions, 0.0, 0.0, 1.0}, {gathers, 0.0, 0.0, 0.2}, {gathers, 0.3, 0.0, 0.2}},
       0.8,
       1.4},
      // Issued at 0.5 instead, after the first ended at 0.4: the reduction has the port alone 0.4–0.5 (0.3
      // of it done by 0.5), then the two share it: the gather ends at 0.5 + 2·0.2 = 0.9, the reduction's
      // last 0.5 s at 1.4, the port never idle.
      {"issued after a gap",
       {{reductions, 0.0, 0.0, 1.0}, {gathers, 0.0, 0.0, 0.2}, {gathers, 0.5, 0.0, 0.2}},
       0.9,
       1.4},
  };
  for (const PortCase& c : cases) {
    CAPTURE(c.what);
    // Each stream's end is the same whichever is asked for first: the other advances beside it.
    for (const bool gathers_first : {true, false}) {
      CAPTURE(gathers_first);
      SharedPort port;
      for (const Added& a : c.added) port.add(a.stream, a.issue, a.latency_s, a.bandwidth_s);
      const SharedPort::StreamId first = gathers_first ? gathers : reductions;
      const SharedPort::StreamId second = gathers_first ? reductions : gathers;
      const auto end_of = [&](SharedPort::StreamId s) {
        return s == gathers ? c.gathers_end : c.reductions_end;
      };
      check_end(port.finish(first), end_of(first));
      check_end(port.finish(second), end_of(second));
    }
  }
  // Exactly its issue, with no arithmetic on the way.
  SharedPort empty_alone;
  empty_alone.add(gathers, 0.5, 0.0, 0.0);
  CHECK(empty_alone.finish(gathers) == 0.5);
}

TEST_CASE("a port reused after clear(), and transfers issued before the time it was run to") {
  // After clear() the port is back at time 0 with nothing queued: a 0.1 + 0.2 s gather ends at 0.3 (not
  // 0.7 + 0.3, after the cleared transfers), and the reductions' stream has nothing to finish.
  SharedPort reused;
  reused.add(gathers, 0.0, 0.0, 0.4);
  reused.add(reductions, 0.0, 0.0, 0.3);
  CHECK(reused.finish(gathers) == doctest::Approx(0.7).scale(0));
  reused.clear();
  reused.add(gathers, 0.0, 0.1, 0.2);
  CHECK(reused.finish(gathers) == doctest::Approx(0.3).scale(0));
  CHECK(reused.finish(reductions) == 0.0);

  // Issued before the time the port was run to (0.5, the first gather's end), a transfer starts then:
  // alone, the 0.3 s reduction issued at 0.2 ends at 0.8; beside a 0.2 s gather issued at 0.1, both start
  // at 0.5 and share the port: the gather ends at 0.5 + 2·0.2 = 0.9, the reduction's last 0.1 s at 1.0.
  SharedPort past;
  past.add(gathers, 0.0, 0.0, 0.5);
  CHECK(past.finish(gathers) == doctest::Approx(0.5).scale(0));
  past.add(reductions, 0.2, 0.0, 0.3);
  CHECK(past.finish(reductions) == doctest::Approx(0.8).scale(0));
  SharedPort past_both;
  past_both.add(gathers, 0.0, 0.0, 0.5);
  CHECK(past_both.finish(gathers) == doctest::Approx(0.5).scale(0));
  past_both.add(gathers, 0.1, 0.0, 0.2);
  past_both.add(reductions, 0.2, 0.0, 0.3);
  CHECK(past_both.finish(gathers) == doctest::Approx(0.9).scale(0));
  CHECK(past_both.finish(reductions) == doctest::Approx(1.0).scale(0));
}

TEST_CASE("a transfer that is not a time is an internal error, not a port that never finishes") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  SharedPort port;
  CHECK_THROWS_AS(port.add(gathers, nan, 0.0, 0.1), InternalError);
  CHECK_THROWS_AS(port.add(gathers, inf, 0.0, 0.1), InternalError);
  CHECK_THROWS_AS(port.add(gathers, -0.1, 0.0, 0.1), InternalError);
  CHECK_THROWS_AS(port.add(reductions, 0.0, nan, 0.1), InternalError);
  CHECK_THROWS_AS(port.add(reductions, 0.0, 0.0, nan), InternalError);
  CHECK_THROWS_AS(port.add(reductions, 0.0, -0.1, 0.1), InternalError);
  CHECK_THROWS_AS(port.add(reductions, 0.0, 0.0, -0.1), InternalError);
  // Nothing was queued: the port still runs a good transfer, alone.
  port.add(reductions, 0.0, 0.0, 0.1);
  CHECK(port.finish(reductions) == doctest::Approx(0.1).scale(0));
  CHECK(port.finish(gathers) == 0.0);
}

TEST_CASE("a collective's time splits into its latency and bandwidth term, which never exceed it") {
  // 1 s with 0.25 s of latency: 0.25 + 0.75.
  const LatencySplit inside = split_latency(1.0, 0.25);
  CHECK(inside.latency_s == 0.25);
  CHECK(inside.bandwidth_s == 0.75);
  // A latency longer than the whole costs the whole: 1 s with 1.5 s of latency is 1 + 0, not 1.5.
  const LatencySplit longer = split_latency(1.0, 1.5);
  CHECK(longer.latency_s == 1.0);
  CHECK(longer.bandwidth_s == 0.0);
  // Negative parts are 0: a negative latency leaves the whole to bandwidth, a negative time is none.
  const LatencySplit negative_latency = split_latency(1.0, -0.5);
  CHECK(negative_latency.latency_s == 0.0);
  CHECK(negative_latency.bandwidth_s == 1.0);
  const LatencySplit negative_time = split_latency(-1.0, 0.5);
  CHECK(negative_time.latency_s == 0.0);
  CHECK(negative_time.bandwidth_s == 0.0);

  // The closed-form ZeRO-3 pass prices a gather of 0.1 s whose latency is 0.3 s as 0.1 s, as the event
  // lowering does: one unit of no kernels waits its whole gather, 0.1 s, not the latency's 0.3 s.
  StepCosts costs;
  UnitCost unit;
  unit.gather_s = 0.1;
  unit.gather_latency_s = 0.3;
  costs.units.push_back(unit);
  costs.chunk_units.push_back({UnitRun{0, 1, 0}});
  CHECK(gathered_pass(costs, 0, false, true).extra == doctest::Approx(0.1).scale(0));
}

// Two nodes of one GPU each (round-number NICs of 50 GB/s, bandwidth efficiency 1), data-parallel over
// both under ZeRO-3: four generic layers of P parameters, one micro-batch, the kernels and the update made
// negligible (FLOPs and HBM a million times an H100's, no host launch time) so that the step is its
// collectives.
StepInput two_nodes_sharing_one_nic(double params) {
  StepInput in;
  in.cluster = testing::round_number_cluster(2, 1);
  in.cluster.node.gpu = testing::h100_sxm();
  in.cluster.node.gpu.peak.bf16 *= 1e6;
  in.cluster.node.gpu.peak.fp32 *= 1e6;
  in.cluster.node.gpu.hbm_bytes_per_s *= 1e6;
  in.cluster.node.gpu.variability = 0;
  in.model.seq_len = 1;
  for (int l = 0; l < 4; ++l) in.model.generic_layers.push_back(GenericLayer{"block", params, 1.0, 1.0});
  in.model.layers = 4;
  in.plan.dp = 2;
  in.plan.zero = ZeroStage::parameters;
  in.plan.framework.launch_overhead_s = 0;
  in.training.global_batch = 2;
  return in;
}

TEST_CASE("ZeRO-3 on two nodes: a layer's gather and the previous layer's reduce-scatter share the NIC") {
  // Each layer gathers its 2P bytes of bf16 weights and reduce-scatters its 2P bytes of bf16 gradients over
  // the two GPUs, a ring of 2 across the NICs: (2 - 1)/2 · 2P / 50 GB/s = P / 50 GB/s each, G = 80 ms at
  // P = 4e9 (latencies of microseconds aside). Prefetch 1, weights resharded after the forward.
  const double params = 4e9;
  const double g = params / 50e9;
  const StepInput in = two_nodes_sharing_one_nic(params);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  REQUIRE(costs.gathers_weights);
  CHECK(costs.units[0].gather_s == doctest::Approx(g).epsilon(1e-3));
  CHECK(costs.units[0].reduce_s == doctest::Approx(g).epsilon(1e-3));

  // Forward: the four gathers back to back, alone on the NIC: 4G. Backward: the first gather alone (G);
  // from then on each layer's gather runs beside the reduce-scatter of the layer computed just before it,
  // both issued at that layer's (instant) end, at half the NIC each, so both end 2G later: 3 more layers,
  // 6G; the last layer's reduce-scatter then runs alone, G. The step: 4G + 7G + G = 12G = 960 ms. Each
  // collective as if it had the NIC alone (the gathers back to back, the reduce-scatters hidden on their
  // own stream but the last) would give 4G + 4G + G = 9G.
  for (Fidelity f : {Fidelity::analytic, Fidelity::event}) {
    CAPTURE(to_string(f));
    const StepReport r = simulate_step(in, f);
    CHECK(r.iteration_time == doctest::Approx(12 * g).epsilon(1e-3));
  }
}

TEST_CASE("ZeRO-3 on two nodes: a gather's host time runs on its own stream, beside the reduce-scatter") {
  // As above, each gather now issued with H = G/2 of host time first (framework.gather_host_s), off the
  // NIC. Forward: 4(H + G) = 6G. Backward: gather 1 ends at H + G; from then on each layer's reduce-scatter
  // starts at once on its own stream and has the NIC alone during the next gather's H (G/2 of its G done),
  // then the two share it: the reduce-scatter's last G/2 takes G, the gather's last G/2 alone G/2 more, so
  // each further gather ends 2G after the one before: H + G + 3·2G = 7.5G. The last reduce-scatter alone,
  // G. The step: 6G + 7.5G + G = 14.5G. Queued behind the gather's host time on one stream, each
  // reduce-scatter would start only with the gather and the two would end together, 2G + H apart.
  const double params = 4e9;
  const double g = params / 50e9;
  StepInput in = two_nodes_sharing_one_nic(params);
  in.plan.framework.gather_host_s = g / 2;
  for (Fidelity f : {Fidelity::analytic, Fidelity::event}) {
    CAPTURE(to_string(f));
    const StepReport r = simulate_step(in, f);
    CHECK(r.iteration_time == doctest::Approx(14.5 * g).epsilon(1e-3));
  }
}

}  // namespace
}  // namespace trainsim::model
