#include "sim/flow_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "sim/error.hpp"
#include "sim/indexed_heap.hpp"

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
  links_.push_back(Link{.bandwidth = bandwidth_bytes_per_s});
  solver_.emplace_back();
  info_.push_back(LinkInfo{.latency = latency, .name = std::move(name)});
  latencies_ = latencies_ || latency > Duration::zero();
  return static_cast<LinkId>(links_.size() - 1);
}

void FlowNetwork::reserve_links(std::size_t links) {
  links_.reserve(links);
  solver_.reserve(links);
  info_.reserve(links);
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
  (void)link_at(link);
  return info_[link].latency;
}
const std::string& FlowNetwork::name(LinkId link) const {
  (void)link_at(link);
  return info_[link].name;
}
double FlowNetwork::bytes_carried(LinkId link) const {
  return link_at(link).bytes_carried;
}
std::size_t FlowNetwork::flows_on(LinkId link) const {
  return link_at(link).flows;
}

Duration FlowNetwork::path_latency(std::span<const LinkId> path) const {
  Duration total;
  for (const LinkId l : path) {
    (void)link_at(l);
    total += info_[l].latency;
  }
  return total;
}

double FlowNetwork::rate(FlowId flow) const {
  if (flow.generation == 0 || flow.index >= flows_.size()) return 0.0;
  const Flow& f = flows_[flow.index];
  if (f.generation != flow.generation || f.path_class == kNone) return 0.0;
  // A flow that joined its class after the class was last solved has no rate until the solve at this
  // instant runs.
  return current_rate(f);
}

double FlowNetwork::current_rate(const Flow& f) const {
  const PathClass& c = classes_[f.path_class];
  return f.join < c.solved_before ? c.rate : 0.0;
}

FlowId FlowNetwork::start(std::span<const LinkId> path, double bytes, Callback on_done) {
  return start_flow(path, false, bytes, std::move(on_done));
}

FlowId FlowNetwork::start_borrowing(std::span<const LinkId> path, double bytes, Callback on_done) {
  return start_flow(path, true, bytes, std::move(on_done));
}

