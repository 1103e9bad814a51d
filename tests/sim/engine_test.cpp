#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/error.hpp"

using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::EventId;
using trainsim::sim::Time;

namespace {
Time ps(std::int64_t n) {
  return Time::from_ps(n);
}
}  // namespace

TEST_CASE("events run in time order whatever the order they were scheduled in") {
  Engine e;
  std::string order;
  e.at(ps(30), [&] { order += 'c'; });
  e.at(ps(10), [&] { order += 'a'; });
  e.at(ps(20), [&] { order += 'b'; });
  e.run();
  CHECK(order == "abc");
  CHECK(e.now() == ps(30));
  CHECK(e.executed() == 3);
}

TEST_CASE("equal-time events run in insertion order") {
  Engine e;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) e.at(ps(5), [&order, i] { order.push_back(i); });
  // One scheduled at the same instant from inside a callback runs after all those already queued.
  e.at(ps(5), [&] { e.after(Duration::zero(), [&] { order.push_back(1000); }); });
  e.run();
  REQUIRE(order.size() == 101);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(order.back() == 1000);
}

TEST_CASE("ties keep scheduling order among 300k pending events, through bucket moves and sorted runs") {
  // 4,096 windows 512 ps apart, 8 picoseconds used in each: 32,768 distinct times, about 9 events at each
  // and 73 per window, scheduled in scrambled time order. Entries move down bucket levels (windows differ
  // from each other in time's second and third bytes) and each window is taken as a run sorted by counting
  // on time's lowest byte, so an unstable step anywhere reorders some tie. Expected order: the scheduling
  // order, stably sorted by time.
  Engine e;
  constexpr int kEvents = 300'000;
  std::vector<std::int64_t> time_of(kEvents);
  std::vector<int> ran;
  ran.reserve(kEvents);
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < kEvents; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto t = static_cast<std::int64_t>((x % 4'096) * 512 + (x >> 40) % 8);
    time_of[static_cast<std::size_t>(i)] = t;
    e.at(ps(t), [&ran, i] { ran.push_back(i); });
  }
  e.run();
  std::vector<int> expected(kEvents);
  for (int i = 0; i < kEvents; ++i) expected[static_cast<std::size_t>(i)] = i;
  std::ranges::stable_sort(expected, [&](int a, int b) {
    return time_of[static_cast<std::size_t>(a)] < time_of[static_cast<std::size_t>(b)];
  });
  REQUIRE(ran.size() == expected.size());
  CHECK(ran == expected);
}

TEST_CASE("a cancelled event does not run and cancelling twice or after running does nothing") {
  Engine e;
  int ran = 0;
  const EventId a = e.at(ps(10), [&] { ran += 1; });
  const EventId b = e.at(ps(20), [&] { ran += 10; });
  CHECK(e.pending() == 2);
  CHECK(e.cancel(a));
  CHECK_FALSE(e.cancel(a));
  CHECK(e.pending() == 1);
  e.run();
  CHECK(ran == 10);
  CHECK(e.pending() == 0);
  // Refused cancels count nothing: pending() stays 0 rather than wrapping below it.
  CHECK_FALSE(e.cancel(b));
  CHECK_FALSE(e.cancel(EventId{}));
  CHECK(e.pending() == 0);
  // The freed slot is reused; the stale id must not cancel the new event.
  e.at(ps(30), [&] { ran += 100; });
  CHECK_FALSE(e.cancel(b));
  CHECK_FALSE(e.cancel(a));
  CHECK(e.pending() == 1);
  e.run();
  CHECK(ran == 110);
  CHECK(e.pending() == 0);
}

TEST_CASE("an event can cancel a later one and cannot cancel itself while running") {
  Engine e;
  int ran = 0;
  EventId later;
  EventId self;
  self = e.at(ps(1), [&] {
    CHECK(e.pending() == 1);  // the running event is no longer pending; `later` is
    CHECK(e.cancel(later));
    CHECK(e.pending() == 0);
    CHECK_FALSE(e.cancel(self));
    CHECK(e.pending() == 0);
    ++ran;
  });
  later = e.at(ps(2), [&] { ran += 100; });
  e.run();
  CHECK(ran == 1);
  CHECK(e.pending() == 0);
}

TEST_CASE("run_until runs events up to and including the time, then advances the clock to it") {
  Engine e;
  std::vector<std::int64_t> seen;
  for (std::int64_t t : {5, 10, 15}) e.at(ps(t), [&seen, &e] { seen.push_back(e.now().ps()); });
  e.run_until(ps(10));
  CHECK(seen == std::vector<std::int64_t>{5, 10});
  CHECK(e.now() == ps(10));
  e.run_until(ps(12));
  CHECK(e.now() == ps(12));
  CHECK(e.pending() == 1);
  e.run();
  CHECK(seen == std::vector<std::int64_t>{5, 10, 15});
}

TEST_CASE("stop makes run return after the current event") {
  Engine e;
  int ran = 0;
  e.at(ps(1), [&] {
    ++ran;
    e.stop();
  });
  e.at(ps(2), [&] { ++ran; });
  e.run();
  CHECK(ran == 1);
  e.run();
  CHECK(ran == 2);
}

TEST_CASE("scheduling an event in the past is an internal error") {
  Engine e;
  e.at(ps(10), [] {});
  e.run();
  CHECK_THROWS_AS(e.at(ps(5), [] {}), trainsim::InternalError);
}

TEST_CASE("two engines in one process keep separate clocks and queues") {
  Engine a;
  Engine b;
  int in_a = 0;
  int in_b = 0;
  a.at(ps(100), [&] { ++in_a; });
  b.at(ps(7), [&] { ++in_b; });
  b.run();
  CHECK(in_b == 1);
  CHECK(in_a == 0);
  CHECK(b.now() == ps(7));
  CHECK(a.now() == ps(0));
  a.run();
  CHECK(a.now() == ps(100));
}

TEST_CASE("a callback too large for inline storage still runs and is destroyed") {
  Engine e;
  std::array<std::int64_t, 32> big{};
  big[31] = 42;
  std::int64_t got = 0;
  e.at(ps(1), [big, &got] { got = big[31]; });
  e.run();
  CHECK(got == 42);
}

TEST_CASE("rescheduling far-future events many times keeps order and the right events") {
  // Each round cancels every pending event and schedules a replacement, as the flow network does when
  // rates change; the heap is compacted along the way and the survivors still run in order.
  Engine e;
  std::vector<EventId> ids;
  std::vector<int> ran;
  for (int i = 0; i < 100; ++i) ids.push_back(e.at(ps(1'000'000 + i), [&ran, i] { ran.push_back(i); }));
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 100; ++i) {
      CHECK(e.cancel(ids[static_cast<std::size_t>(i)]));
      ids[static_cast<std::size_t>(i)] =
          e.at(ps(1'000'000 + (i * 7919 + round) % 100'000), [&ran, i] { ran.push_back(i); });
    }
  }
  CHECK(e.pending() == 100);
  e.run();
  REQUIRE(ran.size() == 100);
  // Final times are 1e6 + (i * 7919 + 49) % 1e5; check the run order follows them.
  for (std::size_t k = 1; k < ran.size(); ++k) {
    CHECK((ran[k - 1] * 7919 + 49) % 100'000 <= (ran[k] * 7919 + 49) % 100'000);
  }
}

TEST_CASE("an event scheduled after run_until stopped short of the next one runs before it") {
  Engine e;
  std::string order;
  e.at(ps(1'000'000), [&] { order += 'b'; });
  e.run_until(ps(10));
  e.at(ps(20), [&] { order += 'a'; });
  e.run_until(ps(15));  // looks at the queue again without running anything
  e.at(ps(15), [&] { order += '0'; });
  e.run();
  CHECK(order == "0ab");
}

TEST_CASE("after a run that ended on a cancelled event, earlier events can still be scheduled") {
  // The cancelled event at 500 is taken out of the queue but never runs, so the clock stays at 0.
  Engine e;
  std::string order;
  const EventId late = e.at(ps(500), [&] { order += 'x'; });
  CHECK(e.cancel(late));
  e.run();
  CHECK(e.now() == ps(0));
  e.at(ps(300), [&] { order += 'b'; });
  e.at(ps(100), [&] { order += 'a'; });
  e.run();
  CHECK(order == "ab");
  CHECK(e.now() == ps(300));
}

TEST_CASE("random schedules, cancels and run_until calls execute exactly as a sorted list says") {
  // Reference: the pending events kept as a sorted list of (time, scheduling number); each run takes its
  // front. Times come from a small range so many tie, and come in waves far apart (large and small gaps).
  Engine e;
  std::vector<std::pair<std::int64_t, int>> expected_pending;  // (time, number), kept sorted
  std::vector<EventId> ids;
  std::vector<int> ran;
  std::vector<int> expected_ran;
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  auto run_reference_until = [&](std::int64_t t) {
    while (!expected_pending.empty() && expected_pending.front().first <= t) {
      expected_ran.push_back(expected_pending.front().second);
      expected_pending.erase(expected_pending.begin());
    }
  };
  int number = 0;
  for (int round = 0; round < 200; ++round) {
    const std::int64_t base = e.now().ps();
    const int n = static_cast<int>(next() % 20);
    for (int k = 0; k < n; ++k) {
      const std::int64_t spread = (next() % 4 == 0) ? 1'000'000'000 : 16;
      const std::int64_t t = base + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(spread));
      const int id = number++;
      ids.push_back(e.at(ps(t), [&ran, id] { ran.push_back(id); }));
      const auto pos = std::upper_bound(expected_pending.begin(), expected_pending.end(), std::pair{t, id});
      expected_pending.insert(pos, {t, id});
    }
    if (!ids.empty() && next() % 3 == 0) {
      const auto victim = static_cast<int>(next() % ids.size());
      const auto it = std::find_if(expected_pending.begin(), expected_pending.end(),
                                   [victim](const auto& p) { return p.second == victim; });
      CHECK(e.cancel(ids[static_cast<std::size_t>(victim)]) == (it != expected_pending.end()));
      if (it != expected_pending.end()) expected_pending.erase(it);
    }
    const std::int64_t until = base + static_cast<std::int64_t>(next() % 64);
    e.run_until(ps(until));
    run_reference_until(until);
    REQUIRE(ran == expected_ran);
    CHECK(e.pending() == expected_pending.size());
  }
  e.run();
  run_reference_until(std::numeric_limits<std::int64_t>::max());
  CHECK(ran == expected_ran);
  CHECK(e.pending() == 0);
}

