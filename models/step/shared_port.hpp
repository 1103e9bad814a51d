#pragma once
// One GPU's port shared by its communication streams, in closed form: the rule the event fidelity's flows
// follow on a port (step_network.hpp, sim::FlowNetwork's max-min fair share), for the closed-form step.
//
// Each stream runs its transfers one at a time, in the order they are added. A transfer starts when it is
// issued or when its stream's previous transfer ends, whichever is later; it first pays its size-independent
// part (topo::CollectiveEstimate::latency_s: launch, α, host issue) on its stream without touching the port,
// then its bandwidth term on the port. The event lowering runs that term as one flow that alone saturates
// the port (its size is the term times the port's rate), so the transfers in that phase split the port
// evenly: two at once each advance at half speed, and the port stays busy as long as any is left. Work is
// conserved: two terms of a and b seconds that overlap end, together, a + b seconds after the first began.
//
// Used for ZeRO-3 (analytic_step.hpp's gathered_pass): a unit's weight gather and the gradient reduction of
// the unit computed before it are on streams of their own (FSDP's all-gather and reduce-scatter streams) and
// on the same NIC, so that in the backward they share it as the event run's flows do.
#include <array>
#include <cstddef>
#include <vector>

namespace trainsim::model {

class SharedPort {
 public:
  static constexpr int kStreams = 2;

  /// Adds a transfer to `stream` (0 or 1), issued at `issue`, `latency_s` on its stream before it reaches
  /// the port and `bandwidth_s` on the port alone. Time only moves forward: a transfer that would start
  /// before the time the port was last run to (finish) starts then.
  void add(int stream, double issue, double latency_s, double bandwidth_s);

  /// Runs the port until every transfer added to `stream` is done, the other stream's transfers advancing
  /// beside them; returns when the stream's last transfer ended (0 if it never had one).
  double finish(int stream);

  /// Back to no transfers at time 0 (the buffers kept for the next use).
  void clear();

 private:
  struct Transfer {
    double issue = 0;
    double latency_s = 0;
    double bandwidth_s = 0;
  };
  struct Stream {
    std::vector<Transfer> queued;  ///< added since the stream was last drained
    std::size_t next = 0;          ///< the first of `queued` not started (those before it have)
    bool active = false;           ///< a transfer is running
    double reaches_port = 0;       ///< when the running transfer's latency ends
    double left = 0;               ///< its bandwidth seconds left (at the whole port's rate)
    double free = 0;               ///< when its last finished transfer ended (never after now_)
    [[nodiscard]] bool idle() const { return !active && next == queued.size(); }
  };
  // Starts the stream's next transfer if it is free and the transfer has been issued by now_.
  void start_due(Stream& s);
  // When stream s next changes: its bandwidth term ends (on the port, at `share` seconds per second of it),
  // it reaches the port, or its next transfer is issued; infinity when it has nothing left.
  [[nodiscard]] double next_change(const Stream& s, bool on_port, double share) const;
  // The turn that ends at `when` for stream s, on the port or not, whose next change was at `change`: its
  // bandwidth term `moved` seconds further, and whatever is due then (an end, a start).
  void step(Stream& s, bool on_port, double change, double when, double moved);
  std::array<Stream, kStreams> streams_;
  double now_ = 0;
};

}  // namespace trainsim::model
