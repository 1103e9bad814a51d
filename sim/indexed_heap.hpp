#pragma once
// Indexed binary min-heap operations on a std::vector (or a container like it: value_type, size, operator[],
// back, push_back, pop_back): like std::push_heap / std::pop_heap, but every
// element that moves is reported to `place(element, new_position)`, so its owner can later remove it from
// the middle of the heap in O(log n). The standard heap algorithms cannot say where an element went, and
// boost::heap's mutable heaps keep a handle object per element on the side; the flow network keeps one
// heap per path class and moves single flows between classes, so it records each flow's position in the
// flow itself.
//
// `before(a, b)`: a strict weak order; the front (index 0) is an element that no other is before.
// Cost: push and erase O(log n) comparisons and `place` calls.
#include <cstddef>
#include <utility>
#include <vector>

namespace trainsim::sim {

namespace indexed_heap_detail {

// Moves heap[i] up while it is before its parent.
template <class Heap, class Before, class Place>
void sift_up(Heap& heap, std::size_t i, Before& before, Place& place) {
  typename Heap::value_type item = std::move(heap[i]);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(item, heap[parent])) break;
    heap[i] = std::move(heap[parent]);
    place(heap[i], i);
    i = parent;
  }
  heap[i] = std::move(item);
  place(heap[i], i);
}

// Moves heap[i] down while a child is before it.
template <class Heap, class Before, class Place>
void sift_down(Heap& heap, std::size_t i, Before& before, Place& place) {
  const std::size_t n = heap.size();
  typename Heap::value_type item = std::move(heap[i]);
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap[child + 1], heap[child])) ++child;
    if (!before(heap[child], item)) break;
    heap[i] = std::move(heap[child]);
    place(heap[i], i);
    i = child;
  }
  heap[i] = std::move(item);
  place(heap[i], i);
}

}  // namespace indexed_heap_detail

/// Adds `item`; `place` is told its position and that of every element it displaces.
template <class Heap, class Before, class Place>
void indexed_heap_push(Heap& heap, typename Heap::value_type item, Before before, Place place) {
  heap.push_back(std::move(item));
  indexed_heap_detail::sift_up(heap, heap.size() - 1, before, place);
}

/// Removes and returns the element at `position` (0: the front); `place` is told where the elements that
/// move end up. Precondition: position < heap.size().
template <class Heap, class Before, class Place>
typename Heap::value_type indexed_heap_erase(Heap& heap, std::size_t position, Before before, Place place) {
  typename Heap::value_type out = std::move(heap[position]);
  typename Heap::value_type last = std::move(heap.back());
  heap.pop_back();
  if (position < heap.size()) {
    heap[position] = std::move(last);
    if (position > 0 && before(heap[position], heap[(position - 1) / 2])) {
      indexed_heap_detail::sift_up(heap, position, before, place);
    } else {
      indexed_heap_detail::sift_down(heap, position, before, place);
    }
  }
  return out;
}

}  // namespace trainsim::sim
