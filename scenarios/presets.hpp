#pragma once
// Shipped presets, looked up by name: GPUs (topologies/presets/gpus/NAME.yaml), nodes
// (topologies/presets/nodes/NAME.yaml), models (models/presets/NAME.yaml) and region price tables
// (models/regions/NAME.yaml) in the shipped data (share/trainsim/{gpus,nodes,models,regions} of an
// installed binary, else the source tree it was built from; scenarios/shipped_data.hpp), then in each
// folder of the TRAINSIM_PATH environment variable (colon-separated), which may hold gpus/, nodes/, models/
// and regions/ sub-folders of the same layout (a later folder does not shadow an earlier one: the first
// match wins).
//
// File formats (all quantities with units, see scenarios/quantity.hpp):
//   GPU:   {name, peak: {fp32, tf32, fp16, bf16, fp8, int8: "312 TFLOP/s"}, hbm: "80 GiB",
//           hbm_bandwidth: "2039 GB/s", nvlink: "300 GB/s", tdp: "400 W", idle: "60 W",
//           efficiency: {matmul_peak_fraction, matmul_half_flops, memory_bandwidth_fraction,
//                        elementwise_bandwidth_fraction,
//                        kernel_overhead: "4 us", attention_kernel, flash2|flash3|cudnn_attention_fraction,
//                        flash_attention_half_flops}}
//   node:  {name, gpu: NAME | {preset: NAME, …GPU keys}, gpus_per_node, fabric: nvswitch|nvlink-mesh|pcie,
//           intra_bandwidth, intra_latency, in_switch_reduction, nics_per_node, nic: "200 Gb/s", pcie,
//           host_power}
//   model: the keys of a scenario's `model:` mapping (layers, hidden, heads, …).
//   region: {name, description, gpu_hour: {GPU: {value, source, date}}, storage, egress, energy, carbon}
//           (scenarios/region_block.hpp)
// Unknown names throw trainsim::InputError with a "did you mean" and the list of known names.
//
// Parsed presets are kept in a PresetLibrary that its caller owns: a sweep, a validation run or the error
// band's cases read each preset file once for all their loads and threads; the Python module keeps one for
// its process (tools/python/core_module.cpp); any other load reads into a library of its own, so a preset
// edited between two loads is seen. The scenarios library itself caches nothing process-wide.
#include <memory>
#include <string>
#include <vector>

#include "models/spec/region_prices.hpp"
#include "models/spec/transformer_spec.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

enum class PresetKind { gpu, node, model, region };

/// Parsed presets by file path, for the loads of one owner (scenarios/loader.hpp takes it). Thread-safe:
/// the threads of one sweep share it. Neither copied nor moved (its threads hold references).
class PresetLibrary {
 public:
  PresetLibrary();
  ~PresetLibrary();
  PresetLibrary(const PresetLibrary&) = delete;
  PresetLibrary& operator=(const PresetLibrary&) = delete;

  [[nodiscard]] topo::GpuSpec gpu(const std::string& name);
  [[nodiscard]] topo::NodeSpec node(const std::string& name);
  [[nodiscard]] model::TransformerSpec model(const std::string& name);
  [[nodiscard]] model::RegionPrices region(const std::string& name);

  /// The parsed files and their lock; defined in presets.cpp, the only place that reads them.
  struct Files;
  [[nodiscard]] Files& files() { return *files_; }

 private:
  std::unique_ptr<Files> files_;
};

/// One preset looked up in a library of its own (each call reads the file).
[[nodiscard]] topo::GpuSpec gpu_preset(const std::string& name);
[[nodiscard]] topo::NodeSpec node_preset(const std::string& name);
[[nodiscard]] model::TransformerSpec model_preset(const std::string& name);
[[nodiscard]] model::RegionPrices region_preset(const std::string& name);

/// Sorted, de-duplicated names of every preset of a kind found on the search path.
[[nodiscard]] std::vector<std::string> preset_names(PresetKind kind);
[[nodiscard]] inline std::vector<std::string> gpu_preset_names() {
  return preset_names(PresetKind::gpu);
}
[[nodiscard]] inline std::vector<std::string> node_preset_names() {
  return preset_names(PresetKind::node);
}
[[nodiscard]] inline std::vector<std::string> model_preset_names() {
  return preset_names(PresetKind::model);
}
[[nodiscard]] inline std::vector<std::string> region_preset_names() {
  return preset_names(PresetKind::region);
}

/// The folders searched for a kind, in order (shipped first, then TRAINSIM_PATH entries).
[[nodiscard]] std::vector<std::string> preset_folders(PresetKind kind);
/// The file a preset name resolves to; throws InputError (did you mean …) when there is none.
[[nodiscard]] std::string preset_file(PresetKind kind, const std::string& name);

/// Loads a preset file directly (e.g. a calibrated GPU preset written by `trainsim calibrate`).
[[nodiscard]] topo::GpuSpec load_gpu_preset_file(const std::string& path);
[[nodiscard]] topo::NodeSpec load_node_preset_file(const std::string& path);
[[nodiscard]] model::TransformerSpec load_model_preset_file(const std::string& path);

}  // namespace trainsim::scenario
