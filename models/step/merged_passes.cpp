#include "models/step/merged_passes.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace trainsim::model {

namespace {

// DualPipeV: the passes of each compute step that holds both a forward and a backward.
void merge_program_steps(const std::vector<PipelinePass>& passes, const std::vector<ProgramAction>& program,
                         std::vector<bool>& merged) {
  std::size_t i = 0;
  for (const ProgramAction& a : program) {
    if (a.kind != ProgramAction::Kind::compute) continue;
    const std::size_t end = std::min(passes.size(), i + static_cast<std::size_t>(a.passes));
    bool forward = false, backward = false;
    for (std::size_t j = i; j < end; ++j) {
      forward = forward || passes[j].kind == PassKind::forward;
      backward = backward || passes[j].kind == PassKind::backward;
    }
    for (std::size_t j = i; j < end && forward && backward; ++j)
      merged[j] = passes[j].kind != PassKind::backward_weight;
    i = end;
  }
}

// Megatron-Core's interleaved schedule with the overlap: of the rank's `forwards`, the first `alone` and
// the last `alone` backwards run alone, the rest merged.
void merge_after_warm_up(const std::vector<PipelinePass>& passes, std::size_t forwards, std::size_t alone,
                         std::vector<bool>& merged) {
  if (alone >= forwards) return;  // are_all_microbatches_in_warmup
  std::size_t f = 0, b = 0;
  for (std::size_t i = 0; i < passes.size(); ++i) {
    if (passes[i].kind == PassKind::forward) merged[i] = f++ >= alone;
    if (passes[i].kind == PassKind::backward) merged[i] = b++ < forwards - alone;
  }
}

// Neighbours in the list (W passes skipped) pair when one is a forward and the other a backward of
// another micro-batch.
void merge_neighbours(const std::vector<PipelinePass>& passes, std::vector<bool>& merged) {
  std::vector<std::size_t> fb;  // the forwards and backwards, in order
  for (std::size_t i = 0; i < passes.size(); ++i) {
    if (passes[i].kind != PassKind::backward_weight) fb.push_back(i);
  }
  for (std::size_t k = 0; k + 1 < fb.size();) {
    const PipelinePass& x = passes[fb[k]];
    const PipelinePass& y = passes[fb[k + 1]];
    if (x.kind != y.kind && x.micro_batch != y.micro_batch) {
      merged[fb[k]] = merged[fb[k + 1]] = true;
      k += 2;
    } else {
      ++k;
    }
  }
}

// The forwards a rank runs before its first backward: the warm-up and the first steady forward, or all of
// them.
std::size_t forwards_before_backward(const std::vector<PipelinePass>& passes) {
  const auto first_backward = std::ranges::find(passes, PassKind::backward, &PipelinePass::kind);
  return static_cast<std::size_t>(std::count_if(
      passes.begin(), first_backward, [](const PipelinePass& x) { return x.kind == PassKind::forward; }));
}

}  // namespace

void mark_merged_passes(PipelineOrder& order) {
  order.merged.assign(order.size(), {});
  order.alone_counts.assign(order.size(), {});
  const int p = static_cast<int>(order.size());
  const bool one_f_one_b = order.kind == Schedule::one_f_one_b || order.kind == Schedule::zero_bubble_h1;
  for (std::size_t s = 0; s < order.size(); ++s) {
    const std::vector<PipelinePass>& passes = order[s];
    std::vector<bool>& merged = order.merged[s];
    merged.assign(passes.size(), false);
    const auto forwards =
        static_cast<std::size_t>(std::ranges::count(passes, PassKind::forward, &PipelinePass::kind));
    if (!order.program.empty()) {
      merge_program_steps(passes, order.program[s], merged);
    } else if (order.kind == Schedule::interleaved && p > 1) {
      // Megatron-Core's warm-up W plus one: the order's W forwards and its first steady forward.
      merge_after_warm_up(passes, forwards, forwards_before_backward(passes), merged);
    } else if (!one_f_one_b || one_f_one_b_warm_up(p, static_cast<int>(forwards), static_cast<int>(s)) <
                                   static_cast<int>(forwards)) {
      merge_neighbours(passes, merged);
    }
    std::vector<std::array<int, 2>>& counts = order.alone_counts[s];
    for (std::size_t i = 0; i < passes.size(); ++i) {
      const PipelinePass& x = passes[i];
      if (x.kind == PassKind::backward_weight || merged[i]) continue;
      if (static_cast<std::size_t>(x.chunk) >= counts.size())
        counts.resize(static_cast<std::size_t>(x.chunk) + 1);
      ++counts[static_cast<std::size_t>(x.chunk)][x.kind == PassKind::backward ? 1 : 0];
    }
  }
}

bool runs_alone(const PipelineOrder& order, std::size_t rank, std::size_t i) {
  return !order.merged.empty() && !order.merged[rank][i];
}

int alone_passes(const PipelineOrder& order, int rank, int chunk, PassKind kind) {
  if (kind == PassKind::backward_weight || static_cast<std::size_t>(rank) >= order.alone_counts.size())
    return 0;
  const std::vector<std::array<int, 2>>& counts = order.alone_counts[static_cast<std::size_t>(rank)];
  if (chunk < 0 || static_cast<std::size_t>(chunk) >= counts.size()) return 0;
  return counts[static_cast<std::size_t>(chunk)][kind == PassKind::backward ? 1 : 0];
}

}  // namespace trainsim::model
