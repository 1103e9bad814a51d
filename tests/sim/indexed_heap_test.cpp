#include "sim/indexed_heap.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

using trainsim::sim::indexed_heap_erase;
using trainsim::sim::indexed_heap_push;

namespace {

struct Item {
  int key;
  int id;
};

// A heap of items whose positions are kept in `where` (indexed by id), as the flow network keeps them.
struct Tracked {
  std::vector<Item> heap;
  std::vector<std::size_t> where;

  void push(Item item) {
    indexed_heap_push(heap, item, before, [this](const Item& i, std::size_t at) { where[i.id] = at; });
  }
  Item erase_id(int id) {
    return indexed_heap_erase(heap, where[id], before,
                              [this](const Item& i, std::size_t at) { where[i.id] = at; });
  }
  static bool before(const Item& a, const Item& b) {
    return a.key < b.key || (a.key == b.key && a.id < b.id);
  }
};

}  // namespace

TEST_CASE("the front is the least item and erasing it yields the items in order") {
  Tracked t;
  t.where.resize(5);
  for (const int id : {3, 0, 4, 1, 2}) t.push(Item{.key = 10 * (id % 3), .id = id});
  std::vector<int> order;
  while (!t.heap.empty()) order.push_back(t.erase_id(t.heap.front().id).id);
  CHECK(order == std::vector<int>{0, 3, 1, 4, 2});  // keys 0, 0, 10, 10, 20; ties by id
}

TEST_CASE("random pushes and erasures from the middle keep the heap and every reported position right") {
  std::mt19937_64 rng(20261203);
  constexpr int kIds = 200;
  Tracked t;
  t.where.resize(kIds);
  std::vector<bool> in(kIds, false);
  std::vector<int> keys(kIds, 0);
  for (int step = 0; step < 20'000; ++step) {
    const auto id = static_cast<int>(rng() % kIds);
    if (in[id]) {
      const Item out = t.erase_id(id);
      CHECK(out.id == id);
      CHECK(out.key == keys[id]);
      in[id] = false;
    } else {
      keys[id] = static_cast<int>(rng() % 50);  // many equal keys
      t.push(Item{.key = keys[id], .id = id});
      in[id] = true;
    }
    if (step % 97 != 0) continue;
    REQUIRE(t.heap.size() == static_cast<std::size_t>(std::count(in.begin(), in.end(), true)));
    for (std::size_t i = 0; i < t.heap.size(); ++i) {
      CHECK(t.where[t.heap[i].id] == i);
      if (i > 0) CHECK_FALSE(Tracked::before(t.heap[i], t.heap[(i - 1) / 2]));
    }
  }
}
