#pragma once
// Engine: the discrete-event core. Events are callbacks at a Time, executed in (time, insertion sequence)
// order, so equal-time events run first-scheduled-first (FIFO ties) and every run is deterministic.
// No globals: each Engine is independent; two engines in one process do not interact.
//
// Cost: at/after are O(log n) (a 4-ary heap of 16-byte POD entries); callbacks live in a stable slab
// indexed by slot, so scheduling from inside a callback is safe. cancel is O(1) and lazy: the entry stays
// in the heap and is discarded when it reaches the top; when cancelled entries outnumber live ones the heap
// is compacted (O(n), amortised O(1) per cancel), so rescheduling far-future events cannot grow it.
// Limits (checked): 2^24 (16.7 M) events pending at once, 2^40 (1.1e12) events scheduled per engine.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/callback.hpp"
#include "sim/time.hpp"

namespace trainsim::sim {

/// Names one scheduled event, for cancel. A default-constructed id names no event.
struct EventId {
  std::uint32_t slot = 0;
  std::uint64_t seq = 0;  ///< 0 = none; sequence numbers start at 1
  friend constexpr bool operator==(EventId, EventId) = default;
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// The current simulated time: the time of the event being executed, or where run/run_until stopped.
  [[nodiscard]] Time now() const { return now_; }

  /// Schedules `action` at time `t`. Precondition (TRAINSIM_CHECK): t >= now().
  EventId at(Time t, Callback action);
  /// Schedules `action` at now() + d. Precondition: d >= 0.
  EventId after(Duration d, Callback action) { return at(now_ + d, std::move(action)); }

  /// Cancels a pending event: it will not run and its callback is destroyed now. Returns false (and does
  /// nothing) if the event already ran, was already cancelled, or `id` names no event.
  bool cancel(EventId id);

  /// Runs events until none is left (or stop() is called from a callback).
  void run();
  /// Runs every event with time <= t, then sets now() to t (if t is later). Events after t stay queued.
  void run_until(Time t);
  /// Makes the current run()/run_until() return after the event being executed.
  void stop() { stopped_ = true; }

  /// Events scheduled and neither run nor cancelled.
  [[nodiscard]] std::size_t pending() const { return pending_; }
  /// Events executed since construction.
  [[nodiscard]] std::uint64_t executed() const { return executed_; }

 private:
  struct Entry {  // what the heap orders: POD, so sifting is plain copies; four fit a cache line
    std::int64_t time;
    std::uint64_t key;  // seq << 24 | slot: ordering by key is ordering by seq
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.key < b.key);
  }
  struct Slot;

  [[nodiscard]] Slot& slot(std::uint32_t index);
  std::uint32_t allocate_slot();
  void push(Entry e);
  void pop();
  // Fills the hole at index i with e, moving smaller children up.
  void sift_down(std::size_t i, Entry e);
  // Drops cancelled entries and rebuilds the heap.
  void compact();
  // Runs the top event (or discards it when cancelled).
  void step();

  std::vector<Entry> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;  // stable storage: callbacks never move while queued
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t slot_count_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t pending_ = 0;
  std::size_t cancelled_in_heap_ = 0;
  std::uint64_t executed_ = 0;
  Time now_;
  bool stopped_ = false;
};

}  // namespace trainsim::sim
