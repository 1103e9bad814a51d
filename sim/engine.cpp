#include "sim/engine.hpp"

#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr std::uint32_t kChunkBits = 10;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::size_t kArity = 4;  // a 4-ary heap: half the depth of a binary one, children share a line

bool before(std::int64_t time_a, std::uint64_t seq_a, std::int64_t time_b, std::uint64_t seq_b) {
  return time_a < time_b || (time_a == time_b && seq_a < seq_b);
}
}  // namespace

struct Engine::Slot {
  Callback action;
  std::uint64_t seq = 0;   // the event occupying the slot; 0 when free
  bool cancelled = false;  // occupied until its heap entry is popped, but will not run
};

Engine::Engine() = default;
Engine::~Engine() = default;

Engine::Slot& Engine::slot(std::uint32_t index) { return chunks_[index >> kChunkBits][index & (kChunkSize - 1)]; }

std::uint32_t Engine::allocate_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    return index;
  }
  if ((slot_count_ & (kChunkSize - 1)) == 0) chunks_.push_back(std::make_unique<Slot[]>(kChunkSize));
  return slot_count_++;
}

EventId Engine::at(Time t, Callback action) {
  TRAINSIM_CHECK(t >= now_, "an event was scheduled in the past (at " + std::to_string(t.ps()) +
                                " ps, now " + std::to_string(now_.ps()) + " ps)");
  const std::uint32_t index = allocate_slot();
  const std::uint64_t seq = next_seq_++;
  Slot& s = slot(index);
  s.action = std::move(action);
  s.seq = seq;
  s.cancelled = false;
  push(Entry{t.ps(), seq, index});
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
  return true;
}

void Engine::push(Entry e) {
  // Sift up with a hole: move parents down until e's place is found, then write it once.
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    const Entry& p = heap_[parent];
    if (!before(e.time, e.seq, p.time, p.seq)) break;
    heap_[i] = p;
    i = parent;
  }
  heap_[i] = e;
}

void Engine::pop() {
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c].time, heap_[c].seq, heap_[best].time, heap_[best].seq)) best = c;
    }
    if (!before(heap_[best].time, heap_[best].seq, last.time, last.seq)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

void Engine::step() {
  const Entry top = heap_.front();
  pop();
  Slot& s = slot(top.slot);
  if (!s.cancelled) {
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
  free_slots_.push_back(top.slot);
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
