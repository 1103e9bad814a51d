#include "models/step/shared_port.hpp"

#include <doctest/doctest.h>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"

namespace trainsim::model {
namespace {

TEST_CASE("two transfers on one port split it evenly and end together as late as their sum") {
  // 0.4 s and 0.3 s of bandwidth issued at once on the two streams: each at half speed until the shorter
  // ends at 2·0.3 = 0.6 s, the longer's last 0.1 s alone: 0.7 s = 0.4 + 0.3.
  SharedPort both;
  both.add(0, 0.0, 0.0, 0.4);
  both.add(1, 0.0, 0.0, 0.3);
  CHECK(both.finish(1) == doctest::Approx(0.6).scale(0));
  CHECK(both.finish(0) == doctest::Approx(0.7).scale(0));

  // A latency keeps its transfer off the port: stream 1 runs alone for stream 0's 0.1 s of latency (0.1 s
  // of its 0.3 done), then both at half speed until stream 1's last 0.2 s end at 0.1 + 0.4 = 0.5 s;
  // stream 0 has 0.2 s left and ends at 0.7 s: the port never idles, so the two end at 0.4 + 0.3.
  SharedPort latency;
  latency.add(0, 0.0, 0.1, 0.4);
  latency.add(1, 0.0, 0.0, 0.3);
  CHECK(latency.finish(0) == doctest::Approx(0.7).scale(0));
  CHECK(latency.finish(1) == doctest::Approx(0.5).scale(0));

  // One stream alone runs its transfers one after another, each from its issue or its predecessor's end.
  SharedPort alone;
  alone.add(0, 0.0, 0.05, 0.2);
  alone.add(0, 0.1, 0.0, 0.3);
  alone.add(0, 1.0, 0.0, 0.1);
  CHECK(alone.finish(0) == doctest::Approx(1.1).scale(0));
  CHECK(alone.finish(1) == 0.0);  // a stream that never had a transfer

  // A transfer issued after the port was last run waits on its stream, then runs alone: stream 1's first
  // (0.3 s) shares with stream 0's 0.4 s and ends at 0.6; its second, issued at 0.8, runs 0.8–0.9, and the
  // first is not run again.
  SharedPort later;
  later.add(1, 0.0, 0.0, 0.3);
  later.add(1, 0.8, 0.0, 0.1);
  later.add(0, 0.0, 0.0, 0.4);
  CHECK(later.finish(0) == doctest::Approx(0.7).scale(0));
  CHECK(later.finish(1) == doctest::Approx(0.9).scale(0));
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
