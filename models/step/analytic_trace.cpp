#include "models/step/analytic_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {

sim::Time at(double seconds) {
  return sim::Time::zero() + sim::Duration::from_seconds(std::max(0.0, seconds));
}

}  // namespace

std::span<const sim::TraceArg> analytic_slice_args() {
  static constexpr std::array<sim::TraceArg, 1> kArgs{sim::TraceArg{"fidelity", 0.0, "analytic"}};
  return kArgs;
}

StepTiming trace_analytic_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                               sim::TraceSink& sink, const StageMemoryTrack* memory) {
  AnalyticLayout lay;
  const StepTiming timing = analytic_step(in, plan, costs, &lay);
  const ParallelPlan& pl = in.plan;
  const int p = plan.pp;
  const int nvs = p * plan.virtual_stages;
  const bool split_w = pl.schedule == Schedule::zero_bubble_h1;
  const bool zero3 = costs.gathers_weights;
  TRAINSIM_CHECK(memory == nullptr || (memory->resident.size() == static_cast<std::size_t>(p) &&
                                       memory->per_micro_batch.size() == static_cast<std::size_t>(p)),
                 "trace_analytic_step: one memory entry per pipeline rank expected");

  const std::span<const sim::TraceArg> args = analytic_slice_args();
  auto slice = [&](std::string_view thread_lane, std::string_view name, std::string_view category,
                   double from, double to) {
    sink.record(sim::TraceRecord{thread_lane, name, category, at(from), at(std::max(from, to)), args});
  };
  for (int s = 0; s < p; ++s) {
    const auto si = static_cast<std::size_t>(s);
    const std::string proc = fmt::format("stage {}", s);
    const std::string compute = proc + " / compute";
    const std::string tp = proc + " / tp comm";
    const std::string pp = proc + " / pp comm";
    const std::string dp = proc + " / dp comm";
    const StageCost& sc = costs.stages[si];
    double in_use = memory != nullptr ? memory->resident[si] : 0.0;
    if (memory != nullptr) sink.counter(compute, "memory_bytes", at(0.0), in_use);

    const auto& passes = lay.order[si];
    const auto& spans = lay.passes[si];
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const PipelinePass& x = passes[k];
      const int vs = x.chunk * p + s;
      const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
      const double start = spans[k].start;
      const double end = spans[k].end;
      double kernels = 0;
      double comm = 0;
      switch (x.kind) {
        case PassKind::forward:
          kernels = pc.forward_compute;
          comm = pc.forward_comm;
          break;
        case PassKind::backward:
          kernels = pc.backward_compute - (split_w ? pc.weight_compute : 0.0);
          comm = pc.backward_comm;
          break;
        case PassKind::backward_weight:
          kernels = pc.weight_compute;
          break;
      }
      const std::string label = fmt::format("{} mb{} c{}", pass_letter(x.kind), x.micro_batch, x.chunk);
      const double kernels_end = std::min(end, start + kernels);
      slice(compute, label, "compute", start, kernels_end);
      if (comm > 0) slice(tp, label + " collectives", "tp", kernels_end, std::min(end, kernels_end + comm));
      if (zero3 && x.kind != PassKind::backward_weight) {
        const double share =
            static_cast<double>(plan.chunk_layers[static_cast<std::size_t>(vs)]) / plan.stage_layers[si];
        const bool bwd = x.kind == PassKind::backward;
        const double gather =
            share * ((bwd && !pl.framework.reshard_after_forward ? 0.0 : sc.zero3_gather_s) +
                     (bwd ? sc.zero3_reduce_s : 0.0));
        slice(dp, label + (bwd ? " zero3 gather+reduce-scatter" : " zero3 gather"), "dp", start,
              std::min(end, start + gather));
      }
      if (sends_to_neighbour(x.kind, vs, nvs)) {
        slice(pp, (x.kind == PassKind::forward ? "send act " : "send grad ") + label, "pp", end,
              end + costs.p2p_s);
      }
      if (memory != nullptr && x.kind != PassKind::backward_weight) {
        in_use += (x.kind == PassKind::forward ? 1.0 : -1.0) * memory->per_micro_batch[si];
        sink.counter(compute, "memory_bytes", at(end), in_use);
      }
    }

    // Gradient buckets: named as the event trace names them (per chunk when overlapped with the backward,
    // numbered over the stage when reduced after the last pass).
    std::vector<int> per_chunk(static_cast<std::size_t>(plan.virtual_stages), 0);
    int index = 0;
    for (const AnalyticLayout::Bucket& b : lay.buckets[si]) {
      const std::string name =
          pl.overlap_grad_reduce
              ? fmt::format("grad bucket c{} {}", b.chunk, per_chunk[static_cast<std::size_t>(b.chunk)]++)
              : fmt::format("grad bucket {}", index);
      ++index;
      slice(dp, name, "dp", b.start, b.end);
    }
    // The tail, summed in analytic_step's order so the last end is its finish time to the bit.
    const double norm_end = lay.reduced[si] + sc.grad_norm_s;
    slice(dp, "grad norm all-reduce", "dp", lay.reduced[si], norm_end);
    const double exchange_end = norm_end + sc.optimizer_comm_s;
    if (sc.optimizer_comm_s > 0) slice(dp, "optimizer matrix exchange", "dp", norm_end, exchange_end);
    const double optimizer_end = exchange_end + sc.optimizer_s;
    slice(proc + " / optimizer", "optimizer", "optimizer", exchange_end, optimizer_end);
    const double gather = exposed_param_gather(in, plan, costs, s);
    if (gather > 0) slice(dp, "param all-gather", "dp", optimizer_end, optimizer_end + gather);
  }
  return timing;
}

}  // namespace trainsim::model
