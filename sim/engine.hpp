#pragma once
// Engine: the discrete-event core. Events are callbacks at a Time, executed in (time, insertion sequence)
// order, so equal-time events run first-scheduled-first (FIFO ties) and every run is deterministic.
// No globals: each Engine is independent; two engines in one process do not interact.
//
// Cost: the queue is a radix heap (monotone priority queue) of 16-byte POD entries {time, seq<<24 | slot}
// with byte-wide digits, 4096 buckets (96 KiB per engine, empty). It relies on every new event being no
// earlier than the last one taken out, which t >= now() guarantees. at/after append to a bucket: O(1).
// Taking the next event scans the lowest non-empty bucket and moves its other entries to lower buckets, in
// sequential passes; an entry moves at most 15 times over its life, about log256(pending) on average. Once
// the lowest bucket's entries lie within 256 ps of each other, it is sorted at once (a counting sort on
// time's lowest byte; buckets stay in scheduling order, so ties keep it) into a run taken from the front;
// events scheduled before the run's end meanwhile wait in a small binary heap beside it. A big bucket of
// time's third byte (4096+ entries, 65,536 ps) is spread instead of moved: one counting pass orders it
// into 256 segments of 256 ps, each taken as a run (with the events scheduled into its span since) when
// it is the lowest. So the queue does no random access when the pending set outgrows the cache, where a
// heap misses per level; the one random access left, the callback's slot, is prefetched ahead (16 events
// ahead in a run), and the slab (one reserved address range) sits on huge pages once big. An emptied
// bucket keeps at most 64 KiB of buffer (and up to 16 big ones are kept for reuse), so memory follows the
// pending set. A callable passed to at/after is constructed in its event's slot; callbacks live in that
// stable slab, indexed by slot, so scheduling from inside a callback is safe. cancel is
// O(1) and lazy: the entry stays queued and is discarded when it comes out; when cancelled entries outnumber
// live ones the queue is compacted (O(n), amortised O(1) per cancel), so rescheduling far-future events
// cannot grow it. Limits (checked): 2^24 (16.7 M) events pending at once (fewer when the address space is
// capped: ulimit -v), 2^40 (1.1e12) events scheduled per engine.
#include <array>
#include <cstddef>
#include <cstdint>
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
  /// A callable (a lambda) is constructed in the event's slot directly; a Callback is moved there.
  template <CallbackTarget F>
  EventId at(Time t, F&& action) {
    Slot& s = queue(t);
    if constexpr (noexcept(s.action.emplace_empty(std::forward<F>(action)))) {
      s.action.emplace_empty(std::forward<F>(action));
    } else {
      try {
        s.action.emplace_empty(std::forward<F>(action));
      } catch (...) {  // the callable's copy or allocation threw: the event must not run empty
        cancel(id_of(s));
        throw;
      }
    }
    return id_of(s);
  }
  EventId at(Time t, Callback action) {
    Slot& s = queue(t);
    s.action = std::move(action);
    return id_of(s);
  }
  /// Schedules `action` at now() + d. Precondition: d >= 0.
  template <CallbackTarget F>
  EventId after(Duration d, F&& action) {
    return at(now_ + d, std::forward<F>(action));
  }
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
  [[nodiscard]] std::size_t pending() const {
    return static_cast<std::size_t>(next_seq_ - 1 - executed_ - cancelled_);
  }
  /// Events executed since construction.
  [[nodiscard]] std::uint64_t executed() const { return executed_; }

 private:
  struct Entry {        // what the queue orders: POD, so moving entries between buckets is plain copies
    std::int64_t time;  // >= 0: now() starts at 0 and never goes back
    std::uint64_t key;  // seq << 24 | slot: ordering by key is ordering by seq
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.key < b.key);
  }
  // The early heap's order: its front is the earliest.
  static bool later(const Entry& a, const Entry& b) { return before(b, a); }
  // An event's callback and what cancel needs to know of it: one cache line of the slab.
  struct alignas(64) Slot {
    Callback action;
    std::uint64_t seq = 0;   // the event occupying the slot; 0 when free
    bool cancelled = false;  // occupied until its heap entry is popped, but will not run
  };
  // Queues an event at t and returns its slot, whose action is empty (a free slot's always is), for at()
  // to fill. Returning the slot, not writing an EventId through a reference, lets a caller that drops
  // the id (most do) skip making it.
  Slot& queue(Time t);
  [[nodiscard]] EventId id_of(const Slot& s) const {
    return EventId{static_cast<std::uint32_t>(&s - slab_), s.seq};
  }
  // The 128-bit number (time, key) read as 16 byte digits: a bucket per (digit position, digit value).
  static constexpr std::size_t kBuckets = 16 * 256;

  // The per-event helpers are declared inline so that GCC inlines them in the position-independent build
  // (the Python module's), where an external function that is not could be interposed at load time; the
  // figures are in sim/README.md.
  [[nodiscard]] inline Slot& slot(std::uint32_t index);
  // queue() once no freed slot is left: takes the slab's next one (growing the slab).
  [[gnu::noinline]] Slot& queue_in_new_slot(Time t);
  // Queues an event at t in the free slot `index`.
  inline Slot& queue_in(std::uint32_t index, Time t);
  // Called where slots are freed and none may be left in use: when none is, the next allocations start
  // again at the bottom of the slab.
  void restart_slots();
  // Makes more of the slab usable (reserving its address space first).
  void grow_slab();
  // How many of the slab's slots are usable: the free list is kept as long (it grows first, so a slot
  // counts as usable only once a free of it has room).
  [[nodiscard]] std::size_t slab_ready() const { return free_slots_.size(); }
  // Bucket of e: 256 * (position of the highest digit where (time, key) differs from last_) + e's digit
  // there. Lower buckets hold earlier entries.
  [[nodiscard]] inline std::size_t bucket_of(const Entry& e) const;
  // Called for every entry moved: forced inline, since GCC's size heuristics would otherwise leave it a
  // call inside pop().
  [[gnu::always_inline]] inline void add_to_bucket(std::size_t b, Entry e);
  inline void mark_empty(std::size_t b);
  // Empties a bucket that was moved or made the run, freeing a large buffer.
  inline void release(std::vector<Entry>& bucket);
  // Makes room for one more entry: a spare buffer when the bucket is big and one is at hand.
  [[gnu::noinline]] void grow(std::vector<Entry>& bucket);
  // Queues e, a new event's entry, and returns its slot. The rare paths are calls in tail position, so
  // that the common one saves and restores no callee-saved registers (as calls in the middle, they made
  // queue() do so on every event).
  inline Slot& push(Entry e);
  [[gnu::noinline]] Slot& push_growing(std::size_t b, Entry e);
  // Counts e, a new event's entry, as queued and its sequence number as taken, once it is in a bucket or
  // the early heap (so that an allocation failing on the way changes no count); returns its slot.
  inline Slot& pushed(Entry e);
  // Keeps bucket_min_[b] and min_ up to date once e was appended to bucket b.
  inline void note_pushed(std::size_t b, Entry e);
  // The earliest queued entry (cached until it is popped). Precondition: queued_ > 0.
  inline const Entry& top();
  // Whether the run or the early heap holds entries (then top() is one of them).
  [[nodiscard]] bool ahead() const { return run_next_ != run_end_ || !early_.empty(); }
  // Removes and returns top(): from the run or the early heap when either holds entries; otherwise from
  // the lowest bucket, which becomes the run when its entries lie within one 256 ps span (see run_), or
  // else has its other entries moved to lower buckets relative to the entry taken. step() takes the run's
  // next entry itself when no early entry waits (the common case); this is the rest.
  [[gnu::noinline]] Entry pop_slow();
  [[gnu::noinline]] Slot& push_early(Entry e);
  [[gnu::noinline]] void prefetch_top();
  // Called once step() took the run's last entry: forgets the run, then restarts the radix when the queue
  // is empty or fetches the next event's callback when it is not.
  [[gnu::noinline]] void run_taken();
  // What last_ becomes when the queue runs dry.
  [[nodiscard]] inline Entry restart_point() const;
  // Takes the run's next entry and fetches the callback kRunPrefetch entries on (the buffer's padding
  // covers the run's end). Precondition: the run is not empty.
  inline Entry take_from_run();
  // Takes the next entry of the run or the early heap. Precondition: ahead().
  inline Entry pop_run();
  // Empties the run (its buffer stays).
  inline void clear_run();
  // Makes the lowest bucket, whose entries differ from last_ at most in time's lowest byte and in key, the
  // run (sorted), and last_ its last entry.
  void bucket_to_run(std::size_t b);
  // Makes run_'s first `size` entries (sorted, > 0) the run: last_ its last entry, its first callbacks
  // fetched. run_ holds kRunPrefetch more entries after them (see run_).
  inline void start_run(std::size_t size);
  // Makes the lowest bucket, of time's third byte and big, the spread.
  void spread_bucket(std::size_t b);
  // Makes the spread's next segment (and the bucket of its digit, when `with_bucket`) the run.
  void segment_to_run(bool with_bucket);
  // Drops cancelled entries from every bucket, the run and the early heap.
  void compact();
  // Runs the top event (or discards it when cancelled).
  inline void step();

  // Radix heap invariant: every entry in a bucket is after last_ and sits in bucket bucket_of(e); so every
  // entry of a lower bucket is earlier than every entry of a higher one. last_ is the last entry popped or,
  // while the run holds entries, the run's last. Every bucket is in scheduling order (appends come in seq
  // order, and entries leave a bucket only all together, in order, or as its earliest).
  std::vector<std::vector<Entry>> buckets_ = std::vector<std::vector<Entry>>(kBuckets);
  std::array<std::uint64_t, kBuckets / 64> nonempty_{};  // bit b % 64 of word b / 64: buckets_[b] not empty
  std::uint64_t nonempty_words_ = 0;                     // bit w set <=> nonempty_[w] != 0
  std::size_t queued_ = 0;  // entries in the buckets, the run and the early heap, cancelled ones included
  Entry last_{0, 0};
  // Per bucket, the position of its earliest entry once a scan found it (kMinUnknown until then), kept up
  // to date by appends; forgotten when the bucket empties or is compacted. Without it, a big bucket that
  // is the lowest but keeps losing the race to newly scheduled earlier events (N far-future completions
  // while a short flow comes and goes) was rescanned on every pop: O(N) per event.
  static constexpr std::uint32_t kMinUnknown = ~std::uint32_t{0};
  std::vector<std::uint32_t> bucket_min_ = std::vector<std::uint32_t>(kBuckets, kMinUnknown);
  Entry min_{0, 0};  // top(), when min_known_: in buckets_[min_bucket_] at min_pos_
  std::size_t min_bucket_ = 0;
  std::size_t min_pos_ = 0;
  bool min_known_ = false;
  // The run: the lowest bucket, once its entries are at most 256 ps apart (and more than one), sorted by
  // (time, key) and taken from the front. A bucket of one time is in key order already; one of several
  // times is sorted on time's lowest byte, by counting (by insertion up to 16 entries), stably, so ties
  // keep scheduling order. Events scheduled meanwhile before the run's last entry (normally within 256 ps of
  // now) wait in the early heap, a binary min-heap, usually empty or tiny. At a million pending events a
  // 256 ps bucket holds a few hundred: taking them from a sorted array instead of moving each down one or
  // two more levels and scanning a bucket per event, and fetching their callbacks in order kRunPrefetch
  // events ahead, took the steady state from 15 to 20-21 M events/s.
  // The run's buffer is kRunPrefetch entries longer than the run, so taking an entry fetches the callback
  // of the one kRunPrefetch later without a bounds check (past the end, some slot's; a prefetch is a hint).
  // step() takes the run's entries while run_next_ < run_fast_end_: run_end_ while the early heap is empty,
  // else a position at or before run_next_, so one comparison tells that no early entry waits either.
  std::vector<Entry> run_;
  const Entry* run_next_ = nullptr;  // [run_next_, run_end_) are queued; both null when the run is empty
  const Entry* run_end_ = nullptr;
  const Entry* run_fast_end_ = nullptr;
  std::vector<Entry> early_;
  // The spread: the lowest bucket of time's third byte, when big (4096+ entries), stably ordered by time's
  // second byte in one counting pass into 256 segments of 256 ps each. Segment d stands in the radix heap
  // as bucket kSpreadBuckets + d (time's second byte, digit d), where events scheduled later in its span go;
  // when it is the lowest, it and that bucket, in this order (scheduling order), are sorted on time's
  // lowest byte into the run. At a million pending events a bucket of time's third byte holds ~130k
  // entries: spreading them costs one pass where moving them to 256 buckets cost an append each (size
  // check, bit marks), and the run stays 256 ps long, so few events are scheduled before its end.
  std::vector<Entry> spread_;
  std::array<std::uint32_t, 257>
      spread_begin_{};             // segment d: spread_[spread_begin_[d], spread_begin_[d + 1])
  std::size_t spread_next_ = 256;  // segments below are taken
  std::size_t spread_left_ = 0;    // entries in the segments not taken
  std::vector<std::vector<Entry>> spare_buffers_;  // emptied big bucket buffers, the latest last
  // Stable storage: callbacks never move while queued. One reserved address range, made usable in steps.
  Slot* slab_ = nullptr;          // slots [0, slab_ready()) are usable; they never move
  void* slab_mapping_ = nullptr;  // the reserved address space slab_ lies in
  // Freed slots, the latest last: free_slots_[0, free_count_). As long as the slab's usable slots, so a
  // slot is freed with a store and no capacity check.
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t free_count_ = 0;
  std::uint32_t slot_count_ = 0;
  std::uint64_t next_seq_ = 1;  // pending() = next_seq_ - 1 - executed_ - cancelled_
  std::size_t cancelled_queued_ = 0;
  std::uint64_t cancelled_ = 0;
  std::uint64_t executed_ = 0;
  Time now_;
  bool stopped_ = false;
};

}  // namespace trainsim::sim
