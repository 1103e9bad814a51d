#include "sim/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
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
  CHECK_FALSE(e.cancel(b));
  CHECK_FALSE(e.cancel(EventId{}));
  // The freed slot is reused; the stale id must not cancel the new event.
  e.at(ps(30), [&] { ran += 100; });
  CHECK_FALSE(e.cancel(b));
  e.run();
  CHECK(ran == 110);
}

TEST_CASE("an event can cancel a later one and cannot cancel itself while running") {
  Engine e;
  int ran = 0;
  EventId later;
  EventId self;
  self = e.at(ps(1), [&] {
    CHECK(e.cancel(later));
    CHECK_FALSE(e.cancel(self));
    ++ran;
  });
  later = e.at(ps(2), [&] { ran += 100; });
  e.run();
  CHECK(ran == 1);
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