FlowId FlowNetwork::start_flow(std::span<const LinkId> path, bool borrowed, double bytes, Callback on_done) {
  if (!(bytes >= 0.0) || std::isinf(bytes)) {
    throw InputError("a flow must move a finite number of bytes >= 0, got " + std::to_string(bytes));
  }
  for (std::size_t i = 0; i < path.size(); ++i) {
    (void)link_at(path[i]);
    for (std::size_t j = 0; j < i; ++j) {
      if (path[j] == path[i]) {
        const std::string& name = info_[path[i]].name;
        throw InputError("a flow's path crosses link " + std::to_string(path[i]) +
                         (name.empty() ? "" : " ('" + name + "')") + " twice");
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
  if (borrowed) {
    f.path = path;
  } else {
    f.owned_path.assign(path.begin(), path.end());
    f.path = f.owned_path;
  }
  f.bytes = bytes;
  f.on_done = std::move(on_done);
  f.generation = generation;
  f.path_class = kNone;
  ++active_;

  // Every link was checked above; a network without latencies (the step's) reads none.
  const Time first_byte = latencies_ ? engine_->now() + path_latency(path) : engine_->now();
  // Nothing to share: an empty path (a local move) or no bytes completes when the first byte would land.
  if (path.empty() || bytes == 0.0) {
    engine_->at(first_byte, [this, index] { finish(index); });
  } else {
    engine_->at(first_byte, [this, index] { activate(index); });
  }
  return FlowId{index, generation};
}

namespace {

// Heap order: the front is the member with the earliest (key, join). A lambda, not a function, so that the
// heap's comparisons inline.
constexpr auto kEarlier = [](const auto& a, const auto& b) {
  return a.key < b.key || (a.key == b.key && a.join < b.join);
};

// A flow's load on a link: the least k with k * bandwidth >= cap * 2^kLoadBits, exactly, for
// 0 < cap <= bandwidth. Rounding up keeps the test "the loads sum to at most 2^kLoadBits" sufficient for
// "the caps sum to at most the bandwidth", so a link is only ever dropped when it truly cannot bind; being
// exact (not rounded with a margin) keeps the common cases exact: a cap equal to, half or a quarter of the
// link's bandwidth. 30 bits leave room for 2^32 flows on one link in 64 bits.
constexpr int kLoadBits = 30;
constexpr std::uint64_t kFullLoad = std::uint64_t{1} << kLoadBits;

std::uint64_t load_units(double cap, double bandwidth) {
  if (cap == bandwidth) return kFullLoad;
  const double scaled = cap * static_cast<double>(kFullLoad);  // exact: times a power of two
  const double quotient = scaled / bandwidth;                  // <= 2^30, so within 2^-23 of the exact ratio
  const double k = std::ceil(quotient);
  // Unless the exact ratio may be an integer or just above one, ceil of the rounded quotient is exact.
  if (k - quotient > 0x1p-20 && k - quotient < 1.0 - 0x1p-20) return static_cast<std::uint64_t>(k);
  // Otherwise settle it exactly: fma rounds k * bandwidth - scaled once, which never changes its sign.
  auto units = static_cast<std::uint64_t>(k);
  while (units > 0 && std::fma(static_cast<double>(units - 1), bandwidth, -scaled) >= 0.0) --units;
  while (std::fma(static_cast<double>(units), bandwidth, -scaled) < 0.0) ++units;
  return units;
}

}  // namespace

Time FlowNetwork::completion_time(const PathClass& c, double key) const {
  const double left = std::max(0.0, (key - c.service_base) / c.rate);
  return max(c.base_time + Duration::from_seconds(left), engine_->now());
}

std::uint32_t FlowNetwork::class_for(std::span<const LinkId> path, double cap) {
  // A flow over no binding link is a class of its own, never shared: its service counter then starts with
  // it, and its completion is computed from its own bytes (a class shared by flows that come and go would
  // carry a counter that grows, and picoseconds of rounding, with every flow before it).
  if (!path.empty()) {
    // Every class over `path` crosses each of its links: search the link with the fewest classes.
    LinkId fewest = path.front();
    for (const LinkId l : path) {
      if (solver_[l].classes.size() < solver_[fewest].classes.size()) fewest = l;
    }
    for (const std::uint32_t ci : solver_[fewest].classes) {
      if (classes_[ci].cap == cap && std::ranges::equal(classes_[ci].path, path)) return ci;
    }
  }
  std::uint32_t ci = 0;
  if (!free_classes_.empty()) {
    ci = free_classes_.back();
    free_classes_.pop_back();
  } else {
    TRAINSIM_CHECK(classes_.size() < kNone, "too many paths");
    ci = static_cast<std::uint32_t>(classes_.size());
    classes_.emplace_back();
  }
  PathClass& c = classes_[ci];
  c.path.assign(path.begin(), path.end());
  c.cap = cap;
  c.slot_on_link.resize(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    auto& on_link = solver_[path[i]].classes;
    c.slot_on_link[i] = static_cast<std::uint32_t>(on_link.size());
    on_link.push_back(ci);
  }
  c.heap.clear();
  c.rate = 0.0;
  c.service_base = 0.0;
  c.solved_before = 0;
  c.base_time = engine_->now();
  c.event = EventId{};
  return ci;
}

void FlowNetwork::release_class(std::uint32_t ci) {
  PathClass& c = classes_[ci];
  if (c.event.seq != 0) engine_->cancel(c.event);
  c.event = EventId{};
  for (std::size_t i = 0; i < c.path.size(); ++i) {
    const LinkId l = c.path[i];
    auto& on_link = solver_[l].classes;
    const std::uint32_t slot = c.slot_on_link[i];
    const std::uint32_t moved = on_link.back();
    on_link[slot] = moved;
    on_link.pop_back();
    if (moved != ci) {
      PathClass& m = classes_[moved];
      const auto at = std::ranges::find(m.path, l);
      TRAINSIM_CHECK(at != m.path.end(), "a class was listed on a link it does not cross");
      m.slot_on_link[static_cast<std::size_t>(at - m.path.begin())] = slot;
    }
  }
  c.rate = 0.0;
  free_classes_.push_back(ci);
}

void FlowNetwork::push_member(PathClass& c, Member m) {
  indexed_heap_push(c.heap, m, kEarlier, [this](const Member& moved, std::size_t slot) {
    flows_[moved.flow].heap_slot = static_cast<std::uint32_t>(slot);
  });
}

FlowNetwork::Member FlowNetwork::erase_member(PathClass& c, std::size_t slot) {
  return indexed_heap_erase(c.heap, slot, kEarlier, [this](const Member& moved, std::size_t at) {
    flows_[moved.flow].heap_slot = static_cast<std::uint32_t>(at);
  });
}

void FlowNetwork::update_binding(LinkId l, std::uint32_t others) {
  Link& link = links_[l];
  // One flow alone on its narrowest link is held to that link's bandwidth by its class's cap instead.
  const bool binding = link.flows >= 2 && (link.anchored > 0 || link.load > kFullLoad);
  if (binding == link.binding) return;
  link.binding = binding;
  // With no other flow on it, no class needs to change: most flips are a flow's narrowest link coming and
  // going with it.
  if (others > 0 && !link.flipped) {
    link.flipped = true;
    flipped_.push_back(l);
  }
}

std::uint64_t FlowNetwork::load_on(double bandwidth, double cap) {
  const auto bits =
      std::bit_cast<std::uint64_t>(bandwidth) ^ (std::bit_cast<std::uint64_t>(cap) * 0x9E3779B97F4A7C15);
  LoadMemo& memo = load_memo_[(bits ^ (bits >> 29)) % load_memo_.size()];
  if (memo.bandwidth != bandwidth || memo.cap != cap) memo = {bandwidth, cap, load_units(cap, bandwidth)};
  return memo.units;
}

bool FlowNetwork::live(const Rider& r) const {
  const Flow& f = flows_[r.flow];
  return f.path_class != kNone && f.join == r.join;
}

void FlowNetwork::drop_stale_riders(Link& link) {
  std::erase_if(link.riders, [this](const Rider& r) { return !live(r); });
}

void FlowNetwork::prefetch_links(std::span<const LinkId> path) const {
  for (const LinkId l : path) __builtin_prefetch(&links_[l]);
}

void FlowNetwork::attach(std::uint32_t index) {
  Flow& f = flows_[index];
  prefetch_links(f.path);
  std::size_t anchor = 0;
  double narrowest = links_[f.path[0]].bandwidth;
  for (std::size_t i = 1; i < f.path.size(); ++i) {
    const double bandwidth = links_[f.path[i]].bandwidth;
    if (bandwidth < narrowest) {
      anchor = i;
      narrowest = bandwidth;
    }
  }
  f.anchor = static_cast<std::uint32_t>(anchor);
  f.cap = narrowest;
  for (std::size_t i = 0; i < f.path.size(); ++i) {
    const LinkId l = f.path[i];
    Link& link = links_[l];
    // Alone, it is the link's sole flow (riders is empty: cleared when the last flow left), unless the link
    // flipped at this instant: then it is listed, so that rebind_flipped finds it.
    if (link.flows == 0 && !link.flipped) {
      link.sole = index;
    } else {
      // Before the push: the arriving flow is not in a class yet, so it would look stale.
      if (link.riders.size() >= 2 * std::size_t{link.flows} + 8) drop_stale_riders(link);
      if (link.riders.empty() && link.flows > 0)
        link.riders.push_back(Rider{.join = flows_[link.sole].join, .flow = link.sole});
      link.riders.push_back(Rider{.join = f.join, .flow = index});
    }
    ++link.flows;
    link.load += load_on(link.bandwidth, f.cap);
    if (i == anchor) ++link.anchored;
    update_binding(l, link.flows - 1);
  }
}

void FlowNetwork::detach(std::uint32_t index) {
  const Flow& f = flows_[index];  // its links were prefetched by complete(), detach's one caller
  for (std::size_t i = 0; i < f.path.size(); ++i) {
    const LinkId l = f.path[i];
    Link& link = links_[l];
    --link.flows;
    link.load -= load_on(link.bandwidth, f.cap);  // the same units as on arrival
    link.bytes_carried += f.bytes;
    if (link.flows == 0) link.riders.clear();  // all stale: spares the walk
    if (i == f.anchor) --link.anchored;
    update_binding(l, link.flows);
  }
}

void FlowNetwork::find_binding_path(const Flow& f) {
  binding_path_.clear();
  for (const LinkId l : f.path) {
    if (links_[l].binding) binding_path_.push_back(l);
  }
  binding_cap_ = kNoCap;
  if (links_[f.path[f.anchor]].flows == 1) binding_cap_ = f.cap;
}

void FlowNetwork::join_class(std::uint32_t index, double left) {
  const std::uint32_t ci = class_for(binding_path_, binding_cap_);
  PathClass& c = classes_[ci];
  const double service = c.service_base + c.rate * (engine_->now() - c.base_time).seconds();
  Flow& f = flows_[index];
  f.path_class = ci;
  push_member(c, Member{.key = service + left, .join = f.join, .flow = index});
  touch(ci);
}

double FlowNetwork::leave_class(std::uint32_t index) {
  Flow& f = flows_[index];
  const std::uint32_t ci = f.path_class;
  PathClass& c = classes_[ci];
  const Member m = erase_member(c, f.heap_slot);
  const double service = c.service_base + c.rate * (engine_->now() - c.base_time).seconds();
  f.path_class = kNone;
  touch(ci);
  if (c.heap.empty()) release_class(ci);
  return m.key - service;
}

void FlowNetwork::rebind_flipped() {
  // Moving flows changes classes, never which links can bind, so one pass over the flipped links does.
  for (const LinkId l : flipped_) {
    links_[l].flipped = false;
    drop_stale_riders(links_[l]);
    for (std::size_t r = 0; r < links_[l].riders.size(); ++r) {
      const std::uint32_t index = links_[l].riders[r].flow;
      find_binding_path(flows_[index]);
      const PathClass& now_in = classes_[flows_[index].path_class];
      if (now_in.cap == binding_cap_ && std::ranges::equal(binding_path_, now_in.path)) continue;
      const double left = leave_class(index);
      join_class(index, left);
    }
  }
  flipped_.clear();
}

void FlowNetwork::activate(std::uint32_t index) {
  Flow& f = flows_[index];
  // Its class is looked up over its binding links' class lists right after: ask for those too.
  for (const LinkId l : f.path) __builtin_prefetch(&solver_[l]);
  f.join = next_join_++;
  attach(index);
  find_binding_path(f);
  join_class(index, f.bytes);
}

void FlowNetwork::complete(std::uint32_t ci) {
  PathClass& c = classes_[ci];
  c.event = EventId{};
  const Time now = engine_->now();
  // Taken out of the member so that a callback that reenters the network finds its own scratch.
  std::vector<std::uint32_t> due = std::move(due_);
  due.clear();
  // The event is for the front member; members whose completion rounds to the same picosecond are done
  // too, as they would be with an event each.
  do {
    const Member m = erase_member(c, 0);
    due.push_back(m.flow);
    flows_[m.flow].path_class = kNone;
  } while (!c.heap.empty() && completion_time(c, c.heap.front().key) <= now);
  touch(ci);
  if (c.heap.empty()) release_class(ci);
  for (const std::uint32_t fi : due) prefetch_links(flows_[fi].path);
  for (const std::uint32_t fi : due) detach(fi);
  for (const std::uint32_t fi : due) finish(fi);
  due.clear();
  due_ = std::move(due);
}

void FlowNetwork::finish(std::uint32_t index) {
  Flow& f = flows_[index];
  Callback done = std::move(f.on_done);
  f.on_done.reset();
  f.generation = 0;
  f.path_class = kNone;
  --active_;
  free_flows_.push_back(index);
  // Last: the callback may start flows, which may reuse this slot or grow flows_.
  if (done) done();
}

void FlowNetwork::touch(std::uint32_t path_class) {
  const PathClass& c = classes_[path_class];
  if (c.path.empty()) {
    touched_unlinked_.push_back(path_class);
  } else {
    touched_.insert(touched_.end(), c.path.begin(), c.path.end());
  }
  if (!resolve_scheduled_) {
    resolve_scheduled_ = true;
    // Equal-time events run in insertion order, so this runs after every change already queued for now.
    engine_->at(engine_->now(), [this] { resolve(); });
  }
}

void FlowNetwork::resolve() {
  // Flows over links whose ability to bind flipped at this instant move to their new classes now, after
  // every change of the instant (so a flow finishing now is not moved first, and a link flipping back and
  // forth costs nothing). Moving touches the classes' links, so this comes before the component is found.
  rebind_flipped();
  resolve_scheduled_ = false;
  ++solves_;
  ++epoch_;
  component_links_.clear();
  component_classes_.clear();
  capped_classes_.clear();
  // The connected component of the touched links: links reach the classes on them, classes their paths.
  for (const LinkId l : touched_) {
    if (solver_[l].mark != epoch_) {
      solver_[l].mark = epoch_;
      component_links_.push_back(l);
    }
  }
  touched_.clear();
  // Classes over no shared link run at their cap, whatever else changes.
  for (const std::uint32_t ci : touched_unlinked_) {
    PathClass& c = classes_[ci];
    if (c.heap.empty() || !c.path.empty() || c.mark == epoch_) continue;  // released since it was touched
    c.mark = epoch_;
    c.frozen = true;
    c.next_rate = c.cap;
    component_classes_.push_back(ci);
  }
  touched_unlinked_.clear();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    for (const std::uint32_t ci : solver_[component_links_[i]].classes) {
      PathClass& c = classes_[ci];
      if (c.mark == epoch_) continue;
      c.mark = epoch_;
      c.frozen = false;
      component_classes_.push_back(ci);
      if (c.cap != kNoCap) capped_classes_.push_back(ci);
      for (const LinkId l : c.path) {
        if (solver_[l].mark != epoch_) {
          solver_[l].mark = epoch_;
          component_links_.push_back(l);
        }
      }
    }
  }
  for (const LinkId l : component_links_) {
    const Link& link = links_[l];
    LinkSolver& solver = solver_[l];
    solver.spare = link.bandwidth;
    // A link that cannot bind is in no class's path: none of its riders is filled through it.
    solver.unfrozen = link.binding ? link.flows : 0;
  }

  // Progressive filling: the links with the smallest fair share are the bottleneck of all their unfrozen
  // flows; freeze those at that share, take it from every link they cross, and repeat. Freezing at the
  // minimum never pushes another link's share below it, so every link at the minimum (within rounding) is
  // done in the same pass: a symmetric collective takes one pass, not one per link. The flows of a class
  // cross the same links, so they freeze together: a class is filled as one weighted flow. A class's cap
  // (its flows' own narrowest links, each carrying that flow alone) is one more bound of the same kind:
  // a class that reaches it first freezes there.
  const auto freeze = [this](PathClass& c, double rate) {
    c.frozen = true;
    c.next_rate = rate;
    const auto members = static_cast<std::uint32_t>(c.heap.size());
    const double taken = rate * members;
    for (const LinkId crossed : c.path) {
      solver_[crossed].spare -= taken;
      solver_[crossed].unfrozen -= members;
    }
  };
  for (;;) {
    double share = std::numeric_limits<double>::infinity();
    for (const LinkId l : component_links_) {
      const LinkSolver& link = solver_[l];
      if (link.unfrozen > 0) share = std::min(share, link.spare / link.unfrozen);
    }
    for (const std::uint32_t ci : capped_classes_) {
      if (!classes_[ci].frozen) share = std::min(share, classes_[ci].cap);
    }
    if (std::isinf(share)) break;
    TRAINSIM_CHECK(share > 0.0, "max-min fair sharing gave a flow no bandwidth");
    const double level = share * (1.0 + 1e-12);
    for (const std::uint32_t ci : capped_classes_) {
      PathClass& c = classes_[ci];
      if (!c.frozen && c.cap <= level) freeze(c, std::min(c.cap, share));
    }
    for (const LinkId l : component_links_) {
      const LinkSolver& link = solver_[l];
      if (link.unfrozen == 0 || link.spare / link.unfrozen > level) continue;
      for (const std::uint32_t ci : link.classes) {
        PathClass& c = classes_[ci];
        if (!c.frozen) freeze(c, share);
      }
    }
  }

  // A class whose rate changed banks the service at the old rate; one whose rate and earliest member are
  // unchanged keeps its event.
  const Time now = engine_->now();
  for (const std::uint32_t ci : component_classes_) {
    PathClass& c = classes_[ci];
    if (c.next_rate != c.rate) {
      c.service_base += c.rate * (now - c.base_time).seconds();
      c.base_time = now;
      c.rate = c.next_rate;
    }
    c.solved_before = next_join_;
    const Time due = completion_time(c, c.heap.front().key);
    if (c.event.seq != 0) {
      if (c.event_time == due) continue;
      engine_->cancel(c.event);
    }
    c.event = engine_->at(due, [this, ci] { complete(ci); });
    c.event_time = due;
  }
}

}  // namespace trainsim::sim
