#pragma once
// A few recent results of a pure computation with their keys, for reuse by equal inputs: a search prices
// many layouts in a row that share a pipeline schedule or its replay, and looking through a handful of
// keys costs far less than computing again. Not thread-safe: keep one per thread (thread_local).
#include <cstddef>
#include <utility>
#include <vector>

namespace trainsim::model {

/// Up to kKept (key, value) pairs; once full, each new one replaces the oldest.
template <class Key, class Value, std::size_t kKept>
class RecentResults {
 public:
  /// The value kept for a key equal to `key`, else compute() kept under `key` and returned. The reference
  /// stands until the next call.
  template <class Compute>
  const Value& get_or_compute(const Key& key, Compute&& compute) {
    for (const Entry& e : kept_) {
      if (e.key == key) return e.value;
    }
    Entry fresh{key, std::forward<Compute>(compute)()};
    if (kept_.size() < kKept) {
      kept_.push_back(std::move(fresh));
      return kept_.back().value;
    }
    Entry& slot = kept_[oldest_];
    oldest_ = (oldest_ + 1) % kKept;
    slot = std::move(fresh);
    return slot.value;
  }

 private:
  struct Entry {
    Key key;
    Value value;
  };
  std::vector<Entry> kept_;
  std::size_t oldest_ = 0;
};

}  // namespace trainsim::model
