#include "scenarios/routing_group_keys.hpp"

#include <string>

namespace trainsim::scenario {

void check_routing_group_keys(Diagnostics& d, const MapReader& r, const model::TransformerSpec& m) {
  if (m.routing_groups == 0 && m.routing_group_top_k == 0) return;
  const auto n = [](std::int64_t x) { return std::to_string(x); };
  if (m.experts == 0) {
    add_at_first_key(d, r, {"routing_groups", "routing_group_top_k", "experts"},
                     "limits where tokens are routed, but experts is 0 (a dense model)");
  } else if (m.routing_groups == 0 || m.routing_group_top_k == 0) {
    add_at_first_key(d, r, {m.routing_groups == 0 ? "routing_group_top_k" : "routing_groups"},
                     "group-limited routing needs both routing_groups and routing_group_top_k");
  } else if (m.experts % m.routing_groups != 0) {
    add_at_first_key(
        d, r, {"routing_groups", "experts"},
        "routing_groups (" + n(m.routing_groups) + ") must divide experts (" + n(m.experts) + ")");
  } else if (m.routing_group_top_k > m.routing_groups || m.routing_group_top_k > m.top_k) {
    add_at_first_key(d, r, {"routing_group_top_k", "routing_groups", "top_k"},
                     "routing_group_top_k (" + n(m.routing_group_top_k) +
                         ") must be at most routing_groups (" + n(m.routing_groups) + ") and top_k (" +
                         n(m.top_k) + ")");
  } else if (m.experts / m.routing_groups * m.routing_group_top_k < m.top_k) {
    add_at_first_key(d, r, {"routing_group_top_k", "routing_groups", "top_k", "experts"},
                     "the routing_group_top_k (" + n(m.routing_group_top_k) +
                         ") groups of experts / routing_groups = " + n(m.experts / m.routing_groups) +
                         " experts hold fewer than top_k (" + n(m.top_k) + ")");
  }
}

}  // namespace trainsim::scenario
