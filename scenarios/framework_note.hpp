#pragma once
// What a scenario that names no framework is told when its layout is one Megatron-Core does not run: the
// step is then priced with Megatron-Core's habits (TransformerEngine's fused kernels and attention, every
// overlap on), while such layouts are run by PyTorch FSDP or DeepSpeed around model code whose kernels are
// slower. The commands that price a scenario print it; the price does not change.
#include <string>

#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// The note (without "note: ") for `s`, or "" when it names a framework, or its layout is one Megatron-Core
/// runs: gradients or weights sharded (ZeRO 2 or 3) with neither tensor, pipeline nor context parallelism.
[[nodiscard]] std::string unnamed_framework_note(const Scenario& s);

}  // namespace trainsim::scenario
