#include "models/report/what_bounds.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "models/report/summary.hpp"

namespace trainsim::model {

Bound what_bounds(const StepShares& step) {
  const double total = step.total();
  if (!(total > 0)) return {"unknown", "no step time to break down"};
  auto pct = [total](double part) { return 100 * part / total; };
  // The losses: every part of the step that is not compute, with how a reader would name it.
  const std::array<std::pair<const char*, double>, 6> losses{{{"TP communication", step.tp},
                                                              {"EP communication", step.ep},
                                                              {"DP communication", step.dp},
                                                              {"PP communication", step.pp},
                                                              {"optimizer", step.optimizer},
                                                              {"bubble", step.bubble}}};
  auto largest = losses[0];
  for (const auto& loss : losses) {
    if (loss.second > largest.second) largest = loss;
  }
  const std::string largest_text = fmt::format("{} {:.0f} %", largest.first, pct(largest.second));
  const double fill = step.memory_fill();
  const std::string memory_text =
      step.capacity > 0
          ? fmt::format("memory {} of {} ({:.0f} %)", format_human(FieldUnit::bytes, step.memory),
                        format_human(FieldUnit::bytes, step.capacity), 100 * fill)
          : std::string("memory unknown");
  const std::string full = fill >= kMemoryBound ? "; " + memory_text : "";
  if (step.compute_share() >= kComputeBound) {
    return {"compute", fmt::format("compute {:.0f} % of the step (MFU {:.0f} %); largest loss {}{}",
                                   pct(step.compute), 100 * step.mfu, largest_text, full)};
  }
  if (fill >= kMemoryBound) {
    return {"memory", fmt::format("{}: no room to trade memory for time; largest loss {}, compute {:.0f} %",
                                  memory_text, largest_text, pct(step.compute))};
  }
  return {largest.first, fmt::format("{} of the step; compute {:.0f} % (MFU {:.0f} %); {}", largest_text,
                                     pct(step.compute), 100 * step.mfu, memory_text)};
}

StepShares step_shares(const std::function<double(std::string_view field)>& field) {
  return {.compute = field("compute"),
          .tp = field("exposed_tp_comm"),
          .ep = field("exposed_ep_comm"),
          .dp = field("exposed_dp_comm"),
          .pp = field("exposed_pp_comm"),
          .optimizer = field("optimizer"),
          .bubble = field("bubble"),
          .memory = field("memory_per_gpu"),
          .capacity = field("memory_capacity"),
          .mfu = field("mfu")};
}

StepShares step_shares(const StepReport& step) {
  const TimeBreakdown& t = step.time;
  return {.compute = t.compute,
          .tp = t.exposed_tp_comm,
          .ep = t.exposed_ep_comm,
          .dp = t.exposed_dp_comm,
          .pp = t.exposed_pp_comm,
          .optimizer = t.optimizer,
          .bubble = t.bubble,
          .memory = step.memory_per_gpu,
          .capacity = step.memory_capacity,
          .mfu = step.mfu};
}

}  // namespace trainsim::model
