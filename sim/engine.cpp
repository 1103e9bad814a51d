#include "sim/engine.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "sim/error.hpp"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace trainsim::sim {

namespace {
constexpr std::uint32_t kChunkBits = 10;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr unsigned kSlotBits = 24;
constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
constexpr std::uint64_t kMaxSeq = std::uint64_t{1} << (64 - kSlotBits);
// Callbacks fetched at once, when a bucket this small is moved to lower buckets: its entries are the next to
// run. Enough to keep the memory system's queues full. Measured before the run existed (1M pending,
// steady-state hold / burst): 64 -> 6.7 / 7.1 M events/s, 256 -> 7-9 / 9, 1024 -> 10-11 / 11-12, 2048 and
// 4096 no better.
constexpr std::size_t kPrefetchAtMost = 1024;
// Callbacks of the run fetched this many events ahead of the one taken: enough to cover a miss to the
// last-level cache or memory with the work of the events between. Measured (1M pending, hold): 8 -> 18,
// 16 -> 20.4, 32 -> 20.7, 64 -> 20.3 M events/s.
constexpr std::size_t kRunPrefetch = 32;
// A bucket becoming the run is sorted by insertion up to this size, by counting above.
constexpr std::size_t kInsertionSortAtMost = 16;
// Entries of buffer an emptied bucket keeps (64 KiB).
constexpr std::size_t kKeepEntries = 4096;
// Buckets below this one hold entries that differ from last_ at most in time's lowest byte and in key.
constexpr std::size_t kRunBuckets = std::size_t{10} * 256;
constexpr std::size_t kAllocateAhead =
    128;  // free slots fetched this many allocations ahead (16 was too few)
constexpr std::size_t kCompactAtLeast = 1024;  // below this many cancelled entries, never compact
constexpr std::size_t kHugeArenaBytes = std::size_t{2} << 20;
}  // namespace

struct alignas(64) Engine::Slot {  // one cache line
  Callback action;
  std::uint64_t seq = 0;   // the event occupying the slot; 0 when free
  bool cancelled = false;  // occupied until its heap entry is popped, but will not run
};

Engine::Engine() = default;

Engine::~Engine() {
  for (Slot* chunk : chunks_) std::destroy_n(chunk, kChunkSize);
}

void Engine::FreeArena::operator()(void* p) const {
  std::free(p);
}

void Engine::add_chunk() {
  // A slab past a few MB is read in event order, which is random order: with 4 KiB pages nearly every
  // access would also miss the TLB. So past the first arena the slab comes in 2 MiB arenas the kernel may
  // back with huge pages (Linux, transparent huge pages in "madvise" mode); small engines stay small.
  constexpr std::size_t kChunkBytes = sizeof(Slot) * kChunkSize;
  const std::size_t arena_bytes = chunks_.empty() ? kChunkBytes : kHugeArenaBytes;
  if (arena_left_ == 0) {
    void* p = std::aligned_alloc(arena_bytes == kChunkBytes ? alignof(Slot) : kHugeArenaBytes, arena_bytes);
    if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (arena_bytes == kHugeArenaBytes)
      madvise(p, arena_bytes, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
    arenas_.emplace_back(p);
    arena_left_ = arena_bytes / kChunkBytes;
  }
  auto* base = static_cast<std::byte*>(arenas_.back().get());
  const std::size_t used = (arena_bytes / kChunkBytes) - arena_left_;
  Slot* chunk =
      std::uninitialized_default_construct_n(reinterpret_cast<Slot*>(base + used * kChunkBytes), kChunkSize) -
      kChunkSize;
  --arena_left_;
  chunks_.push_back(chunk);
}

Engine::Slot& Engine::slot(std::uint32_t index) {
  return chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
}

std::uint32_t Engine::allocate_slot() {
  if (free_slots_.size() == slot_count_) {
    // No slot is in use (none queued, none running): restart at the bottom of the slab, so a burst of
    // scheduling after the queue drained writes its callbacks in address order instead of hopping over
    // the slab in the order the last events ran.
    free_slots_.clear();
    slot_count_ = 0;
  }
  if (!free_slots_.empty()) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    // Freed slots come back in the order events ran, scattered over the slab: fetch the one that a later
    // allocation will take, so a burst of scheduling overlaps its cache misses.
    if (free_slots_.size() >= kAllocateAhead)
      __builtin_prefetch(&slot(free_slots_[free_slots_.size() - kAllocateAhead]), 1);
    return index;
  }
  // Default-initialised (not make_unique's value-initialisation): zeroing a whole chunk first is wasted work.
  if ((slot_count_ >> kChunkBits) == chunks_.size()) add_chunk();
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
  ++cancelled_queued_;
  if (cancelled_queued_ >= kCompactAtLeast && 2 * cancelled_queued_ > queued_) compact();
  return true;
}

