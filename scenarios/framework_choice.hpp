#pragma once
// Which framework's habits, and which attention kernel, price a scenario: the one the `framework:` block
// names, or for a scenario that names none the one its layout implies (model::unnamed_framework_preset:
// PyTorch FSDP1 for ZeRO 2–3 without model parallelism, Megatron-Core otherwise). The loader applies it,
// and so does the layout search to each layout it prices, so a layout is priced as `trainsim run` prices
// it. The commands that price a scenario print a note when the layout chose the framework.
#include <string>

#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// The plan's framework becomes the preset its layout implies (model::unnamed_framework_preset) unless it
/// is that preset already, keeping what other keys set on it: memory.reserve and reshard_after_forward
/// (which the layout search varies). For a scenario that names no framework.
void choose_unnamed_framework(model::ParallelPlan& plan);

/// `plan` (a layout of `s`'s other than its own) with the framework `s`'s block that names no preset
/// (Scenario::unnamed_framework_block) gives it: the preset `plan`'s layout implies with the block's flags,
/// and that preset's overlap_grad_reduce unless the scenario wrote one, as the loader reads the block for a
/// scenario of that layout (`run --set`). Keeps memory.reserve and reshard_after_forward, as
/// choose_unnamed_framework does. Nothing when `s` has no such block.
void reread_unnamed_framework(const Scenario& s, model::ParallelPlan& plan);

/// The framework and attention kernel `s` runs with its layout as it stands: without a `framework:` block,
/// the preset the layout implies (above); then `attention: flash` is that framework's fused kernel where its
/// model code picks one (torchtitan: PyTorch SDPA's FlashAttention-2) and the GPU runs it, else it stays the
/// GPU's default (kernel_time resolves it), recorded in s.attention_from_framework. The loader calls it, and
/// the layout search again for each layout.
void choose_framework(Scenario& s);

/// The note (without "note: ") for `s`, or "" when it names a framework or its layout is Megatron-Core's.
[[nodiscard]] std::string unnamed_framework_note(const Scenario& s);

}  // namespace trainsim::scenario
