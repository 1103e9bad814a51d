#include "models/step/step_costs.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/step/analytic_step.hpp"
#include "models/step/memory.hpp"
#include "models/step/step_lowering.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/unit_pricing.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/rank_tensors.hpp"
#include "models/workload/shard.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/collective_cost.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

/// Approx relative to the value: doctest's default scale of 1 adds an absolute slack of about 1e-5, which
/// would let any two times of microseconds compare equal.
doctest::Approx seconds(double value) {
  return doctest::Approx(value).scale(0);
}

// A GPT of 8 layers of hidden 4096 (201M parameters a layer) on round-number nodes of H100s: ZeRO-3
// without model parallelism over `nodes` nodes.
StepInput zero3_gpt(std::int64_t nodes) {
  StepInput in;
  in.model = testing::gpt(8, 4096, 32, 2048);
  in.cluster = testing::round_number_cluster(nodes);
  in.cluster.node.gpu = testing::h100_sxm();
  in.plan.dp = nodes * 8;
  in.plan.zero = ZeroStage::parameters;
  in.training.global_batch = nodes * 8;
  return in;
}

// Four units of F = 0.25 s and B = 0.5 s, each gathering its weights in 0.4 s and reducing its gradients
// in 0.3 s, `prefetch` units ahead.
StepCosts four_gathered_units(int prefetch) {
  StepCosts c;
  UnitCost u;
  u.total.forward_compute = 0.25;
  u.total.backward_compute = 0.5;
  u.gather_s = 0.4;
  u.reduce_s = 0.3;
  c.units = {u};
  c.chunk_units = {{UnitRun{0, 4, 0}}};
  c.gathers_weights = true;
  c.zero3_prefetch = prefetch;
  return c;
}

// The step's plan and costs, the plan required feasible.
struct PricedStep {
  StepPlan plan;
  StepCosts costs;
};
PricedStep priced_step(const StepInput& in) {
  StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  StepCosts costs = step_costs(in, plan);
  return {std::move(plan), std::move(costs)};
}

StepCosts costs_of(const StepInput& in) {
  return priced_step(in).costs;
}

}  // namespace

TEST_CASE("ZeRO-3 gathers each layer on its own: units x (alpha·steps + base + bytes/beta)") {
  // One node of 8: a ring all-gather of S bytes costs 7·(α + S/8/B) + the launch (7.6 us), with α = 2 us
  // and B = 100 GB/s on the round-number NVSwitch.
  const StepInput in = zero3_gpt(1);
  const StepCosts c = costs_of(in);
  REQUIRE(c.gathers_weights);
  const double layer_params = unit_parameters(in.model, in.plan).layer;
  const double bytes = 2.0 * layer_params;  // bf16 weights
  const double want_latency = 7 * 2e-6 + 7.6e-6;
  const double want = want_latency + 7.0 / 8.0 * bytes / 100e9;
  const UnitCost& layer = c.units[0];
  CHECK(layer.gather_latency_s == seconds(want_latency));
  CHECK(layer.gather_s == seconds(want));
  // The stage's sum: 8 layers each paying their own latency, plus the embedding and the head.
  const double ends = c.units[1].gather_s + c.units[2].gather_s;
  CHECK(c.stages[0].zero3_gather_s == seconds(8 * want + ends));

  // DeepSpeed's fetch per linear module: four collectives a layer, the same bytes, four launches.
  StepInput ds = in;
  ds.plan.framework.gathers_per_layer = 4;
  const StepCosts per_module = costs_of(ds);
  const UnitCost& quarter = per_module.units[0];
  CHECK(quarter.gather_latency_s == seconds(4 * want_latency));
  CHECK(quarter.gather_s - quarter.gather_latency_s == seconds(layer.gather_s - layer.gather_latency_s));
}

TEST_CASE("a prefetch window cannot hide a gather that outlasts the compute of the unit before it") {
  // Four units of F = 0.25 s and B = 0.5 s; each gathers in 0.4 s and reduces in 0.3 s; prefetch 1.
  // Forward: gathers back to back (0.4 > 0.25): unit k starts at 0.4·(k+1), the pass ends at
  // 4·0.4 + 0.25 = 1.85 s, 0.85 s over its kernels.
  // Backward: the gathers and the reductions share the port, half speed each while both run
  // (shared_port.hpp). Gathers 1 and 2 run alone (0–0.4, 0.4–0.8); unit 1 computes 0.4–0.9. At 0.9
  // unit 1's reduction and gather 3 meet: the reduction ends at 0.9 + 2·0.3 = 1.5 with gather 3 at 0.3 of
  // 0.4; unit 2's reduction (queued at 1.4) takes the other half from 1.5, so gather 3 ends at 1.7. Unit 3
  // computes 1.7–2.2; gather 4 (issued at 1.7) shares with reduction 2's last 0.2 s until 2.1, runs alone
  // to 2.2 (0.3 of 0.4 done), then beside unit 3's reduction: ends at 2.4. Unit 4 computes 2.4–2.9, 0.9 s
  // over the 2 s of kernels; reduction 3 ends at 2.6, reduction 4 runs 2.9–3.2: 0.3 s after the last unit.
  StepCosts c = four_gathered_units(1);
  const GatheredPass f = gathered_pass(c, 0, false, true);
  const GatheredPass b = gathered_pass(c, 0, true, true);
  CHECK(f.extra == doctest::Approx(0.85).scale(0));
  CHECK(f.reduce_tail == 0.0);
  CHECK(b.extra == doctest::Approx(0.9).scale(0));
  CHECK(b.reduce_tail == doctest::Approx(0.3).scale(0));
  // Gathered on demand (prefetch 0) nothing overlaps: every gather adds its 0.4 s.
  c.zero3_prefetch = 0;
  CHECK(gathered_pass(c, 0, false, true).extra == doctest::Approx(4 * 0.4).scale(0));
  // Kept from the forward (reshard_after_forward false): the backward gathers nothing.
  c.zero3_prefetch = 1;
  CHECK(gathered_pass(c, 0, true, false).extra == 0.0);

  // The whole step, one rank, two micro-batches: 2·(1.85 + 2.9) + the last reductions' 0.3 s + norm and
  // update 0.25 s; 2·(0.85 + 0.9) + 0.3 of it exposed data-parallel traffic.
  StepInput in;
  in.plan.zero = ZeroStage::parameters;
  in.plan.dp = 4;
  StepPlan plan;
  plan.micro_batches = 2;
  plan.chunk_layers = {4};
  plan.stage_layers = {4};
  c.passes = {PassCost{.forward_compute = 1.0, .backward_compute = 2.0}};
  c.stages = {StageCost{.buckets = 0, .optimizer_s = 0.2, .grad_norm_s = 0.05}};
  const StepTiming t = analytic_step(in, plan, c);
  CHECK(t.iteration_time == doctest::Approx(2 * (1.85 + 2.9) + 0.3 + 0.25).scale(0));
  CHECK(t.time.exposed_dp_comm == doctest::Approx(2 * (0.85 + 0.9) + 0.3).scale(0));
  CHECK(t.time.total() == doctest::Approx(t.iteration_time).scale(0));
}

