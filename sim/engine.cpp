#include "sim/engine.hpp"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {
constexpr unsigned kSlotBits = 24;
constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
// The slot of the event whose key is `key` (its low kSlotBits bits).
constexpr std::uint32_t slot_index(std::uint64_t key) {
  return static_cast<std::uint32_t>(key & kSlotMask);
}
constexpr std::uint64_t kMaxSeq = std::uint64_t{1} << (64 - kSlotBits);
// Callbacks fetched at once, when a bucket this small is moved to lower buckets: its entries are the next to
// run. Enough to keep the memory system's queues full: fewer measured slower at 1M pending and more no
// faster (sim/README.md's history).
constexpr std::size_t kPrefetchAtMost = 1024;
// Callbacks of the run fetched this many events ahead of the one taken: enough to cover a miss to the
// last-level cache or memory with the work of the events between. Fewer measured slower at 1M pending and
// more no faster (the measurements: sim/README.md's history).
constexpr std::size_t kRunPrefetch = 16;
// A bucket becoming the run is sorted by insertion up to this size, by counting above.
constexpr std::size_t kInsertionSortAtMost = 16;
// A bucket of time's third byte this big is spread when it is the lowest (see Engine::spread_), not moved
// to lower buckets.
constexpr std::size_t kSpreadAtLeast = 4096;
// Buckets of time's second byte: the spread's segment of digit d stands as bucket kSpreadBuckets + d.
constexpr std::size_t kSpreadBuckets = std::size_t{9} * 256;
// Entries of buffer an emptied bucket keeps (64 KiB).
constexpr std::size_t kKeepEntries = 4096;
// Big bucket buffers kept for reuse (see release).
constexpr std::size_t kSpareBuffers = 16;
// A bucket outgrowing this many entries (4 KiB) takes a spare buffer when one is at hand (see grow).
constexpr std::size_t kSpareFrom = 256;
// Buckets below this one hold entries that differ from last_ at most in time's lowest byte and in key.
constexpr std::size_t kRunBuckets = std::size_t{10} * 256;
constexpr std::size_t kAllocateAhead =
    128;  // free slots fetched this many allocations ahead (16 was too few)
constexpr std::size_t kCompactAtLeast = 1024;  // below this many cancelled entries, never compact
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// Address space reserved for the slab: every slot a key can name, and room to align it to a huge page.
constexpr std::size_t kMaxSlabBytes = (kSlotMask + 1) * 64;

// Address space each engine reserves for its slab: room for every slot a key can name (1 GiB), or, in a
// process whose address space is capped (RLIMIT_AS, `ulimit -v`), a sixteenth of the cap, so that a few
// engines (a search's threads) leave room for everything else. Decided once per process.
std::size_t slab_bytes() {
  static const std::size_t kBytes = [] {
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMaxSlabBytes;
    const auto share = static_cast<std::size_t>(limit.rlim_cur / 16);
    std::size_t b = kHugePageBytes * 2;
    while (b * 2 <= share && b < kMaxSlabBytes) b *= 2;
    return b;
  }();
  return kBytes;
}
std::size_t slab_mapping_bytes() {
  return slab_bytes() + kHugePageBytes;
}
// Slots usable in a new slab (64 KiB); it then doubles up to 2 MiB and grows by 2 MiB.
constexpr std::size_t kFirstSlots = 1024;
}  // namespace

Engine::Engine() = default;

namespace {
// The slab of the last engine destroyed on this thread, kept (up to its first 2 MiB of usable memory) for
// the next engine created on it: a simulation builds an engine per step, and a fresh mapping faulted in
// its pages again every time (thousands of page faults per second of simulation).
struct SlabCache {
  void* mapping = nullptr;
  SlabCache() = default;
  SlabCache(const SlabCache&) = delete;
  SlabCache& operator=(const SlabCache&) = delete;
  ~SlabCache() {
    if (mapping != nullptr) munmap(mapping, slab_mapping_bytes());
    mapping = nullptr;
  }
};
thread_local SlabCache slab_cache;

void* align_to_huge_page(void* mapping) {
  // Offset forward within the mapping, not an integer cast back to a pointer, so the result keeps the
  // mapping's provenance.
  const auto address = reinterpret_cast<std::uintptr_t>(mapping);
  const std::size_t ahead = (kHugePageBytes - address % kHugePageBytes) % kHugePageBytes;
  return static_cast<std::byte*>(mapping) + ahead;
}
}  // namespace

