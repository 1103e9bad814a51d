#include "models/workload/gemm_time.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::model {

double gemm_compute_time(double m, double n, double k, double groups, double peak_flops, double f,
                         const topo::GpuSpec& gpu) {
  const topo::ComputeEfficiency& e = gpu.efficiency;
  const double sms = gpu.sm_count;
  const double per_sm = peak_flops / sms * f;
  const double bandwidth = gpu.hbm_bytes_per_s * e.memory_bandwidth_fraction;
  struct Tile {
    double rows, cols, efficiency;
  };
  const Tile tiles[] = {{e.matmul_tile_m, e.matmul_tile_n, 1.0},
                        {e.matmul_tile_m, e.matmul_tile_n / 2, e.matmul_half_tile_efficiency},
                        {e.matmul_tile_m / 2, e.matmul_tile_n / 2, e.matmul_quarter_tile_efficiency}};
  double best = 0;
  bool first = true;
  for (const Tile& t : tiles) {
    const double count = groups * std::ceil(m / t.rows) * std::ceil(n / t.cols);
    double split = 1;
    if (count < sms && e.matmul_split_k_min > 0) {
      split = std::clamp(std::floor(sms / count), 1.0, std::max(1.0, std::floor(k / e.matmul_split_k_min)));
    }
    const double x = count * split / sms;
    const double waves = x + e.matmul_wave_quantisation * (std::ceil(x) - x);
    double time =
        waves * 2.0 * t.rows * t.cols * (k / split + e.matmul_tile_k_overhead) / (per_sm * t.efficiency);
    if (split > 1) time += 2.0 * 4.0 * split * groups * m * n / bandwidth;
    if (first || time < best) best = time;
    first = false;
  }
  return best;
}

}  // namespace trainsim::model
