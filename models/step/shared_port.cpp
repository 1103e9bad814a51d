#include "models/step/shared_port.hpp"

#include <algorithm>
#include <limits>

#include "sim/error.hpp"

namespace trainsim::model {

void SharedPort::add(int stream, double issue, double latency_s, double bandwidth_s) {
  TRAINSIM_CHECK(stream >= 0 && stream < kStreams, "SharedPort: no such stream");
  streams_[static_cast<std::size_t>(stream)].queued.push_back(
      Transfer{issue, std::max(0.0, latency_s), std::max(0.0, bandwidth_s)});
}

double SharedPort::finish(int stream) {
  TRAINSIM_CHECK(stream >= 0 && stream < kStreams, "SharedPort: no such stream");
  Stream& target = streams_[static_cast<std::size_t>(stream)];
  // One event per turn: a transfer starts, reaches the port, or ends its bandwidth term at the share it has.
  enum class Event { start, reach, end };
  while (!target.idle()) {
    int on_port = 0;
    for (const Stream& s : streams_) on_port += s.active && s.reaches_port <= now_ ? 1 : 0;
    double when = std::numeric_limits<double>::infinity();
    Stream* who = nullptr;
    Event what = Event::start;
    for (Stream& s : streams_) {
      double t = 0;
      Event e = Event::start;
      if (!s.active) {
        if (s.next == s.queued.size()) continue;
        t = std::max({s.queued[s.next].issue, s.free, now_});
      } else if (s.reaches_port > now_) {
        t = s.reaches_port;
        e = Event::reach;
      } else {
        t = now_ + s.left * on_port;
        e = Event::end;
      }
      if (t < when) {
        when = t;
        who = &s;
        what = e;
      }
    }
    for (Stream& s : streams_) {
      if (s.active && s.reaches_port <= now_) s.left = std::max(0.0, s.left - (when - now_) / on_port);
    }
    now_ = when;
    switch (what) {
      case Event::start: {
        const Transfer& t = who->queued[who->next++];
        who->active = true;
        who->reaches_port = now_ + t.latency_s;
        who->left = t.bandwidth_s;
        break;
      }
      case Event::reach:  // the port's share changes from the next turn on
        break;
      case Event::end:
        who->active = false;
        who->left = 0;
        who->free = now_;
        break;
    }
  }
  return target.free;
}

}  // namespace trainsim::model
