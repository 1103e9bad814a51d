#include "models/spec/transformer_spec.hpp"

#include <cstddef>

#include "sim/error.hpp"

namespace trainsim::model {

std::int64_t TransformerSpec::uniform_window() const {
  if (sliding_window <= 0) return 0;
  std::size_t windowed = 0;
  for (const bool w : window_layers) {
    if (w) ++windowed;
  }
  if (windowed == 0 && !window_layers.empty()) return 0;
  TRAINSIM_CHECK(windowed == window_layers.size(),
                 "a model mixing windowed and full attention layers is priced per layer kind "
                 "(as_attention_layer)");
  return sliding_window;
}

}  // namespace trainsim::model
