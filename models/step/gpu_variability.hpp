#pragma once
// The slowest of N (`cluster.variability`): GPUs of one model differ in speed (manufacturing and power
// management: Sinha et al., SC'22, "Not All GPUs Are Created Equal", arXiv:2208.11035), and a synchronous
// step waits for the slowest of its ranks. Each GPU's kernels take 1 + spread·z times the mean GPU's, z a
// standard normal draw; the expected slowest of N GPUs grows like √(2 ln N).
// - Closed form (the collapsed and analytic steps), from the order statistics of the draws: a replica's
//   stage runs at its slowest GPU's pace (its tensor-parallel ranks wait for each other every layer), so
//   stage s of replica r takes 1 + spread·X(r,s), X the largest of the G draws it holds (mean E[max of G],
//   standard deviation sd[max of G]). A replica's 1F1B step is its pipeline's fill and drain, a sum over
//   its other p − 1 stages, plus its m·v steady-state passes at its slowest stage's pace, and the step
//   waits for the slowest replica. The sum over stages averages the draws: the slowest of the R replicas'
//   sums is E[max of G] + sd[max of G]·E[max of R]/√(p − 1) per stage (their sums nearly normal); the
//   steady state waits for the slowest of all N = G·R·p GPUs. Every stage of the collapsed step takes
//   1 + spread·x̄ times as long, x̄ those two weighted by their passes (p − 1 and m·v), an upper bound
//   (the slowest replica's sum and its slowest stage are not always the same replica's). Without a
//   pipeline (p = 1) x̄ = E[max of N].
//   A straggler's replica is timed on its own: its stages at the straggler's slowdown times
//   1 + spread·E[max of G] (its own GPUs' draws), and the step is the slower of it and the replica above,
//   which is what the full cluster's draws compare, not the straggler on top of the slowest of N.
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

struct StepPlan;

/// E[max of n independent standard normal draws] (the expected largest order statistic), by quadrature
/// of E = ∫₀^∞ (1 − Φ(x)ⁿ) dx − ∫_{−∞}^0 Φ(x)ⁿ dx; 0 for n = 1, 1/√π for n = 2. Accurate to 1e-6 for n up
/// to 10⁷. Throws InputError for n < 1.
[[nodiscard]] double expected_max_standard_normal(std::int64_t n);

/// The spread in force: `cluster.variability.spread` when given, else the GPU preset's `variability`.
[[nodiscard]] double variability_spread(const topo::ClusterSpec& cluster);

/// What the GPU preset's efficiency constants already hold: 1 + spread · E[max of its `efficiency_fit_gpus`
/// draws] (1 for constants from one GPU's kernel benchmarks); 1 without spread.
[[nodiscard]] double fitted_slowest_gpu_slowdown(const topo::ClusterSpec& cluster);

/// The standard deviation of the max of n independent standard normal draws, by quadrature of
/// E[max²] = ∫₀^∞ 2x (1 − Φ(x)ⁿ) dx + ∫_{−∞}^0 2|x| Φ(x)ⁿ dx; 1 for n = 1, √(1 − 1/π) for n = 2. Throws
/// InputError for n < 1.
[[nodiscard]] double sd_max_standard_normal(std::int64_t n);

/// The draws one step waits on, as the closed form counts them (file comment).
struct PipelineDraws {
  std::int64_t stage_gpus = 1;  ///< G: GPUs of one replica's pipeline rank (tp·cp, ·ep on an axis of its own)
  std::int64_t replicas = 1;    ///< R: data-parallel replicas
  int stages = 1;               ///< p: pipeline ranks
  double steady_passes = 1;  ///< m·v: passes the slowest stage runs back to back (micro-batches × chunks)
};
[[nodiscard]] PipelineDraws pipeline_draws(const ParallelPlan& plan, const StepPlan& step);

/// x̄ of the file comment: the expected draw every collapsed stage runs at.
[[nodiscard]] double expected_slowest_draw(const PipelineDraws& draws);

/// The closed form's slowdown of every kernel: (1 + spread · expected_slowest_draw) over
/// fitted_slowest_gpu_slowdown, below 1 on fewer GPUs than the constants were fitted on; 1 without spread.
[[nodiscard]] double expected_slowest_gpu_slowdown(const topo::ClusterSpec& cluster,
                                                   const PipelineDraws& draws);

/// A straggler replica's stage before its straggler slowdown: (1 + spread · E[max of G]) over
/// fitted_slowest_gpu_slowdown; 1 without spread.
[[nodiscard]] double expected_own_stage_slowdown(const topo::ClusterSpec& cluster,
                                                 const PipelineDraws& draws);

/// Full cluster: each GPU's draw 1 + spread·z over fitted_slowest_gpu_slowdown (z from a generator seeded by
/// `cluster.variability.seed`, drawn in rank order) times its node's straggler slowdown (cluster.stragglers),
/// and each replica's stage at the slowest of its GPUs: replica → slowdown per pipeline rank, as
/// replica_slowdowns (asymmetry.hpp) numbers them, with an entry for every replica. Empty when the spread is
/// 0: replica_slowdowns alone then gives the stragglers' slowdowns.
[[nodiscard]] std::map<std::int64_t, std::vector<double>> draw_gpu_variability(
    const ParallelPlan& plan, const topo::ClusterSpec& cluster);

}  // namespace trainsim::model
