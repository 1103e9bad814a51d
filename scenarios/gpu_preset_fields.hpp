#pragma once
// The GPU preset's `efficiency:` keys of the shape-dependent GEMM model, the sustained clock and the
// overlap slow-down (models/workload/gemm_time.hpp and kernel_time.hpp), read and listed in one place for
// the preset reader and for the writers of presets (gpu_to_yaml, `trainsim calibrate`).
#include <string>
#include <utility>
#include <vector>

#include "scenarios/yaml_tree.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

/// Reads matmul_tile_m, matmul_tile_n, matmul_half_tile_efficiency, matmul_quarter_tile_efficiency,
/// matmul_tile_k_overhead, matmul_split_k_min, matmul_wave_quantisation, fp8_matmul_peak_fraction,
/// sustained_clock_fraction and overlap_compute_slowdown.
void read_gemm_shape_efficiency(MapReader& r, topo::ComputeEfficiency& e);

/// The same keys with their values, in that order.
std::vector<std::pair<std::string, double>> gemm_shape_efficiency_values(const topo::ComputeEfficiency& e);

/// The same keys as a flow-mapping fragment (", key: value" for each).
std::string gemm_shape_efficiency_to_yaml(const topo::ComputeEfficiency& e);

}  // namespace trainsim::scenario
