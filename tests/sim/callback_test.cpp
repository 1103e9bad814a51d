#include "sim/callback.hpp"

#include <doctest/doctest.h>

#include <array>
#include <memory>

using trainsim::sim::Callback;

namespace {
struct Counted {
  int* alive;
  explicit Counted(int* a) : alive(a) { ++*alive; }
  Counted(Counted&& o) noexcept : alive(o.alive) { ++*alive; }
  Counted(const Counted&) = delete;
  ~Counted() { --*alive; }
};
}  // namespace

TEST_CASE("a callback holds a move-only capture and calls it") {
  auto value = std::make_unique<int>(7);
  int got = 0;
  Callback cb = [v = std::move(value), &got] { got = *v; };
  Callback moved = std::move(cb);
  CHECK_FALSE(cb);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  REQUIRE(moved);
  moved();
  CHECK(got == 7);
}

TEST_CASE("inline and heap-stored targets are each destroyed exactly once") {
  int alive = 0;
  {
    Callback small = [c = Counted(&alive)] {};
    std::array<char, 100> padding{};
    Callback big = [c = Counted(&alive), padding] { (void)padding; };
    CHECK(alive == 2);
    Callback other = std::move(big);
    small = std::move(other);  // the old small target is destroyed, the big one moves in
    CHECK(alive == 1);
    small.reset();
    CHECK(alive == 0);
  }
  CHECK(alive == 0);
}

TEST_CASE("emplace_empty builds targets in empty callbacks; call_once calls each and destroys it once") {
  int alive = 0;
  int calls = 0;
  Callback small;
  small.emplace_empty([c = Counted(&alive), &calls] { ++calls; });
  std::array<char, 100> padding{};
  Callback big;  // too big to store inline: on the heap
  big.emplace_empty([c = Counted(&alive), padding, &calls] { calls += 10 + padding[0]; });
  CHECK(alive == 2);
  small.call_once();
  CHECK(calls == 1);
  CHECK(alive == 1);
  CHECK_FALSE(small);
  big.call_once();
  CHECK(calls == 11);
  CHECK(alive == 0);
  CHECK_FALSE(big);
}
