#include "scenarios/gpu_efficiency_block.hpp"

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

void read_gemm_shape_efficiency(MapReader& r, topo::ComputeEfficiency& e) {
  r.number("matmul_tile_m", e.matmul_tile_m, 8, 1024);
  r.number("matmul_tile_n", e.matmul_tile_n, 8, 1024);
  r.number("matmul_half_tile_efficiency", e.matmul_half_tile_efficiency, 1e-3, 1.0);
  r.number("matmul_quarter_tile_efficiency", e.matmul_quarter_tile_efficiency, 1e-3, 1.0);
  r.number("matmul_tile_k_overhead", e.matmul_tile_k_overhead, 0, 1e6);
  r.number("matmul_split_k_min", e.matmul_split_k_min, 0, 1e9);
  r.number("matmul_wave_quantisation", e.matmul_wave_quantisation, 0, 1.0);
  r.number("fp8_matmul_peak_fraction", e.fp8_matmul_peak_fraction, 0, 1.0);
  r.number("sustained_clock_fraction", e.sustained_clock_fraction, 1e-2, 1.0);
  r.number("overlap_compute_slowdown", e.overlap_compute_slowdown, 0, 1.0);
}

std::vector<std::pair<std::string, double>> gemm_shape_efficiency_values(const topo::ComputeEfficiency& e) {
  return {{"matmul_tile_m", e.matmul_tile_m},
          {"matmul_tile_n", e.matmul_tile_n},
          {"matmul_half_tile_efficiency", e.matmul_half_tile_efficiency},
          {"matmul_quarter_tile_efficiency", e.matmul_quarter_tile_efficiency},
          {"matmul_tile_k_overhead", e.matmul_tile_k_overhead},
          {"matmul_split_k_min", e.matmul_split_k_min},
          {"matmul_wave_quantisation", e.matmul_wave_quantisation},
          {"fp8_matmul_peak_fraction", e.fp8_matmul_peak_fraction},
          {"sustained_clock_fraction", e.sustained_clock_fraction},
          {"overlap_compute_slowdown", e.overlap_compute_slowdown}};
}

std::string gemm_shape_efficiency_to_yaml(const topo::ComputeEfficiency& e) {
  std::string s;
  for (const auto& [key, value] : gemm_shape_efficiency_values(e))
    s += ", " + key + ": " + format_number(value);
  return s;
}

}  // namespace trainsim::scenario
