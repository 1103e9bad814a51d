#include "sim/engine.hpp"

#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr std::uint32_t kChunkBits = 10;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::size_t kArity = 4;  // a 4-ary heap: half the depth of a binary one, children share a line
constexpr unsigned kSlotBits = 24;
constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
constexpr std::uint64_t kMaxSeq = std::uint64_t{1} << (64 - kSlotBits);
constexpr std::size_t kCompactAtLeast = 1024;  // below this many cancelled entries, never compact
}  // namespace

struct alignas(64) Engine::Slot {  // one cache line
  Callback action;
  std::uint64_t seq = 0;   // the event occupying the slot; 0 when free
  bool cancelled = false;  // occupied until its heap entry is popped, but will not run
};

Engine::Engine() = default;
Engine::~Engine() = default;

Engine::Slot& Engine::slot(std::uint32_t index) {
  return chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
}

std::uint32_t Engine::allocate_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    return index;
  }
  // Default-initialised (not make_unique's value-initialisation): zeroing a whole chunk first is wasted work.
  if ((slot_count_ & (kChunkSize - 1)) == 0)
    chunks_.push_back(std::make_unique_for_overwrite<Slot[]>(kChunkSize));
  TRAINSIM_CHECK(slot_count_ <= kSlotMask, "more than 2^24 events pending in one engine");
  return slot_count_++;
}

EventId Engine::at(Time t, Callback action) {
  TRAINSIM_CHECK(t >= now_, "an event was scheduled in the past (at " + std::to_string(t.ps()) + " ps, now " +
                                std::to_string(now_.ps()) + " ps)");
  const std::uint32_t index = allocate_slot();
  TRAINSIM_CHECK(next_seq_ < kMaxSeq, "more than 2^40 events scheduled in one engine");
  const std::uint64_t seq = next_seq_++;
  Slot& s = slot(index);
  s.action = std::move(action);
  s.seq = seq;
  s.cancelled = false;
  push(Entry{t.ps(), seq << kSlotBits | index});
  ++pending_;
  return EventId{index, seq};
}

bool Engine::cancel(EventId id) {
  if (id.seq == 0 || id.slot >= slot_count_) return false;
  Slot& s = slot(id.slot);
  if (s.seq != id.seq || s.cancelled) return false;
  s.cancelled = true;
  s.action.reset();
  --pending_;
  ++cancelled_in_heap_;
  if (cancelled_in_heap_ >= kCompactAtLeast && 2 * cancelled_in_heap_ > heap_.size()) compact();
  return true;
}

void Engine::compact() {
  std::size_t kept = 0;
  for (const Entry e : heap_) {
    const auto index = static_cast<std::uint32_t>(e.key & kSlotMask);
    Slot& s = slot(index);
    if (s.cancelled) {
      s.seq = 0;
      s.cancelled = false;
      free_slots_.push_back(index);
    } else {
      heap_[kept++] = e;
    }
  }
  heap_.resize(kept);
  cancelled_in_heap_ = 0;
  if (kept < 2) return;
  for (std::size_t i = (kept - 2) / kArity + 1; i-- > 0;) sift_down(i, heap_[i]);
}

void Engine::push(Entry e) {
  // Sift up with a hole: move parents down until e's place is found, then write it once.
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    const Entry& p = heap_[parent];
    if (!before(e, p)) break;
    heap_[i] = p;
    i = parent;
  }
  heap_[i] = e;
}

void Engine::sift_down(std::size_t i, Entry e) {
  const std::size_t n = heap_.size();
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Engine::pop() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

void Engine::step() {
  const Entry top = heap_.front();
  pop();
  const auto index = static_cast<std::uint32_t>(top.key & kSlotMask);
  // The next event's callback is a likely cache miss; fetch it while this one runs.
  if (!heap_.empty()) __builtin_prefetch(&slot(static_cast<std::uint32_t>(heap_.front().key & kSlotMask)));
  Slot& s = slot(index);
  if (s.cancelled) {
    --cancelled_in_heap_;
  } else {
    now_ = Time::from_ps(top.time);
    --pending_;
    ++executed_;
    // Run in place: the slab never moves, and the slot is not reusable until the call returns. Clearing seq
    // first makes a cancel of the running event (from its own callback) a no-op, not self-destruction.
    s.seq = 0;
    s.action();
    s.action.reset();
  }
  s.seq = 0;
  s.cancelled = false;
  free_slots_.push_back(index);
}

void Engine::run() {
  stopped_ = false;
  while (!heap_.empty() && !stopped_) step();
}

void Engine::run_until(Time t) {
  stopped_ = false;
  while (!heap_.empty() && !stopped_ && heap_.front().time <= t.ps()) step();
  if (!stopped_ && now_ < t) now_ = t;
}

}  // namespace trainsim::sim
