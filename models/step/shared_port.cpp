#include "models/step/shared_port.hpp"

#include <algorithm>
#include <limits>

#include "sim/error.hpp"

namespace trainsim::model {

void SharedPort::clear() {
  for (Stream& s : streams_) {
    s.queued.clear();
    s.next = 0;
    s.active = false;
    s.reaches_port = s.left = s.free = 0;
  }
  now_ = 0;
}

void SharedPort::add(int stream, double issue, double latency_s, double bandwidth_s) {
  TRAINSIM_CHECK(stream >= 0 && stream < kStreams, "SharedPort: no such stream");
  streams_[static_cast<std::size_t>(stream)].queued.push_back(
      Transfer{issue, std::max(0.0, latency_s), std::max(0.0, bandwidth_s)});
}

void SharedPort::start_due(Stream& s) {
  if (s.active || s.next == s.queued.size() || s.queued[s.next].issue > now_) return;
  const Transfer& t = s.queued[s.next++];
  s.active = true;
  s.reaches_port = now_ + t.latency_s;
  s.left = t.bandwidth_s;
}

double SharedPort::next_change(const Stream& s, bool on_port, double share) const {
  if (on_port) return now_ + s.left * share;
  if (s.active) return s.reaches_port;
  if (s.next < s.queued.size()) return s.queued[s.next].issue;
  return std::numeric_limits<double>::infinity();
}

void SharedPort::step(Stream& s, bool on_port, double change, double when, double moved) {
  if (!on_port) {  // issued or reached the port: the next turn sees it
    start_due(s);
    return;
  }
  s.left = std::max(0.0, s.left - moved);  // not below 0 by rounding
  if (change != when) return;
  s.active = false;
  s.left = 0;
  s.free = now_;
  if (s.next == s.queued.size()) {  // drained: keep the capacity, not the transfers
    s.queued.clear();
    s.next = 0;
  }
  start_due(s);
}

double SharedPort::finish(int stream) {
  TRAINSIM_CHECK(stream >= 0 && stream < kStreams, "SharedPort: no such stream");
  Stream& target = streams_[static_cast<std::size_t>(stream)];
  const Stream& other = streams_[static_cast<std::size_t>(1 - stream)];
  if (other.idle() && !target.active) {
    // Alone on the port: its transfers one after another, each its latency and bandwidth term in full.
    for (std::size_t k = target.next; k < target.queued.size(); ++k) {
      const Transfer& t = target.queued[k];
      now_ = std::max(t.issue, now_) + t.latency_s + t.bandwidth_s;
      target.free = now_;
    }
    target.queued.clear();
    target.next = 0;
    return target.free;
  }
  // Turn by turn to the next change: a transfer is issued, reaches the port, or ends its bandwidth term at
  // its share of the port (a stream's `free` is never after now_, so a transfer starts at its issue or now).
  Stream& a = streams_[0];
  Stream& b = streams_[1];
  start_due(a);
  start_due(b);
  while (!target.idle()) {
    const bool a_on = a.active && a.reaches_port <= now_;
    const bool b_on = b.active && b.reaches_port <= now_;
    const double share = a_on && b_on ? 2.0 : 1.0;  // seconds a second of bandwidth term takes
    const double ta = next_change(a, a_on, share);
    const double tb = next_change(b, b_on, share);
    const double when = std::min(ta, tb);
    const double moved = (when - now_) / share;
    now_ = when;
    step(a, a_on, ta, when, moved);
    step(b, b_on, tb, when, moved);
  }
  return target.free;
}

}  // namespace trainsim::model