TEST_CASE(
    "gathered tensor by tensor, each collective pays its own alpha-beta time and the host's issue time") {
  // A layer of the GPT is 12 tensors (qkv, out-proj, fc1, fc2 and their biases; two LayerNorms of two
  // vectors). DeepSpeed v0.3 gathers each on its own over the node's 8 ranks: the sum of 12 all-gathers of
  // 2·E bytes (bf16), each with 350 us of host time and 3 us per rank; its reduce-scatters the same sizes
  // with the 8 ranks' 3 us each.
  StepInput in = zero3_gpt(1);
  in.plan.framework = framework_preset(FrameworkPreset::deepspeed_2021);
  const StepCosts c = costs_of(in);
  const UnitParameters up = unit_parameters(in.model, in.plan);
  const double h = 4096;
  const std::vector<double> tensors = {3 * h * h, 3 * h, h * h, h, 4 * h * h, 4 * h,
                                       4 * h * h, h,     h,     h, h,         h};
  double total = 0;
  for (double e : tensors) total += e;
  REQUIRE(up.layer == total);  // the twelve tensors are the whole layer
  const topo::CommGroup node{.size = 8, .ranks_per_node = 8, .nodes = 1};
  const double gather_host = 350e-6 + 8 * 3e-6;
  const double reduce_host = 8 * 3e-6;
  double want_gather = 0, want_reduce = 0;
  for (double e : tensors) {
    want_gather +=
        topo::collective_time(topo::CollectiveOp::all_gather, 2 * e, node, in.cluster) + gather_host;
    want_reduce +=
        topo::collective_time(topo::CollectiveOp::reduce_scatter, 2 * e, node, in.cluster) + reduce_host;
  }
  CHECK(c.units[0].gather_s == seconds(want_gather));
  CHECK(c.units[0].reduce_s == seconds(want_reduce));
  // A fused-layer gather (one collective of the whole layer) pays one latency and no host time.
  StepInput fused = zero3_gpt(1);
  const double one = topo::collective_time(topo::CollectiveOp::all_gather, 2 * total, node, in.cluster);
  CHECK(costs_of(fused).units[0].gather_s == seconds(one));
  // Synchronous: the host waits for the device before each gather, so none is issued ahead.
  CHECK(c.zero3_prefetch == 0);
  CHECK(c.synchronous_zero3);
}

TEST_CASE("synchronous collectives: each unit's backward waits for the previous unit's reduction") {
  // Four units of B = 0.5 s, each gathering in 0.4 s and reducing in 0.3 s. Asynchronous on demand: each
  // gather but the first is issued as the unit before it ends, beside that unit's reduction, and the two
  // share the port (shared_port.hpp): the gather ends 0.4 + 0.3 s later; so the gathers add 0.4 + 3·0.7 s
  // and the last reduction runs alone after the last unit (0.3 s tail). Synchronous: every unit is
  // gather + backward + reduction in a row, 4·(0.4 + 0.5 + 0.3) = 4.8 s, 2.8 s over the kernels, no tail.
  StepCosts c = four_gathered_units(0);
  const GatheredPass async = gathered_pass(c, 0, true, true);
  CHECK(async.extra == seconds(0.4 + 3 * (0.4 + 0.3)));
  CHECK(async.reduce_tail == seconds(0.3));
  c.synchronous_zero3 = true;
  const GatheredPass sync = gathered_pass(c, 0, true, true);
  CHECK(sync.extra == seconds(4 * (0.4 + 0.5 + 0.3) - 4 * 0.5));
  CHECK(sync.reduce_tail == 0.0);
}

TEST_CASE(
    "ZeRO-3 units compute slower beside their neighbours' collectives: 1 + s·min(1, beside / kernels)") {
  // One node of the 8-layer GPT, micro-batches of 8 sequences so that a layer's forward outlasts its
  // gather, the layer's kernels K_f, K_b priced with no slow-down; with s = 0.2 the
  // forward runs beside one gather G (the unit ahead's, prefetched) and the backward beside the gather again
  // (resharded) and one reduction R (the unit behind's): K_f·(1 + s·min(1, G/K_f)),
  // K_b·(1 + s·min(1, (G + R)/K_b)).
  StepInput in = zero3_gpt(1);
  in.plan.micro_batch = 8;
  in.training.global_batch = 64;
  in.plan.framework.launch_overhead_s = 0;
  in.cluster.node.gpu.efficiency.overlap_compute_slowdown = 0;
  const UnitCost plain = costs_of(in).units[0];
  in.cluster.node.gpu.efficiency.overlap_compute_slowdown = 0.2;
  const UnitCost slowed = costs_of(in).units[0];
  const double kf = plain.total.forward_compute, kb = plain.total.backward_compute;
  const double g = plain.gather_s, r = plain.reduce_s;
  REQUIRE(g > 0);
  REQUIRE(g < kf);  // partly beside: the share matters
  CHECK(slowed.gather_s == seconds(g));
  CHECK(slowed.total.forward_compute == seconds(kf * (1 + 0.2 * g / kf)));
  CHECK(slowed.total.backward_compute == seconds(kb * (1 + 0.2 * std::min(1.0, (g + r) / kb))));

  // Kept to the backward (reshard_after_forward false): the backward is beside the reduction only.
  in.plan.framework.reshard_after_forward = false;
  CHECK(costs_of(in).units[0].total.backward_compute == seconds(kb * (1 + 0.2 * std::min(1.0, r / kb))));
  // Gathered on demand (prefetch 0): no gather runs beside the forward.
  in.plan.framework.reshard_after_forward = true;
  in.plan.framework.prefetch = 0;
  CHECK(costs_of(in).units[0].total.forward_compute == seconds(kf));
}

TEST_CASE("FSDP stages each unit's gradient for its reduce-scatter on the reduce stream: g, r bytes passes") {
  // gradient_staging_bytes: FSDP1 concatenates (2g), casts when r differs (g + r) and pre-divides (2r);
  // FSDP2 copies in once at the reduce width (g + r).
  CHECK(gradient_staging_bytes(GradientStaging::fsdp1, 2, 4) == 4 + 6 + 8);
  CHECK(gradient_staging_bytes(GradientStaging::fsdp1, 2, 2) == 4 + 0 + 4);
  CHECK(gradient_staging_bytes(GradientStaging::fsdp2, 2, 4) == 6);
  CHECK(gradient_staging_bytes(GradientStaging::in_place, 2, 4) == 0);

  // The 8-layer GPT on one node, bf16 gradients reduced in fp32: the layer's reduction grows by one
  // memory-bound pass of P·18 bytes at 0.5 of 3.35 TB/s plus a 4 us kernel overhead; its gather is unchanged.
  StepInput in = zero3_gpt(1);
  in.cluster.node.gpu.efficiency.memory_bandwidth_fraction = 0.5;
  in.cluster.node.gpu.efficiency.kernel_overhead_s = 4e-6;
  in.plan.framework.grad_reduce_dtype = topo::Precision::fp32;
  const UnitCost in_place = costs_of(in).units[0];
  in.plan.framework.gradient_staging = GradientStaging::fsdp1;
  const UnitCost fsdp1 = costs_of(in).units[0];
  const double params = unit_parameters(in.model, in.plan).layer;
  const double staging = params * 18 / (3.35e12 * 0.5) + 4e-6;
  CHECK(fsdp1.reduce_s == seconds(in_place.reduce_s + staging));
  CHECK(fsdp1.reduce_latency_s == seconds(in_place.reduce_latency_s + staging));  // not a flow
  CHECK(fsdp1.gather_s == seconds(in_place.gather_s));
}

