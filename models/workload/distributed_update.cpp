#include "models/workload/distributed_update.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <vector>

#include "models/workload/preconditioner.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// A Muon matrix: a hidden matrix (not an embedding, the head or a vector), as optimizer.cpp decides.
bool orthogonalised(const TensorShape& t) {
  return t.role == TensorRole::matrix && t.rows > 1 && t.cols > 1;
}

struct Piece {
  double flops = 0;
  double elements = 0;
};

struct Owner {
  double flops = 0;
  double elements = 0;
  bool operator>(const Owner& o) const { return flops > o.flops; }
};

// `count` pieces of one kind: whole ones, and a fraction of one.
void add_pieces(std::vector<Piece>& pieces, DistributedMatrixUpdate& out, const Piece& one, double count) {
  const double whole = std::floor(count);
  for (double i = 0; i < whole; ++i) pieces.push_back(one);
  const double part = count - whole;
  if (part > 0) pieces.push_back({one.flops * part, one.elements * part});
  out.matrices += count;
  out.elements += one.elements * count;
  out.total_flops += one.flops * count;
}

std::vector<Piece> pieces_of(const OptimizerSpec& spec, std::span<const TensorShape> tensors,
                             DistributedMatrixUpdate& out) {
  std::vector<Piece> pieces;
  for (const TensorShape& t : tensors) {
    if (!(t.count > 0)) continue;
    if (spec.kind == OptimizerKind::muon) {
      if (!orthogonalised(t)) continue;
      add_pieces(pieces, out,
                 {newton_schulz_flops(t.rows, t.cols, spec.muon_ns_iterations),
                  static_cast<double>(t.rows) * static_cast<double>(t.cols)},
                 t.count);
    } else {
      for (const PreconditionedBlock& b : preconditioned_blocks(spec, t)) {
        add_pieces(pieces, out,
                   {preconditioner_flops_per_step(spec, b),
                    static_cast<double>(b.rows) * static_cast<double>(b.cols)},
                   b.count);
      }
    }
  }
  return pieces;
}

}  // namespace

DistributedMatrixUpdate distributed_matrix_update(const OptimizerSpec& spec, Precision compute,
                                                  std::span<const TensorShape> tensors, std::int64_t ranks) {
  if (ranks < 1) throw InputError("a distributed matrix update needs at least one rank to own its matrices");
  DistributedMatrixUpdate out;
  if (!optimizer_info(spec.kind).needs_full_matrices) return out;
  std::vector<Piece> pieces = pieces_of(spec, tensors, out);
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.flops > b.flops; });
  // The least-loaded owner on top. Only min(ranks, pieces) owners can ever hold work.
  const std::size_t owners =
      std::min(static_cast<std::size_t>(ranks), std::max<std::size_t>(1, pieces.size()));
  std::priority_queue<Owner, std::vector<Owner>, std::greater<>> load;
  for (std::size_t i = 0; i < owners; ++i) load.push({});
  for (const Piece& m : pieces) {
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
  if (spec.kind == OptimizerKind::muon) {
    out.gather_bytes_per_rank = remote * topo::bytes_per_element(spec.state_precision);
    out.scatter_bytes_per_rank = remote * topo::bytes_per_element(weight_storage_precision(compute));
  } else {
    out.gather_bytes_per_rank = remote * topo::bytes_per_element(gradient_precision(spec, compute));
    out.direction_gather_bytes = g * out.owner_elements_max * topo::bytes_per_element(Precision::fp32);
  }
  return out;
}

MatrixUpdateWork matrix_update_work(const OptimizerSpec& spec, Precision compute,
                                    std::span<const TensorShape> tensors, bool sharded, std::int64_t ranks) {
  MatrixUpdateWork w;
  w.precision = spec.kind == OptimizerKind::muon ? compute : Precision::fp32;
  if (!optimizer_info(spec.kind).needs_full_matrices) return w;
  if (!sharded || ranks <= 1) {
    w.matmul_flops = distributed_matrix_update(spec, compute, tensors, 1).total_flops;
    return w;
  }
  const DistributedMatrixUpdate d = distributed_matrix_update(spec, compute, tensors, ranks);
  w.matmul_flops = d.owner_flops_max;
  const double g = static_cast<double>(ranks);
  // A reduce-scatter's input and an all-gather's output of the busiest owner's bytes move (G−1)/G of them
  // through each rank.
  const double gathered = d.gather_bytes_per_rank * g / (g - 1);
  if (spec.kind == OptimizerKind::muon) {
    w.collectives.push_back({topo::CollectiveOp::reduce_scatter, gathered, "muon momentum gather"});
    w.collectives.push_back(
        {topo::CollectiveOp::all_gather, d.scatter_bytes_per_rank * g / (g - 1), "muon update scatter"});
  } else {
    w.collectives.push_back({topo::CollectiveOp::reduce_scatter, gathered, "preconditioner gradient gather"});
    w.collectives.push_back(
        {topo::CollectiveOp::all_gather, d.direction_gather_bytes, "search direction all-gather"});
  }
  return w;
}

}  // namespace trainsim::model
