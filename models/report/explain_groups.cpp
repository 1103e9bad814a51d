#include "models/report/explain_groups.hpp"

#include <fmt/format.h>

#include <string>

#include "models/step/communicators.hpp"

namespace trainsim::model {

namespace {

std::string plural(std::int64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

ExplainLine group_line(std::string label, const topo::CommGroup& g) {
  return {
      std::move(label),
      fmt::format("{} per node on {} (NVLink domains), {}", g.ranks_per_node, plural(g.nodes, "node"),
                  g.leaves == 1 ? std::string("1 leaf switch") : fmt::format("{} leaf switches", g.leaves)),
      static_cast<double>(g.size), "GPUs"};
}

}  // namespace

ExplainSection explain_groups(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  const Communicators c = communicators(plan, cluster);
  std::string order;
  for (const ParallelAxis a : plan.order) order += (order.empty() ? "" : "-") + std::string(to_string(a));
  ExplainSection out;
  out.title = fmt::format("communicator groups (rank order {}, innermost first; GPU 0's)", order);
  out.lines.push_back(group_line("tensor parallel (tp)", c.tp));
  if (plan.cp > 1) out.lines.push_back(group_line("context parallel (cp)", c.cp));
  if (plan.ep > 1) {
    out.lines.push_back(
        group_line(plan.expert_folding ? "expert parallel (ep, folded)" : "expert parallel (ep)", c.ep));
  }
  if (plan.pp > 1) out.lines.push_back(group_line("pipeline (pp)", c.pp));
  out.lines.push_back(group_line("data parallel (gradients: dp·cp·ep)", c.grad));
  if (plan.ep > 1) out.lines.push_back(group_line("expert data parallel (expert gradients)", c.expert_grad));
  if (c.replica.size > 1) {
    out.lines.push_back(group_line("ZeRO sharding group", c.shard));
    out.lines.push_back(group_line("HSDP replicas of a shard", c.replica));
  }
  return out;
}

}  // namespace trainsim::model