TEST_CASE("HSDP gathers within its sharding group and all-reduces the shard across the groups") {
  // 4 nodes of 8, shard_group 8: each node is a sharding group; its 8 ranks gather and reduce-scatter
  // over NVSwitch, and 1/8 of the gradients is all-reduced over the 4 replicas, one rank per node.
  StepInput in = zero3_gpt(4);
  in.plan.shard_group = 8;
  const StepCosts c = costs_of(in);
  const double layer_params = unit_parameters(in.model, in.plan).layer;
  const topo::CommGroup node{8, 8, 1, 1, 1};
  const topo::CommGroup replicas{4, 1, 4, 1, 8};
  const auto gather =
      topo::estimate_collective(topo::CollectiveOp::all_gather, 2.0 * layer_params, node, in.cluster);
  const auto scatter =
      topo::estimate_collective(topo::CollectiveOp::reduce_scatter, 2.0 * layer_params, node, in.cluster);
  const auto across =
      topo::estimate_collective(topo::CollectiveOp::all_reduce, 2.0 * layer_params / 8, replicas, in.cluster);
  CHECK(c.units[0].gather_s == seconds(gather.time_s));
  CHECK(c.units[0].reduce_s == seconds(scatter.time_s + across.time_s));
  // Without shard_group the 32 ranks shard together and every gather crosses nodes: slower.
  StepInput flat = zero3_gpt(4);
  CHECK(costs_of(flat).units[0].gather_s > c.units[0].gather_s);
  // Memory shards over the group: weights ÷ 8, not ÷ 32.
  const MemoryEstimate hsdp = estimate_memory(in.model, in.plan, in.training, in.cluster.node.gpu);
  const MemoryEstimate full = estimate_memory(flat.model, flat.plan, flat.training, flat.cluster.node.gpu);
  CHECK(hsdp.memory.weights == doctest::Approx(4 * full.memory.weights).scale(0));
}

TEST_CASE("TP-communication overlap hides a reduce-scatter under the matmul before it, slowed by its SMs") {
  StepInput in = testing::small_gpt_on_a100(1, 8, 1, 1, 8, 4096, 2048);
  in.plan.framework.tp_comm_overlap = false;
  const StepCosts off = costs_of(in);
  in.plan.framework.tp_comm_overlap = true;
  const StepCosts on = costs_of(in);
  const double slow = 1.0 + in.plan.framework.tp_comm_overlap_slowdown;
  int overlapped = 0;
  for (const CostPiece& p : on.units[0].forward) {
    if (p.kind != CostPiece::Kind::overlapped) continue;
    ++overlapped;
    CHECK((p.comm_name == "tp_reduce_scatter" || p.comm_name == "tp_all_gather"));
  }
  CHECK(overlapped == 4);  // two all-gathers and two reduce-scatters per layer
  // The out_proj matmul the first reduce-scatter runs under: its own time in userbuffers' 4 chunks, slowed.
  double out_proj_off = 0, out_proj_on = 0;
  for (const CostPiece& p : off.units[0].forward) {
    if (p.name.ends_with("out_proj")) out_proj_off = p.compute;
  }
  for (const CostPiece& p : on.units[0].forward) {
    if (p.name == "out_proj") out_proj_on = p.compute;
  }
  REQUIRE(out_proj_on > 0);
  const LayerOps ops = transformer_layer_ops(in.model, shard_of(in.plan, in.training.precision));
  const auto out_proj = std::find_if(ops.forward.begin(), ops.forward.end(),
                                     [](const LayerOp& op) { return op.name == "out_proj"; });
  REQUIRE(out_proj != ops.forward.end());
  CHECK(out_proj_on == doctest::Approx(chunked_matmul_time(out_proj->kernel, kTeUserbufferPipelineSplits,
                                                           in.cluster.node.gpu, in.training.precision) *
                                       slow)
                           .epsilon(1e-12));
  CHECK(out_proj_on < out_proj_off);  // off, it is the tail of a run of kernels
  CHECK(on.units[0].total.forward_comm < off.units[0].total.forward_comm);
  CHECK(on.units[0].total.forward_compute > off.units[0].total.forward_compute);
}

TEST_CASE("TransformerEngine's chunk pipelines expose what their first and last chunks cannot hide") {
  // pipeline, 4 chunks: max(g, c) + min(g, c)/4 in all; beyond max(g, c), g = 4 ms and c = 2 ms give 0.5 ms.
  CHECK(pipeline_chunk_exposure(4e-3, 2e-3, 4) == doctest::Approx(0.5e-3).epsilon(1e-12));
  CHECK(pipeline_chunk_exposure(2e-3, 4e-3, 4) == doctest::Approx(0.5e-3).epsilon(1e-12));
  // ring exchange over 8 ranks, g = 4 ms: max(3.5 ms, c) + 0.5 ms in all. c = 3.8 ms: 4.3 − 4 = 0.3 ms more;
  // c = 3 ms: 4 ms, nothing more; c = 6 ms: 6.5 − 6 = 0.5 ms more (the last GEMM chunk).
  CHECK(ring_exchange_exposure(4e-3, 3.8e-3, 8) == doctest::Approx(0.3e-3).epsilon(1e-12));
  CHECK(ring_exchange_exposure(4e-3, 3e-3, 8) == 0.0);
  CHECK(ring_exchange_exposure(4e-3, 6e-3, 8) == doctest::Approx(0.5e-3).epsilon(1e-12));
}

TEST_CASE("a GEMM under userbuffers' overlap runs as one GEMM per chunk, each filling its own waves") {
  // A made-up GPU of 4 SMs at 1 TFLOP/s each, 128×128 tiles at full efficiency and the smaller candidates at
  // half (so no candidate beats the full tile's waves), a partial wave costing a whole one, no split-K,
  // 1 µs a launch. A 1,024×128×1,024 GEMM is 8 tiles: 2 waves of W = 2·128·128·1,024 / 1e12 = 33.554432 µs,
  // + 1 µs = 68.108864 µs. In 4 chunks of 256 rows, each 2 tiles is half a wave that costs a whole one:
  // 4 × (W + 1 µs) = 138.217728 µs.
  topo::GpuSpec gpu;
  gpu.peak.bf16 = 4e12;
  gpu.hbm_bytes_per_s = 1e15;
  gpu.sm_count = 4;
  gpu.efficiency.matmul_peak_fraction = 1.0;
  gpu.efficiency.matmul_half_flops = 0;
  gpu.efficiency.memory_bandwidth_fraction = 1.0;
  gpu.efficiency.kernel_overhead_s = 1e-6;
  gpu.efficiency.matmul_tile_m = 128;
  gpu.efficiency.matmul_tile_n = 128;
  gpu.efficiency.matmul_half_tile_efficiency = 0.5;
  gpu.efficiency.matmul_quarter_tile_efficiency = 0.5;
  gpu.efficiency.matmul_wave_quantisation = 1.0;
  gpu.efficiency.matmul_split_k_min = 0;
  gpu.efficiency.matmul_tile_k_overhead = 0;
  KernelCost gemm{OpKind::matmul, 2.0 * 1024 * 128 * 1024, 1e6, 0, 0};
  gemm.m = 1024;
  gemm.n = 128;
  gemm.k = 1024;
  const double w = 2.0 * 128 * 128 * 1024 / 1e12;
  CHECK(chunked_matmul_time(gemm, 1, gpu, Precision::bf16) == doctest::Approx(2 * w + 1e-6).epsilon(1e-12));
  CHECK(chunked_matmul_time(gemm, 4, gpu, Precision::bf16) == doctest::Approx(4 * (w + 1e-6)).epsilon(1e-12));
  // Timed by FLOPs alone (no SM count), whose size term was fitted to whole GEMMs in whole steps: as whole,
  // (2.147483648e8 FLOPs) / 4e12 + 1 µs = 54.687 µs.
  gpu.sm_count = 0;
  CHECK(chunked_matmul_time(gemm, 4, gpu, Precision::bf16) ==
        doctest::Approx(2.0 * 1024 * 128 * 1024 / 4e12 + 1e-6).epsilon(1e-12));
}

