#pragma once
// Measured training steps read from CSV files, as input to calibration (`trainsim calibrate M.csv`).
//
// Two formats are recognised from the header row:
//  - vTrain ground truth (Bang et al., MICRO'24; /work/shared/validation/vtrain/ground_truth_*.csv):
//      [Parameters (billion),] # GPUs, global batch, micro batch, hidden size, attention heads, # layers,
//      sequence length, tensor parallelism, data parallelism, pipeline parallelism, iteration time (ms)
//    Fields the file does not give are the published setup of that data set: GPT (gelu MLP, ffn 4h,
//    learned positions, biases), vocabulary 51,200, fp16 mixed precision, full activation recomputation,
//    1F1B schedule, no sequence parallelism, gradient reduction not overlapped (no bucketing), standard
//    (non-fused) attention, Adam. One row = one Measurement of iteration_time.
//  - trainsim's published-measurements format (/work/shared/validation/published-measurements.csv):
//      id, source, model_name, params_b, layers, hidden, heads, ffn_hidden, seq_len, vocab, gpus,
//      gpu_type, tp, pp, dp, cp, interleave_chunks, micro_batch, global_batch, recompute, zero_stage,
//      metric, value, notes
//    Only rows describing a whole training step of a fully described model are kept (layers, hidden,
//    heads, seq_len, gpus, global batch known; metric iteration_s, mfu_pct or hfu_pct); other rows
//    (collectives, specifications, failure statistics, per-layer times) are skipped. Metrics are
//    converted to SPEC names and SI: iteration_s -> iteration_time [s], mfu_pct -> mfu [fraction],
//    hfu_pct -> hfu [fraction]. recompute "full" | "selective[+SP]" | "none[+SP]" sets the recompute mode
//    and sequence parallelism; interleave_chunks > 1 selects the interleaved schedule.
// Quoted fields (RFC 4180, "" inside quotes) are supported. Bad rows throw InputError naming file:line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

enum class MeasurementFormat { vtrain, published };

/// One measured number of one training configuration.
struct Measurement {
  std::string id;        ///< the row's id, or "<file stem>-<row number>" for vTrain files
  std::string source;    ///< citation
  std::string gpu_type;  ///< as written in the CSV ("" for vTrain: A100 SXM)
  std::int64_t gpus = 0;
  TransformerSpec model;
  ParallelPlan plan;      ///< dp resolved, dp_auto = false
  TrainingSpec training;  ///< global_batch and precision set
  std::string metric;     ///< SPEC output name: iteration_time | mfu | hfu
  double value = 0;       ///< SI units (seconds, fractions)
};

/// Which format a header row is; throws InputError naming `label` when it is neither.
[[nodiscard]] MeasurementFormat detect_measurement_format(std::string_view header_line,
                                                          const std::string& label);

/// Parses CSV text (either format). `label` names the file in error messages and in vTrain ids.
[[nodiscard]] std::vector<Measurement> parse_measurements_csv(std::string_view text,
                                                              const std::string& label);

/// Reads and parses a CSV file (InputError when it cannot be read).
[[nodiscard]] std::vector<Measurement> read_measurements_csv(const std::string& path);

/// Splits one CSV line into fields (RFC 4180 quoting): sim::read_csv_record's cells, the one CSV reader.
/// InputError at `label`:`line_number`:column when the line is not CSV (read_csv_record's error) or a
/// quoted cell is not closed on it. Exposed for tests.
[[nodiscard]] std::vector<std::string> split_csv_record(std::string_view line, const std::string& label,
                                                        std::size_t line_number);

}  // namespace trainsim::model
