#pragma once
// Published attention-kernel benchmarks, transcribed into scenarios/validation/kernels/attention-*.csv:
// the kernel-level data that calibration's first stage fits (scenarios/studies/calibration.hpp) and that
// tests check the attention-kernel model against (models/workload/attention_kernel.hpp).
//
// Columns (header row; lines starting with # are comments): gpu (preset name), implementation
// (flash2 | flash3 | cudnn | standard), pass (forward | backward), causal (true | false), head_dim,
// seq_len, batch, heads, tflops (executed TFLOP/s as the FlashAttention papers count them: forward
// 4·batch·heads·seq_len²·head_dim, halved under a causal mask; backward 2.5 × forward), source (citation:
// paper, figure, panel). Quoted fields follow RFC 4180. Bad rows throw InputError naming file:line.
#include <string>
#include <vector>

#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

struct AttentionKernelPoint {
  std::string where;                       ///< file:line
  std::string gpu;                         ///< GPU preset name
  Attention kernel = Attention::standard;  ///< flash2 | flash3 | cudnn, or standard (unfused)
  bool backward = false;
  bool causal = false;
  double head_dim = 0;
  double seq_len = 0;
  double batch = 0;
  double heads = 0;
  double tflops = 0;  ///< published executed TFLOP/s
  std::string source;

  /// Executed FLOPs of the benchmarked call, counted as the papers count them (above).
  [[nodiscard]] double executed_flops() const;
};

/// Reads one CSV file, or every attention-*.csv in a folder (sorted by name).
[[nodiscard]] std::vector<AttentionKernelPoint> read_attention_kernel_points(const std::string& path);

}  // namespace trainsim::model
