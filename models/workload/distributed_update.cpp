#include "models/workload/distributed_update.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <vector>

#include "models/workload/kernel_time.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// A Muon matrix: a hidden matrix (not an embedding, the head or a vector), as optimizer.cpp decides.
bool orthogonalised(const TensorShape& t) {
  return t.role == TensorRole::matrix && t.rows > 1 && t.cols > 1;
}

struct Matrix {
  double flops = 0;
  double elements = 0;
};

struct Owner {
  double flops = 0;
  double elements = 0;
  bool operator>(const Owner& o) const { return flops > o.flops; }
};

}  // namespace

DistributedMatrixUpdate distributed_muon_update(const OptimizerSpec& spec, Precision compute,
                                                std::span<const TensorShape> tensors, std::int64_t ranks) {
  if (ranks < 1) throw InputError("distributed Muon needs at least one rank to own its matrices");
  DistributedMatrixUpdate out;
  if (spec.kind != OptimizerKind::muon) return out;
  std::vector<Matrix> matrices;
  for (const TensorShape& t : tensors) {
    if (!orthogonalised(t) || !(t.count > 0)) continue;
    const Matrix one{newton_schulz_flops(t.rows, t.cols, spec.muon_ns_iterations),
                     static_cast<double>(t.rows) * static_cast<double>(t.cols)};
    const double whole = std::floor(t.count);
    for (double i = 0; i < whole; ++i) matrices.push_back(one);
    const double part = t.count - whole;
    if (part > 0) matrices.push_back({one.flops * part, one.elements * part});
    out.matrices += t.count;
    out.elements += one.elements * t.count;
    out.total_flops += one.flops * t.count;
  }
  std::sort(matrices.begin(), matrices.end(),
            [](const Matrix& a, const Matrix& b) { return a.flops > b.flops; });
  // The least-loaded owner on top. Only min(ranks, matrices) owners can ever hold work.
  const std::size_t owners =
      std::min(static_cast<std::size_t>(ranks), std::max<std::size_t>(1, matrices.size()));
  std::priority_queue<Owner, std::vector<Owner>, std::greater<>> load;
  for (std::size_t i = 0; i < owners; ++i) load.push({});
  for (const Matrix& m : matrices) {
    Owner o = load.top();
    load.pop();
    o.flops += m.flops;
    o.elements += m.elements;
    load.push(o);
  }
  while (!load.empty()) {
    out.owner_flops_max = std::max(out.owner_flops_max, load.top().flops);
    out.owner_elements_max = std::max(out.owner_elements_max, load.top().elements);
    load.pop();
  }
  const double g = static_cast<double>(ranks);
  const double remote = out.owner_elements_max * (g - 1) / g;
  out.gather_bytes_per_rank = remote * topo::bytes_per_element(spec.state_precision);
  out.scatter_bytes_per_rank = remote * topo::bytes_per_element(weight_storage_precision(compute));
  return out;
}

double matrix_update_time(const OptimizerSpec& spec, Precision compute, std::span<const TensorShape> tensors,
                          bool sharded, const topo::CommGroup& shard, const topo::ClusterSpec& cluster) {
  const topo::GpuSpec& gpu = cluster.node.gpu;
  auto newton_schulz = [&](double flops) {
    return flops > 0 ? kernel_time(KernelCost{OpKind::matmul, flops, 0, 0, 0}, gpu, compute) : 0.0;
  };
  if (spec.kind != OptimizerKind::muon) return 0.0;
  if (!sharded || shard.size <= 1) {
    return newton_schulz(distributed_muon_update(spec, compute, tensors, 1).total_flops);
  }
  const DistributedMatrixUpdate d = distributed_muon_update(spec, compute, tensors, shard.size);
  const double g = static_cast<double>(shard.size);
  // The collectives' sizes as estimate_collective reads them: a reduce-scatter's input and an all-gather's
  // output of the busiest owner's bytes move (G−1)/G of them through each rank.
  const double gather = topo::estimate_collective(topo::CollectiveOp::reduce_scatter,
                                                  d.gather_bytes_per_rank * g / (g - 1), shard, cluster)
                            .time_s;
  const double scatter = topo::estimate_collective(topo::CollectiveOp::all_gather,
                                                   d.scatter_bytes_per_rank * g / (g - 1), shard, cluster)
                             .time_s;
  return newton_schulz(d.owner_flops_max) + gather + scatter;
}

}  // namespace trainsim::model
