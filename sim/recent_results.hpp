#pragma once
// A few recent results of a pure computation with their keys, for reuse by equal inputs: a search prices
// many layouts in a row that share a pipeline schedule, its replay, their priced units or an optimizer's
// cost, and looking through a handful of keys costs far less than computing again. The one keep-the-last-N
// memo of the simulator (sim is the lowest layer, so every layer above may use it). Not thread-safe: keep
// one per thread (thread_local).
#include <cstddef>
#include <utility>
#include <vector>

namespace trainsim::sim {

/// Up to kKept (key, value) pairs; once full, each new one replaces the oldest.
template <class Key, class Value, std::size_t kKept>
class RecentResults {
 public:
  /// The value of the first kept pair whose key satisfies `matches(key)`, else nullptr. Allocates nothing:
  /// a caller whose inputs are not a Key (a span, a few fields) compares them in place.
  template <class Matches>
  [[nodiscard]] Value* find(Matches&& matches) {
    for (Entry& e : kept_) {
      if (matches(static_cast<const Key&>(e.key))) return &e.value;
    }
    return nullptr;
  }

  /// Keeps (key, value), replacing the oldest pair once kKept are kept; returns the kept value. The
  /// reference stands until the next insert.
  Value& insert(Key key, Value value) {
    Entry fresh{std::move(key), std::move(value)};
    if (kept_.size() < kKept) {
      kept_.push_back(std::move(fresh));
      return kept_.back().value;
    }
    Entry& slot = kept_[oldest_];
    oldest_ = (oldest_ + 1) % kKept;
    slot = std::move(fresh);
    return slot.value;
  }

  /// The value kept for a key equal to `key`, else compute() kept under `key` and returned. The reference
  /// stands until the next insert.
  template <class Compute>
  Value& get_or_compute(const Key& key, Compute&& compute) {
    if (Value* kept = find([&](const Key& k) { return k == key; })) return *kept;
    return insert(key, std::forward<Compute>(compute)());
  }

 private:
  struct Entry {
    Key key;
    Value value;
  };
  std::vector<Entry> kept_;
  std::size_t oldest_ = 0;
};

}  // namespace trainsim::sim
