#pragma once
// FlowNetwork: bytes moving over paths of shared links, at rates given by max-min fair sharing.
//
// A flow over path P first waits the sum of P's link latencies (the first byte's propagation), then moves
// its bytes at its fair-share rate. Rates are max-min fair (progressive filling): every flow is limited
// by its most contended link, and no flow can go faster without slowing a flow that is no faster. They are
// recomputed on every arrival and departure, once per instant (after every change at that instant).
// Incremental: a change re-solves only the connected component (links and flows reachable through shared
// links that can bind) of the flow that arrived or left, so flows on disjoint paths cost nothing.
//
// Links that cannot bind: a link is no flow's narrowest link (a flow's "anchor": the lowest bandwidth on
// its path, the first such link on ties) and its flows' caps (each flow's anchor bandwidth) sum to at most
// its bandwidth. No allocation that respects the anchors can exceed such a link, so dropping it from every
// path changes no max-min rate (the relaxed problem's fair allocation is feasible for the full problem,
// hence fair there too). The test is exact, not within a margin: a flow's load on a link is its cap in
// units of 2^-30 of the link's bandwidth, rounded up (load_units in the .cpp), and a link can bind when the
// loads sum past 2^30. A flow alone on its anchor is bounded there by its cap and by nothing else, so that
// link leaves the paths too and the cap goes with the flow (a per-flow bound in the filling, the same
// constraint): N flows each alone on its own narrow leaf link and all through one spine are then one class
// over the spine. Links whose ability to bind flips at an instant regroup their flows at that instant's
// re-solve.
//
// Lazy per binding path: flows over the same links that can bind, with the same cap, always get the same
// max-min rate, so the solver fills path classes (those links, weighted by how many flows cross them, and
// the cap), not flows: N flows over N distinct leaf links and one shared spine are one class over the
// spine. A flow alone on all its links is a class over no link of its own, which runs at its cap. A class
// keeps a service counter S(t), the bytes one of its flows has moved since the class was created; a flow
// joining at S0 with B bytes completes when S reaches S0 + B. Its flows wait in a min-heap by that key, and
// the class holds ONE engine event, for the earliest. A rate change updates the class's counter and moves
// that one event.
//
// Cost of a change (a flow arriving or leaving): O(path length) to update its links' loads, O(log N) in its
// class of N flows; for each link whose ability to bind flipped, O(path length + log N) per flow over it
// to move the flow to its new class; then the instant's re-solve: O(classes and links in the component)
// per progressive-filling pass, and O(1) engine work per class whose rate changed. So one change among N
// flows of one class is O(log N) (one path, or distinct paths through one bottleneck whose other links
// cannot bind or carry that flow alone); N classes sharing a link (e.g. N leaf links each shared by two
// flows and each some flow's narrowest) are still re-solved one by one, O(N).
// Rounding: a flow's remaining bytes, key - S, carry an absolute error of about 2^-52 times the service of
// its class since the class was created (a class ends when its last flow does); a flow that moves to
// another class carries its remaining bytes over with that error.
//
// Units: bandwidth in bytes/s, sizes in bytes (doubles: collectives move fractional shares).
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "sim/callback.hpp"
#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace trainsim::sim {

using LinkId = std::uint32_t;

/// Names one flow while it is in the network; stale ids (of finished flows) are detected.
struct FlowId {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;  ///< 0 = none
  friend constexpr bool operator==(FlowId, FlowId) = default;
};

class FlowNetwork {
 public:
  /// The engine must outlive the network.
  explicit FlowNetwork(Engine& engine);
  ~FlowNetwork();
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// Adds a unidirectional link. Throws InputError unless 0 < bandwidth < inf and latency >= 0.
  LinkId add_link(double bandwidth_bytes_per_s, Duration latency, std::string name = {});
  /// Makes room for `links` links in all (optional; avoids regrowth when adding many).
  void reserve_links(std::size_t links);

  /// Starts moving `bytes` (finite, >= 0) over `path` (link ids, in order; repeats are not allowed) now;
  /// `on_done` (may be empty) runs when the last byte arrives. An empty path is a local move: it
  /// completes at now(). Throws InputError for an unknown link id or bad byte count.
  FlowId start(std::span<const LinkId> path, double bytes, Callback on_done);
  /// start() without copying `path`, which must stay valid and unchanged until the flow completes (a task
  /// graph's stored paths, kept for its whole run): saves a copy and an allocation per flow.
  FlowId start_borrowing(std::span<const LinkId> path, double bytes, Callback on_done);

  /// Sum of the latencies of the links on `path`.
  [[nodiscard]] Duration path_latency(std::span<const LinkId> path) const;

  /// The current rate of a flow in bytes/s: 0 while it waits out its latency or once it is done.
  [[nodiscard]] double rate(FlowId flow) const;
  /// Flows started and not yet completed.
  [[nodiscard]] std::size_t active_flows() const { return active_; }