TEST_CASE("TP-communication overlap leaves the chunks TransformerEngine's pipelines cannot hide exposed") {
  // TransformerEngine's userbuffers (initialize_ub's defaults): a forward reduce-scatter runs beside the
  // GEMM producing it in 4 chunks ("pipeline"): the last chunk's reduce-scatter, min(g, c)/4, is exposed. An
  // all-gather runs beside the GEMM consuming it in one chunk per rank ("ring_exchange", 8 here): what
  // exceeds max(g, c) is c - 7g/8, between 0 and g/8. A backward reduce-scatter runs whole beside the
  // weight-gradient GEMM ("bulk"): nothing more.
  StepInput in = testing::small_gpt_on_a100(1, 8, 1, 1, 8, 4096, 2048);
  in.plan.framework.tp_comm_overlap = true;
  const StepCosts c = costs_of(in);
  const auto check_pass = [](const std::vector<CostPiece>& pieces, bool forward) {
    int reduce_scatters = 0, gathers = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const CostPiece& p = pieces[i];
      if (p.kind != CostPiece::Kind::overlapped || p.group != CommGroup::tp) continue;
      const CostPiece* next = i + 1 < pieces.size() ? &pieces[i + 1] : nullptr;
      const bool chunk_follows = next != nullptr && next->name == p.comm_name + ".last_chunk";
      if (p.comm_name == "tp_reduce_scatter") {
        ++reduce_scatters;
        if (!forward) {
          CHECK_FALSE(chunk_follows);
          continue;
        }
        REQUIRE(chunk_follows);
        CHECK(next->kind == CostPiece::Kind::collective);
        CHECK(next->comm == doctest::Approx(std::min(p.compute, p.comm) / 4).epsilon(1e-12));
      } else if (p.comm_name == "tp_all_gather") {
        ++gathers;
        const double exposed = std::clamp(p.comm - 7.0 * p.compute / 8.0, 0.0, p.compute / 8.0);
        CHECK(chunk_follows == (exposed > 0));
        if (chunk_follows) CHECK(next->comm == doctest::Approx(exposed).epsilon(1e-12));
      }
    }
    CHECK(reduce_scatters == 2);
    CHECK(gathers == 2);
  };
  check_pass(c.units[0].forward, true);
  check_pass(c.units[0].backward, false);
  // The forward's exposed tensor-parallel time is at least the two reduce-scatters' last chunks.
  double chunks = 0;
  for (const CostPiece& p : c.units[0].forward) {
    if (p.name == "tp_reduce_scatter.last_chunk") chunks += p.comm;
  }
  CHECK(chunks > 0);
  CHECK(c.units[0].total.forward_comm >= chunks);
}

TEST_CASE("in eager mode a pass takes at least its ops x the launch overhead; CUDA graphs lift the floor") {
  // One node, ZeRO-3 off: a layer's forward of the 8-layer GPT. With a launch overhead far above any
  // kernel (1 ms per op), the host sets the pass: its ops (kernels and collectives of the list) x 1 ms,
  // the GPU waiting for the difference in one more piece.
  StepInput in = zero3_gpt(1);
  in.plan.zero = ZeroStage::none;
  const Shard shard = shard_of(in.plan, in.training.precision);
  const LayerOps ops = transformer_layer_ops(in.model, shard);
  in.plan.framework.launch_overhead_s = 1e-3;
  const UnitCost host_bound = costs_of(in).units[0];
  CHECK(host_bound.total.forward() == seconds(static_cast<double>(ops.forward.size()) * 1e-3));
  CHECK(host_bound.total.backward() == seconds(static_cast<double>(ops.backward.size()) * 1e-3));
  CHECK(host_bound.forward.back().name == "host_launches");

  // The same layer under CUDA graphs, and with no launch overhead: the GPU's own time, equal in both.
  in.plan.framework.cuda_graphs = true;
  const UnitCost graphs = costs_of(in).units[0];
  in.plan.framework.cuda_graphs = false;
  in.plan.framework.launch_overhead_s = 0;
  const UnitCost free_launches = costs_of(in).units[0];
  CHECK(graphs.total.forward() == seconds(free_launches.total.forward()));
  CHECK(graphs.total.forward() < host_bound.total.forward());
  CHECK(graphs.forward.back().name != "host_launches");

  // A floor below the GPU's time changes nothing: 1 ns per op.
  in.plan.framework.launch_overhead_s = 1e-9;
  CHECK(costs_of(in).units[0].total.forward() == seconds(free_launches.total.forward()));
}

namespace {

// A pass's seconds on the compute stream: its kernels and what its collectives add.
double total(const std::vector<CostPiece>& pieces) {
  double t = 0;
  for (const CostPiece& x : pieces) t += x.compute + x.exposed_comm();
  return t;
}

CostPiece kernels_piece(double seconds) {
  CostPiece x;
  x.compute = seconds;
  return x;
}

// `seconds` of kernels, `weight` of them the weight gradient's.
CostPiece wgrad_piece(double seconds, double weight) {
  CostPiece x = kernels_piece(seconds);
  x.weight = weight;
  return x;
}

// One MoE layer's passes, paired at s = 0.1 by pair_expert_all_to_alls: the forward's attention to the
// dispatch 3 s, `dispatch`, its experts 2 s, a 2 s combine, unpermute and residual 0.5 s; the backward's
// residual and unpermute 0.5 s, `combine_bwd`, `experts`, `dispatch_bwd`, `attention`.
struct PairedLayer {
  std::vector<CostPiece> forward, backward;
};
PairedLayer paired_layer(double dispatch, double combine_bwd, double dispatch_bwd, CostPiece experts,
                         CostPiece attention, bool delay_wgrad) {
  PairedLayer l{{kernels_piece(3), kernels_piece(2), kernels_piece(0.5)},
                {kernels_piece(0.5), std::move(experts), std::move(attention)}};
  pair_expert_all_to_alls(l.forward, {{1, dispatch, "ep_dispatch"}, {2, 2.0, "ep_combine"}}, l.backward,
                          {{1, combine_bwd, "ep_combine.bwd"}, {2, dispatch_bwd, "ep_dispatch.bwd"}}, 0.1,
                          delay_wgrad);
  return l;
}

// A MoE GPT (4 layers of width 1024, 16 experts of width 512, top 2) on 2 DGX A100 nodes at ep `ep` and
// pp `pp`, dp 1, 32 sequences a step, the GPU's overlap slow-down 0.2.
StepInput moe_gpt_on_two_a100(int ep, int pp) {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16);
  in.model.experts = 16;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 512;
  in.cluster = testing::dgx_a100(2);
  in.cluster.node.gpu.efficiency.overlap_compute_slowdown = 0.2;
  in.plan.ep = ep;
  in.plan.pp = pp;
  in.plan.dp = 1;
  in.training.global_batch = 32;
  return in;
}

// A pass's segments' kernel seconds and its own expert all-to-alls, from its pieces without the overlap. A
// recomputed all-to-all (recompute.ep_dispatch) is not the pass's own: it blocks inside its segment.
struct AllToAllCut {
  std::vector<double> segments{0.0};
  std::vector<double> weights{0.0};  // each segment's weight-gradient seconds
  std::vector<double> all_to_alls;
};

AllToAllCut cut_at_all_to_alls(const std::vector<CostPiece>& pieces) {
  AllToAllCut c;
  for (const CostPiece& x : pieces) {
    if (x.group == CommGroup::ep && x.kind == CostPiece::Kind::collective && !is_recomputed(x.name)) {
      c.all_to_alls.push_back(x.comm);
      c.segments.push_back(0.0);
      c.weights.push_back(0.0);
    } else {
      c.segments.back() += x.compute + x.exposed_comm();
      c.weights.back() += x.weight;
    }
  }
  return c;
}

