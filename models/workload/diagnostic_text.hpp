#pragma once
// A diagnostic's message given as text or as a callable that makes it, so that a check run on every layout
// of a search (check_transformer_spec, check_shard) builds its messages only when it fails.
#include <string>
#include <type_traits>

namespace trainsim::model {

template <class Message>
[[nodiscard]] std::string diagnostic_text(const Message& message) {
  if constexpr (std::is_invocable_v<const Message&>) {
    return message();
  } else {
    return std::string(message);
  }
}

}  // namespace trainsim::model
