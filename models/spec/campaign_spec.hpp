#pragma once
// What getting a model takes beyond its final run (the scenario's `convergence:` and `tuning:` blocks):
// the quality target that sets the run's length, and the hyper-parameter trials before it. Plain data;
// the formulas are models/run/convergence.hpp and models/run/tuning.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/enum_names.hpp"

namespace trainsim::model {

/// The loss law L(N, D) = E + A / N^alpha + B / D^beta that turns a target loss into tokens.
enum class LossLawName : std::uint8_t { chinchilla, besiroglu_2024, custom };

inline constexpr EnumNames<LossLawName, 2> kLossLawNames{
    {{"chinchilla", LossLawName::chinchilla}, {"besiroglu-2024", LossLawName::besiroglu_2024}}};

/// Which source's tokens-to-target ratio an optimizer gets (models/run/optimizer_efficiency.hpp):
/// `optimistic` (the largest speedup a source reports), `fair-tuned` (equal tuning of every optimizer), or
/// a number given by the user (the optimizer's speedup over AdamW).
enum class EfficiencyBasis : std::uint8_t { optimistic, fair_tuned, given };

inline constexpr EnumNames<EfficiencyBasis, 2> kEfficiencyBasisNames{
    {{"optimistic", EfficiencyBasis::optimistic}, {"fair-tuned", EfficiencyBasis::fair_tuned}}};

struct OptimizerEfficiencySpec {
  EfficiencyBasis basis = EfficiencyBasis::fair_tuned;
  double speedup = 1;  ///< given: tokens to the target = the law's tokens / speedup
};

struct ConvergenceSpec {
  double target_loss = 0;  ///< nats per token
  LossLawName law = LossLawName::chinchilla;
  OptimizerEfficiencySpec optimizer_efficiency;
  /// A target that moves after the run reaches target_loss: the campaign then goes on to this lower loss,
  /// from scratch under a cosine schedule, from the last stable checkpoint under WSD.
  std::optional<double> next_target_loss;
  /// custom: the law's constants.
  double e = 0, a = 0, b = 0, alpha = 0, beta = 0;
  /// Critical batch in tokens (McCandlish et al. 2018); unset: from the target loss (Kaplan et al. 2020).
  std::optional<double> critical_batch_tokens;
};

enum class EarlyStopping : std::uint8_t { none, successive_halving, asha };

inline constexpr EnumNames<EarlyStopping, 3> kEarlyStoppingNames{
    {{"none", EarlyStopping::none},
     {"successive-halving", EarlyStopping::successive_halving},
     {"asha", EarlyStopping::asha}}};

struct TuningSpec {
  std::int64_t trials = 0;    ///< trials started (the first rung); 0 until the reader sets the default
  std::string trials_source;  ///< where a default trial count comes from; empty: given
  double fraction = 0.01;     ///< of the final run's tokens that one trial trains when not stopped early
  EarlyStopping early_stopping = EarlyStopping::none;
  double eta = 3;               ///< successive halving / ASHA: 1/eta of a rung is promoted
  double min_fraction = 0.05;   ///< of a trial's budget trained in the first rung
  std::int64_t concurrent = 1;  ///< trials at once, each on 1/concurrent of the cluster's nodes
};

/// The data work before the run (`data:`): preprocessing the raw corpus, keeping it, moving it.
struct DataSpec {
  double raw_bytes = 0;                 ///< the raw corpus
  double core_hours_per_tb = 0;         ///< preprocessing (filtering, dedup, tokenising) per TB of raw data
  double core_hour_usd = 0;             ///< price of one CPU core-hour
  double storage_usd_per_gb_month = 0;  ///< keeping the raw corpus
  double storage_months = 0;
  double transfer_bytes = 0;  ///< moved into the training region
  double transfer_usd_per_gb = 0;
};

/// One role on the project (`people:`), paid for the campaign's wall clock: the trials, then the run.
struct PersonSpec {
  std::string role;
  std::int64_t count = 1;
  double rate_usd_per_hour = 0;
  double hours_per_week = 40;    ///< when not round the clock
  bool round_the_clock = false;  ///< `coverage: 24x7`: every hour of the campaign
};

}  // namespace trainsim::model
