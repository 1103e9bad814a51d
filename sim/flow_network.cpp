#include "sim/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

FlowNetwork::FlowNetwork(Engine& engine) : engine_(&engine) {}
FlowNetwork::~FlowNetwork() = default;

LinkId FlowNetwork::add_link(double bandwidth_bytes_per_s, Duration latency, std::string name) {
  if (!(bandwidth_bytes_per_s > 0.0) || std::isinf(bandwidth_bytes_per_s)) {
    throw InputError("link '" + name + "': bandwidth must be a finite number of bytes/s > 0, got " +
                     std::to_string(bandwidth_bytes_per_s));
  }
  if (latency < Duration::zero()) throw InputError("link '" + name + "': latency must be >= 0");
  TRAINSIM_CHECK(links_.size() < std::numeric_limits<LinkId>::max(), "too many links");
  links_.push_back(Link{.bandwidth = bandwidth_bytes_per_s, .latency = latency, .name = std::move(name)});
  return static_cast<LinkId>(links_.size() - 1);
}

const FlowNetwork::Link& FlowNetwork::link_at(LinkId link) const {
  if (link >= links_.size()) {
    throw InputError("unknown link id " + std::to_string(link) + " (the network has " +
                     std::to_string(links_.size()) + " links)");
  }
  return links_[link];
}

double FlowNetwork::bandwidth(LinkId link) const {
  return link_at(link).bandwidth;
}
Duration FlowNetwork::latency(LinkId link) const {
  return link_at(link).latency;
}
const std::string& FlowNetwork::name(LinkId link) const {
  return link_at(link).name;
}
double FlowNetwork::bytes_carried(LinkId link) const {
  return link_at(link).bytes_carried;
}
std::size_t FlowNetwork::flows_on(LinkId link) const {
  return link_at(link).flows.size();
}

Duration FlowNetwork::path_latency(std::span<const LinkId> path) const {
  Duration total;
  for (const LinkId l : path) total += link_at(l).latency;
  return total;
}

double FlowNetwork::rate(FlowId flow) const {
  if (flow.generation == 0 || flow.index >= flows_.size()) return 0.0;
  const Flow& f = flows_[flow.index];
  return f.generation == flow.generation ? f.rate : 0.0;
}

