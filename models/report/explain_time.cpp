#include "models/report/explain_time.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/step/activation_offload.hpp"
#include "models/step/analytic_step.hpp"
#include "models/step/gpu_variability.hpp"
#include "models/step/host_issue.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {

namespace {

// One op run of one unit in one direction over the stage's passes: `units` copies of `each` seconds per
// micro-batch.
struct Part {
  std::string label;
  double each = 0;
  std::int64_t units = 0;
};

void add(std::vector<Part>& parts, std::string label, double each, std::int64_t units) {
  if (each <= 0) return;
  auto it = std::find_if(parts.begin(), parts.end(), [&](const Part& p) { return p.label == label; });
  if (it == parts.end()) {
    parts.push_back({std::move(label), each, units});
  } else {
    it->units += units;  // the same unit's op run in another chunk: the same seconds each
  }
}

}  // namespace

ExplainSection explain_time(const StepInput& in) {
  ExplainSection out;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  if (!plan.feasible) {
    out.title = "time per iteration";
    out.notes.push_back("not a layout: " + plan.reason);
    return out;
  }
  const StepCosts costs = simulated_costs(in, plan, Fidelity::analytic);
  const StepTiming t = analytic_step(in, plan, costs);
  const int stage = t.critical_stage;
  const std::int64_t m = plan.micro_batches;
  out.title = fmt::format("time per iteration, stage {} (critical), closed form", stage);

  std::vector<Part> kernels, collectives;
  for (int c = 0; c < plan.virtual_stages; ++c) {
    for (const UnitRun& run : costs.chunk_units[plan.virtual_stage_index(c, stage)]) {
      const UnitCost& u = costs.units[static_cast<std::size_t>(run.unit)];
      for (const auto& [direction, pieces] :
           {std::pair{"forward", &u.forward}, std::pair{"backward", &u.backward}}) {
        const std::string what = fmt::format("{} {}", direction, u.name);
        for (const CostPiece& piece : *pieces) {
          add(kernels, fmt::format("kernels, {} {}", what, piece.name), piece.compute, run.count);
          const std::string comm = piece.kind == CostPiece::Kind::overlapped ? piece.comm_name : piece.name;
          add(collectives, fmt::format("exposed {}, {}", comm, what), piece.exposed_comm(), run.count);
        }
      }
    }
  }
  for (const std::vector<Part>* parts : {&kernels, &collectives}) {
    for (const Part& p : *parts) {
      out.lines.push_back({p.label,
                           fmt::format("{} micro-batches x {} x {:.4g} ms", m, p.units, p.each * 1e3),
                           static_cast<double>(m) * static_cast<double>(p.units) * p.each, "s"});
    }
  }
  if (in.plan.offload_modules != 0 && in.model.generic_layers.empty() && !costs.units.empty()) {
    // The first layer kind's offload (models/step/activation_offload.hpp): its bytes over the host link,
    // and what of that copy its pieces show above as waits.
    const double bytes = layer_activation(in.model, shard_of(in.plan, in.training.precision)).offloaded;
    const double link = in.cluster.node.pcie_bytes_per_s;
    const UnitCost& u = costs.units[0];
    const auto waits = [](const std::vector<CostPiece>& pieces) {
      double w = 0;
      for (const CostPiece& x : pieces) {
        if (x.name.starts_with("activation_offload.")) w += x.compute;
      }
      return w;
    };
    const double forward_wait = waits(u.forward), backward_wait = waits(u.backward);
    const double forward = u.total.forward() - forward_wait, backward = u.total.backward() - backward_wait;
    const OffloadCost copy = offload_cost(bytes, link, forward, backward);
    out.lines.push_back(
        {"activation offload per layer",
         fmt::format(
             "{:.4g} MB each way per micro-batch over the host link at {:.4g} GB/s = {:.4g} ms, beside "
             "the layer's forward {:.4g} ms and backward {:.4g} ms: exposed per layer",
             bytes / 1e6, link / 1e9, copy.copy_s * 1e3, forward * 1e3, backward * 1e3),
         forward_wait + backward_wait, "s"});
  }
  const TimeBreakdown& tb = t.time;
  out.lines.push_back({"exposed data-parallel communication",
                       "gradient buckets, ZeRO gathers and parameter all-gathers not hidden under compute",
                       tb.exposed_dp_comm, "s"});
  out.lines.push_back(
      {"exposed pipeline sends", "activation and gradient hand-overs not hidden", tb.exposed_pp_comm, "s"});
  out.lines.push_back(
      {"pipeline bubble",
       fmt::format("{} schedule, pp {} x {} chunks, {} micro-batches{}: idle on this stage; the paper's "
                   "bubble {}",
                   to_string(in.plan.schedule), plan.pp, plan.virtual_stages, m,
                   in.plan.schedule == Schedule::dualpipe
                       ? fmt::format(" (pp {} timed as dualpipev over {} ranks, half the micro-batches)",
                                     in.plan.pp, plan.pp)
                       : "",
                   bubble_formula(in.plan.schedule)),
       tb.bubble, "s"});
  const StageCost& sc = costs.stages[static_cast<std::size_t>(stage)];
  const int tensor_ops = in.plan.framework.optimizer_tensor_ops;
  const std::string update =
      updates_tensor_by_tensor(in.plan.framework)
          ? fmt::format("update tensor by tensor (a host wait, then {} kernels each)", tensor_ops)
          : std::string("update kernels");
  std::string optimizer = fmt::format("{:.4g} ms {} + {:.4g} ms gradient-norm all-reduce",
                                      sc.optimizer_s * 1e3, update, sc.grad_norm_s * 1e3);
  if (sc.optimizer_comm_s > 0)
    optimizer +=
        fmt::format(" + {:.4g} ms whole-matrix exchanges over the sharding group", sc.optimizer_comm_s * 1e3);
  out.lines.push_back({"optimizer", optimizer, tb.optimizer, "s"});
  out.lines.push_back({"iteration", "the lines above", t.iteration_time, "s"});
  const PipelineDraws draws = pipeline_draws(in.plan, plan);
  const double slowest = expected_slowest_gpu_slowdown(in.cluster, draws);
  if (slowest != 1.0) {
    const double spread = variability_spread(in.cluster);
    const std::int64_t fit = in.cluster.node.gpu.efficiency_fit_gpus;
    const double slowest_draw = expected_slowest_draw(draws);
    out.notes.push_back(fmt::format(
        "the kernels above wait for the slowest GPUs: x{:.4f} = (1 + {:g} x {:.3f}) / "
        "(1 + {:g} x E[max of {}] {:.3f}), {:.3f} the expected slowest draw of {} GPUs per stage, "
        "{} replicas and {} stages (the fill and drain at the slowest replica's sum over its stages, "
        "the steady state at the slowest of all); the GPU preset's constants fitted on {} GPU{} "
        "(cluster.variability, efficiency_fit_gpus)",
        slowest, spread, slowest_draw, spread, fit, expected_max_standard_normal(fit), slowest_draw,
        draws.stage_gpus, draws.replicas, draws.stages, fit, fit == 1 ? "" : "s"));
  }
  return out;
}

}  // namespace trainsim::model
