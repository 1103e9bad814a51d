#pragma once
// Callback: a move-only `void()` callable with inline storage, the type of every event action.
// std::function would copy-require its target and allocate for most lambdas; the event queue runs tens
// of millions of callbacks per second, so a lambda capturing up to kInlineBytes (five pointers) is stored
// in place, and only larger, over-aligned or throwing-move callables go to the heap. 40 bytes keep a
// Callback at 48 bytes, so the engine's event slot is one 64-byte cache line.
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace trainsim::sim {

class Callback;

/// What a Callback can hold: anything callable as void() other than a Callback itself.
template <class F>
concept CallbackTarget = !std::is_same_v<std::remove_cvref_t<F>, Callback> && std::is_invocable_r_v<void, F&>;

class Callback {
 public:
  static constexpr std::size_t kInlineBytes = 40;

  Callback() = default;
  // Implicit conversions, as with std::function: nullptr is empty, lambdas convert.
  Callback(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)

  template <CallbackTarget F>
  Callback(F&& f) {  // NOLINT(google-explicit-constructor)
    construct(std::forward<F>(f));
  }

  Callback(Callback&& other) noexcept { take(other); }
  Callback& operator=(Callback&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  /// Builds the target `f` in place in an empty callback (an event's freshly taken slot): `f`'s captures
  /// are stored once, with no intermediate Callback to copy from. Precondition: empty.
  template <CallbackTarget F>
  void emplace_empty(F&& f) noexcept(noexcept(construct(std::forward<F>(f)))) {
    construct(std::forward<F>(f));
  }

  /// Calls the target. Precondition: not empty.
  void operator()() { ops_->invoke(storage_); }
  /// Calls the target, then destroys it; the callback becomes empty. Precondition: not empty, and the call
  /// does not move, replace or reset this callback (the engine's slot is out of reach while it runs).
  void call_once() {
    const Ops* ops = ops_;
    ops->invoke(storage_);
    if (ops->destroy != nullptr) ops->destroy(storage_);
    ops_ = nullptr;
  }
  explicit operator bool() const { return ops_ != nullptr; }
  /// Destroys the target; the callback becomes empty.
  void reset() {
    if (ops_ != nullptr) {
      if (ops_->destroy != nullptr) ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

 private:
  // Most event lambdas capture a few pointers: trivially copyable and destructible. For them move and
  // destroy are null, meaning "copy the bytes" and "nothing to do", which saves two indirect calls per event.
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* to, void* from);  // move-constructs into `to`, destroys `from`; null: copy bytes
    void (*destroy)(void*);              // null: trivially destructible
  };

  // Precondition: empty.
  template <class F>
  void construct(F&& f) noexcept(fits_inline<std::remove_cvref_t<F>>() &&
                                 std::is_nothrow_constructible_v<std::remove_cvref_t<F>, F&&>) {
    using Fn = std::remove_cvref_t<F>;
    if constexpr (fits_inline<Fn>()) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
      ops_ = &inline_ops<Fn>;
    } else {
      ::new (static_cast<void*>(storage_)) Fn*(new Fn(std::forward<F>(f)));
      ops_ = &heap_ops<Fn>;
    }
  }

  void take(Callback& other) noexcept {
    ops_ = other.ops_;
    if (ops_ == nullptr) return;
    if (ops_->move != nullptr) {
      ops_->move(storage_, other.storage_);
    } else {
      std::memcpy(storage_, other.storage_, kInlineBytes);
    }
    other.ops_ = nullptr;
  }

  template <class Fn>
  static constexpr bool fits_inline() {
    return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(void*) &&
           std::is_nothrow_move_constructible_v<Fn>;
  }

  template <class Fn>
  static constexpr Ops inline_ops{
      [](void* s) { (*std::launder(static_cast<Fn*>(s)))(); },
      std::is_trivially_copyable_v<Fn> ? nullptr
                                       : +[](void* to, void* from) {
                                           Fn* source = std::launder(static_cast<Fn*>(from));
                                           ::new (to) Fn(std::move(*source));
                                           source->~Fn();
                                         },
      std::is_trivially_destructible_v<Fn> ? nullptr : +[](void* s) { std::launder(static_cast<Fn*>(s))->~Fn(); }};

  template <class Fn>
  static constexpr Ops heap_ops{[](void* s) { (**static_cast<Fn**>(s))(); },
                                nullptr,  // the pointer is copied
                                [](void* s) { delete *static_cast<Fn**>(s); }};

  alignas(void*) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace trainsim::sim
