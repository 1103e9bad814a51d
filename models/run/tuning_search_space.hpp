#pragma once
// How many hyper-parameter trials an optimizer needs by default: one coordinate-descent pass over its
// published search space. Wen et al. 2025 ("Fantastic Pretraining Optimizers and Where to Find Them",
// arXiv:2509.02046) tune each optimizer fairly by coordinate descent: from a baseline, one hyper-parameter at
// a time is swept over its grid with the others held, and the best value is kept (their Phase I). Their
// grids are in the paper's code, marin-community/marin, experiments/optimizer_sweep/PhaseI/
// exp725_<optimizer>sweep_130M_1.py (commit da04f94e for adamw and muon, 829f90c9 for lion). One pass
// trains the baseline once and every other value of every grid once:
//   trials = 1 + sum over the hyper-parameters of (grid values - 1)
// (each baseline value is in its grid). The grids include the schedule's warmup and the batch size, which
// they tuned for every optimizer, so an optimizer with more knobs (Muon: its own and AdamW's for the
// embeddings) needs more trials. Only optimizers with a published grid have a default; others need
// tuning.trials. Pure functions; no I/O.
#include <optional>
#include <string_view>
#include <vector>

#include "models/spec/optimizer_spec.hpp"

namespace trainsim::model {

/// One swept hyper-parameter and the number of values in its grid (the baseline among them).
struct TunedHyperparameter {
  std::string_view name;
  int grid_values = 0;
};

/// An optimizer's published search space.
struct SearchSpace {
  std::vector<TunedHyperparameter> hyperparameters;
  std::string_view source;  ///< where the grid is published
};

/// The search space of `kind`, when a source publishes one (adamw, adam-8bit, lion, muon, soap).
[[nodiscard]] std::optional<SearchSpace> search_space(OptimizerKind kind);

/// Trials of one coordinate-descent pass: 1 + sum of (grid_values - 1).
[[nodiscard]] int coordinate_descent_trials(const SearchSpace& space);

}  // namespace trainsim::model
