#pragma once
// Numeric formats of tensors and of the hardware's peak throughput tables.
#include <string_view>

#include "sim/enum_names.hpp"

namespace trainsim::topo {

enum class Precision { fp32, tf32, fp16, bf16, fp8, int8 };

inline constexpr EnumNames<Precision, 6> kPrecisionNames{{{"fp32", Precision::fp32},
                                                          {"tf32", Precision::tf32},
                                                          {"fp16", Precision::fp16},
                                                          {"bf16", Precision::bf16},
                                                          {"fp8", Precision::fp8},
                                                          {"int8", Precision::int8}}};

/// Bytes one element occupies in memory (tf32 is stored as fp32).
constexpr double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32:
      return 4.0;
    case Precision::fp16:
    case Precision::bf16:
      return 2.0;
    case Precision::fp8:
    case Precision::int8:
      return 1.0;
  }
  return 4.0;
}

/// Precision activations are kept in when the step computes at `compute`: fp8 and int8 recipes
/// (Transformer Engine) run only the GEMMs at that precision and keep activations in bf16.
constexpr Precision activation_precision(Precision compute) {
  return compute == Precision::fp8 || compute == Precision::int8 ? Precision::bf16 : compute;
}

/// The spelling used in scenario files and outputs ("bf16").
constexpr std::string_view to_string(Precision p) {
  return name_in(kPrecisionNames, p);
}

}  // namespace trainsim::topo
