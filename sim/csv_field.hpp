#pragma once
// One CSV field as RFC 4180 writes it: as is, or in double quotes (each quote doubled) when it holds a comma,
// a quote or a line break. The one quoting rule of every CSV this project writes (traces, summaries and
// sweep rows, a shared cluster's jobs).
#include <string>
#include <string_view>

namespace trainsim::sim {

/// Appends `field` to `out`, quoted when it must be.
void append_csv_field(std::string& out, std::string_view field);

/// `field`, quoted when it must be.
[[nodiscard]] std::string csv_field(std::string_view field);

}  // namespace trainsim::sim
