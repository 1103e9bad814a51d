#include "scenarios/block_fields.hpp"

namespace trainsim::scenario {

using D = Dimension;

const FieldTable<model::CheckpointSpec>& checkpoint_fields() {
  using C = model::CheckpointSpec;
  static const FieldTable<C> kTable{
      quantity_field("interval", &C::interval_s, D::seconds, Bound::positive,
                     "a checkpoint every this much training time, at most 1e9 s; or every_steps"),
      count_field("every_steps", &C::every_steps, 1, 1e12, "a checkpoint every this many steps; or interval"),
      choice_field("mode", &C::mode, model::kCheckpointModeNames,
                   "what training stops for: sync the copy to host memory and the write, async (default) "
                   "the copy and any wait for the previous write"),
      count_field("keep", &C::keep, 1, 1e6, "checkpoints kept in storage, default 1"),
  };
  return kTable;
}

const FieldTable<model::FailureSpec>& failures_fields() {
  using F = model::FailureSpec;
  static const FieldTable<F> kTable{
      quantity_field("node_mtbf", &F::node_mtbf_s, D::seconds, Bound::positive,
                     "mean time between failures of one node; node_mtbf or gpu_mtbf or both",
                     Written::unless_zero),
      quantity_field("gpu_mtbf", &F::gpu_mtbf_s, D::seconds, Bound::positive,
                     "mean time between failures of one GPU, on top of the node's", Written::unless_zero),
      quantity_field("restart", &F::restart_s, D::seconds, Bound::non_negative,
                     "time to detect, reschedule and restart, before the checkpoint's restore; default 0"),
      count_field("seed", &F::seed, 0, 9e15, "seed of the failure draws with trials, default 1"),
      count_field("trials", &F::trials, 0, 1e7,
                  "0 (default): expected values; N: a seeded Monte-Carlo over N runs"),
  };
  return kTable;
}

const FieldTable<model::BudgetSpec>& budget_fields() {
  using B = model::BudgetSpec;
  static const FieldTable<B> kTable{
      quantity_field("max_cost", &B::max_cost_usd, D::usd, Bound::positive,
                     "the most the campaign may cost; above it is a budget violation"),
      quantity_field("deadline", &B::deadline_s, D::seconds, Bound::positive,
                     "the longest the campaign may take; past it is a budget violation"),
      structured_field<B>("memory_headroom", "number or quantity",
                          "HBM that must stay free on each GPU: a fraction from 0 to 0.95, or a size"),
      structured_field<B>("alerts", "list",
                          "fractions of max_cost (> 0, each once) at which the spend is reported"),
  };
  return kTable;
}

std::vector<DocumentedBlock> documented_blocks() {
  return {
      {"checkpoint", field_infos(checkpoint_fields())},
      {"failures", field_infos(failures_fields())},
      {"budget", field_infos(budget_fields())},
  };
}

}  // namespace trainsim::scenario
