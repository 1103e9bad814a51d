#pragma once
// Every value key of a GPU preset (the format of scenarios/presets.hpp) in one table: the block it sits in
// (top level, `peak:` or `efficiency:`), its type, unit and bounds, and the topo::GpuSpec member it sets.
// The preset reader, the scenario dump (gpu_to_flow_yaml) and `trainsim calibrate`'s preset writer all walk
// this table, so a key added to it is read, dumped and written back alike.
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/yaml_tree.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

enum class GpuBlock : std::uint8_t { top, peak, efficiency };

/// The value keys of one block, in table order (the top level's structural keys — preset, name, source,
/// peak, efficiency — are the reader's, not the table's).
[[nodiscard]] std::vector<std::string> gpu_block_keys(GpuBlock block);

/// Reads every key of `block` present in `r` into `gpu`, with the table's bounds and units.
void read_gpu_block(MapReader& r, GpuBlock block, topo::GpuSpec& gpu);

/// One key and its value as YAML text, which read_gpu_block reads back to the same value.
struct GpuPresetEntry {
  GpuBlock block;
  std::string key;
  std::string value;
};

/// Every key of the table with `gpu`'s value, in table order.
[[nodiscard]] std::vector<GpuPresetEntry> gpu_preset_entries(const topo::GpuSpec& gpu);

/// `gpu` as a YAML flow mapping (for the scenario dump).
[[nodiscard]] std::string gpu_to_flow_yaml(const topo::GpuSpec& gpu);
/// `gpu` as a block-style preset file, `notes` as leading comments (for `trainsim calibrate`).
[[nodiscard]] std::string gpu_to_block_yaml(const topo::GpuSpec& gpu, const std::vector<std::string>& notes);

}  // namespace trainsim::scenario
