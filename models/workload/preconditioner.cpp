#include "models/workload/preconditioner.hpp"

#include <utility>

namespace trainsim::model {

namespace {

// Distributed Shampoo's constructor defaults (facebookresearch/optimizers, DistributedShampoo.__init__).
constexpr int kMaxDim = 1024;
constexpr int kShampooFrequency = 1;
// SOAP's precondition_frequency in its README's usage (nikhilvyas/SOAP).
constexpr int kSoapFrequency = 10;

// A side cut into pieces of at most `most`: (length, how many) pairs, the full pieces then the rest.
std::vector<std::pair<std::int64_t, double>> pieces(std::int64_t side, std::int64_t most) {
  std::vector<std::pair<std::int64_t, double>> out;
  const std::int64_t full = side / most;  // whole pieces, counted exactly
  if (full > 0) out.emplace_back(most, static_cast<double>(full));
  if (side % most > 0) out.emplace_back(side % most, 1.0);
  return out;
}

// A side of length n gets a factor when it is longer than one (a vector's second side has none).
std::int64_t factor_side(std::int64_t n) {
  return n > 1 ? n : 0;
}

}  // namespace

bool keeps_preconditioners(OptimizerKind kind) {
  return kind == OptimizerKind::shampoo || kind == OptimizerKind::soap;
}

int max_preconditioner_dim(const OptimizerSpec& spec) {
  return spec.max_preconditioner_dim > 0 ? spec.max_preconditioner_dim : kMaxDim;
}

int precondition_frequency(const OptimizerSpec& spec) {
  if (spec.precondition_frequency > 0) return spec.precondition_frequency;
  return spec.kind == OptimizerKind::soap ? kSoapFrequency : kShampooFrequency;
}

std::vector<PreconditionedBlock> preconditioned_blocks(const OptimizerSpec& spec, const TensorShape& t) {
  std::vector<PreconditionedBlock> out;
  if (!keeps_preconditioners(spec.kind) || !(t.count > 0)) return out;
  const std::int64_t most = max_preconditioner_dim(spec);
  // A vector is one side of rows · cols elements, cut like a matrix's side.
  const std::int64_t rows = t.is_vector() ? t.rows * t.cols : t.rows;
  const std::int64_t cols = t.is_vector() ? 1 : t.cols;
  for (const auto& [r, nr] : pieces(rows, most)) {
    for (const auto& [c, nc] : pieces(cols, most)) {
      out.push_back({r, c, t.count * nr * nc, factor_side(r), factor_side(c)});
    }
  }
  return out;
}

double preconditioner_step_flops(const OptimizerSpec& spec, const PreconditionedBlock& b) {
  const double products = spec.kind == OptimizerKind::soap ? 4 : 2;
  const double one =
      2.0 * static_cast<double>(b.rows) * static_cast<double>(b.cols) * static_cast<double>(b.left + b.right);
  return products * one;
}

double preconditioner_refresh_flops(const OptimizerSpec& spec, const PreconditionedBlock& b) {
  const double per_cube = spec.kind == OptimizerKind::soap ? 14.0 / 3.0 : 11.0;
  const auto cube = [](std::int64_t d) {
    const auto x = static_cast<double>(d);
    return x * x * x;
  };
  return per_cube * (cube(b.left) + cube(b.right));
}

double preconditioner_flops_per_step(const OptimizerSpec& spec, const PreconditionedBlock& b) {
  return preconditioner_step_flops(spec, b) +
         preconditioner_refresh_flops(spec, b) / static_cast<double>(precondition_frequency(spec));
}

}  // namespace trainsim::model
