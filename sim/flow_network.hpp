#pragma once
// FlowNetwork: bytes moving over paths of shared links, at rates given by max-min fair sharing.
//
// A flow over path P first waits the sum of P's link latencies (the first byte's propagation), then moves
// its bytes at its fair-share rate. Rates are max-min fair (progressive filling): every flow is limited
// by its most contended link, and no flow can go faster without slowing a flow that is no faster. They are
// recomputed on every arrival and departure. Incremental: a change re-solves only the connected component
// (links and flows reachable through shared links) of the flow that arrived or left, so flows on disjoint
// paths cost nothing.
//
// Lazy per path: flows moving over the same path always get the same max-min rate, so the solver works on
// path classes (a path and how many flows move over it), not on flows. A class keeps a service counter
// S(t), the bytes one of its flows has moved since the class was created; a flow joining at S0 with B
// bytes completes when S reaches S0 + B. Its flows wait in a min-heap by that key, and the class holds ONE
// engine event, for the earliest. A rate change updates the class's counter and moves that one event, so
// one change among N flows sharing one path costs O(log N), not O(N). A change still costs O(classes and
// links in the component): N flows over N distinct paths through one link are re-solved one by one.
// Rounding: a flow's remaining bytes, key - S, carry an absolute error of about 2^-52 times the service of
// its class since the class was created (a class ends when its last flow does).
//
// Units: bandwidth in bytes/s, sizes in bytes (doubles: collectives move fractional shares).
#include <cstdint>
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

  /// Starts moving `bytes` (finite, >= 0) over `path` (link ids, in order; repeats are not allowed) now;
  /// `on_done` (may be empty) runs when the last byte arrives. An empty path is a local move: it
  /// completes at now(). Throws InputError for an unknown link id or bad byte count.
  FlowId start(std::span<const LinkId> path, double bytes, Callback on_done);

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
  /// How many times a component was re-solved (a measure of solver work).
  [[nodiscard]] std::uint64_t solves() const { return solves_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  struct Link {
    double bandwidth;
    Duration latency;
    std::string name;
    double bytes_carried = 0.0;
    std::vector<std::uint32_t> classes;  // path classes crossing it, each with at least one flow
    std::uint32_t flows = 0;             // flows moving bytes over it now (sum of its classes' sizes)
    std::uint64_t mark = 0;              // == epoch_ when in the component being solved
    double spare = 0.0;                  // solver scratch: capacity not yet given to frozen flows
    std::uint32_t unfrozen = 0;          // solver scratch: flows on it still being filled
  };
  struct Flow {
    std::vector<LinkId> path;
    double bytes = 0.0;
    Callback on_done;
    std::uint32_t generation = 0;      // 0 = free slot
    std::uint32_t path_class = kNone;  // while active (past its latency, sharing links)
    std::uint64_t join = 0;            // its Member's join number, while active
  };
  // A flow in its class's heap: done when the class's service reaches `key`; ties finish in join order.
  struct Member {
    double key;
    std::uint64_t join;
    std::uint32_t flow;
  };
  // The active flows over one path. Service S(t) = service_base + rate * (t - base_time), in bytes per flow.
  struct PathClass {
    std::vector<LinkId> path;
    std::vector<std::uint32_t> slot_on_link;  // slot_on_link[i]: its index in links_[path[i]].classes
    std::vector<Member> heap;                 // min-heap by (key, join); empty = free slot
    double rate = 0.0;                        // bytes/s per flow; 0 until first solved
    std::uint64_t solved_before = 0;          // members with a smaller join number have `rate`
    double service_base = 0.0;
    Time base_time;
    EventId event;  // the earliest member's completion, at event_time
    Time event_time;
    std::uint64_t mark = 0;
    double next_rate = 0.0;  // solver scratch
    bool frozen = false;     // solver scratch
  };

  void activate(std::uint32_t flow);
  // Runs when a class's earliest member is due: removes every member due now, then their flows finish.
  void complete(std::uint32_t path_class);
  // Credits the bytes, frees the slot and runs the callback of a flow no longer on any link.
  void finish(std::uint32_t flow);
  // The class over `path`, created (and attached to its links) when no flow moves over that path now.
  std::uint32_t class_for(std::span<const LinkId> path);
  // Detaches an empty class from its links and frees its slot.
  void release_class(std::uint32_t path_class);
  // When `key` is reached at the class's current rate (> 0), rounded up to a picosecond, not before now.
  [[nodiscard]] Time completion_time(const PathClass& c, double key) const;
  // Marks links whose flows changed; one re-solve runs per instant, after every change at that instant,
  // so a collective starting N flows at once costs one solve, not N.
  void touch(std::span<const LinkId> links);
  // Re-solves max-min rates for the component reachable from the touched links; moves class events.
  void resolve();
  [[nodiscard]] const Link& link_at(LinkId link) const;

  Engine* engine_;
  std::vector<Link> links_;
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
  bool resolve_scheduled_ = false;
  // Scratch, kept to avoid allocating per change.
  std::vector<LinkId> component_links_;
  std::vector<std::uint32_t> component_classes_;
  std::vector<std::uint32_t> due_;
};

}  // namespace trainsim::sim
