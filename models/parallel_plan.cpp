#include "models/parallel_plan.hpp"

#include <array>
#include <utility>

namespace trainsim::model {

namespace {

constexpr std::array<std::pair<std::string_view, ZeroStage>, 4> kZeroStageNames{{
    {"0", ZeroStage::none},
    {"1", ZeroStage::optimizer_states},
    {"2", ZeroStage::gradients},
    {"3", ZeroStage::parameters},
}};

}  // namespace

const char* to_string(ZeroStage z) {
  for (const auto& [name, stage] : kZeroStageNames) {
    if (stage == z) return name.data();
  }
  return "0";
}

std::optional<ZeroStage> parse_zero_stage(std::string_view text) {
  for (const auto& [name, stage] : kZeroStageNames) {
    if (name == text) return stage;
  }
  return std::nullopt;
}

std::optional<ZeroStage> zero_stage_numbered(int number) {
  if (number < 0 || number >= static_cast<int>(kZeroStageNames.size())) return std::nullopt;
  return kZeroStageNames[static_cast<std::size_t>(number)].second;
}

}  // namespace trainsim::model