// One MoE layer's forward and backward merged (pair_expert_all_to_alls): per pair of an all-to-all A and
// the other pass's segment K beside it, max(A, K·(1 + s·min(1, A/K))), plus the two segments beside nothing.
// With `delay_wgrad` the experts' backward weight gradient leaves the pair of the forward's dispatch for
// that of the backward's dispatch, beside the forward's experts, and the attention's leaves the pair of the
// forward's combine for that of the (next layer's) combine backward, beside the forward's attention; each
// but for what fills the forward all-to-all's excess over its segment's data gradient.
double merged_layer_seconds(const AllToAllCut& f, const AllToAllCut& b, double slowdown,
                            bool delay_wgrad = false) {
  const auto pair = [&](double a, double k) {
    return std::max(a, k * (1 + slowdown * std::min(1.0, a / k)));
  };
  // A weight gradient is issued right after its data gradient, with no wait, so it first fills what the
  // forward's all-to-all beside it outlasts the data gradient by; only the rest moves.
  const auto moved = [&](std::size_t k) {
    const double data = b.segments[k] - b.weights[k];
    return delay_wgrad ? b.weights[k] - std::min(b.weights[k], std::max(0.0, f.all_to_alls[k - 1] - data))
                       : 0.0;
  };
  const double experts = moved(1);
  const double attention = moved(2);
  return pair(b.all_to_alls[0], f.segments[0] + attention) + pair(f.all_to_alls[0], b.segments[1] - experts) +
         pair(b.all_to_alls[1], f.segments[1] + experts) + pair(f.all_to_alls[1], b.segments[2] - attention) +
         f.segments[2] + b.segments[0];
}

// One MoE layer of moe_gpt_on_two_a100 (s = 0.2) priced with framework.ep_comm_overlap (`on`): its
// forward and backward together take the hand sum merged_layer_seconds over the pieces of the same layer
// priced without it (`off`), whose passes each hold two all-to-alls of their own.
void check_merged_layer(const UnitCost& off, const UnitCost& on, double slowdown = 0.2) {
  const AllToAllCut f = cut_at_all_to_alls(off.forward);
  const AllToAllCut b = cut_at_all_to_alls(off.backward);
  REQUIRE(f.all_to_alls.size() == 2);
  REQUIRE(b.all_to_alls.size() == 2);
  CHECK(on.total.forward() + on.total.backward() == seconds(merged_layer_seconds(f, b, slowdown)));
}

}  // namespace

TEST_CASE("expert all-to-alls pair with the other pass's chunks as Megatron-Core's merged layer runs them") {
  // One MoE layer, s = 0.1 the GPU's overlap_compute_slowdown. Forward: attention to the dispatch 3 s,
  // dispatch 2 s, experts 2 s, combine 2 s, unpermute and residual 0.5 s. Backward: residual and unpermute
  // 0.5 s, combine 2 s, experts 4 s, dispatch 2 s, attention 1 s. The pairs
  // (TransformerLayerSchedulePlan.run):
  //   combine.bwd beside the forward's attention: 3 · (1 + 0.1 · 2/3) = 3.2 s, nothing exposed;
  //   dispatch beside the backward's experts: 4 · (1 + 0.1 · 2/4) = 4.2 s, nothing exposed;
  //   dispatch.bwd beside the forward's experts: 2 · 1.1 = 2.2 s, nothing exposed;
  //   combine beside the backward's attention: 1 · 1.1 = 1.1 s, 2 − 1.1 = 0.9 s exposed.
  // Forward 3.2 + 2.2 + 0.5 + 0.9 = 6.8 s, backward 0.5 + 4.2 + 1.1 = 5.8 s: the merged layer's 12.6 s, the
  // sum over the pairs of max(comm, slowed compute) (3.2 + 4.2 + 2.2 + 2) plus the 1 s beside nothing.
  // The pooled rule (each pass's 4 s of all-to-alls under its own 5.5 s of kernels) gave
  // 5.5 · (1 + 0.1 · 4/5.5) = 5.9 s a pass, 11.8 s: it hid the combine under kernels it never runs beside.
  const double s = 0.1;
  std::vector<CostPiece> forward{kernels_piece(3), kernels_piece(2), kernels_piece(0.5)};
  std::vector<CostPiece> backward{kernels_piece(0.5), kernels_piece(4), kernels_piece(1)};
  const std::vector<ExpertAllToAll> forward_a2a{{1, 2.0, "ep_dispatch"}, {2, 2.0, "ep_combine"}};
  const std::vector<ExpertAllToAll> backward_a2a{{1, 2.0, "ep_combine.bwd"}, {2, 2.0, "ep_dispatch.bwd"}};
  std::optional<std::size_t> sync = 1;  // the host waits before the dispatch: its piece stays the first after
  pair_expert_all_to_alls(forward, forward_a2a, backward, backward_a2a, s, false, &sync);
  CHECK(total(forward) == seconds(6.8));
  CHECK(total(backward) == seconds(5.8));
  // The combine's 0.9 s sits where the combine falls, after the experts and before the unpermute; the
  // backward exposes nothing; the host's wait still comes before the forward's second piece.
  REQUIRE(forward.size() == 4);
  CHECK(forward[2].name == "ep_combine.exposed");
  CHECK(forward[2].group == CommGroup::ep);
  CHECK(forward[2].comm == seconds(0.9));
  CHECK(backward.size() == 3);
  CHECK(sync == std::optional<std::size_t>(1));
  // An all-to-all with no segment beside it (a pass with one more than the other) is exposed whole.
  // A forward's dispatch runs beside the backward's second segment, which a backward without
  // all-to-alls does not have.
  std::vector<CostPiece> lone_forward{kernels_piece(1), kernels_piece(1)};
  std::vector<CostPiece> lone_backward{kernels_piece(1)};
  pair_expert_all_to_alls(lone_forward, {{1, 0.5, "ep_dispatch"}}, lone_backward, {}, s);
  CHECK(total(lone_forward) == seconds(2.5));
  CHECK(total(lone_backward) == seconds(1));
}

TEST_CASE("delay_wgrad_compute: the experts' weight gradient runs beside the backward's dispatch") {
  // The layer above, s = 0.1, with the backward's dispatch 3 s and 2 s of the experts' 4 s backward their
  // weight gradient. Without the delay (TransformerLayerSchedulePlan.run: mlp_bwd holds the wgrad):
  //   combine.bwd beside the attention: 3 · (1 + 0.1 · 2/3) = 3.2 s;
  //   dispatch beside the experts' backward: 4 · 1.05 = 4.2 s;
  //   dispatch.bwd beside the experts' forward: 2 · 1.1 = 2.2 s, 3 − 2.2 = 0.8 s exposed;
  //   combine beside the attention's backward: 1.1 s, 0.9 s exposed; forward 6.8 s, backward 6.6 s.
  // With it (mlp_bwd_dw a node of its own, after dispatch_bwd is sent):
  //   dispatch beside the data gradient: 2 · (1 + 0.1 · 2/2) = 2.2 s, nothing exposed;
  //   dispatch.bwd beside the weight gradient and the experts' forward: 4 · (1 + 0.1 · 3/4) = 4.3 s, nothing
  //   exposed (forward's experts 2.15 s, the weight gradient 2.15 s);
  // forward 3.2 + 2.15 + 0.5 + 0.9 = 6.75 s, backward 0.5 + 2.2 + 2.15 + 1.1 = 5.95 s: 12.7 s against 13.4 s.
  for (const bool delay : {false, true}) {
    CAPTURE(delay);
    const PairedLayer l = paired_layer(2, 2, 3, wgrad_piece(4, 2), kernels_piece(1), delay);
    CHECK(total(l.forward) == seconds(delay ? 6.75 : 6.8));
    CHECK(total(l.backward) == seconds(delay ? 5.95 : 6.6));
    // The weight gradient stays in the backward's pieces, slowed beside the forward's dispatch (1.05) or,
    // delayed, beside the dispatch's backward (1 + 0.1 · 3/4 = 1.075).
    CHECK(l.backward[1].weight == seconds(delay ? 2.15 : 2.1));
  }
}