Engine::~Engine() {
  if (slab_ == nullptr) return;
  std::destroy_n(slab_, slab_ready());
  if (slab_cache.mapping != nullptr) {
    munmap(slab_mapping_, slab_mapping_bytes());
    return;
  }
  const std::size_t ready_bytes = slab_ready() * sizeof(Slot);
  if (ready_bytes > kHugePageBytes) {  // give the rest back, so a big engine's slab does not stay resident
    auto* rest = reinterpret_cast<std::byte*>(slab_) + kHugePageBytes;
    madvise(rest, ready_bytes - kHugePageBytes, MADV_DONTNEED);
    mprotect(rest, ready_bytes - kHugePageBytes, PROT_NONE);
  }
  slab_cache.mapping = slab_mapping_;
}

void Engine::grow_slab() {
  // The slab is one reserved range of address space (no memory until used), so a slot's address is one
  // multiply-add and slots never move. It becomes usable in steps: 64 KiB first (small engines stay small),
  // doubling to 2 MiB, then 2 MiB at a time, aligned so that the kernel may back them with huge pages (Linux,
  // transparent huge pages in "madvise" mode): past a few MB the slab is read in event order, which is
  // random order, and with 4 KiB pages nearly every access would also miss the TLB.
  static_assert(sizeof(Slot) == 64, "kMaxSlabBytes counts 64-byte slots");
  if (slab_ == nullptr && slab_cache.mapping != nullptr) {
    slab_mapping_ = slab_cache.mapping;
    slab_ = static_cast<Slot*>(align_to_huge_page(slab_mapping_));
    slab_cache.mapping = nullptr;
    // Its first 64 KiB are made ready again; the rest of what it kept is usable already, and growing into
    // it constructs slots without faulting pages in.
    free_slots_.resize(kFirstSlots);
    std::uninitialized_default_construct_n(slab_, kFirstSlots);
    return;
  }
  if (slab_ == nullptr) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
    flags |= MAP_NORESERVE;
#endif
    void* p = mmap(nullptr, slab_mapping_bytes(), PROT_NONE, flags, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    slab_mapping_ = p;
    slab_ = static_cast<Slot*>(align_to_huge_page(p));
#ifdef MADV_HUGEPAGE
    madvise(slab_, slab_bytes(), MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
  }
  constexpr std::size_t kStepSlots = kHugePageBytes / sizeof(Slot);
  const std::size_t was_ready = slab_ready();
  const std::size_t ready =
      was_ready == 0 ? kFirstSlots : (was_ready < kStepSlots ? 2 * was_ready : was_ready + kStepSlots);
  TRAINSIM_CHECK(ready * sizeof(Slot) <= slab_bytes(),
                 "more than " + std::to_string(slab_bytes() / sizeof(Slot)) +
                     " events pending in one engine (its slots are capped there: 2^24, or a sixteenth "
                     "of an address space capped by ulimit -v)");
  if (mprotect(slab_ + was_ready, (ready - was_ready) * sizeof(Slot), PROT_READ | PROT_WRITE) != 0)
    throw std::bad_alloc();
  free_slots_.resize(ready);  // counts the slots ready (slab_ready), so a failure here counts none
  std::uninitialized_default_construct_n(slab_ + was_ready, ready - was_ready);
}

Engine::Slot& Engine::slot(std::uint32_t index) {
  return slab_[index];
}

namespace {
// The checks' messages are built out of line, so that queue() needs no stack frame for their strings and
// saves no callee-saved registers on each event.
[[noreturn, gnu::noinline, gnu::cold]] void fail_scheduled_in_past(Time t, Time now) {
  fail_check("t >= now_",
             "an event was scheduled in the past (at " + std::to_string(t.ps()) + " ps, now " +
                 std::to_string(now.ps()) + " ps)",
             __FILE__, __LINE__);
}
[[noreturn, gnu::noinline, gnu::cold]] void fail_too_many_scheduled() {
  fail_check("next_seq_ < kMaxSeq", "more than 2^40 events scheduled in one engine", __FILE__, __LINE__);
}
}  // namespace

Engine::Slot& Engine::queue(Time t) {
  if (t < now_) [[unlikely]]
    fail_scheduled_in_past(t, now_);
  if (next_seq_ >= kMaxSeq) [[unlikely]]
    fail_too_many_scheduled();
  if (free_count_ == 0) [[unlikely]]
    return queue_in_new_slot(t);
  const std::uint32_t index = free_slots_[--free_count_];
  // Freed slots come back in the order events ran, scattered over the slab: fetch the one that a later
  // allocation will take, so a burst of scheduling overlaps its cache misses.
  if (free_count_ >= kAllocateAhead) __builtin_prefetch(&slot(free_slots_[free_count_ - kAllocateAhead]), 1);
  return queue_in(index, t);
}

Engine::Slot& Engine::queue_in_new_slot(Time t) {
  if (slot_count_ == slab_ready()) grow_slab();  // refuses past the slab's slots, which a key can all name
  return queue_in(slot_count_++, t);
}

Engine::Slot& Engine::queue_in(std::uint32_t index, Time t) {
  const std::uint64_t seq =
      next_seq_;          // counted by push once queued: a failed push leaves pending() as it was
  slot(index).seq = seq;  // cancelled is false in a free slot
  return push(Entry{t.ps(), seq << kSlotBits | index});
}

bool Engine::cancel(EventId id) {
  if (id.seq == 0 || id.slot >= slot_count_) return false;
  Slot& s = slot(id.slot);
  if (s.seq != id.seq || s.cancelled) return false;
  s.cancelled = true;
  s.action.reset();
  ++cancelled_;
  ++cancelled_queued_;
  if (cancelled_queued_ >= kCompactAtLeast && 2 * cancelled_queued_ > queued_) compact();
  return true;
}

void Engine::compact() {
  // Whether e stays queued: when its event was cancelled, its slot is freed instead.
  const auto stays = [this](const Entry e) {
    const auto index = slot_index(e.key);
    Slot& s = slot(index);
    if (!s.cancelled) return true;
    s.seq = 0;
    s.cancelled = false;
    free_slots_[free_count_++] = index;
    --queued_;
    return false;
  };
  // Keeps the entries of `entries` that stay, in order.
  const auto drop_cancelled = [&stays](std::vector<Entry>& entries) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (stays(entries[i])) entries[kept++] = entries[i];
    }
    entries.resize(kept);
  };
  // Filtering keeps every survivor in its bucket: buckets depend only on last_, which does not change.
  for (std::size_t b = 0; b < kBuckets; ++b) {
    drop_cancelled(buckets_[b]);
    if (buckets_[b].empty()) mark_empty(b);
  }
  if (run_next_ != run_end_) {
    // In place, at the front of the run's buffer (its padding stays after the entries kept).
    Entry* kept = run_.data();
    for (const Entry* e = run_next_; e != run_end_; ++e) {
      if (stays(*e)) *kept++ = *e;
    }
    if (kept == run_.data()) {
      clear_run();
    } else {
      run_next_ = run_.data();
      run_end_ = kept;
    }
  }
  if (spread_left_ != 0) {
    // Segment by segment, in place and in order; taken segments are dropped.
    std::size_t kept = 0;
    for (std::size_t d = spread_next_; d < 256; ++d) {
      const std::size_t begin = spread_begin_[d];
      const std::size_t end = spread_begin_[d + 1];
      spread_begin_[d] = static_cast<std::uint32_t>(kept);
      for (std::size_t i = begin; i < end; ++i) {
        if (stays(spread_[i])) spread_[kept++] = spread_[i];
      }
    }
    spread_begin_[256] = static_cast<std::uint32_t>(kept);
    spread_left_ = kept;
  }
  drop_cancelled(early_);
  std::ranges::make_heap(early_, later);
  run_fast_end_ = early_.empty() ? run_end_ : run_next_;
  cancelled_queued_ = 0;
  restart_slots();
  std::fill(bucket_min_.begin(), bucket_min_.end(), kMinUnknown);  // survivors moved
  min_known_ = false;
}

