#include "models/spec/transformer_spec.hpp"

#include "sim/error.hpp"

namespace trainsim::model {

std::int64_t TransformerSpec::uniform_window() const {
  const std::int64_t windowed = windowed_layer_count();
  if (windowed == 0) return 0;
  TRAINSIM_CHECK(windowed == layers,
                 "a model mixing windowed and full attention layers is priced per layer kind "
                 "(as_attention_layer)");
  return sliding_window;
}

}  // namespace trainsim::model