void Engine::compact() {
  // Keeps the entries of `entries` from `from` on that are not cancelled, in order, at its front; frees the
  // slots of the others.
  const auto drop_cancelled = [this](std::vector<Entry>& entries, std::size_t from) {
    std::size_t kept = 0;
    for (std::size_t i = from; i < entries.size(); ++i) {
      const Entry e = entries[i];
      const auto index = static_cast<std::uint32_t>(e.key & kSlotMask);
      Slot& s = slot(index);
      if (s.cancelled) {
        s.seq = 0;
        s.cancelled = false;
        free_slots_.push_back(index);
      } else {
        entries[kept++] = e;
      }
    }
    queued_ -= entries.size() - from - kept;
    entries.resize(kept);
  };
  // Filtering keeps every survivor in its bucket: buckets depend only on last_, which does not change.
  for (std::size_t b = 0; b < kBuckets; ++b) {
    drop_cancelled(buckets_[b], 0);
    if (buckets_[b].empty()) mark_empty(b);
  }
  drop_cancelled(run_, run_next_);
  run_next_ = 0;
  drop_cancelled(early_, 0);
  std::ranges::make_heap(early_, later);
  ahead_ = run_.size() + early_.size();
  cancelled_queued_ = 0;
  std::fill(bucket_min_.begin(), bucket_min_.end(), kMinUnknown);  // survivors moved
  min_known_ = false;
}

std::size_t Engine::bucket_of(const Entry& e) const {
  // Entries are never equal to last_ (sequence numbers are unique), so some bit differs. Times are >= 0,
  // so their unsigned bit patterns order like the times. e >= last_, so e's digit at the first difference
  // is the larger one: within a position, a higher digit is a later entry.
  const auto time = static_cast<std::uint64_t>(e.time);
  const std::uint64_t time_bits = time ^ static_cast<std::uint64_t>(last_.time);
  if (time_bits != 0) {
    const auto shift = static_cast<unsigned>(63 - std::countl_zero(time_bits)) & ~7u;
    return static_cast<std::size_t>(8 + shift / 8) * 256 + ((time >> shift) & 255);
  }
  const auto shift = static_cast<unsigned>(63 - std::countl_zero(e.key ^ last_.key)) & ~7u;
  return static_cast<std::size_t>(shift / 8) * 256 + ((e.key >> shift) & 255);
}

void Engine::release(std::vector<Entry>& bucket) {
  bucket.clear();
  // A bucket keeps a small buffer for its next entries, not a big one: at a million pending events each
  // of the 256 buckets of time's third byte fills to 1-2 MB in turn, and keeping them all (hundreds of
  // MB) made every append to a reused one a write miss to memory (steady state 17-18 M events/s, against
  // 21-23 when the allocator hands the just-freed, still cached buffer to the next bucket that grows).
  if (bucket.capacity() > kKeepEntries) std::vector<Entry>().swap(bucket);
}

inline void Engine::add_to_bucket(std::size_t b, Entry e) {
  buckets_[b].push_back(e);
  nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
  nonempty_words_ |= std::uint64_t{1} << (b / 64);
}

