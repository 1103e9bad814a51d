#include "models/report/explain_headroom.hpp"

#include <fmt/format.h>

#include "models/report/summary.hpp"

namespace trainsim::model {

ExplainSection explain_headroom(std::optional<double> given_fraction, double memory_per_gpu,
                                double hbm_bytes) {
  const auto gb = [](double bytes) { return format_human(FieldUnit::bytes, bytes); };
  ExplainSection s{.title = "memory headroom"};
  double headroom = 0;
  if (given_fraction) {
    headroom = *given_fraction * hbm_bytes;
    s.lines.push_back({"budget.memory_headroom",
                       fmt::format("{:.3g} % of {} HBM", *given_fraction * 100, gb(hbm_bytes)), headroom,
                       "B"});
  } else {
    const MemoryHeadroom d = default_memory_headroom(hbm_bytes);
    for (const HeadroomPart& p : d.parts)
      s.lines.push_back({p.name, p.formula + "; " + p.source, p.bytes, "B"});
    s.lines.push_back({"default headroom", fmt::format("{:.3g} % of {} HBM", d.fraction * 100, gb(hbm_bytes)),
                       d.bytes, "B"});
    headroom = d.bytes;
    s.notes.push_back(
        "the scenario sets no budget.memory_headroom: `search` keeps this default free on every GPU; "
        "`run` does not (give budget.memory_headroom: 0 to search without it, or a fraction or size)");
  }
  const double free_bytes = hbm_bytes - memory_per_gpu;
  s.notes.push_back(free_bytes >= headroom
                        ? fmt::format("leaves it free: {} free of {} needed", gb(free_bytes), gb(headroom))
                        : fmt::format("does not leave it free: {} free of {} needed",
                                      gb(std::max(0.0, free_bytes)), gb(headroom)));
  return s;
}

}  // namespace trainsim::model
