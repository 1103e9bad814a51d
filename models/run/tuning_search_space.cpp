#include "models/run/tuning_search_space.hpp"

namespace trainsim::model {

std::optional<SearchSpace> search_space(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::adamw:
    // 8-bit Adam is a drop-in for AdamW with the same hyper-parameters (Dettmers et al. 2022,
    // arXiv:2110.02861, keep AdamW's); it is given AdamW's grid.
    case OptimizerKind::adam8bit:
      return SearchSpace{{{"learning_rate", 4},
                          {"weight_decay", 3},
                          {"warmup", 4},
                          {"beta1", 3},
                          {"beta2", 3},
                          {"epsilon", 4},
                          {"max_grad_norm", 3},
                          {"train_batch_size", 4}},
                         kind == OptimizerKind::adamw
                             ? "Wen et al. 2025 (arXiv:2509.02046), Phase I grid, marin-community/marin "
                               "experiments/optimizer_sweep/PhaseI/exp725_adamwsweep_130M_1.py"
                             : "AdamW's (8-bit Adam keeps AdamW's hyper-parameters, Dettmers et al. 2022): "
                               "Wen et al. 2025 (arXiv:2509.02046), Phase I grid, marin-community/marin "
                               "experiments/optimizer_sweep/PhaseI/exp725_adamwsweep_130M_1.py"};
    case OptimizerKind::lion:
      return SearchSpace{{{"learning_rate", 5},
                          {"weight_decay", 11},
                          {"warmup", 4},
                          {"beta1", 4},
                          {"beta2", 3},
                          {"max_grad_norm", 3},
                          {"train_batch_size", 4}},
                         "Wen et al. 2025 (arXiv:2509.02046), Phase I grid, marin-community/marin "
                         "experiments/optimizer_sweep/PhaseI/exp725_lionsweep_130M_1.py"};
    case OptimizerKind::muon:
      return SearchSpace{{{"learning_rate", 5},
                          {"weight_decay", 3},
                          {"momentum", 4},
                          {"beta1", 4},
                          {"beta2", 3},
                          {"epsilon", 4},
                          {"muon_epsilon", 5},
                          {"max_grad_norm", 3},
                          {"decay", 5},
                          {"muon_to_adam_lr", 3},
                          {"train_batch_size", 4}},
                         "Wen et al. 2025 (arXiv:2509.02046), Phase I grid, marin-community/marin "
                         "experiments/optimizer_sweep/PhaseI/exp725_muonsweep_130M_1.py"};
    // Wen et al.'s sweep names SOAP "soape" (their plots' correct_name maps it to "Soap"). Its
    // precondition_frequency grid, [1, 5], leaves out the baseline 10: counted as 3 values, the baseline and
    // two others, as a pass trains each of them once.
    case OptimizerKind::soap:
      return SearchSpace{{{"learning_rate", 3},
                          {"weight_decay", 3},
                          {"warmup", 3},
                          {"beta1", 3},
                          {"beta2", 4},
                          {"shampoo_beta", 4},
                          {"precondition_frequency", 3},
                          {"block_size", 3},
                          {"epsilon", 3},
                          {"train_batch_size", 3}},
                         "Wen et al. 2025 (arXiv:2509.02046), Phase I grid, marin-community/marin "
                         "experiments/optimizer_sweep/PhaseI/exp725_soapesweep_130M_1.py (commit fd483116)"};
    default:
      return std::nullopt;
  }
}

int coordinate_descent_trials(const SearchSpace& space) {
  int trials = 1;
  for (const TunedHyperparameter& h : space.hyperparameters) trials += h.grid_values - 1;
  return trials;
}

}  // namespace trainsim::model