TEST_CASE("a delayed weight gradient first fills what the forward's dispatch outlasts the data gradient by") {
  // The layer above (s = 0.1), the experts' backward 2 s of data gradient D and 2 s of weight gradient W, the
  // backward's dispatch 1 s. Megatron-Core issues W right after D with no wait, so while the forward's
  // dispatch A outlasts D, W runs beside A; only the rest, W − min(W, A − D), waits beside the backward's
  // dispatch.
  //  - A = 5: A − D = 3 ≥ W, nothing moves: the dispatch beside D + W = 4 s, 4 · (1 + 0.1 · 1) = 4.4 s, 0.6 s
  //    exposed; the backward's dispatch beside the forward's experts, 2 · (1 + 0.1 · 1/2) = 2.1 s. Forward
  //    3.2 + 0.6 + 2.1 + 0.9 + 0.5 = 7.3 s, backward 0.5 + 4.4 + 1.1 = 6.0 s, with or without the delay.
  //  - A = 3: 1 s of W fills A − D, 1 s moves: the dispatch beside D + 1 = 3 s, 3 · 1.1 = 3.3 s; the
  //    backward's dispatch beside the forward's experts and the moved 1 s, 3 · (1 + 0.1 · 1/3) s. Forward
  //    3.2 + 2 · (1 + 0.1/3) + 0.5 + 0.9, backward 0.5 + 3.3 + (1 + 0.1/3) + 1.1.
  struct Case {
    double dispatch;
    bool delay;
    double forward, backward;
  };
  const double g = 1 + 0.1 / 3;
  for (const Case c : {Case{5, false, 7.3, 6.0}, Case{5, true, 7.3, 6.0},
                       Case{3, true, 3.2 + 2 * g + 0.5 + 0.9, 0.5 + 3.3 + g + 1.1}}) {
    CAPTURE(c.dispatch);
    CAPTURE(c.delay);
    const PairedLayer l = paired_layer(c.dispatch, 2, 1, wgrad_piece(4, 2), kernels_piece(1), c.delay);
    CHECK(total(l.forward) == seconds(c.forward));
    CHECK(total(l.backward) == seconds(c.backward));
  }
}

TEST_CASE("delay_wgrad_compute: the attention's weight gradient runs beside the next combine backward") {
  // Megatron-Core delays the weight gradient of pre_dispatch_computation too (the attention's and the shared
  // experts', _BackwardDWWrapper): it runs after the attention's data gradient, which the next layer's
  // combine backward waits for alone. s = 0.1; forward: attention 3 s, dispatch 2 s, experts 2 s, combine
  // 2 s, unpermute 0.5 s; backward: 0.5 s, combine.bwd 4 s, experts 4 s (no weight gradient), dispatch.bwd
  // 2 s, attention 3 s of which 1.5 s weight gradient. Without the delay:
  //   combine.bwd beside the attention: 3 · 1.1 = 3.3 s, 0.7 s exposed; dispatch beside the experts'
  //   backward 4 · 1.05 = 4.2 s; dispatch.bwd beside the experts' forward 2.2 s; combine beside the
  //   attention's backward 3 · (1 + 0.1 · 2/3) = 3.2 s: forward 3.3 + 2.2 + 0.5 = 6.0 s, backward
  //   0.5 + 0.7 + 4.2 + 3.2 = 8.6 s.
  // With it: the combine (2 s) outlasts the data gradient (1.5 s) by 0.5 s, which the weight gradient fills;
  // its other 1 s joins the forward's attention beside the combine backward: 4 s of kernels beside 4 s,
  // 4 · 1.1 = 4.4 s, nothing exposed; the combine beside 2 s of kernels, 2.2 s. Forward 6.0 s, backward
  // 0.5 + 4.2 + 3.3 (the attention's 3 s, all slowed by 1.1) = 8.0 s.
  for (const bool delay : {false, true}) {
    CAPTURE(delay);
    const PairedLayer l = paired_layer(2, 4, 2, kernels_piece(4), wgrad_piece(3, 1.5), delay);
    CHECK(total(l.forward) == seconds(6.0));
    CHECK(total(l.backward) == seconds(delay ? 8.0 : 8.6));
    CHECK(l.backward.back().weight == seconds(delay ? 1.65 : 1.6));  // slowed by 1.1, or by 1 + 0.1 · 2/3
  }
}

TEST_CASE("a pass run alone adds its all-to-alls less the slow-down taken back, scaled with a straggler") {
  // The pairing above: the forward alone takes its 5.5 s of kernels unslowed and its 4 s of all-to-alls
  // whole, 9.5 s, against 6.8 s merged: 2.7 s more, of which the kernels' part is 5.5 − 5.9 = −0.4 s. On a
  // replica whose kernels take 1.5 times as long the slow-down it takes back is 1.5 times as long too:
  // 2.7 − 0.5 · 0.4 = 2.5 s. A pass whose part stays below 0 adds nothing: 0.1 − 0.4 at twice the compute.
  UnitCost u;
  u.forward_alone_s = 2.7;
  u.forward_alone_kernels_s = -0.4;
  CHECK(pass_sums(u).forward_alone == seconds(2.7));
  CHECK(pass_sums(u, 1.5).forward_alone == seconds(2.5));
  u.backward_alone_s = 0.1;
  u.backward_alone_kernels_s = -0.4;
  CHECK(pass_sums(u, 2.0).backward_alone == 0.0);
}

TEST_CASE(
    "expert all-to-alls beside the paired micro-batch: kernels slowed while they run, the excess exposed") {
  // A MoE GPT (16 experts of width 512, top 2) with ep 16 over 2 DGX A100 nodes. Without the overlap a
  // layer's pass is its kernels plus its all-to-alls in a row; each pass's all-to-alls cut it into
  // segments. With framework.ep_comm_overlap the layer's forward and backward together take, per pair of
  // an all-to-all A and the other pass's segment K beside it (pair_expert_all_to_alls),
  // max(A, K·(1 + s·min(1, A/K))), s the GPU's overlap_compute_slowdown, plus the segments beside nothing.
  StepInput in = moe_gpt_on_two_a100(16, 1);
  // The host issues for free here, so that its bound (host_issue_test.cpp) leaves the overlap alone.
  in.plan.framework.launch_overhead_s = 0;
  in.plan.framework.expert_launch_s = 0;
  const UnitCost off = costs_of(in).units[0];
  in.plan.framework.ep_comm_overlap = true;
  const UnitCost on = costs_of(in).units[0];
  check_merged_layer(off, on);
  CHECK(on.total.forward() + on.total.backward() < off.total.forward() + off.total.backward());
}

