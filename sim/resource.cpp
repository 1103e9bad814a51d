#include "sim/resource.hpp"

#include "sim/error.hpp"

namespace trainsim::sim {

Resource::Resource(Engine& engine, std::string name) : engine_(&engine), name_(std::move(name)) {}

Slice Resource::submit(Duration work, Callback on_done) {
  TRAINSIM_CHECK(work >= Duration::zero(), "negative work submitted to resource '" + name_ + "'");
  const Time start = max(engine_->now(), free_at_);
  const Time end = start + work;
  free_at_ = end;
  busy_ += work;
  ++submitted_;
  if (on_done) engine_->at(end, std::move(on_done));
  return Slice{start, end};
}

double Resource::utilisation(Time horizon) const {
  if (horizon <= Time::zero()) return 0.0;
  return static_cast<double>(busy_.ps()) / static_cast<double>(horizon.ps());
}

}  // namespace trainsim::sim