void Engine::mark_empty(std::size_t b) {
  bucket_min_[b] = kMinUnknown;
  nonempty_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  if (nonempty_[b / 64] == 0) nonempty_words_ &= ~(std::uint64_t{1} << (b / 64));
}

void Engine::push(Entry e) {
  ++queued_;
  // Only while a run is being taken can a new event be earlier than last_ (the run's last entry, normally
  // within 256 ps of now); it waits in the early heap. Everything else goes to its bucket.
  if (before(e, last_)) {
    ++ahead_;
    early_.push_back(e);
    std::ranges::push_heap(early_, later);
    return;
  }
  const std::size_t b = bucket_of(e);
  add_to_bucket(b, e);
  // Only here can a bucket whose minimum is known grow: pop() moves entries into buckets below the lowest
  // non-empty one, which are empty, so their minimum is unknown.
  const std::uint32_t known = bucket_min_[b];
  if (known != kMinUnknown && before(e, buckets_[b][known])) {
    bucket_min_[b] = static_cast<std::uint32_t>(buckets_[b].size() - 1);
  }
  if (min_known_ && before(e, min_)) {
    min_ = e;
    min_bucket_ = b;
    min_pos_ = buckets_[b].size() - 1;
  }
}

const Engine::Entry& Engine::top() {
  if (ahead_ != 0) {
    if (run_next_ == run_.size()) return early_.front();
    if (early_.empty() || before(run_[run_next_], early_.front())) return run_[run_next_];
    return early_.front();
  }
  if (!min_known_) {
    // The earliest entry is in the lowest non-empty bucket; within it, order is by scheduling: scan.
    const auto word = static_cast<std::size_t>(std::countr_zero(nonempty_words_));
    const std::size_t b = word * 64 + static_cast<std::size_t>(std::countr_zero(nonempty_[word]));
    const std::vector<Entry>& bucket = buckets_[b];
    std::size_t best = bucket_min_[b];
    if (best == kMinUnknown) {
      best = 0;
      for (std::size_t i = 1; i < bucket.size(); ++i) {
        if (before(bucket[i], bucket[best])) best = i;
      }
      bucket_min_[b] = static_cast<std::uint32_t>(best);
    }
    min_ = bucket[best];
    min_bucket_ = b;
    min_pos_ = best;
    min_known_ = true;
  }
  return min_;
}

void Engine::bucket_to_run(std::size_t b) {
  std::vector<Entry>& bucket = buckets_[b];
  run_.clear();
  run_next_ = 0;
  // Copied, not swapped: swapping would hand the bucket the run's large buffer, and over time every small
  // bucket would hold one (steady state at 1M pending fell from 21 to 17 M events/s).
  if (b < kRunBuckets - 256) {
    // A key digit or time's lowest byte: every entry has the same time, and scheduling order is key order.
    run_.assign(bucket.begin(), bucket.end());
  } else if (bucket.size() <= kInsertionSortAtMost) {
    run_.assign(bucket.begin(), bucket.end());
    // Stable by time, so ties keep scheduling order.
    for (std::size_t i = 1; i < run_.size(); ++i) {
      const Entry e = run_[i];
      std::size_t j = i;
      for (; j > 0 && run_[j - 1].time > e.time; --j) run_[j] = run_[j - 1];
      run_[j] = e;
    }
  } else {
    // Counting sort on time's lowest byte, stable, so ties keep scheduling order.
    run_count_.fill(0);
    for (const Entry e : bucket) ++run_count_[static_cast<std::uint64_t>(e.time) & 255];
    std::uint32_t sum = 0;
    for (std::uint32_t& c : run_count_) {
      const std::uint32_t n = c;
      c = sum;
      sum += n;
    }
    run_.resize(bucket.size());
    for (const Entry e : bucket) run_[run_count_[static_cast<std::uint64_t>(e.time) & 255]++] = e;
  }
  release(bucket);
  mark_empty(b);
  min_known_ = false;
  ahead_ = run_.size();  // the early heap is empty: the run is only made once it is
  last_ = run_.back();
  for (std::size_t i = 0; i < std::min(kRunPrefetch, run_.size()); ++i)
    __builtin_prefetch(&slot(static_cast<std::uint32_t>(run_[i].key & kSlotMask)));
}