TEST_CASE(
    "a flex dispatcher's SMs slow the kernels beside it by sms / (SMs - sms), NCCL's by the GPU's own") {
  // DeepEP's default 20 SMs of an H100's 132: 20/112, the Megatron-Core MoE report's "roughly 20%";
  // HybridEP's 16 of a B200's 148: 16/132; 64 of them given: 64/84. The NCCL all-to-all, and a GPU whose SM
  // count is unknown: the GPU's overlap_compute_slowdown.
  topo::GpuSpec gpu;
  gpu.sm_count = 132;
  gpu.efficiency.overlap_compute_slowdown = 0.189;
  Framework fw;
  CHECK(expert_all_to_all_slowdown(fw, gpu) == 0.189);
  fw.moe_dispatcher = MoeDispatcher::deepep;
  CHECK(expert_all_to_all_slowdown(fw, gpu) == doctest::Approx(20.0 / 112.0).epsilon(1e-12));
  gpu.sm_count = 148;
  fw.moe_dispatcher = MoeDispatcher::hybridep;
  CHECK(expert_all_to_all_slowdown(fw, gpu) == doctest::Approx(16.0 / 132.0).epsilon(1e-12));
  fw.moe_dispatcher_sms = 64;
  CHECK(expert_all_to_all_slowdown(fw, gpu) == doctest::Approx(64.0 / 84.0).epsilon(1e-12));
  gpu.sm_count = 64;
  CHECK_THROWS_AS((void)expert_all_to_all_slowdown(fw, gpu), InputError);
  gpu.sm_count = 0;
  CHECK(expert_all_to_all_slowdown(fw, gpu) == 0.189);

  // In a step: the MoE GPT's layer with DeepEP holding 27 of an A100's 108 SMs, s = 27/81 = 1/3 instead of
  // the GPU's 0.2, per pair max(A, K·(1 + s·min(1, A/K))).
  StepInput in = moe_gpt_on_two_a100(16, 1);
  in.cluster.node.gpu.sm_count = 108;
  in.plan.framework.launch_overhead_s = 0;
  in.plan.framework.expert_launch_s = 0;
  in.plan.framework.moe_dispatcher = MoeDispatcher::deepep;
  in.plan.framework.moe_dispatcher_sms = 27;
  const UnitCost off = costs_of(in).units[0];
  in.plan.framework.ep_comm_overlap = true;
  const UnitCost on = costs_of(in).units[0];
  check_merged_layer(off, on, 1.0 / 3.0);
  // Some pair is compute-bound here, so the dispatcher's SMs cost more than the GPU's 0.2 would.
  const AllToAllCut f = cut_at_all_to_alls(off.forward);
  const AllToAllCut b = cut_at_all_to_alls(off.backward);
  CHECK(merged_layer_seconds(f, b, 1.0 / 3.0) > merged_layer_seconds(f, b, 0.2) * (1 + 1e-6));
}

TEST_CASE("delay_wgrad_compute in a step: the MoE layer takes the hand sum with its wgrad moved") {
  // The MoE GPT's layer under ep_comm_overlap, with and without --delay-wgrad-compute: each the hand sum
  // merged_layer_seconds over the pieces without the overlap, the experts' weight-gradient seconds moved
  // from the forward dispatch's pair to the backward dispatch's but for what fills the forward dispatch's
  // excess over the data gradient. NICs of 35 GB/s put the dispatch between the forward experts' time and the
  // backward experts', where the delay changes the step.
  StepInput in = moe_gpt_on_two_a100(16, 1);
  in.cluster.node.nic_bytes_per_s = 35e9;
  in.plan.framework.launch_overhead_s = 0;
  in.plan.framework.expert_launch_s = 0;
  const UnitCost off = costs_of(in).units[0];
  const AllToAllCut f = cut_at_all_to_alls(off.forward);
  const AllToAllCut b = cut_at_all_to_alls(off.backward);
  REQUIRE(b.weights.size() == 3);
  CHECK(b.weights[1] > 0);
  REQUIRE((f.segments[1] < f.all_to_alls[0] && f.all_to_alls[0] < b.segments[1]));
  in.plan.framework.ep_comm_overlap = true;
  const UnitCost overlapped = costs_of(in).units[0];
  in.plan.framework.delay_wgrad_compute = true;
  const UnitCost delayed = costs_of(in).units[0];
  const double overlapped_s = overlapped.total.forward() + overlapped.total.backward();
  const double delayed_s = delayed.total.forward() + delayed.total.backward();
  CHECK(overlapped_s == seconds(merged_layer_seconds(f, b, 0.2)));
  CHECK(delayed_s == seconds(merged_layer_seconds(f, b, 0.2, true)));
  CHECK(delayed_s < overlapped_s * (1 - 1e-6));
}

TEST_CASE("recomputed expert all-to-alls block under ep_comm_overlap; the backward pairs only its own") {
  // recompute full, or selective of `moe`, runs the MoE block's dispatch and combine again at the head of
  // the backward (recompute.ep_dispatch, recompute.ep_combine, then ep_combine.bwd, ep_dispatch.bwd).
  // Megatron-Core refuses the overlap with either; `run` prices it: the recomputed two block where they
  // fall, inside the backward's first segment, and the backward's own two pair as without recompute. The
  // layer then takes the hand sum of merged_layer_seconds over the pieces without the overlap, every time.
  for (const std::uint8_t modules : {std::uint8_t{0}, static_cast<std::uint8_t>(RecomputeModule::moe)}) {
    CAPTURE(static_cast<int>(modules));
    StepInput in = moe_gpt_on_two_a100(16, 1);
    in.plan.framework.launch_overhead_s = 0;
    in.plan.framework.expert_launch_s = 0;
    in.plan.recompute = modules == 0 ? Recompute::full : Recompute::selective;
    in.plan.recompute_modules = modules;
    const UnitCost off = costs_of(in).units[0];
    const auto recomputed_all_to_alls = std::ranges::count_if(off.backward, [](const CostPiece& x) {
      return x.group == CommGroup::ep && x.kind == CostPiece::Kind::collective && is_recomputed(x.name);
    });
    REQUIRE(recomputed_all_to_alls == 2);
    in.plan.framework.ep_comm_overlap = true;
    const UnitCost on = costs_of(in).units[0];
    check_merged_layer(off, on);
    // Alone, the backward runs every all-to-all whole: its own two, beside nothing, add what they hid.
    const double backward_off = off.total.backward();
    CHECK(on.total.backward() + on.backward_alone_s == seconds(backward_off));
    // Priced twice, the same: the pairing once read past its all-to-alls under recompute and priced from
    // whatever the heap held (under ASan this reads out of bounds).
    const UnitCost again = costs_of(in).units[0];
    CHECK(again.total.forward() + again.total.backward() == on.total.forward() + on.total.backward());
  }
}

TEST_CASE("a dense first layer adds nothing alone; a mixed stage counts its MoE layers' alone passes") {
  // The MoE GPT with its first of 4 layers dense, pp 1, 2 micro-batches (32 sequences over ep 16): the
  // dense layer has no all-to-all, so nothing to expose alone; the stage's one forward and one backward run
  // alone (F0, B1), so its exposed EP time is m · 3 MoE layers' exposed all-to-alls a pass, plus 3 layers'
  // forward_alone_s and backward_alone_s once each.
  StepInput in = moe_gpt_on_two_a100(16, 1);
  in.model.dense_layers = 1;
  in.plan.framework.ep_comm_overlap = true;
  const auto [plan, costs] = priced_step(in);
  REQUIRE(plan.micro_batches == 2);
  const auto has_all_to_alls = [](const UnitCost& u) {
    return std::ranges::any_of(u.forward, [](const CostPiece& x) { return x.group == CommGroup::ep; }) ||
           u.forward_alone_s > 0;
  };
  const UnitCost* dense = nullptr;
  const UnitCost* moe = nullptr;
  for (const UnitCost& u : costs.units) {
    if (u.name.find("layer") == std::string::npos) continue;
    (has_all_to_alls(u) ? moe : dense) = &u;
  }
  REQUIRE(dense != nullptr);
  REQUIRE(moe != nullptr);
  CHECK(dense->forward_alone_s == 0.0);
  CHECK(dense->backward_alone_s == 0.0);
  REQUIRE(moe->forward_alone_s > 0);
  const double per_pass = moe->total.forward_ep_comm + moe->total.backward_ep_comm;
  CHECK(stage_work(costs, plan, 0).exposed_ep_comm ==
        seconds(2 * 3 * per_pass + 3 * (moe->forward_alone_s + moe->backward_alone_s)));
}

