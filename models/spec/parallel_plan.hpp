#pragma once
// How a step is laid out over GPUs: the scenario's `parallelism:` block as plain data.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <vector>

#include "sim/enum_names.hpp"

namespace trainsim::model {

enum class Schedule { gpipe, one_f_one_b, interleaved, zero_bubble_h1 };
enum class Recompute { none, selective, full };
enum class ParallelAxis { tp, cp, ep, pp, dp };

inline constexpr EnumNames<Schedule, 4> kScheduleNames{{{"gpipe", Schedule::gpipe},
                                                        {"1f1b", Schedule::one_f_one_b},
                                                        {"interleaved", Schedule::interleaved},
                                                        {"zero-bubble-h1", Schedule::zero_bubble_h1}}};
inline constexpr EnumNames<Recompute, 3> kRecomputeNames{
    {{"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}}};
inline constexpr EnumNames<ParallelAxis, 5> kParallelAxisNames{{{"tp", ParallelAxis::tp},
                                                                {"cp", ParallelAxis::cp},
                                                                {"ep", ParallelAxis::ep},
                                                                {"pp", ParallelAxis::pp},
                                                                {"dp", ParallelAxis::dp}}};

constexpr std::string_view to_string(Schedule s) {
  return name_in(kScheduleNames, s);
}
constexpr std::string_view to_string(Recompute r) {
  return name_in(kRecomputeNames, r);
}
constexpr std::string_view to_string(ParallelAxis a) {
  return name_in(kParallelAxisNames, a);
}

struct ParallelPlan {
  int tp = 1;
  int pp = 1;
  std::int64_t dp = 1;              ///< resolved degree (the loader resolves `auto`)
  bool dp_auto = true;              ///< the scenario said `auto`: dp = GPUs / (tp·pp·cp·ep)
  int cp = 1;
  int ep = 1;
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;           ///< model chunks per pipeline rank (interleaved)
  std::vector<int> stage_layers;    ///< layers per stage; empty: spread evenly, remainder on middle stages
  int micro_batch = 1;              ///< sequences per micro-batch per data-parallel rank
  bool sequence_parallel = false;
  int zero = 0;                     ///< 0 | 1 | 2 | 3 (3 = FSDP full shard)
  Recompute recompute = Recompute::none;
  bool overlap_grad_reduce = true;
  double bucket_bytes = 40e6;       ///< gradient bucket size, bytes
  /// Rank placement, innermost (fastest-varying, same node) first.
  std::vector<ParallelAxis> order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep,
                                     ParallelAxis::pp, ParallelAxis::dp};

  /// tp·pp·cp·ep, or kOverflowedSize when the product does not fit in 64 bits (degrees are read up to
  /// 1e6 each, so a product of four can overflow: no real cluster matches the saturated value).
  [[nodiscard]] std::int64_t model_parallel_size() const {
    return saturating_product({tp, pp, cp, ep});
  }
  [[nodiscard]] std::int64_t world_size() const { return saturating_product({model_parallel_size(), dp}); }

  static constexpr std::int64_t kOverflowedSize = std::numeric_limits<std::int64_t>::max();

 private:
  static std::int64_t saturating_product(std::initializer_list<std::int64_t> factors) {
    std::int64_t product = 1;
    for (const std::int64_t f : factors) {
      if (f == kOverflowedSize || __builtin_mul_overflow(product, f, &product)) return kOverflowedSize;
    }
    return product;
  }
};

}  // namespace trainsim::model
