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

std::vector<DocumentedBlock> documented_blocks() {
  return {
      {"checkpoint", field_infos(checkpoint_fields())},
  };
}

}  // namespace trainsim::scenario