namespace {

// A randomised run checked against a reference: `initial` events, half of them within `dense_span` ps and
// half within `sparse_span`, each of which, when it runs, does what actions_of says.
struct ReferenceRun {
  int initial = 3000;
  std::uint64_t dense_span = 20'000;
  std::uint64_t sparse_span = 1'000'000;
  std::size_t max_scheduled = 200'000;
  int cancel_every = 5000;  // one event in this many cancels the `cancel_count` scheduled last
  std::size_t cancel_count = 2000;
};

// What event `id` does when it runs, the same for the engine and the reference: schedule up to two
// successors (at now, within 300 ps, within 70 ns or within 1 us of now) and maybe cancel an event
// scheduled earlier (drawn from all ids so far, so it may already have run or been cancelled). One event
// in run.cancel_every cancels the run.cancel_count scheduled last, most of them pending, which compacts
// the queue.
struct Actions {
  std::vector<std::int64_t> delays;
  int victim = -1;
  bool cancel_last = false;
};

Actions actions_of(const ReferenceRun& run, int id, std::size_t scheduled_so_far, bool may_schedule) {
  std::uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(id + 1);
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  Actions a;
  for (int k = 0; k < 2 && may_schedule; ++k) {
    if (next() % 20 >= 11) continue;  // 1.1 successors on average: the population keeps up with the cancels
    constexpr std::array<std::uint64_t, 4> kSpans{1, 300, 70'000, 1'000'000};
    a.delays.push_back(static_cast<std::int64_t>(next() % kSpans[next() % kSpans.size()]));
  }
  if (next() % 10 < 4) a.victim = static_cast<int>(next() % scheduled_so_far);
  a.cancel_last = id % run.cancel_every == run.cancel_every - 1 && scheduled_so_far >= run.cancel_count;
  return a;
}

// The engine and a reference that keeps (time, scheduling number) in a sorted set run the same decisions;
// the engine must run the same events in the same order, and keep the same number pending.
void check_against_reference(const ReferenceRun& run) {
  Engine e;
  std::vector<EventId> ids;
  std::vector<int> ran;
  std::set<std::pair<std::int64_t, int>> reference;  // (time, id); ids are scheduling numbers
  std::vector<std::int64_t> time_of;
  std::uint64_t x = 88172645463325252ull;
  std::function<void(int)> body;  // what the engine runs for an id
  auto schedule = [&](std::int64_t t) {
    const int id = static_cast<int>(ids.size());
    time_of.push_back(t);
    ids.push_back(e.at(ps(t), [&body, id] { body(id); }));
  };
  body = [&](int id) {
    ran.push_back(id);
    const Actions a = actions_of(run, id, ids.size(), ids.size() < run.max_scheduled);
    for (const std::int64_t d : a.delays) schedule(e.now().ps() + d);
    if (a.victim >= 0) e.cancel(ids[static_cast<std::size_t>(a.victim)]);
    for (std::size_t k = ids.size() - run.cancel_count; a.cancel_last && k < ids.size(); ++k)
      e.cancel(ids[k]);
  };
  for (int i = 0; i < run.initial; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    schedule(static_cast<std::int64_t>(x % (i % 2 == 0 ? run.dense_span : run.sparse_span)));
  }
  // The reference replays the same decisions.
  std::vector<int> expected;
  auto reference_scheduled = static_cast<std::size_t>(run.initial);
  for (int id = 0; id < run.initial; ++id) reference.insert({time_of[static_cast<std::size_t>(id)], id});
  auto reference_until = [&](std::int64_t until) {
    while (!reference.empty() && reference.begin()->first <= until) {
      const auto [now, id] = *reference.begin();
      reference.erase(reference.begin());
      expected.push_back(id);
      const Actions a = actions_of(run, id, reference_scheduled, reference_scheduled < run.max_scheduled);
      for (const std::int64_t d : a.delays)
        reference.insert({now + d, static_cast<int>(reference_scheduled++)});
      if (a.victim >= 0) reference.erase({time_of[static_cast<std::size_t>(a.victim)], a.victim});
      for (std::size_t k = reference_scheduled - run.cancel_count; a.cancel_last && k < reference_scheduled;
           ++k)
        reference.erase({time_of[k], static_cast<int>(k)});
    }
  };
  for (std::int64_t until = 0; until < 100'000'000; until += 333'333) {
    e.run_until(ps(until));
    reference_until(until);
    REQUIRE(ran.size() == expected.size());
    CHECK(e.pending() == reference.size());
  }
  e.run();
  reference_until(std::numeric_limits<std::int64_t>::max());
  CHECK(ran == expected);
  CHECK(ids.size() >= run.max_scheduled);
  CHECK(e.pending() == 0);
}

}  // namespace

TEST_CASE("callbacks scheduling at now, soon and later, with cancels, run as a sorted reference says") {
  // Thousands pending over a microsecond, half of them in its first 20 ns: many events share a picosecond,
  // and the queue takes them from sorted runs while callbacks schedule into the span a run covers. Cancels
  // are frequent enough to compact the queue.
  check_against_reference(ReferenceRun{});
}

TEST_CASE("with tens of thousands pending, big buckets are spread and stay in order through cancels") {
  // 40,000 events, half of them in the first 262 ns: buckets of time's third byte (65,536 ps) then hold
  // 4096+ entries, so the queue spreads them into 256-ps segments, and callbacks schedule into the segments
  // still to come (300 ps, 70 ns) and at now. One event in 20,000 cancels the 15,000 scheduled last, more
  // than half of those queued: the queue compacts while a spread is being taken.
  check_against_reference(ReferenceRun{.initial = 40'000,
                                       .dense_span = 262'144,
                                       .sparse_span = 1'000'000,
                                       .max_scheduled = 200'000,
                                       .cancel_every = 20'000,
                                       .cancel_count = 15'000});
}
