#pragma once
// Resource: a FIFO serial server (a GPU compute stream, a copy engine, a storage queue). Work items run
// one at a time in submission order, without preemption. Because durations are known when submitted,
// each item's start and end are known at once; only the completion needs an event.
#include <string>

#include "sim/callback.hpp"
#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace trainsim::sim {

/// When a submitted work item runs.
struct Slice {
  Time start;
  Time end;
};

class Resource {
 public:
  /// The engine must outlive the resource.
  Resource(Engine& engine, std::string name);

  /// Queues `work` (>= 0) behind everything submitted before; `on_done` (may be empty) runs at its end.
  /// Returns when the item will start and end.
  Slice submit(Duration work, Callback on_done);

  [[nodiscard]] const std::string& name() const { return name_; }
  /// When everything submitted so far is done (now() or earlier when idle).
  [[nodiscard]] Time free_at() const { return free_at_; }
  /// Total work submitted, in time: the busy time once it has all run.
  [[nodiscard]] Duration busy_time() const { return busy_; }
  /// Number of items submitted.
  [[nodiscard]] std::uint64_t submitted() const { return submitted_; }
  /// busy_time() / (horizon - start of simulation), in [0, 1] when horizon >= free_at(); 0 for an empty
  /// horizon.
  [[nodiscard]] double utilisation(Time horizon) const;

 private:
  Engine* engine_;
  std::string name_;
  Time free_at_;
  Duration busy_;
  std::uint64_t submitted_ = 0;
};

}  // namespace trainsim::sim