TEST_CASE("the passes run alone expose their all-to-alls, in both fidelities alike") {
  // The MoE GPT above at pp 2 and ep 8 (16 A100), 1F1B: rank 0 warms up with one forward, alone, and cools
  // down with one backward, alone; rank 1 runs its first forward and last backward alone. Those passes
  // take their all-to-alls whole (UnitCost::forward_alone_s), so the step is longer than with every pass
  // merged, and the event lowering's blocking collective at such a pass's end gives the analytic time.
  // Two micro-batches (16 sequences over ep 8), so that the passes run alone weigh well above 1 %.
  // The router priced as its GEMM alone, so that the all-to-alls weigh in the step as sized here.
  StepInput in = moe_gpt_on_two_a100(8, 2);
  in.training.global_batch = 16;
  in.plan.framework.ep_comm_overlap = true;
  in.plan.framework.router_kernels = 1;
  const auto [plan, costs] = priced_step(in);
  const UnitCost& layer = costs.units[0];
  REQUIRE(layer.forward_alone_s > 0);
  REQUIRE(layer.backward_alone_s > 0);
  StepCosts merged = costs;
  for (PassCost& pc : merged.passes) pc.forward_alone = pc.backward_alone = 0;
  const double with_alone = analytic_step(in, plan, costs).iteration_time;
  const double all_merged = analytic_step(in, plan, merged).iteration_time;
  CHECK(with_alone > all_merged);
  // Rank 1's first forward and last backward lie on the critical path of every 1F1B step.
  CHECK(with_alone - all_merged >= costs.passes[1].forward_alone + costs.passes[1].backward_alone - 1e-12);
  // The event lowering exposes the alone passes' all-to-alls itself (lower_alone_all_to_alls): on the same
  // costs, what they add to its step is what they add to the analytic one (within 1 % of the step).
  const auto event_time = [&](const StepCosts& c) {
    return run_step_graph(lower_step(in, plan, c), in, plan, c).iteration_time;
  };
  const double event_with_alone = event_time(costs);
  const double event_merged = event_time(merged);
  CHECK(event_with_alone - event_merged > 0.02 * with_alone);
  CHECK(std::abs((event_with_alone - event_merged) - (with_alone - all_merged)) < 0.01 * with_alone);
}

TEST_CASE("ZeRO 0-2: a chunk's last backward computes beside its gradient buckets, K·s·min(1, C/K)") {
  // One rank, two chunks of 1 and 3 of its 4 layers; 8 buckets of 0.05 s reduce the rank's gradients.
  StepPlan plan;
  plan.pp = 1;
  plan.virtual_stages = 2;
  plan.stage_layers = {4};
  plan.chunk_layers = {1, 3};
  StepCosts c;
  c.passes.resize(2);
  c.passes[0].backward_compute = 0.5;
  c.passes[1].backward_compute = 0.5;
  c.passes[1].weight_compute = 0.2;
  c.stages.resize(1);
  c.stages[0].buckets = 8;
  c.stages[0].bucket_s = 0.05;
  CHECK(last_grads_extra(c, plan, 0) == 0.0);  // no bucket overlaps compute
  c.bucket_overlap_slowdown = 0.2;
  CHECK(last_grads_extra(c, plan, 0) == seconds(0.2 * 0.1));  // C = 0.4 · 1/4 under K = 0.5
  CHECK(last_grads_extra(c, plan, 1) == seconds(0.2 * 0.3));  // C = 0.4 · 3/4
  c.stages[0].bucket_s = 0.5;                                 // C = 3 s: the whole pass is beside them
  CHECK(last_grads_extra(c, plan, 1) == seconds(0.2 * 0.5));
  c.weight_pass = true;  // ZB-H1: the W pass makes the gradients final, its 0.2 s of kernels beside them
  CHECK(last_grads_extra(c, plan, 1) == seconds(0.2 * 0.2));
  // The breakdown counts it as compute: m = 0 micro-batches leaves only the extras, each chunk's buckets
  // (1 s and 3 s) outlasting its 0.5 s pass.
  c.weight_pass = false;
  plan.micro_batches = 0;
  CHECK(stage_work(c, plan, 0).compute == seconds(0.2 * 0.5 + 0.2 * 0.5));
}

TEST_CASE("ZeRO 0-2 buckets beside the last backward slow both fidelities alike, and only with overlap") {
  // 2 nodes of A100, tp 2, pp 2, dp 4, ZeRO-1, 1F1B, given the H100 presets' overlap slow-down.
  StepInput in = testing::small_gpt_on_a100(2, 2, 2, 4, 64, 2048);
  in.plan.overlap_grad_reduce = true;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepReport plain_a = simulate_step(in, Fidelity::analytic);
  const StepTiming plain_t = analytic_step(in, plan, step_costs(in, plan));
  in.cluster.node.gpu.efficiency.overlap_compute_slowdown = 0.189;
  const StepCosts costs = step_costs(in, plan);
  CHECK(costs.bucket_overlap_slowdown == 0.189);
  double extras = 0;  // the cool-down runs vs 1's last backward, then vs 0's
  for (int vs = 0; vs < 2; ++vs) extras += last_grads_extra(costs, plan, vs);
  REQUIRE(extras > 0);
  const StepReport a = simulate_step(in, Fidelity::analytic);
  const StepReport e = simulate_step(in, Fidelity::event);
  CHECK(a.iteration_time > plain_a.iteration_time);
  CHECK(a.iteration_time <= plain_a.iteration_time + extras * (1 + 1e-9));
  CHECK(e.iteration_time == doctest::Approx(a.iteration_time).epsilon(0.02));
  const StepTiming t = analytic_step(in, plan, costs);
  CHECK(t.time.compute == seconds(plain_t.time.compute + last_grads_extra(costs, plan, t.critical_stage)));
  // Without overlapped reduction the buckets run after the backward, beside nothing.
  in.plan.overlap_grad_reduce = false;
  CHECK(step_costs(in, plan).bucket_overlap_slowdown == 0.0);
}

TEST_CASE("ZeRO 0-2 buckets beside the last backward: the fidelities agree under every schedule") {
  // As above, on the interleaved schedule (two chunks a rank, whose last backwards follow each other in the
  // cool-down) and ZB-H1 (the W pass makes the gradients final, and it is the one slowed).
  for (const Schedule schedule : {Schedule::one_f_one_b, Schedule::interleaved, Schedule::zero_bubble_h1}) {
    CAPTURE(static_cast<int>(schedule));
    StepInput in = testing::small_gpt_on_a100(2, 2, 2, 4, 64, 2048);
    in.plan.overlap_grad_reduce = true;
    in.plan.schedule = schedule;
    in.plan.virtual_stages = schedule == Schedule::interleaved ? 2 : 1;
    const StepReport plain = simulate_step(in, Fidelity::analytic);
    in.cluster.node.gpu.efficiency.overlap_compute_slowdown = 0.189;
    const StepReport a = simulate_step(in, Fidelity::analytic);
    const StepReport e = simulate_step(in, Fidelity::event);
    REQUIRE(a.feasible);
    CHECK(a.iteration_time > plain.iteration_time);
    CHECK(e.iteration_time == doctest::Approx(a.iteration_time).epsilon(0.02));
  }
}