  [[nodiscard]] std::size_t link_count() const { return links_.size(); }
  [[nodiscard]] double bandwidth(LinkId link) const;
  [[nodiscard]] Duration latency(LinkId link) const;
  [[nodiscard]] const std::string& name(LinkId link) const;
  /// Bytes carried over `link` by flows that have completed.
  [[nodiscard]] double bytes_carried(LinkId link) const;
  /// Flows moving bytes over `link` now.
  [[nodiscard]] std::size_t flows_on(LinkId link) const;
  /// Path classes with flows in them now: flows that always share one rate are one class (file comment).
  [[nodiscard]] std::size_t path_classes() const { return classes_.size() - free_classes_.size(); }
  /// How many times a component was re-solved (a measure of solver work).
  [[nodiscard]] std::uint64_t solves() const { return solves_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr double kNoCap = std::numeric_limits<double>::infinity();

  // One activation of a flow over a link; stale once that activation has ended (the flow's join differs
  // or it is no longer active).
  struct Rider {
    std::uint64_t join;
    std::uint32_t flow;
  };
  // A link's state is split by who touches it, so that an arrival or departure over a link (the run's
  // commonest change, one per link of a flow's path) costs one cache line per link: Link holds everything
  // attach, detach and finish read or write; LinkSolver what the classes and the re-solve use; LinkInfo
  // what is read rarely.
  struct alignas(64) Link {
    double bandwidth = 0.0;
    std::uint64_t load = 0;      // its active flows' caps, in units of 2^-30 of its bandwidth (rounded up)
    std::uint32_t flows = 0;     // flows moving bytes over it now
    std::uint32_t anchored = 0;  // of those, the flows whose narrowest link it is
    // On its flows' class paths: two or more flows, and anchored > 0 or load > its bandwidth. (A flow
    // alone on its narrowest link is held to it by its class's cap.)
    bool binding = false;
    bool flipped = false;        // in flipped_
    std::uint32_t sole = 0;      // while riders is empty and flows is 1: that flow
    double bytes_carried = 0.0;  // by flows that have completed
    // Its flows, found only when `binding` flips: appended on arrival, never removed on departure; stale
    // entries are dropped when the list is walked or reaches twice the live count (amortised O(1)). A flow
    // alone on the link is `sole` instead, and goes in first when a second one arrives (so the list holds
    // every flow on the link whenever it is not empty): most links carry one flow at a time, and their list,
    // memory apart from the link, is then never written. A link can flip only with two flows or more on
    // it, so rebind_flipped finds them all listed.
    std::vector<Rider> riders;
  };
  struct LinkSolver {
    std::vector<std::uint32_t> classes;  // path classes binding over it, each with at least one flow
    std::uint64_t mark = 0;              // == epoch_ when in the component being solved
    double spare = 0.0;                  // scratch: capacity not yet given to frozen flows
    std::uint32_t unfrozen = 0;          // scratch: flows on it still being filled
  };
  struct LinkInfo {
    Duration latency;
    std::string name;
  };
  struct Flow {
    std::span<const LinkId> path;  // owned_path, or the caller's (start_borrowing)
    std::vector<LinkId> owned_path;
    double bytes = 0.0;
    double cap = 0.0;  // the bandwidth of its narrowest link, while active
    Callback on_done;
    std::uint32_t generation = 0;      // 0 = free slot
    std::uint32_t path_class = kNone;  // while active (past its latency, sharing links)
    std::uint32_t anchor = 0;          // position on path of its narrowest link (the first, on ties)
    std::uint32_t heap_slot = 0;       // its Member's index in its class's heap, while active
    std::uint64_t join = 0;            // its Member's join number, while active; unique per activation
  };
  // A flow in its class's heap: done when the class's service reaches `key`; ties finish in join order.
  struct Member {
    double key;
    std::uint64_t join;
    std::uint32_t flow;
  };
  // A class's members as an indexed heap (indexed_heap.hpp): the front one in the class itself, the others
  // in a vector. Most classes hold one flow (a flow alone on its links), and completing it reads its class
  // and its front member: one place in memory, not two.
  class MemberHeap {
   public:
    using value_type = Member;
    [[nodiscard]] std::size_t size() const { return size_; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    Member& operator[](std::size_t i) { return i == 0 ? front_ : rest_[i - 1]; }
    const Member& operator[](std::size_t i) const { return i == 0 ? front_ : rest_[i - 1]; }
    Member& front() { return front_; }
    [[nodiscard]] const Member& front() const { return front_; }
    Member& back() { return (*this)[size_ - 1]; }
    void push_back(const Member& m) {
      if (size_ == 0) {
        front_ = m;
      } else {
        rest_.push_back(m);
      }
      ++size_;
    }
    void pop_back() {
      if (size_ > 1) rest_.pop_back();
      --size_;
    }
    void clear() {
      rest_.clear();
      size_ = 0;
    }

   private:
    Member front_{};
    std::size_t size_ = 0;
    std::vector<Member> rest_;  // members 1, 2, ...
  };
  // The active flows over one path. Service S(t) = service_base + rate * (t - base_time), in bytes per flow.
  // What completing its front member reads comes first (alignas: whole cache lines).
  struct alignas(64) PathClass {
    MemberHeap heap;    // indexed min-heap by (key, join); empty = free slot
    double rate = 0.0;  // bytes/s per flow; 0 until first solved
    double service_base = 0.0;
    Time base_time;
    EventId event;  // the earliest member's completion, at event_time
    Time event_time;
    std::uint64_t solved_before = 0;  // members with a smaller join number have `rate`
    double cap = 0.0;                 // bytes/s no flow of it may exceed (its own narrowest link), or kNoCap
    std::uint64_t mark = 0;
    std::vector<LinkId> path;
    std::vector<std::uint32_t> slot_on_link;  // slot_on_link[i]: its index in links_[path[i]].classes
    double next_rate = 0.0;                   // solver scratch
    bool frozen = false;                      // solver scratch
  };

  FlowId start_flow(std::span<const LinkId> path, bool borrowed, double bytes, Callback on_done);
  void activate(std::uint32_t flow);
  // Adds an activated flow to its links' loads and riders / takes a flow that no longer moves off them,
  // crediting them with its bytes.
  void attach(std::uint32_t flow);
  void detach(std::uint32_t flow);
  // Asks the memory for the links of a path before they are read: a large network's links are mostly out
  // of cache, and a flow's arrival or departure reads every link of its path.
  void prefetch_links(std::span<const LinkId> path) const;
  // Recomputes whether a link can bind after a flow arrived over it or left it; when that changed and
  // `others` (the other flows on it) is not 0, queues it in flipped_: those flows keep their classes until
  // the instant's re-solve moves them (rebind_flipped). The arriving flow finds its class afterwards.
  void update_binding(LinkId link, std::uint32_t others);
  // The flow's binding links, in path order, into binding_path_, and its class's cap into binding_cap_.
  void find_binding_path(const Flow& f);
  // Puts an active flow with `left` bytes to go into the class over binding_path_ with binding_cap_.
  void join_class(std::uint32_t flow, double left);
  // Takes an active flow out of its class (freeing the class when it empties); returns its bytes to go.
  double leave_class(std::uint32_t flow);
  // Moves every live rider of every link in flipped_ to the class of its binding path, if that changed.
  void rebind_flipped();
  // A class's heap, each member's slot recorded in its flow.
  void push_member(PathClass& c, Member m);
  Member erase_member(PathClass& c, std::size_t slot);
  // The rate rate() reports for an active flow.
  [[nodiscard]] double current_rate(const Flow& f) const;
  // Runs when a class's earliest member is due: removes every member due now, then their flows finish.
  void complete(std::uint32_t path_class);
  // Frees the slot and runs the callback of a flow no longer on any link (detached, or never attached: an
  // empty path or no bytes, which credit no link).
  void finish(std::uint32_t flow);
  // The class over `path` with `cap`, created (and attached to its links) when no flow moves in it now.
  std::uint32_t class_for(std::span<const LinkId> path, double cap);
  // Detaches an empty class from its links and frees its slot.
  void release_class(std::uint32_t path_class);
  // When `key` is reached at the class's current rate (> 0), rounded up to a picosecond, not before now.
  [[nodiscard]] Time completion_time(const PathClass& c, double key) const;
  // Marks a class whose flows changed (its links, or the class itself when it crosses none); one re-solve
  // runs per instant, after every change at that instant, so a collective starting N flows at once costs
  // one solve, not N.
  void touch(std::uint32_t path_class);
  // A flow's load on a link: its cap in units of 2^-30 of the link's bandwidth, rounded up (load_units),
  // remembered for the last (bandwidth, cap) pairs: a network has few distinct bandwidths.
  [[nodiscard]] std::uint64_t load_on(double bandwidth, double cap);
  // Whether a rider is the current activation of its flow.
  [[nodiscard]] bool live(const Rider& r) const;
  // Drops a link's stale riders.
  void drop_stale_riders(Link& link);
  // Re-solves max-min rates for the component reachable from the touched links; moves class events.
  void resolve();
  [[nodiscard]] const Link& link_at(LinkId link) const;

  Engine* engine_;
  std::vector<Link> links_;
  std::vector<LinkSolver> solver_;  // per link
  std::vector<LinkInfo> info_;      // per link
  bool latencies_ = false;          // whether some link has a latency > 0
  struct LoadMemo {
    double bandwidth = 0.0;  // no link has it
    double cap = 0.0;
    std::uint64_t units = 0;
  };
  std::array<LoadMemo, 64> load_memo_{};
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<PathClass> classes_;
  std::vector<std::uint32_t> free_classes_;
  std::size_t active_ = 0;
  std::uint64_t solves_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint64_t next_join_ = 0;
  std::uint32_t next_generation_ = 1;
  std::vector<LinkId> touched_;
  std::vector<std::uint32_t> touched_unlinked_;  // touched classes that cross no binding link
  bool resolve_scheduled_ = false;
  // Scratch, kept to avoid allocating per change.
  std::vector<LinkId> component_links_;
  std::vector<std::uint32_t> component_classes_;
  std::vector<std::uint32_t> capped_classes_;  // of those, the ones with a cap
  std::vector<std::uint32_t> due_;
  std::vector<LinkId> flipped_;
  std::vector<LinkId> binding_path_;
  double binding_cap_ = kNoCap;
};

}  // namespace trainsim::sim
