#include "models/report/explain_moe_settings.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <utility>

#include "models/step/communicators.hpp"
#include "models/step/layout_rules.hpp"

namespace trainsim::model {

namespace {

std::string setting(MoeDispatcher dispatcher, bool overlap) {
  return fmt::format("{}, {}", to_string(dispatcher), overlap ? "ep_comm_overlap" : "no overlap");
}

// The scenario with the MoE exchange set as `dispatcher` with or without the overlap, the rest as written
// (the flex dispatcher's SMs kept for the other flex backend, as Megatron-Core's one flag gives both); none
// where Megatron-Core does not run the overlap in this layout.
std::optional<StepInput> with_setting(const StepInput& in, MoeDispatcher dispatcher, bool overlap) {
  StepInput v = in;
  Framework& f = v.plan.framework;
  f.moe_dispatcher = dispatcher;
  f.ep_comm_overlap = overlap;
  if (!token_based(dispatcher)) f.moe_dispatcher_sms = 0;
  if (!overlap) f.delay_wgrad_compute = false;
  if (overlap && !runs_megatron_ep_overlap(v.model, v.plan)) return std::nullopt;
  return v;
}

// DeepEP's step at each SM count in kDeepepSmCounts below the GPU's, `v` its other settings: one line, the
// fastest step its value. None when the GPU has no measured peer-copy rate (the SMs then only slow the
// GEMMs beside it, and fewer would always look better), no SM count to split, or the expert group leaves
// its NVLink domain: the rate was measured inside one, and how DeepEP's RDMA leg slows on fewer SMs is not
// priced, so across nodes the line would favour the fewest.
std::optional<ExplainLine> deepep_sms_line(StepInput v, bool overlap) {
  const topo::GpuSpec& gpu = v.cluster.node.gpu;
  if (!(gpu.efficiency.sm_peer_copy_bytes_per_s > 0) || gpu.sm_count <= 0) return std::nullopt;
  if (communicators(v.plan, v.cluster).ep.crosses_nodes()) return std::nullopt;
  std::string steps;
  double best = 0;
  int best_sms = 0;
  for (const int sms : kDeepepSmCounts) {
    if (sms >= gpu.sm_count) break;
    v.plan.framework.moe_dispatcher_sms = sms;
    const StepReport r = simulate_step(v, Fidelity::analytic);
    if (!r.feasible || r.iteration_time <= 0) continue;
    steps += fmt::format("{}{}: {:.4g} s", steps.empty() ? "" : ", ", sms, r.iteration_time);
    if (best_sms == 0 || r.iteration_time < best) {
      best = r.iteration_time;
      best_sms = sms;
    }
  }
  if (best_sms == 0) return std::nullopt;
  return ExplainLine{
      setting(MoeDispatcher::deepep, overlap) + " by its SMs (moe_dispatcher_sms)",
      fmt::format("{}; fastest at {} SMs (its NVLink copies at {:.3g} GB/s an SM, the kernels beside it on "
                  "the rest)",
                  steps, best_sms, gpu.efficiency.sm_peer_copy_bytes_per_s / 1e9),
      best, "s"};
}

}  // namespace

std::optional<ExplainSection> explain_moe_settings(const StepInput& in) {
  const Framework& fw = in.plan.framework;
  const bool megatron = fw.preset == FrameworkPreset::megatron_core || fw.preset == FrameworkPreset::nemo;
  if (!in.model.is_moe() || in.plan.ep <= 1 || !megatron) return std::nullopt;
  const StepReport written = simulate_step(in, Fidelity::analytic);
  if (!written.feasible || written.iteration_time <= 0) return std::nullopt;

  ExplainSection out{.title = "the MoE exchange under Megatron-Core's other settings, closed form"};
  const auto add = [&](const StepReport& r, const Framework& f, bool as_written) {
    const double step = r.iteration_time;
    out.lines.push_back(
        {setting(f.moe_dispatcher, f.ep_comm_overlap) + (as_written ? " (as written)" : ""),
         fmt::format(
             "exposed expert exchange {:.4g} s ({:.0f} % of the step), {:.0f} tokens/s per GPU{}{}",
             r.time.exposed_ep_comm, 100 * r.time.exposed_ep_comm / step, r.tokens_per_s_per_gpu,
             token_based(f.moe_dispatcher) ? fmt::format(", on {} SMs", flex_dispatcher_sms(f)) : "",
             as_written ? "" : fmt::format(", {:.2f} x the step as written", step / written.iteration_time)),
         step, "s"});
  };
  add(written, fw, true);
  bool overlap_refused = false;
  constexpr std::array kDispatchers{MoeDispatcher::all_to_all, MoeDispatcher::deepep,
                                    MoeDispatcher::hybridep};
  for (const MoeDispatcher dispatcher : kDispatchers) {
    for (const bool overlap : {false, true}) {
      if (dispatcher == fw.moe_dispatcher && overlap == fw.ep_comm_overlap) continue;
      const std::optional<StepInput> v = with_setting(in, dispatcher, overlap);
      if (!v) {
        overlap_refused = true;
        continue;
      }
      // A setting the layout's rules refuse (DeepEP at tp·ep 1, …) makes the step infeasible.
      const StepReport r = simulate_step(*v, Fidelity::analytic);
      if (r.feasible && r.iteration_time > 0) add(r, v->plan.framework, false);
    }
  }
  for (const bool overlap : {false, true}) {
    std::optional<StepInput> v = with_setting(in, MoeDispatcher::deepep, overlap);
    if (!v) continue;
    if (std::optional<ExplainLine> l = deepep_sms_line(std::move(*v), overlap))
      out.lines.push_back(std::move(*l));
  }
  if (overlap_refused) {
    out.notes.push_back(
        "ep_comm_overlap left out: Megatron-Core runs it at pp 1 or on the interleaved schedule, without "
        "full "
        "recompute or the moe module recomputed (TransformerConfig.__post_init__)");
  }
  out.notes.push_back(
      "which of these a run used is the framework's setting, not the layout's: Megatron-Bridge's recipes "
      "name "
      "the dispatcher and the overlap per model and system (docs/moe-recipes.md); set "
      "framework.moe_dispatcher and framework.ep_comm_overlap to what yours runs");
  return out;
}

}  // namespace trainsim::model
