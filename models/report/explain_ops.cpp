#include "models/report/explain_ops.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "models/step/communicators.hpp"
#include "models/step/host_issue.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/unit_pricing.hpp"
#include "models/workload/kernel_time.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {

namespace {

std::string_view group_name(CommGroup g) {
  switch (g) {
    case CommGroup::tp:
      return "tp";
    case CommGroup::cp:
      return "cp";
    case CommGroup::ep:
      return "ep";
    case CommGroup::expert_tp:
      return "expert tp";
    case CommGroup::expert_tp_ep:
      return "expert tp x ep";
  }
  return "tp";
}

// What one kernel does and how fast, in words: its work, the rate it reaches in `seconds`, and its bound.
std::string kernel_detail(const KernelCost& k, double seconds, const topo::GpuSpec& gpu,
                          Precision precision) {
  const topo::ComputeEfficiency& e = gpu.efficiency;
  const double busy = seconds - e.kernel_overhead_s;
  const bool launch_bound = busy < e.kernel_overhead_s;
  const std::string launch = launch_bound ? ", mostly its launch" : "";
  if (k.kind == OpKind::memory_bound) {
    const double kernels = k.kernels * k.groups;
    return fmt::format("{:.0f} kernel{}, {:.4g} MB at {:.4g} GB/s{}", kernels, kernels == 1 ? "" : "s",
                       k.bytes / 1e6, seconds > 0 ? k.bytes / seconds / 1e9 : 0.0, launch);
  }
  const bool in_bf16 = precision == Precision::fp8 && (k.kind == OpKind::fused_attention || k.keeps_16bit);
  const Precision runs_at = in_bf16 ? Precision::bf16 : precision;
  const double peak = gpu.peak.at(runs_at);
  const double rate = seconds > 0 ? k.flops / seconds : 0.0;
  const double memory_s = k.bytes / (gpu.hbm_bytes_per_s * e.memory_bandwidth_fraction);
  const std::string bound = launch_bound ? launch : memory_s >= busy * (1 - 1e-9) ? ", bound by memory" : "";
  std::string shape;
  if (k.kind == OpKind::matmul && k.m > 0 && k.n > 0 && k.k > 0) {
    shape = fmt::format("{:.0f} x {:.0f} x {:.0f}{}, ", k.m, k.n, k.k,
                        k.groups > 1 ? fmt::format(" x {:.0f} GEMMs", k.groups) : std::string());
  } else if (k.kind == OpKind::fused_attention) {
    shape = "attention, ";
  }
  return fmt::format("{}{:.4g} GFLOP, {:.4g} MB: {:.4g} TFLOP/s = {:.1f} % of the {} peak{}", shape,
                     k.flops / 1e9, k.bytes / 1e6, rate / 1e12, peak > 0 ? 100 * rate / peak : 0.0,
                     topo::to_string(runs_at), bound);
}

}  // namespace

ExplainSection explain_ops(const StepInput& in) {
  ExplainSection out;
  const TransformerSpec& model = in.model;
  if (!model.generic_layers.empty()) {
    out.title = "ops of one layer";
    out.notes.push_back("not listed: a model of generic layers has no transformer layer to list");
    return out;
  }
  const StepPlan plan = make_step_plan(model, in.cluster, in.plan, in.training);
  const std::int64_t first = std::min(model.first_moe_layer(), model.layers - 1);
  const bool windowed = model.is_windowed(first);
  const bool dense = model.is_dense_layer(first);
  const std::string name = std::string(dense ? "dense " : "") + (windowed ? "windowed layer" : "layer");
  out.title = fmt::format(
      "ops of one {} per micro-batch on one GPU, each alone (what overlaps or waits: the "
      "time section)",
      name);
  if (!plan.feasible) {
    out.notes.push_back("not a layout: " + plan.reason);
    return out;
  }
  const TransformerSpec spec = (dense ? model.as_dense_layer() : model).as_attention_layer(windowed);
  const LayerOps ops = transformer_layer_ops(spec, shard_of(in.plan, in.training));
  const Communicators g = communicators(in.plan, in.cluster);
  const topo::GpuSpec& gpu = in.cluster.node.gpu;
  const Framework& fw = in.plan.framework;
  const bool eager = !fw.cuda_graphs;
  for (const auto& [direction, list] :
       {std::pair{"forward", &ops.forward}, std::pair{"backward", &ops.backward}}) {
    double kernels = 0, collectives = 0, host = 0;
    for (const LayerOp& op : *list) {
      const double issue = op_issue_s(op, fw);
      const std::string host_text = eager ? fmt::format("; host {:.3g} us", issue * 1e6) : std::string();
      host += issue;
      if (op.communication) {
        const topo::CommGroup& group =
            op.comm.collective == Collective::ring_exchange ? g.cp_pair : g.of(op.comm.group);
        const double t = collective_op_estimate(op.comm, group, in.cluster, fw).time_s * op.comm.steps;
        collectives += t;
        out.lines.push_back(
            {fmt::format("{} {}", direction, op.name),
             fmt::format("{} over {} ({} GPUs), {:.4g} MB a rank{}{}",
                         topo::to_string(to_topo(op.comm.collective)), group_name(op.comm.group), group.size,
                         op.comm.bytes / 1e6,
                         op.comm.steps > 1 ? fmt::format(" x {} steps", op.comm.steps) : "", host_text),
             t, "s"});
        continue;
      }
      const double t = kernel_time(op.kernel, gpu, in.training.precision);
      kernels += t;
      out.lines.push_back({fmt::format("{} {}", direction, op.name),
                           kernel_detail(op.kernel, t, gpu, in.training.precision) + host_text, t, "s"});
    }
    out.lines.push_back(
        {fmt::format("{}, kernels", direction), "the kernels above, one after another", kernels, "s"});
    out.lines.push_back(
        {fmt::format("{}, collectives", direction), "the collectives above, each alone", collectives, "s"});
    if (eager) {
      out.lines.push_back({fmt::format("{}, host issue", direction),
                           fmt::format("the ops' launches at {:.3g} us each (framework launch_overhead)",
                                       fw.launch_overhead_s * 1e6),
                           host, "s"});
    }
  }
  return out;
}

}  // namespace trainsim::model
