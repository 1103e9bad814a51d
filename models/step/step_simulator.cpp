#include "models/step/step_simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/step/analytic_step.hpp"
#include "models/step/analytic_trace.hpp"
#include "models/step/asymmetry.hpp"
#include "models/step/gpu_variability.hpp"
#include "models/step/memory.hpp"
#include "models/step/pass_detail_sink.hpp"
#include "models/step/step_lowering.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/flops.hpp"
#include "models/workload/parameters.hpp"
#include "sim/error.hpp"
#include "sim/trace.hpp"

namespace trainsim::model {

const char* to_string(Fidelity f) {
  return f == Fidelity::analytic ? "analytic" : "event";
}

namespace {

// Memory in use per stage over the step, for the traces' "memory_bytes" counter: the resident part plus
// the stashed activations, each micro-batch·chunk's share of the estimate's peak (its peak over the
// in-flight count).
StageMemoryTrack memory_track(const MemoryEstimate& mem, const StepPlan& plan) {
  StageMemoryTrack track;
  for (const StageMemory& sm : mem.stages) {
    const double stashed =
        sm.in_flight_micro_batches > 0 ? sm.memory.activations / sm.in_flight_micro_batches : 0;
    track.resident.push_back(sm.memory.total() - sm.memory.activations);
    track.per_micro_batch.push_back(stashed / plan.virtual_stages);
  }
  return track;
}

// The closed form's step time; with a trace, its own timeline (models/step/analytic_trace.hpp), laid out
// as the event trace is.
StepTiming time_closed_form(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                            const MemoryEstimate& mem, const StepOptions& options) {
  if (options.trace == nullptr) return analytic_step(in, plan, costs);
  sim::ChromeTraceWriter& writer = *options.trace;
  const StageMemoryTrack track = memory_track(mem, plan);
  StepTiming t = trace_analytic_step(in, plan, costs, writer, &track);
  writer.add_metadata("fidelity", to_string(Fidelity::analytic));
  writer.add_metadata("timeline",
                      "closed form (analytic_step): pass times replayed from the pipeline schedule, "
                      "no event simulation");
  return t;
}

// The event simulation's step time over `graph`; with a trace, each layer's or each pass's slices, and the
// stages' memory unless the graph is the full cluster's.
StepTiming time_step_graph(const StepGraph& graph, const StepInput& in, const StepPlan& plan,
                           const StepCosts& costs, const MemoryEstimate& mem, const StepOptions& options,
                           bool full_cluster) {
  if (options.trace == nullptr) return run_step_graph(graph, in, plan, costs);
  StepTiming t;
  sim::ChromeTraceWriter& writer = *options.trace;
  const StageMemoryTrack track = memory_track(mem, plan);
  const StageMemoryTrack* memory = full_cluster ? nullptr : &track;
  if (options.trace_detail == StepOptions::TraceDetail::pass) {
    PassDetailSink per_pass(writer);
    t = run_step_graph(graph, in, plan, costs, &per_pass, memory);
    per_pass.flush();
  } else {
    t = run_step_graph(graph, in, plan, costs, &writer, memory);
  }
  writer.add_metadata("fidelity", to_string(Fidelity::event));
  writer.add_metadata("detail", options.trace_detail == StepOptions::TraceDetail::pass ? "pass" : "layer");
  return t;
}

// The rates of a step of r.iteration_time > 0 over `sequences` sequences: tokens per second, TFLOPS per
// GPU and the utilisations against the GPU's 16-bit (or the training precision's) and fp8 peaks.
void add_rates(StepReport& r, const StepInput& in, double sequences) {
  const double tokens_per_sequence =
      in.model.generic_layers.empty() ? static_cast<double>(in.model.seq_len) : 1.0;
  const double gpus = static_cast<double>(r.gpus);
  r.tokens_per_s = sequences * tokens_per_sequence / r.iteration_time;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.model_tflops_per_gpu = r.model_flops_per_step / r.iteration_time / gpus / 1e12;
  r.hardware_tflops_per_gpu = r.hardware_flops_per_step / r.iteration_time / gpus / 1e12;
  const Precision p = in.training.precision;
  const bool sixteen_bit_or_less = p == Precision::bf16 || p == Precision::fp16 || p == Precision::fp8;
  const auto& peaks = in.cluster.node.gpu.peak;
  const double peak = peaks.at(sixteen_bit_or_less ? Precision::bf16 : p);
  if (peak > 0) {
    r.mfu = r.model_tflops_per_gpu * 1e12 / peak;
    r.hfu = r.hardware_tflops_per_gpu * 1e12 / peak;
  }
  const double fp8_peak = p == Precision::fp8 ? peaks.at(Precision::fp8) : 0.0;
  if (fp8_peak > 0) r.mfu_fp8 = r.model_tflops_per_gpu * 1e12 / fp8_peak;
}

// The event fidelity keeps time in int64 picoseconds, about 9.2e6 s (106 days); a step past that would wrap
// around. A step is refused for it when the closed-form time of the `costs` it would simulate, at its slowest
// straggler's pace where the costs do not hold it yet (`stragglers_apart`: the full cluster slows each
// replica in its graph), passes an eighth of that range: room for what the event fidelity adds (shared
// links, contention) and for the sums of a stage's passes. Empty when the step fits.
std::string beyond_event_clock(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                               bool stragglers_apart) {
  constexpr double kEventClockSeconds = 9.2e6 / 8;
  double slowest = 1.0;
  if (stragglers_apart) {
    for (const topo::Straggler& s : in.cluster.stragglers) slowest = std::max(slowest, s.slowdown);
  }
  const double seconds = analytic_step(in, plan, costs).iteration_time * slowest;
  if (seconds <= kEventClockSeconds) return {};
  return fmt::format(
      "one step takes about {:.3g} days, beyond what the event fidelity's picosecond clock holds "
      "with room to spare ({:.3g} days); use --fidelity analytic",
      seconds / 86400.0, kEventClockSeconds / 86400.0);
}

}  // namespace

Fidelity parse_fidelity(std::string_view text) {
  if (text == "analytic") return Fidelity::analytic;
  if (text == "event") return Fidelity::event;
  throw InputError("fidelity must be 'analytic' or 'event', not '" + std::string(text) + "'");
}

StepCosts simulated_costs(const StepInput& in, const StepPlan& plan, Fidelity fidelity) {
  StepCosts symmetric = step_costs(
      in, plan, fidelity == Fidelity::event ? FabricPricing::shared_links : FabricPricing::closed_form);
  const std::vector<double> degraded = degraded_nic_slowdowns(in.plan, in.cluster, symmetric);
  if (!degraded.empty()) slow_data_parallel(symmetric, plan, degraded);
  // Every stage at the pace of the expected slowest GPU (gpu_variability.hpp).
  const PipelineDraws draws = pipeline_draws(in.plan, plan);
  const double slowest_gpu = expected_slowest_gpu_slowdown(in.cluster, draws);
  const auto slow_by_draws = [&](StepCosts& c) {
    if (slowest_gpu != 1.0)
      slow_stages(c, plan, std::vector<double>(static_cast<std::size_t>(plan.pp), slowest_gpu));
  };
  // With stragglers each replica holding one runs at its straggler's slowdown times its own GPUs' draws, and
  // the step is that of the slowest of those and the replica above (step_costs.hpp): each is timed,
  // untraced, and the slowest one's costs are returned. Without them the symmetric costs are slowed in
  // place: the search prices most layouts here, and a copy of every unit per layout is what it would pay.
  const std::vector<std::vector<double>> slowdowns = straggler_slowdowns(in.plan, in.cluster);
  if (slowdowns.empty()) {
    slow_by_draws(symmetric);
    return symmetric;
  }
  const double own_draws = expected_own_stage_slowdown(in.cluster, draws);
  const auto straggling = [&](std::vector<double> slowdown) {
    for (double& f : slowdown) f *= own_draws;
    StepCosts slowed = symmetric;
    slow_stages(slowed, plan, slowdown);
    return slowed;
  };
  const bool draws_slow = slowest_gpu != 1.0;
  if (!draws_slow && slowdowns.size() == 1) return straggling(slowdowns.front());  // nothing to compare
  StepCosts costs = symmetric;  // the slowest replica of the draws, unless a straggler's is slower
  slow_by_draws(costs);
  const auto time_of = [&](const StepCosts& c) {
    return fidelity == Fidelity::analytic
               ? analytic_step(in, plan, c).iteration_time
               : run_step_graph(lower_step(in, plan, c, LoweringOptions{.merge_serial = true}), in, plan, c)
                     .iteration_time;
  };
  double slowest = draws_slow ? time_of(costs) : -1;
  for (const std::vector<double>& slowdown : slowdowns) {
    StepCosts slowed = straggling(slowdown);
    const double t = time_of(slowed);
    if (t > slowest) {
      slowest = t;
      costs = std::move(slowed);
    }
  }
  return costs;
}

StepReport simulate_step(const StepInput& in, Fidelity fidelity, const StepOptions& options) {
  StepReport r;
  r.gpus = in.cluster.total_gpus();
  r.memory_capacity = in.cluster.node.gpu.hbm_bytes;
  r.parameters = parameter_count(in.model);
  r.parameters_active = active_parameter_count(in.model);
  r.parameters_mtp = in.model.generic_layers.empty() ? parameter_breakdown(in.model).mtp_total() : 0.0;
  r.framework = framework_flags(in.plan.framework, in.plan.overlap_grad_reduce);
  const bool asymmetric = !in.cluster.degraded.empty() || !in.cluster.stragglers.empty();
  bool full_cluster = fidelity == Fidelity::event && (options.mode == StepMode::full_cluster ||
                                                      (options.mode == StepMode::automatic && asymmetric));
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  if (!plan.feasible) {
    r.feasible = false;
    r.fits = false;
    r.reason = plan.reason;
    return r;
  }
  if (fidelity == Fidelity::event && is_v_shape(in.plan.schedule)) {
    r.feasible = false;
    r.fits = false;
    r.reason = "schedule " + std::string(to_string(in.plan.schedule)) +
               ": the V-shaped schedules (and DualPipe's program, whose batched sends wait for their "
               "receivers) are timed by the analytic fidelity only; use --fidelity analytic";
    return r;
  }
  // The event fidelity simulates every pass of every stage; keep one step's graph bounded in time and
  // memory (about a second per million passes) and say what to do instead.
  constexpr double kMaxEventPasses = 4e6;
  const double passes = 2.0 * static_cast<double>(plan.micro_batches) * in.plan.pp * plan.virtual_stages;
  if (fidelity == Fidelity::event && passes > kMaxEventPasses) {
    r.feasible = false;
    r.fits = false;
    r.reason = std::to_string(static_cast<long long>(passes)) +
               " forward and backward passes per step are more than the event fidelity simulates (4000000); "
               "use --fidelity analytic";
    return r;
  }
  const auto sequences = static_cast<double>(in.training.global_batch);
  r.micro_batches = plan.micro_batches;
  r.model_flops_per_step = model_flops_per_step(in.model, sequences);
  r.hardware_flops_per_step = hardware_flops_per_step(in.model, sequences, in.plan.recompute);

  // Memory with the same layer split as the time model.
  ParallelPlan split = in.plan;
  split.stage_layers = plan.chunk_layers;  // per virtual stage: the split exactly as planned
  MemoryOptions mo;
  mo.headroom_fraction = in.memory_headroom;
  mo.allocator_fraction = in.plan.framework.memory_reserve;
  const MemoryEstimate mem = estimate_memory(in.model, split, in.training, in.cluster.node.gpu, mo);
  r.memory = mem.memory;
  r.memory_per_gpu = mem.per_gpu;
  r.fits = mem.fits;
  if (!mem.fits) r.reason = mem.reason;  // the time is still reported: it is what the layout would take
  if (!mem.fits && !options.time_unfit) return r;

  // The full cluster prices the asymmetries itself: each replica its own stragglers' slowdown, a degraded
  // NIC as a slower link of the graph.
  StepCosts costs =
      full_cluster ? step_costs(in, plan, FabricPricing::routed) : simulated_costs(in, plan, fidelity);
  if (fidelity == Fidelity::event) {
    if (std::string reason = beyond_event_clock(in, plan, costs, full_cluster); !reason.empty()) {
      r.feasible = false;
      r.fits = false;
      r.reason = std::move(reason);
      return r;
    }
  }
  std::optional<StepGraph> graph;
  if (full_cluster) {
    std::map<std::int64_t, std::vector<double>> slowdown = draw_gpu_variability(in.plan, in.cluster);
    if (slowdown.empty()) slowdown = replica_slowdowns(in.plan, in.cluster);  // no spread: stragglers only
    try {
      graph.emplace(lower_step(
          in, plan, costs,
          LoweringOptions{
              .full_cluster = true, .replica_slowdown = slowdown, .merge_serial = options.trace == nullptr}));
    } catch (const InputError&) {
      if (options.mode == StepMode::full_cluster) throw;  // asked for: say why not
      full_cluster = false;  // chosen: the collapsed step prices the same asymmetry in closed form
      costs = simulated_costs(in, plan, fidelity);
    }
  }
  r.step_mode = fidelity == Fidelity::analytic ? "closed-form" : full_cluster ? "full-cluster" : "collapsed";
  StepTiming t;
  if (fidelity == Fidelity::analytic) {
    t = time_closed_form(in, plan, costs, mem, options);
  } else {
    if (!graph)
      graph.emplace(lower_step(in, plan, costs, LoweringOptions{.merge_serial = options.trace == nullptr}));
    t = time_step_graph(*graph, in, plan, costs, mem, options, full_cluster);
  }
  r.iteration_time = t.iteration_time;
  r.time = t.time;
  r.bubble_fraction = t.bubble_fraction;
  r.fleet_compute_fraction = t.fleet_compute_fraction;
  r.fleet_idle_fraction = t.fleet_idle_fraction;
  if (r.iteration_time > 0) add_rates(r, in, sequences);
  return r;
}

}  // namespace trainsim::model