Engine::Entry Engine::restart_point() const {
  // When the queue runs dry, the entry just taken may have been a cancelled event later than now(), and the
  // next event may then be earlier than it. Key 0 at now() is before any event still to come (keys start
  // at 1 << 24) and, unlike time 0, close to them: restarting from time 0 put the next burst of events
  // (all > 2^24 ps once the clock is past 17 us) one bucket level higher, one more move each.
  return Entry{now_.ps(), 0};
}

Engine::Entry Engine::pop_run() {
  Entry e;
  if (run_next_ < run_.size() && (early_.empty() || before(run_[run_next_], early_.front()))) {
    e = run_[run_next_++];
    if (run_next_ - 1 + kRunPrefetch < run_.size())
      __builtin_prefetch(
          &slot(static_cast<std::uint32_t>(run_[run_next_ - 1 + kRunPrefetch].key & kSlotMask)));
    if (run_next_ == run_.size()) {
      run_.clear();
      run_next_ = 0;
    }
  } else {
    std::ranges::pop_heap(early_, later);
    e = early_.back();
    early_.pop_back();
  }
  --ahead_;
  --queued_;
  if (queued_ == 0) last_ = restart_point();
  return e;
}

Engine::Entry Engine::pop() {
  if (ahead_ != 0) return pop_run();
  const Entry e = top();
  const std::size_t b = min_bucket_;
  std::vector<Entry>& bucket = buckets_[b];
  if (b < kRunBuckets && bucket.size() > 1) {
    bucket_to_run(b);
    return pop_run();
  }
  // Take e, then move the rest of its bucket, in order: relative to e, each of its entries belongs to a
  // strictly lower bucket (they share with e every digit down to the bucket's). This pass and the run are
  // the only places entries move.
  min_known_ = false;
  --queued_;
  last_ = e;
  // When they are few, fetch all their callbacks now, so their cache misses overlap instead of costing one
  // by one.
  if (bucket.size() <= kPrefetchAtMost) {
    for (const Entry moved : bucket)
      __builtin_prefetch(&slot(static_cast<std::uint32_t>(moved.key & kSlotMask)));
  }
  // Two plain loops around e (the appends go to other buckets, never this one): one that skips e would
  // reload the bucket's size on every append (aliasing) and cost ~10 % at 1k pending events.
  const std::span<const Entry> rest(bucket);
  for (const Entry moved : rest.first(min_pos_)) add_to_bucket(bucket_of(moved), moved);
  for (const Entry moved : rest.subspan(min_pos_ + 1)) add_to_bucket(bucket_of(moved), moved);
  release(bucket);
  mark_empty(b);
  if (queued_ == 0) last_ = restart_point();
  return e;
}

void Engine::step() {
  const Entry e = pop();
  const auto index = static_cast<std::uint32_t>(e.key & kSlotMask);
  // The next event's callback is a likely cache miss; find it and fetch it while this one runs.
  if (queued_ != 0) __builtin_prefetch(&slot(static_cast<std::uint32_t>(top().key & kSlotMask)));
  Slot& s = slot(index);
  if (s.cancelled) {
    --cancelled_queued_;
  } else {
    now_ = Time::from_ps(e.time);
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
  while (queued_ != 0 && !stopped_) step();
}

void Engine::run_until(Time t) {
  stopped_ = false;
  while (queued_ != 0 && !stopped_ && top().time <= t.ps()) step();
  if (!stopped_ && now_ < t) now_ = t;
}

}  // namespace trainsim::sim
