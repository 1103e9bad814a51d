#include "models/step/host_issue.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "models/workload/rank_tensors.hpp"

namespace trainsim::model {

double op_issue_s(const LayerOp& op, const Framework& fw) {
  double s = fw.launch_overhead_s;
  if (!op.communication && op.kernel.kind == OpKind::memory_bound) s *= op.kernel.kernels;
  if (!op.communication && op.kernel.groups > 1) s += op.kernel.groups * fw.expert_launch_s;
  return s;
}

namespace {

// host_sync_index over the ops of `ops` whose names are `prefix` followed by a forward op's name.
std::optional<std::size_t> sync_index(const std::vector<LayerOp>& ops, const Framework& fw,
                                      std::string_view prefix) {
  if (!fw.moe_host_sync) return std::nullopt;
  const auto named = [&](std::string_view name) {
    return std::ranges::find_if(ops, [&](const LayerOp& op) {
      return op.name.size() == prefix.size() + name.size() && op.name.starts_with(prefix) &&
             op.name.ends_with(name);
    });
  };
  if (named("router") == ops.end()) return std::nullopt;
  // The all-to-all and flex dispatchers wait before their token exchange.
  if (const auto a2a = named("ep_dispatch"); a2a != ops.end())
    return static_cast<std::size_t>(a2a - ops.begin());
  // The all-gather dispatcher reads its counts back after its all-gathers.
  if (const auto gathered = named("ep_dispatch.all_gather"); gathered != ops.end())
    return static_cast<std::size_t>(gathered - ops.begin()) + 1;
  // No exchange (ep and expert tp 1): the counts are read back before the experts' GEMMs.
  if (const auto fc1 = named("fc1"); fc1 != ops.end()) return static_cast<std::size_t>(fc1 - ops.begin());
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> host_sync_index(const std::vector<LayerOp>& forward, const Framework& fw) {
  return sync_index(forward, fw, "");
}

std::optional<std::size_t> recompute_sync_index(const std::vector<LayerOp>& backward, const Framework& fw) {
  return sync_index(backward, fw, kRecomputePrefix);
}

double drained_issue_s(std::span<const IssuedBlock> blocks) {
  double issued = 0, finish = 0;
  for (const IssuedBlock& b : blocks) {
    finish = std::max(finish + b.gpu, issued + std::max(b.host, b.gpu));
    issued += b.host;
  }
  return finish;
}

bool updates_tensor_by_tensor(const Framework& fw) {
  return fw.optimizer_tensor_ops > 0 && !fw.cuda_graphs;
}

double per_tensor_update_s(const std::vector<TensorShape>& tensors, double update_s, const Framework& fw) {
  const double all = elements(tensors);
  if (!updates_tensor_by_tensor(fw) || !(all > 0)) return update_s;
  const double first = fw.launch_overhead_s;
  const double rest = (fw.optimizer_tensor_ops - 1) * first;
  double s = 0;
  for (const TensorShape& t : tensors) {
    const double g = update_s * static_cast<double>(t.rows) * static_cast<double>(t.cols) / all;
    const std::array<IssuedBlock, 2> stretch{{{first, 0}, {rest, g}}};
    s += t.count * drained_issue_s(stretch);
  }
  return s;
}

}  // namespace trainsim::model
