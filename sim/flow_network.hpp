#pragma once
// FlowNetwork: bytes moving over paths of shared links, at rates given by max-min fair sharing.
//
// A flow over path P first waits the sum of P's link latencies (the first byte's propagation), then moves
// its bytes at its fair-share rate. Rates are max-min fair (progressive filling): every flow is limited
// by its most contended link, and no flow can go faster without slowing a flow that is no faster. They are
// recomputed on every arrival and departure, and the completion events of flows whose rate changed are
// rescheduled. Incremental: a change re-solves only the connected component (links and flows reachable
// through shared links) of the flow that arrived or left, so flows on disjoint paths cost nothing.
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
  struct Link {
    double bandwidth;
    Duration latency;
    std::string name;
    double bytes_carried = 0.0;
    std::vector<std::uint32_t> flows;  // flows moving bytes over it now
    std::uint64_t mark = 0;            // == epoch_ when in the component being solved
    double spare = 0.0;                // solver scratch: capacity not yet given to frozen flows
    std::uint32_t unfrozen = 0;        // solver scratch: flows on it still being filled
  };
  struct Flow {
    std::vector<LinkId> path;
    double bytes = 0.0;
    double remaining = 0.0;  // bytes left at last_update
    double rate = 0.0;       // bytes/s; 0 until active
    Time last_update;
    Callback on_done;
    EventId completion;
    std::uint32_t generation = 0;  // 0 = free slot
    std::uint64_t mark = 0;
    bool active = false;     // past its latency, sharing links
    double next_rate = 0.0;  // solver scratch
    bool frozen = false;     // solver scratch
  };

  void activate(std::uint32_t flow);
  void finish(std::uint32_t flow);
  // Marks links whose flows changed; one re-solve runs per instant, after every change at that instant,
  // so a collective starting N flows at once costs one solve, not N.
  void touch(std::span<const LinkId> links);
  // Re-solves max-min rates for the component reachable from the touched links; reschedules completions.
  void resolve();
  [[nodiscard]] const Link& link_at(LinkId link) const;

  Engine* engine_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::size_t active_ = 0;
  std::uint64_t solves_ = 0;
  std::uint64_t epoch_ = 0;
  std::uint32_t next_generation_ = 1;
  std::vector<LinkId> touched_;
  bool resolve_scheduled_ = false;
  // Scratch for resolve(), kept to avoid allocating per change.
  std::vector<LinkId> component_links_;
  std::vector<std::uint32_t> component_flows_;
};

}  // namespace trainsim::sim