FlowId FlowNetwork::start(std::span<const LinkId> path, double bytes, Callback on_done) {
  if (!(bytes >= 0.0) || std::isinf(bytes)) {
    throw InputError("a flow must move a finite number of bytes >= 0, got " + std::to_string(bytes));
  }
  for (std::size_t i = 0; i < path.size(); ++i) {
    (void)link_at(path[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (path[j] == path[i]) {
        throw InputError("a flow's path crosses link " + std::to_string(path[i]) + " ('" +
                         links_[path[i]].name + "') twice");
      }
    }
  }
  std::uint32_t index = 0;
  if (!free_flows_.empty()) {
    index = free_flows_.back();
    free_flows_.pop_back();
  } else {
    TRAINSIM_CHECK(flows_.size() < std::numeric_limits<std::uint32_t>::max(), "too many flows");
    index = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  const std::uint32_t generation = next_generation_;
  next_generation_ = next_generation_ == std::numeric_limits<std::uint32_t>::max() ? 1 : next_generation_ + 1;

  Flow& f = flows_[index];
  f.path.assign(path.begin(), path.end());
  f.bytes = bytes;
  f.remaining = bytes;
  f.rate = 0.0;
  f.on_done = std::move(on_done);
  f.generation = generation;
  f.active = false;
  ++active_;

  const Time first_byte = engine_->now() + path_latency(path);
  // Nothing to share: an empty path (a local move) or no bytes completes when the first byte would land.
  if (path.empty() || bytes == 0.0) {
    f.completion = engine_->at(first_byte, [this, index] { finish(index); });
  } else {
    engine_->at(first_byte, [this, index] { activate(index); });
  }
  return FlowId{index, generation};
}

void FlowNetwork::activate(std::uint32_t index) {
  Flow& f = flows_[index];
  f.active = true;
  f.last_update = engine_->now();
  for (const LinkId l : f.path) links_[l].flows.push_back(index);
  touch(f.path);
}

void FlowNetwork::finish(std::uint32_t index) {
  Flow& f = flows_[index];
  if (f.active) {
    for (const LinkId l : f.path) {
      auto& on_link = links_[l].flows;
      const auto it = std::find(on_link.begin(), on_link.end(), index);
      TRAINSIM_CHECK(it != on_link.end(), "a finishing flow was not on its link");
      *it = on_link.back();
      on_link.pop_back();
    }
    touch(f.path);
  }
  for (const LinkId l : f.path) links_[l].bytes_carried += f.bytes;
  Callback done = std::move(f.on_done);
  f.on_done.reset();
  f.generation = 0;
  f.active = false;
  f.rate = 0.0;
  f.completion = EventId{};
  --active_;
  free_flows_.push_back(index);
  // Last: the callback may start flows, which may reuse this slot or grow flows_.
  if (done) done();
}

void FlowNetwork::touch(std::span<const LinkId> links) {
  touched_.insert(touched_.end(), links.begin(), links.end());
  if (!resolve_scheduled_) {
    resolve_scheduled_ = true;
    // Equal-time events run in insertion order, so this runs after every change already queued for now.
    engine_->at(engine_->now(), [this] { resolve(); });
  }
}

void FlowNetwork::resolve() {
  resolve_scheduled_ = false;
  ++solves_;
  ++epoch_;
  component_links_.clear();
  component_flows_.clear();
  // The connected component of the touched links: links reach the flows on them, flows their paths.
  for (const LinkId l : touched_) {
    if (links_[l].mark != epoch_) {
      links_[l].mark = epoch_;
      component_links_.push_back(l);
    }
  }
  touched_.clear();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    for (const std::uint32_t fi : links_[component_links_[i]].flows) {
      Flow& f = flows_[fi];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      f.frozen = false;
      component_flows_.push_back(fi);
      for (const LinkId l : f.path) {
        if (links_[l].mark != epoch_) {
          links_[l].mark = epoch_;
          component_links_.push_back(l);
        }
      }
    }
  }
  for (const LinkId l : component_links_) {
    Link& link = links_[l];
    link.spare = link.bandwidth;
    link.unfrozen = static_cast<std::uint32_t>(link.flows.size());
  }

  // Progressive filling: the links with the smallest fair share are the bottleneck of all their unfrozen
  // flows; freeze those at that share, take it from every link they cross, and repeat. Freezing at the
  // minimum never pushes another link's share below it, so every link at the minimum (within rounding) is
  // done in the same pass: a symmetric collective takes one pass, not one per link.
  for (;;) {
    double share = std::numeric_limits<double>::infinity();
    for (const LinkId l : component_links_) {
      const Link& link = links_[l];
      if (link.unfrozen > 0) share = std::min(share, link.spare / link.unfrozen);
    }
    if (std::isinf(share)) break;
    TRAINSIM_CHECK(share > 0.0, "max-min fair sharing gave a flow no bandwidth");
    const double level = share * (1.0 + 1e-12);
    for (const LinkId l : component_links_) {
      Link& link = links_[l];
      if (link.unfrozen == 0 || link.spare / link.unfrozen > level) continue;
      for (const std::uint32_t fi : link.flows) {
        Flow& f = flows_[fi];
        if (f.frozen) continue;
        f.frozen = true;
        f.next_rate = share;
        for (const LinkId crossed : f.path) {
          links_[crossed].spare -= share;
          --links_[crossed].unfrozen;
        }
      }
    }
  }

  const Time now = engine_->now();
  for (const std::uint32_t fi : component_flows_) {
    Flow& f = flows_[fi];
    if (f.next_rate == f.rate) continue;
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.last_update).seconds());
    f.last_update = now;
    f.rate = f.next_rate;
    engine_->cancel(f.completion);
    f.completion =
        engine_->at(now + Duration::from_seconds(f.remaining / f.rate), [this, fi] { finish(fi); });
  }
}

}  // namespace trainsim::sim
