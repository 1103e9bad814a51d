#pragma once
// framework.ep_comm_overlap's pairs: which passes of a pipeline order run merged with another micro-batch's
// pass (each one's expert all-to-alls hidden beside the other's compute: unit_pricing.hpp's
// pair_expert_all_to_alls), and which run alone, their all-to-alls whole (PassCost::forward_alone). The
// order (pipeline_schedule.hpp) says what runs when; this file says which of its passes pair, so that both
// fidelities count the same alone passes.
#include <cstddef>

#include "models/step/pipeline_schedule.hpp"

namespace trainsim::model {

/// Sets order.merged and order.alone_counts as the frameworks pair passes.
///  - pp 1 (Megatron-Core's combined_1f1b_schedule_for_no_pipelining, megatron/core/pipeline_parallel/
///    combined_1f1b.py): the first forward and the last backward run alone, every other backward merged
///    with the next forward; one micro-batch: its forward and backward both alone.
///  - Interleaved (the one pipeline Megatron-Core runs the overlap in: get_pp_rank_microbatches in
///    megatron/core/pipeline_parallel/schedules.py): on every rank the warm-up holds one forward more than
///    without the overlap "to ensure the forward and backward computations are independent in all 1f1b
///    steps", so each rank's first W + 1 forwards and last W + 1 backwards run alone (W + 1: the forwards
///    its order runs before its first backward, its warm-up and first steady forward) and every other
///    forward is merged with a backward; when W + 1 reaches the rank's forwards
///    (are_all_microbatches_in_warmup) nothing is merged.
///  - DualPipeV: exactly its F&B steps (a compute step holding a forward and a backward:
///    deepseek-ai/DualPipe's _forward_backward_chunk, the F&B of DeepSeek-V3's §3.2.1), their W passes
///    included in nothing.
///  - Other pipelines (Megatron-Core refuses them with the overlap; `run` prices them as frameworks that
///    overlap there, e.g. DeepSeek's 1f1b stand-in for DualPipe): a rank's list read in order, two
///    neighbours pair when one is a forward and the other a backward of another micro-batch; ZB-H1's W
///    passes are skipped when looking for the neighbour (a B and the next F pair across the W between
///    them), so ZB-H1 pairs as 1F1B does. A 1F1B or ZB-H1 rank whose warm-up holds every forward
///    (one_f_one_b_warm_up reaches m) merges nothing, as Megatron-Core's are_all_microbatches_in_warmup.
void mark_merged_passes(PipelineOrder& order);

/// Whether the i-th pass of rank `rank`'s list runs alone (not merged: PipelineOrder::merged).
[[nodiscard]] bool runs_alone(const PipelineOrder& order, std::size_t rank, std::size_t i);
/// The passes of `kind` of `chunk` that rank `rank` runs alone (0 for W passes, and in a hand-built order).
[[nodiscard]] int alone_passes(const PipelineOrder& order, int rank, int chunk, PassKind kind);

}  // namespace trainsim::model