std::size_t Engine::bucket_of(const Entry& e) const {
  // Entries are never equal to last_ (sequence numbers are unique), so some bit differs. Times are >= 0,
  // so their unsigned bit patterns order like the times. e >= last_, so e's digit at the first difference
  // is the larger one: within a position, a higher digit is a later entry.
  const auto time = static_cast<std::uint64_t>(e.time);
  const std::uint64_t time_bits = time ^ static_cast<std::uint64_t>(last_.time);
  if (time_bits != 0) [[likely]] {
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
  // MB) would make every append to a reused one a write miss to memory, where the allocator hands the
  // just-freed, still cached buffer to the next bucket that grows.
  // A big buffer goes to the spares instead, for the next bucket that outgrows its own: growing by
  // reallocation would copy every entry once more and fault in fresh pages (the allocator returns big
  // blocks to the kernel).
  if (bucket.capacity() > kKeepEntries) {
    if (spare_buffers_.size() < kSpareBuffers) {
      spare_buffers_.push_back(std::move(bucket));
      bucket = std::vector<Entry>();
    } else {
      std::vector<Entry>().swap(bucket);
    }
  }
}

void Engine::grow(std::vector<Entry>& bucket) {
  const std::size_t wanted = std::max<std::size_t>(1, 2 * bucket.capacity());  // as push_back grows
  // From 4 KiB, not only past what an emptied bucket keeps (64 KiB): at 1M pending every bucket of time's
  // third byte starts empty after its spread and grows to ~2 MB, and each doubling up to 64 KiB would copy
  // its entries again. The spare goes back when the bucket empties.
  if (bucket.capacity() >= kSpareFrom && !spare_buffers_.empty() &&
      spare_buffers_.back().capacity() >= wanted) {
    std::vector<Entry> spare = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
    spare.assign(bucket.begin(), bucket.end());
    bucket.swap(spare);
    return;
  }
  bucket.reserve(wanted);
}

inline void Engine::add_to_bucket(std::size_t b, Entry e) {
  std::vector<Entry>& bucket = buckets_[b];
  if (bucket.size() == bucket.capacity()) [[unlikely]]
    grow(bucket);
  const bool was_empty = bucket.empty();
  bucket.push_back(e);
  if (was_empty) {  // a bucket's bits are set exactly while it holds entries (mark_empty clears them)
    nonempty_[b / 64] |= std::uint64_t{1} << (b % 64);
    nonempty_words_ |= std::uint64_t{1} << (b / 64);
  }
}

void Engine::mark_empty(std::size_t b) {
  bucket_min_[b] = kMinUnknown;
  nonempty_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  if (nonempty_[b / 64] == 0) nonempty_words_ &= ~(std::uint64_t{1} << (b / 64));
}

Engine::Slot& Engine::pushed(Entry e) {
  ++queued_;
  ++next_seq_;
  return slot(slot_index(e.key));
}

Engine::Slot& Engine::push(Entry e) {
  // e is a new event: its key is larger than every queued entry's and than last_'s (an entry scheduled
  // before it, or a key of 0), so it is before any of them exactly when its time is earlier.
  // Only while a run is being taken can a new event be earlier than last_ (the run's last entry, normally
  // within 256 ps of now); it waits in the early heap. Everything else goes to its bucket.
  if (e.time < last_.time) [[unlikely]]
    return push_early(e);
  const std::size_t b = bucket_of(e);
  if (buckets_[b].size() == buckets_[b].capacity()) [[unlikely]]
    return push_growing(b, e);
  add_to_bucket(b, e);
  note_pushed(b, e);
  return pushed(e);
}

Engine::Slot& Engine::push_growing(std::size_t b, Entry e) {
  add_to_bucket(b, e);  // grows the bucket
  note_pushed(b, e);
  return pushed(e);
}

void Engine::note_pushed(std::size_t b, Entry e) {
  // Only here can a bucket whose minimum is known grow: pop() moves entries into buckets below the lowest
  // non-empty one, which are empty, so their minimum is unknown.
  const std::uint32_t known = bucket_min_[b];
  if (known != kMinUnknown && e.time < buckets_[b][known].time) {
    bucket_min_[b] = static_cast<std::uint32_t>(buckets_[b].size() - 1);
  }
  if (min_known_ && e.time < min_.time) {
    min_ = e;
    min_bucket_ = b;
    min_pos_ = buckets_[b].size() - 1;
  }
}

Engine::Slot& Engine::push_early(Entry e) {
  early_.push_back(e);
  std::ranges::push_heap(early_, later);
  run_fast_end_ = run_next_;  // step() takes the run's next entry only while no early entry waits
  return pushed(e);
}

const Engine::Entry& Engine::top() {
  if (ahead()) {
    if (run_next_ == run_end_) return early_.front();
    if (early_.empty() || before(*run_next_, early_.front())) return *run_next_;
    return early_.front();
  }
  if (!min_known_) {
    // The earliest entry is in the lowest non-empty bucket, or in the spread's next segment when that
    // stands lower (as bucket kSpreadBuckets + its digit); within a bucket, order is by scheduling: scan.
    std::size_t b = kBuckets;
    for (;;) {
      if (nonempty_words_ != 0) {
        const auto word = static_cast<std::size_t>(std::countr_zero(nonempty_words_));
        b = word * 64 + static_cast<std::size_t>(std::countr_zero(nonempty_[word]));
      } else {
        b = kBuckets;
      }
      if (spread_left_ != 0) {
        while (spread_begin_[spread_next_] == spread_begin_[spread_next_ + 1]) ++spread_next_;
        const std::size_t segment_bucket = kSpreadBuckets + spread_next_;
        if (b >= segment_bucket) {
          segment_to_run(b == segment_bucket);
          return *run_next_;
        }
      }
      const std::size_t size = buckets_[b].size();
      if (b < kRunBuckets && size > 1) {
        // Its entries are the next to run, all of them before any other bucket's: sort them now instead
        // of scanning them for the earliest.
        bucket_to_run(b);
        return *run_next_;
      }
      if (b >= kRunBuckets && b < kRunBuckets + 256 && size >= kSpreadAtLeast) {
        spread_bucket(b);
        continue;
      }
      break;
    }
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

namespace {
// A counting sort on one byte of time, stable: count, then where each digit's entries start, then
// scatter. Every event goes through two of them (its bucket spread, then its segment made the run), so
// the shift is a constant, the scatter writes through pointers (not offsets) and copies an entry as 16
// bytes, and both loops are unrolled, so that each entry costs a few instructions to count and to scatter.
// (Templates: Engine's entry type is its own.)
template <unsigned kShift, class Entry>
void count_by_byte(std::span<const Entry> entries, std::array<std::uint32_t, 256>& count) {
#pragma GCC unroll 4
  for (const Entry e : entries) ++count[(static_cast<std::uint64_t>(e.time) >> kShift) & 255];
}
template <class Entry>
std::array<Entry*, 256> digit_starts(const std::array<std::uint32_t, 256>& count, Entry* to) {
  std::array<Entry*, 256> next;
  for (std::size_t d = 0; d < 256; ++d) {
    next[d] = to;
    to += count[d];
  }
  return next;
}
template <unsigned kShift, class Entry>
void scatter_by_byte(std::span<const Entry> entries, std::array<Entry*, 256>& next) {
#pragma GCC unroll 4
  for (const Entry& e : entries) {
    Entry*& to = next[(static_cast<std::uint64_t>(e.time) >> kShift) & 255];
    // Copied as 16 bytes (one vector load and store), not as two 8-byte fields: 1.5 instructions less
    // per entry.
    std::memcpy(static_cast<void*>(to), &e, sizeof(Entry));
    ++to;
  }
}
}  // namespace

void Engine::bucket_to_run(std::size_t b) {
  std::vector<Entry>& bucket = buckets_[b];
  const std::size_t size = bucket.size();
  // Copied, not swapped: swapping would hand the bucket the run's large buffer, and over time every small
  // bucket would hold one (steady state at 1M pending fell from 21 to 17 M events/s).
  run_.resize(size + kRunPrefetch);
  if (b < kRunBuckets - 256) {
    // A key digit or time's lowest byte: every entry has the same time, and scheduling order is key order.
    std::copy(bucket.begin(), bucket.end(), run_.begin());
  } else if (size <= kInsertionSortAtMost) {
    std::copy(bucket.begin(), bucket.end(), run_.begin());
    // Stable by time, so ties keep scheduling order.
    for (std::size_t i = 1; i < size; ++i) {
      const Entry e = run_[i];
      std::size_t j = i;
      for (; j > 0 && run_[j - 1].time > e.time; --j) run_[j] = run_[j - 1];
      run_[j] = e;
    }
  } else {
    // Counting sort on time's lowest byte, stable, so ties keep scheduling order.
    std::array<std::uint32_t, 256> count{};
    count_by_byte<0, Entry>(bucket, count);
    std::array<Entry*, 256> next = digit_starts(count, run_.data());
    scatter_by_byte<0, Entry>(bucket, next);
  }
  release(bucket);
  mark_empty(b);
  start_run(size);
}

void Engine::start_run(std::size_t size) {
  min_known_ = false;
  run_next_ = run_.data();
  run_end_ = run_next_ + size;
  run_fast_end_ = run_end_;  // the early heap is empty: the run is only made once it is
  last_ = run_end_[-1];
  for (std::size_t i = 0; i < std::min(kRunPrefetch, size); ++i)
    __builtin_prefetch(&slot(slot_index(run_next_[i].key)));
}

void Engine::clear_run() {
  run_next_ = nullptr;
  run_end_ = nullptr;
  run_fast_end_ = nullptr;
}

void Engine::spread_bucket(std::size_t b) {
  std::vector<Entry>& bucket = buckets_[b];
  std::array<std::uint32_t, 256> count{};
  count_by_byte<8, Entry>(bucket, count);
  std::uint32_t sum = 0;
  for (std::size_t d = 0; d < 256; ++d) {
    spread_begin_[d] = sum;
    sum += count[d];
  }
  spread_begin_[256] = sum;
  // Only grown, never cleared: the segments say where its entries are, and resizing from empty would
  // zero-fill the whole buffer (megabytes at a million pending) on every spread.
  if (spread_.size() < bucket.size()) spread_.resize(bucket.size());
  std::array<Entry*, 256> next = digit_starts(count, spread_.data());
  scatter_by_byte<8, Entry>(bucket, next);
  spread_next_ = 0;
  spread_left_ = bucket.size();
  // The spread's entries share time's bytes above the second with each other; last_ becomes that prefix
  // with zeros below, before all of them and after the entry taken before, so that an event scheduled
  // in segment d's span goes to bucket kSpreadBuckets + d, to be taken with it.
  last_ = Entry{bucket.front().time & ~std::int64_t{0xFFFF}, 0};
  release(bucket);
  mark_empty(b);
  min_known_ = false;
}

void Engine::segment_to_run(bool with_bucket) {
  const std::size_t d = spread_next_++;
  const std::span<const Entry> segment(spread_.data() + spread_begin_[d],
                                       spread_begin_[d + 1] - spread_begin_[d]);
  spread_left_ -= segment.size();
  std::span<const Entry> later_entries;
  if (with_bucket) later_entries = buckets_[kSpreadBuckets + d];
  // The segment's entries were all scheduled before the bucket's: segment then bucket is scheduling order,
  // and a stable sort of it on time's lowest byte keeps ties first-scheduled-first.
  const std::size_t size = segment.size() + later_entries.size();
  run_.resize(size + kRunPrefetch);
  std::array<std::uint32_t, 256> count{};
  count_by_byte<0, Entry>(segment, count);
  count_by_byte<0, Entry>(later_entries, count);
  std::array<Entry*, 256> next = digit_starts(count, run_.data());
  scatter_by_byte<0, Entry>(segment, next);
  scatter_by_byte<0, Entry>(later_entries, next);
  if (with_bucket) {
    release(buckets_[kSpreadBuckets + d]);
    mark_empty(kSpreadBuckets + d);
  }
  start_run(size);
}

Engine::Entry Engine::restart_point() const {
  // When the queue runs dry, the entry just taken may have been a cancelled event later than now(), and the
  // next event may then be earlier than it. Key 0 at now() is before any event still to come (keys start
  // at 1 << 24) and, unlike time 0, close to them: restarting from time 0 put the next burst of events
  // (all > 2^24 ps once the clock is past 17 us) one bucket level higher, one more move each.
  return Entry{now_.ps(), 0};
}

Engine::Entry Engine::take_from_run() {
  const Entry e = *run_next_++;
  __builtin_prefetch(&slot(slot_index(run_next_[kRunPrefetch - 1].key)));
  return e;
}

Engine::Entry Engine::pop_run() {
  Entry e;
  if (run_next_ != run_end_ && (early_.empty() || before(*run_next_, early_.front()))) {
    e = take_from_run();
    if (run_next_ == run_end_) clear_run();
  } else {
    std::ranges::pop_heap(early_, later);
    e = early_.back();
    early_.pop_back();
    if (early_.empty()) run_fast_end_ = run_end_;
  }
  if (--queued_ == 0) last_ = restart_point();
  return e;
}

Engine::Entry Engine::pop_slow() {
  if (ahead()) return pop_run();
  const Entry e = top();
  if (ahead()) return pop_run();  // top() made the lowest bucket the run
  const std::size_t b = min_bucket_;
  std::vector<Entry>& bucket = buckets_[b];
  // Take e, then move the rest of its bucket, in order: relative to e, each of its entries belongs to a
  // strictly lower bucket (they share with e every digit down to the bucket's). This pass and the run are
  // the only places entries move.
  min_known_ = false;
  --queued_;
  last_ = e;
  // When they are few, fetch all their callbacks now, so their cache misses overlap instead of costing one
  // by one.
  if (bucket.size() <= kPrefetchAtMost) {
    for (const Entry moved : bucket) __builtin_prefetch(&slot(slot_index(moved.key)));
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

void Engine::prefetch_top() {
  __builtin_prefetch(&slot(slot_index(top().key)));
}

void Engine::run_taken() {
  clear_run();
  if (queued_ == 0) {
    last_ = restart_point();
  } else {
    prefetch_top();
  }
}

void Engine::step() {
  Entry e;
  if (run_next_ < run_fast_end_) [[likely]] {
    // The run's next entry, no early entry waiting: the common case, kept small. Its callback was fetched
    // kRunPrefetch entries ago; fetch the one kRunPrefetch later.
    e = take_from_run();
    --queued_;
    if (run_next_ == run_end_) [[unlikely]]
      run_taken();
  } else {
    e = pop_slow();
    // The next event's callback is a likely cache miss; find it and fetch it while this one runs (a run's
    // are fetched kRunPrefetch events ahead already).
    if (!ahead() && queued_ != 0) prefetch_top();
  }
  const auto index = slot_index(e.key);
  Slot& s = slot(index);
  if (s.cancelled) {
    --cancelled_queued_;
    s.seq = 0;
    s.cancelled = false;
  } else {
    now_ = Time::from_ps(e.time);
    ++executed_;
    // Run in place: the slab never moves, and the slot is not reusable until the call returns. Clearing seq
    // first makes a cancel of the running event (from its own callback) a no-op, not self-destruction.
    // seq stays 0 and cancelled false through the call: cancel only marks a slot whose seq matches.
    s.seq = 0;
    s.action.call_once();
  }
  free_slots_[free_count_++] = index;
  if (queued_ == 0) restart_slots();
}

void Engine::restart_slots() {
  if (free_count_ != slot_count_) return;  // a callback is running (run() called from one)
  // No slot is in use (none queued, none running): restart at the bottom of the slab, so a burst of
  // scheduling after the queue drained writes its callbacks in address order instead of hopping over the
  // slab in the order the last events ran.
  free_count_ = 0;
  slot_count_ = 0;
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
