#pragma once
// The slowest of N (`cluster.variability`): GPUs of one model differ in speed (manufacturing and power
// management: Sinha et al., SC'22, "Not All GPUs Are Created Equal", arXiv:2208.11035), and a synchronous
// step waits for the slowest of its ranks. Each GPU's kernels take 1 + spread·z times the mean GPU's, z a
// standard normal draw; the expected slowest of N GPUs grows like √(2 ln N).
// - Closed form (the collapsed and analytic steps): every pipeline rank's kernels take 1 + spread·E[max of
//   N draws] times as long, N the layout's GPUs: each stage runs at its slowest GPU's pace (its tensor-
//   parallel ranks wait for each other every layer, its data-parallel replicas at the gradient collectives),
//   and the pipeline's steady state at its slowest stage's.
// - Full cluster: every GPU draws its own z from `cluster.variability.seed`; each replica's stage runs at
//   the slowest of its GPUs.
// - Both relative to the GPU preset's `efficiency_fit_gpus`: constants fitted to steps on N_fit GPUs already
//   hold 1 + spread·E[max of N_fit], so every kernel is divided by that (constants from one GPU's kernel
//   benchmarks: N_fit = 1, nothing to divide). A layout on fewer GPUs than its preset was fitted on waits for
//   a less slow slowest GPU and runs faster than the constants say.
#include <cstdint>
#include <map>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

/// E[max of n independent standard normal draws] (the expected largest order statistic), by quadrature
/// of E = ∫₀^∞ (1 − Φ(x)ⁿ) dx − ∫_{−∞}^0 Φ(x)ⁿ dx; 0 for n = 1, 1/√π for n = 2. Accurate to 1e-6 for n up
/// to 10⁷. Throws InputError for n < 1.
[[nodiscard]] double expected_max_standard_normal(std::int64_t n);

/// The spread in force: `cluster.variability.spread` when given, else the GPU preset's `variability`.
[[nodiscard]] double variability_spread(const topo::ClusterSpec& cluster);

/// What the GPU preset's efficiency constants already hold: 1 + spread · E[max of its `efficiency_fit_gpus`
/// draws] (1 for constants from one GPU's kernel benchmarks); 1 without spread.
[[nodiscard]] double fitted_slowest_gpu_slowdown(const topo::ClusterSpec& cluster);

/// The closed form's slowdown of every kernel: (1 + spread · E[max of the cluster's GPUs]) over
/// fitted_slowest_gpu_slowdown, below 1 on fewer GPUs than the constants were fitted on; 1 without spread.
[[nodiscard]] double expected_slowest_gpu_slowdown(const topo::ClusterSpec& cluster);

/// Full cluster: each GPU's draw 1 + spread·z over fitted_slowest_gpu_slowdown (z from a generator seeded by
/// `cluster.variability.seed`, drawn in rank order) times its node's straggler slowdown (cluster.stragglers),
/// and each replica's stage at the slowest of its GPUs: replica → slowdown per pipeline rank, as
/// replica_slowdowns (asymmetry.hpp) numbers them, with an entry for every replica. Empty when the spread is
/// 0: replica_slowdowns alone then gives the stragglers' slowdowns.
[[nodiscard]] std::map<std::int64_t, std::vector<double>> draw_gpu_variability(
    const ParallelPlan& plan, const topo::ClusterSpec& cluster);

}  // namespace trainsim::model
