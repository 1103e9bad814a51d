#include "sim/flow_network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/error.hpp"

using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::FlowId;
using trainsim::sim::FlowNetwork;
using trainsim::sim::LinkId;
using trainsim::sim::Time;

namespace {
std::vector<LinkId> path(std::initializer_list<LinkId> links) {
  return links;
}
}  // namespace

TEST_CASE("two flows on one link get half its bandwidth each") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(100.0, Duration::zero(), "l");
  const FlowId a = net.start(path({l}), 1000.0, nullptr);
  const FlowId b = net.start(path({l}), 1000.0, nullptr);
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(a) == 50.0);
  CHECK(net.rate(b) == 50.0);
  CHECK(net.flows_on(l) == 2);
}

TEST_CASE("the parking-lot topology gets the textbook max-min rates") {
  // Bertsekas & Gallager, Data Networks, sec. 6.5.2: n unit links in a row, one long flow over all of them,
  // one short flow per link. Every link carries two flows, so every flow gets 1/2.
  Engine e;
  FlowNetwork net(e);
  std::vector<LinkId> all;
  for (int i = 0; i < 3; ++i) all.push_back(net.add_link(1.0, Duration::zero()));
  const FlowId long_flow = net.start(all, 10.0, nullptr);
  std::vector<FlowId> short_flows;
  for (const LinkId l : all) short_flows.push_back(net.start(path({l}), 10.0, nullptr));
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(long_flow) == 0.5);
  for (const FlowId f : short_flows) CHECK(net.rate(f) == 0.5);
}

TEST_CASE("a parking lot with two short flows on one link gives the long flow a third everywhere") {
  // Link 0 carries the long flow and two short flows (1/3 each); on link 1 the long flow is held to 1/3,
  // so the short flow there takes the remaining 2/3.
  Engine e;
  FlowNetwork net(e);
  const LinkId l0 = net.add_link(3.0, Duration::zero());
  const LinkId l1 = net.add_link(3.0, Duration::zero());
  const FlowId long_flow = net.start(path({l0, l1}), 100.0, nullptr);
  const FlowId s0a = net.start(path({l0}), 100.0, nullptr);
  const FlowId s0b = net.start(path({l0}), 100.0, nullptr);
  const FlowId s1 = net.start(path({l1}), 100.0, nullptr);
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(long_flow) == doctest::Approx(1.0).scale(0));
  CHECK(net.rate(s0a) == doctest::Approx(1.0).scale(0));
  CHECK(net.rate(s0b) == doctest::Approx(1.0).scale(0));
  CHECK(net.rate(s1) == doctest::Approx(2.0).scale(0));
}

TEST_CASE("a flow limited elsewhere frees bandwidth for the others") {
  // Link A (10 B/s) carries flows 1, 2, 3; flow 1 also crosses link B (2 B/s). Flow 1 is held to 2 by B,
  // so flows 2 and 3 split the remaining 8: 4 each, more than the naive 10/3.
  Engine e;
  FlowNetwork net(e);
  const LinkId a = net.add_link(10.0, Duration::zero());
  const LinkId b = net.add_link(2.0, Duration::zero());
  const FlowId f1 = net.start(path({a, b}), 100.0, nullptr);
  const FlowId f2 = net.start(path({a}), 100.0, nullptr);
  const FlowId f3 = net.start(path({a}), 100.0, nullptr);
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(f1) == 2.0);
  CHECK(net.rate(f2) == 4.0);
  CHECK(net.rate(f3) == 4.0);
}

TEST_CASE("completion times follow the rates as flows arrive and leave") {
  // 100 B/s link with 1 ms latency. a (100 B) and b (300 B) share it from 1 ms at 50 B/s: a is done at
  // 1 ms + 2 s; b has 200 B left, alone at 100 B/s: done 2 s later, at 4.001 s.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(100.0, Duration::from_seconds(1e-3));
  Time done_a;
  Time done_b;
  net.start(path({l}), 100.0, [&] { done_a = e.now(); });
  net.start(path({l}), 300.0, [&] { done_b = e.now(); });
  e.run();
  CHECK(done_a == Time::from_ps(2'001'000'000'000));
  CHECK(done_b == Time::from_ps(4'001'000'000'000));
  CHECK(net.bytes_carried(l) == 400.0);
  CHECK(net.active_flows() == 0);
}

TEST_CASE("a flow arriving later slows a running one, whose completion is rescheduled") {
  // 10 B/s link. a: 100 B from t=0 alone (10 B/s). At 5 s (50 B left) b (20 B) arrives: both at 5 B/s;
  // b is done at 9 s, a has 30 B left at 10 B/s: done at 12 s.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(10.0, Duration::zero());
  Time done_a;
  Time done_b;
  net.start(path({l}), 100.0, [&] { done_a = e.now(); });
  e.at(Time::from_ps(5'000'000'000'000), [&] { net.start(path({l}), 20.0, [&] { done_b = e.now(); }); });
  e.run();
  CHECK(done_b == Time::from_ps(9'000'000'000'000));
  CHECK(done_a == Time::from_ps(12'000'000'000'000));
}

TEST_CASE("flows on disjoint paths do not change each other's rates") {
  Engine e;
  FlowNetwork net(e);
  const LinkId x = net.add_link(8.0, Duration::zero());
  const LinkId y = net.add_link(4.0, Duration::zero());
  const FlowId fx = net.start(path({x}), 80.0, nullptr);
  const FlowId fy = net.start(path({y}), 4.0, nullptr);
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(fx) == 8.0);
  CHECK(net.rate(fy) == 4.0);
  e.run_until(Time::from_ps(2'000'000'000'000));  // fy is done at 1 s
  CHECK(net.rate(fy) == 0.0);
  CHECK(net.rate(fx) == 8.0);
}

TEST_CASE("an empty path or zero bytes complete after the path latency alone") {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(1.0, Duration::from_ps(7));
  Time local = Time::max();
  Time empty_bytes = Time::max();
  net.start({}, 1e9, [&] { local = e.now(); });
  net.start(path({l}), 0.0, [&] { empty_bytes = e.now(); });
  e.run();
  CHECK(local == Time::zero());
  CHECK(empty_bytes == Time::from_ps(7));
}

TEST_CASE("bad links and flows are rejected as input errors") {
  Engine e;
  FlowNetwork net(e);
  CHECK_THROWS_AS(net.add_link(0.0, Duration::zero()), trainsim::InputError);
  CHECK_THROWS_AS(net.add_link(-1.0, Duration::zero()), trainsim::InputError);
  const LinkId l = net.add_link(1.0, Duration::zero());
  CHECK_THROWS_WITH_AS(net.start(path({l + 1}), 1.0, nullptr), "unknown link id 1 (the network has 1 links)",
                       trainsim::InputError);
  CHECK_THROWS_AS(net.start(path({l, l}), 1.0, nullptr), trainsim::InputError);
  CHECK_THROWS_AS(net.start(path({l}), -1.0, nullptr), trainsim::InputError);
}

TEST_CASE("a ring of flows over a ring of links gets equal shares and finishes together") {
  // 8 links of 10 B/s in a ring; flow i crosses links i and i+1, so every link carries two flows: 5 B/s
  // each, and 50 bytes take 10 s.
  Engine e;
  FlowNetwork net(e);
  std::vector<LinkId> ring;
  for (int i = 0; i < 8; ++i) ring.push_back(net.add_link(10.0, Duration::zero()));
  std::vector<Time> done(8);
  for (std::size_t i = 0; i < 8; ++i) {
    net.start(path({ring[i], ring[(i + 1) % 8]}), 50.0, [&done, &e, i] { done[i] = e.now(); });
  }
  e.run();
  for (const Time t : done) CHECK(t == Time::from_ps(10'000'000'000'000));
  CHECK(net.solves() == 2);  // one at the arrivals, one at the departures: changes at one instant batch
}

TEST_CASE("N flows of different sizes on one link finish in size order at the max-min stage times") {
  // One 10 B/s link; flow i (i = 1..N) moves 10 i bytes, all from t = 0, started largest first. Every flow
  // still moving has moved as much as every other, so at stage i the N - i + 1 flows left each have 10 B
  // to go until the smallest is done: the stage lasts 10 (N - i + 1) / 10 = N - i + 1 s, and flow i is done
  // at t_i = sum_{j <= i} (N - j + 1) = i N - i (i - 1) / 2 seconds (the last at N (N + 1) / 2).
  constexpr int kN = 100;
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(10.0, Duration::zero());
  std::vector<Time> done(kN + 1, Time::max());
  std::vector<FlowId> ids(kN + 1);
  for (int i = kN; i >= 1; --i) {
    ids[i] = net.start(path({l}), 10.0 * i, [&done, &e, i] { done[i] = e.now(); });
  }
  e.run_until(Time::from_ps(1));
  CHECK(net.flows_on(l) == kN);
  CHECK(net.rate(ids[1]) == 0.1);
  CHECK(net.rate(ids[kN]) == 0.1);
  e.run();
  for (std::int64_t i = 1; i <= kN; ++i) {
    const std::int64_t seconds = i * kN - i * (i - 1) / 2;
    CHECK_MESSAGE(done[i] == Time::from_ps(seconds * 1'000'000'000'000), "flow ", i);
  }
  CHECK(net.bytes_carried(l) == 10.0 * kN * (kN + 1) / 2);
  CHECK(net.flows_on(l) == 0);
  CHECK(net.active_flows() == 0);
}

TEST_CASE("a flow joining mid-way slows both flows already on its path") {
  // 12 B/s link. a (120 B) and b (60 B) from t = 0 at 6 B/s each. At 4 s (a: 96 B left, b: 36 B) c (24 B)
  // joins: 4 B/s each. c is done at 4 + 24/4 = 10 s (a: 72 B left, b: 12 B). Then 6 B/s each: b is done at
  // 10 + 12/6 = 12 s (a: 60 B left); a alone at 12 B/s is done at 12 + 60/12 = 17 s = 204 B / 12 B/s.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(12.0, Duration::zero());
  Time done_a;
  Time done_b;
  Time done_c;
  FlowId c;
  const FlowId a = net.start(path({l}), 120.0, [&] { done_a = e.now(); });
  const FlowId b = net.start(path({l}), 60.0, [&] { done_b = e.now(); });
  e.at(Time::from_ps(4'000'000'000'000), [&] { c = net.start(path({l}), 24.0, [&] { done_c = e.now(); }); });
  e.run_until(Time::from_ps(5'000'000'000'000));
  CHECK(net.rate(a) == 4.0);
  CHECK(net.rate(b) == 4.0);
  CHECK(net.rate(c) == 4.0);
  CHECK(net.flows_on(l) == 3);
  e.run_until(Time::from_ps(11'000'000'000'000));
  CHECK(net.rate(c) == 0.0);
  CHECK(net.rate(a) == 6.0);
  e.run();
  CHECK(done_c == Time::from_ps(10'000'000'000'000));
  CHECK(done_b == Time::from_ps(12'000'000'000'000));
  CHECK(done_a == Time::from_ps(17'000'000'000'000));
  CHECK(net.bytes_carried(l) == 204.0);
}

TEST_CASE("a flow's bottleneck moves from one link to the other and back as flows leave") {
  // X = 10 B/s carries L (over X then Y) and x (26 B); Y = 6 B/s carries L, y1 and y2 (4 B each).
  // [0, 2 s): Y's share 6/3 = 2 is the smallest: L, y1, y2 get 2; x takes X's other 8. y1, y2 are done at
  //   2 s; L has moved 4 B, x 16 B.
  // [2, 4 s): Y carries L alone (share 6), X carries L and x (share 5): L is now held by X, 5 B/s each.
  //   x's last 10 B take 2 s: done at 4 s; L has moved 4 + 10 = 14 B.
  // [4, 5 s): L alone: min(10, 6) = 6, held by Y again; its last 6 B take 1 s: done at 5 s.
  Engine e;
  FlowNetwork net(e);
  const LinkId x_link = net.add_link(10.0, Duration::zero());
  const LinkId y_link = net.add_link(6.0, Duration::zero());
  std::vector<Time> done(4);
  const FlowId long_flow = net.start(path({x_link, y_link}), 20.0, [&] { done[0] = e.now(); });
  const FlowId x = net.start(path({x_link}), 26.0, [&] { done[1] = e.now(); });
  const FlowId y1 = net.start(path({y_link}), 4.0, [&] { done[2] = e.now(); });
  net.start(path({y_link}), 4.0, [&] { done[3] = e.now(); });
  e.run_until(Time::from_ps(1'000'000'000'000));
  CHECK(net.rate(long_flow) == 2.0);
  CHECK(net.rate(x) == 8.0);
  CHECK(net.rate(y1) == 2.0);
  e.run_until(Time::from_ps(3'000'000'000'000));
  CHECK(net.rate(long_flow) == 5.0);
  CHECK(net.rate(x) == 5.0);
  CHECK(net.flows_on(y_link) == 1);
  e.run_until(Time::from_ps(4'500'000'000'000));
  CHECK(net.rate(long_flow) == 6.0);
  e.run();
  CHECK(done[2] == Time::from_ps(2'000'000'000'000));
  CHECK(done[3] == Time::from_ps(2'000'000'000'000));
  CHECK(done[1] == Time::from_ps(4'000'000'000'000));
  CHECK(done[0] == Time::from_ps(5'000'000'000'000));
  CHECK(net.bytes_carried(x_link) == 46.0);
  CHECK(net.bytes_carried(y_link) == 28.0);
}

TEST_CASE("a link that cannot bind starts binding when a flow arrives over it and stops when it leaves") {
  // L = 6 B/s, S = 4 B/s. a (40 B) over L then S is held to 4 B/s by S; its 4 B/s cannot fill L, so L does
  // not bind it. At 2 s (a: 32 B left) b (30 B) arrives over L alone: L's share 3 is now below S's 4, so
  // both get 3 B/s. b is done at 2 + 30/3 = 12 s (a: 2 B left); a, alone again, is back at 4 B/s and is
  // done at 12.5 s.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(6.0, Duration::zero());
  const LinkId s = net.add_link(4.0, Duration::zero());
  Time done_a;
  Time done_b;
  FlowId b;
  const FlowId a = net.start(path({l, s}), 40.0, [&] { done_a = e.now(); });
  e.at(Time::from_ps(2'000'000'000'000), [&] { b = net.start(path({l}), 30.0, [&] { done_b = e.now(); }); });
  e.run_until(Time::from_ps(1'000'000'000'000));
  CHECK(net.rate(a) == 4.0);
  e.run_until(Time::from_ps(5'000'000'000'000));
  CHECK(net.rate(a) == 3.0);
  CHECK(net.rate(b) == 3.0);
  e.run_until(Time::from_ps(12'200'000'000'000));
  CHECK(net.rate(a) == 4.0);
  e.run();
  CHECK(done_b == Time::from_ps(12'000'000'000'000));
  CHECK(done_a == Time::from_ps(12'500'000'000'000));
  CHECK(net.bytes_carried(l) == 70.0);
  CHECK(net.bytes_carried(s) == 40.0);
}

TEST_CASE("flows each alone on their own narrowest link share one class over the link they share") {
  // 100 flows of 100 kB (runs of about 1e6 s), each over its own 5 B/s leaf and one 10 B/s spine: each
  // leaf is its flow's narrowest link but carries that flow alone, so it bounds the flow at 5 B/s and
  // nothing else; the spine's share, 10 / 100 = 0.1 B/s, is everyone's rate, and the 100 distinct paths
  // are one class. A 101st flow over a 0.05 B/s leaf is held there by its leaf (a class of its own, capped
  // lower): the others then share the rest, (10 - 0.05) / 100 = 0.0995 B/s.
  Engine e;
  FlowNetwork net(e);
  const LinkId spine = net.add_link(10.0, Duration::zero());
  std::vector<FlowId> flows;
  for (int i = 0; i < 100; ++i) {
    const LinkId leaf = net.add_link(5.0, Duration::zero());
    flows.push_back(net.start(path({leaf, spine}), 1e5, nullptr));
  }
  e.run_until(Time::from_ps(1));
  CHECK(net.path_classes() == 1);
  for (const FlowId f : flows) CHECK(net.rate(f) == doctest::Approx(0.1).epsilon(1e-12));
  const LinkId narrow = net.add_link(0.05, Duration::zero());
  const FlowId slow = net.start(path({narrow, spine}), 1e5, nullptr);
  e.run_until(Time::from_ps(2));
  CHECK(net.path_classes() == 2);
  CHECK(net.rate(slow) == 0.05);
  for (const FlowId f : flows) CHECK(net.rate(f) == doctest::Approx(0.0995).epsilon(1e-12));
  // A second flow on one of the 5 B/s leaves makes that leaf a shared link, which takes its flows out of
  // the spine's class: both still get the spine's share, (10 - 0.05) / 101 each.
  const LinkId first_leaf = 1;  // flows[0]'s
  const FlowId second = net.start(path({first_leaf, spine}), 1e5, nullptr);
  e.run_until(Time::from_ps(3));
  CHECK(net.path_classes() == 3);
  CHECK(net.rate(second) == doctest::Approx(9.95 / 101).epsilon(1e-12));
  CHECK(net.rate(flows[0]) == doctest::Approx(9.95 / 101).epsilon(1e-12));
  CHECK(net.rate(flows[1]) == doctest::Approx(9.95 / 101).epsilon(1e-12));
}

namespace {

// A reference for the cross-check: a fluid simulation in double seconds that re-solves every flow from
// scratch at every arrival and completion, by textbook progressive filling (one bottleneck link at a time).
struct RefFlow {
  std::vector<LinkId> path;
  double bytes = 0.0;
  double active_at = 0.0;  // start + path latency, seconds
  double remaining = 0.0;
  double done = -1.0;  // completion time, seconds; < 0 while not done
};

void progressive_filling(const std::vector<double>& bandwidth, const std::vector<RefFlow>& flows,
                         const std::vector<std::size_t>& moving, std::vector<double>& rate) {
  std::vector<double> spare = bandwidth;
  std::vector<bool> frozen(flows.size(), false);
  std::size_t left = moving.size();
  while (left > 0) {
    std::size_t bottleneck = 0;
    double share = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < bandwidth.size(); ++l) {
      std::size_t unfrozen = 0;
      for (const std::size_t f : moving) {
        if (frozen[f]) continue;
        for (const LinkId p : flows[f].path) unfrozen += p == l ? 1 : 0;
      }
      if (unfrozen > 0 && spare[l] / static_cast<double>(unfrozen) < share) {
        share = spare[l] / static_cast<double>(unfrozen);
        bottleneck = l;
      }
    }
    for (const std::size_t f : moving) {
      if (frozen[f] ||
          std::find(flows[f].path.begin(), flows[f].path.end(), bottleneck) == flows[f].path.end()) {
        continue;
      }
      frozen[f] = true;
      rate[f] = share;
      --left;
      for (const LinkId p : flows[f].path) spare[p] -= share;
    }
  }
}

void reference_run(const std::vector<double>& bandwidth, std::vector<RefFlow>& flows) {
  for (RefFlow& f : flows) {
    f.remaining = f.bytes;
    if (f.path.empty() || f.bytes == 0.0) f.done = f.active_at;
  }
  std::vector<double> rate(flows.size(), 0.0);
  double t = 0.0;
  for (;;) {
    std::vector<std::size_t> moving;
    double next = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (flows[f].done >= 0.0) continue;
      if (flows[f].active_at <= t) {
        moving.push_back(f);
      } else {
        next = std::min(next, flows[f].active_at);
      }
    }
    if (moving.empty() && std::isinf(next)) return;
    progressive_filling(bandwidth, flows, moving, rate);
    for (const std::size_t f : moving) next = std::min(next, t + flows[f].remaining / rate[f]);
    for (const std::size_t f : moving) {
      if (t + flows[f].remaining / rate[f] == next) {
        flows[f].done = next;
        flows[f].remaining = 0.0;
      } else {
        flows[f].remaining -= rate[f] * (next - t);
      }
    }
    t = next;
  }
}

}  // namespace

TEST_CASE("random small networks finish every flow when a from-scratch re-solve says") {
  // Paths are drawn from a small pool, so several flows share a path (and often a size and start time);
  // starts and latencies are whole milliseconds, so arrivals coincide. Times are seconds long, so the
  // engine's rounding of every completion up to a picosecond stays far below the 1e-9 relative tolerance.
  std::mt19937_64 rng(20261201);
  const auto below = [&rng](std::uint64_t n) { return static_cast<std::size_t>(rng() % n); };
  for (int round = 0; round < 300; ++round) {
    Engine e;
    FlowNetwork net(e);
    const std::size_t link_count = 1 + below(5);
    std::vector<double> bandwidth;
    std::vector<std::int64_t> latency_ms;
    for (std::size_t l = 0; l < link_count; ++l) {
      bandwidth.push_back(1.0 + static_cast<double>(below(20)) / 2.0);
      latency_ms.push_back(static_cast<std::int64_t>(below(3)));
      net.add_link(bandwidth.back(), Duration::from_ps(latency_ms.back() * 1'000'000'000));
    }
    std::vector<std::vector<LinkId>> pool;
    for (int p = 0; p < 4; ++p) {
      std::vector<LinkId> links(link_count);
      for (std::size_t l = 0; l < link_count; ++l) links[l] = static_cast<LinkId>(l);
      std::shuffle(links.begin(), links.end(), rng);
      links.resize(1 + below(link_count));
      pool.push_back(links);
    }
    const std::size_t flow_count = 1 + below(16);
    std::vector<RefFlow> ref(flow_count);
    std::vector<Time> done(flow_count, Time::max());
    for (std::size_t f = 0; f < flow_count; ++f) {
      RefFlow& r = ref[f];
      r.path = below(10) == 0 ? std::vector<LinkId>{} : pool[below(pool.size())];
      r.bytes = below(10) == 0 ? 0.0 : static_cast<double>(1 + below(40));
      const auto start_ms = static_cast<std::int64_t>(500 * below(8) + below(2));
      std::int64_t path_ms = 0;
      for (const LinkId l : r.path) path_ms += latency_ms[l];
      r.active_at = static_cast<double>(start_ms + path_ms) / 1e3;
      e.at(Time::from_ps(start_ms * 1'000'000'000),
           [&net, &done, &e, &r, f] { net.start(r.path, r.bytes, [&done, &e, f] { done[f] = e.now(); }); });
    }
    reference_run(bandwidth, ref);
    e.run();
    CHECK(net.active_flows() == 0);
    for (std::size_t f = 0; f < flow_count; ++f) {
      const double expected = ref[f].done;
      CHECK_MESSAGE(done[f].seconds() == doctest::Approx(expected).epsilon(1e-9), "round ", round, ", flow ",
                    f, " of ", flow_count);
    }
    for (std::size_t l = 0; l < link_count; ++l) {
      double carried = 0.0;
      for (const RefFlow& r : ref) {
        if (std::find(r.path.begin(), r.path.end(), l) != r.path.end()) carried += r.bytes;
      }
      CHECK(net.bytes_carried(static_cast<LinkId>(l)) == doctest::Approx(carried).epsilon(1e-12));
    }
  }
}

TEST_CASE("a flow joining a busy path has no rate until the re-solve at its arrival instant") {
  // The re-solve runs after every change queued for the instant, so an event queued before the arrival
  // at the same instant sees the new flow at rate 0 and the running one still at the whole 8 B/s.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(8.0, Duration::zero());
  const FlowId a = net.start(path({l}), 80.0, nullptr);
  FlowId b;
  double rate_b_at_arrival = -1.0;
  double rate_a_at_arrival = -1.0;
  e.at(Time::from_ps(1'000'000'000'000), [&] {
    b = net.start(path({l}), 8.0, nullptr);
    e.at(e.now(), [&] {
      rate_a_at_arrival = net.rate(a);
      rate_b_at_arrival = net.rate(b);
    });
  });
  e.run_until(Time::from_ps(1'500'000'000'000));
  CHECK(rate_a_at_arrival == 8.0);
  CHECK(rate_b_at_arrival == 0.0);
  CHECK(net.rate(a) == 4.0);
  CHECK(net.rate(b) == 4.0);
}

TEST_CASE("random two-tier fabrics get the rates and completions of a from-scratch water-filling") {
  // Hosts under leaves: a flow between hosts of one leaf crosses the source's uplink and the destination's
  // downlink; between leaves, also the source leaf's uplink and the destination leaf's downlink. Bandwidths
  // come from a small set, so links of equal capacity (ties for the bottleneck) and links much faster than
  // any share through them (links that cannot bind) are both common; some flows take arbitrary link sets.
  // While flows run, every active flow's rate is compared with textbook progressive filling over the flows
  // active at that moment (relative 1e-9), and every completion with the fluid reference run.
  std::mt19937_64 rng(20261203);
  const auto below = [&rng](std::uint64_t n) { return static_cast<std::size_t>(rng() % n); };
  constexpr std::array<double, 5> kBandwidths{1.0, 2.0, 2.5, 4.0, 10.0};
  constexpr std::int64_t kMs = 1'000'000'000;  // picoseconds
  int checked_rates = 0;
  for (int round = 0; round < 200; ++round) {
    Engine e;
    FlowNetwork net(e);
    std::vector<double> bandwidth;
    const auto link = [&](double bw) {
      bandwidth.push_back(bw);
      return net.add_link(bw, Duration::zero());
    };
    const std::size_t leaves = 1 + below(3);
    const std::size_t hosts_per_leaf = 1 + below(3);
    std::vector<LinkId> leaf_up;
    std::vector<LinkId> leaf_down;
    for (std::size_t l = 0; l < leaves; ++l) {
      leaf_up.push_back(link(kBandwidths[below(kBandwidths.size())]));
      leaf_down.push_back(link(kBandwidths[below(kBandwidths.size())]));
    }
    std::vector<LinkId> host_up;
    std::vector<LinkId> host_down;
    for (std::size_t h = 0; h < leaves * hosts_per_leaf; ++h) {
      host_up.push_back(link(kBandwidths[below(kBandwidths.size())]));
      host_down.push_back(link(kBandwidths[below(kBandwidths.size())]));
    }
    const auto route = [&](std::size_t from, std::size_t to) {
      const std::size_t a = from / hosts_per_leaf;
      const std::size_t b = to / hosts_per_leaf;
      if (a == b) return std::vector<LinkId>{host_up[from], host_down[to]};
      return std::vector<LinkId>{host_up[from], leaf_up[a], leaf_down[b], host_down[to]};
    };
    const std::size_t hosts = host_up.size();
    const std::size_t flow_count = 1 + below(24);
    std::vector<RefFlow> ref(flow_count);
    std::vector<Time> done(flow_count, Time::max());
    std::vector<FlowId> ids(flow_count);
    for (std::size_t f = 0; f < flow_count; ++f) {
      RefFlow& r = ref[f];
      if (below(5) == 0) {
        std::vector<LinkId> links(bandwidth.size());
        for (std::size_t l = 0; l < links.size(); ++l) links[l] = static_cast<LinkId>(l);
        std::shuffle(links.begin(), links.end(), rng);
        links.resize(1 + below(3));
        r.path = links;
      } else {
        r.path = route(below(hosts), below(hosts));
        if (r.path.front() == r.path.back()) r.path.pop_back();  // unreachable: a host to itself
      }
      r.bytes = static_cast<double>(1 + below(40));
      const auto start_ms = static_cast<std::int64_t>(250 * below(12) + below(2));
      r.active_at = static_cast<double>(start_ms) / 1e3;
      e.at(Time::from_ps(start_ms * kMs), [&net, &done, &ids, &e, &r, f] {
        ids[f] = net.start(r.path, r.bytes, [&done, &e, f] { done[f] = e.now(); });
      });
    }
    // Rate checks at odd picoseconds, so that no change happens at the instant of a check.
    for (std::int64_t t = 100; t < 6'000; t += 100) {
      e.at(Time::from_ps(t * kMs + 7), [&, t] {
        std::vector<std::size_t> moving;
        for (std::size_t f = 0; f < flow_count; ++f) {
          if (ref[f].active_at * 1e3 <= static_cast<double>(t) && done[f] == Time::max()) moving.push_back(f);
        }
        std::vector<double> expected(flow_count, 0.0);
        progressive_filling(bandwidth, ref, moving, expected);
        for (const std::size_t f : moving) {
          ++checked_rates;
          CHECK_MESSAGE(net.rate(ids[f]) == doctest::Approx(expected[f]).epsilon(1e-9), "round ", round,
                        ", flow ", f, " at ", t, " ms");
        }
      });
    }
    std::vector<RefFlow> fluid = ref;
    reference_run(bandwidth, fluid);
    e.run();
    CHECK(net.active_flows() == 0);
    for (std::size_t f = 0; f < flow_count; ++f) {
      CHECK_MESSAGE(done[f].seconds() == doctest::Approx(fluid[f].done).epsilon(1e-9), "round ", round,
                    ", flow ", f, " of ", flow_count);
    }
  }
  CHECK(checked_rates > 1000);  // the checks did see flows running
}

TEST_CASE("a flow over a borrowed path runs as one over a copied path: the same rates and completions") {
  // Parking lot of two unit links: a long flow (4 bytes over both) and a short one (1 byte on link 0).
  // Both get 1/2 until the short one ends at 2 s, having moved 1 byte; the long flow has moved 1 of its 4
  // bytes and then runs alone at 1: done at 2 + 3 = 5 s.
  for (const bool borrowed : {false, true}) {
    CAPTURE(borrowed);
    Engine e;
    FlowNetwork net(e);
    const std::vector<LinkId> both = {net.add_link(1.0, Duration::zero()),
                                      net.add_link(1.0, Duration::zero())};
    const std::vector<LinkId> first = {both[0]};
    Time long_done;
    Time short_done;
    if (borrowed) {
      net.start_borrowing(both, 4.0, [&] { long_done = e.now(); });
      net.start_borrowing(first, 1.0, [&] { short_done = e.now(); });
    } else {
      net.start(both, 4.0, [&] { long_done = e.now(); });
      net.start(first, 1.0, [&] { short_done = e.now(); });
    }
    e.run();
    CHECK(short_done == Time::from_ps(2'000'000'000'000));
    CHECK(long_done == Time::from_ps(5'000'000'000'000));
    CHECK(net.bytes_carried(both[0]) == 5.0);
    CHECK(net.bytes_carried(both[1]) == 4.0);
  }
}

TEST_CASE("flows arriving over a binding link as the flows on it finish get a fresh network's rates") {
  // Link L (100 B/s) carries A and B (100 B each: 50 B/s, done at 2 s), so it binds; link M (1,000 B/s)
  // carries nothing. C (300 B) and D (600 B) go over M then L and arrive at 2 s: before A and B finish, after
  // the first, or after both (L then has no flow but has flipped at that instant, and M a lone flow). On a
  // fresh network they share L at 50 B/s each: C done 300 / 50 = 6 s later, D then alone at 100 B/s for its
  // last 300 B, 3 s more, so 9 s later. Here the same: at 8 s and 11 s.
  enum class Arrive { before_both, after_one, after_both };
  for (const Arrive when : {Arrive::before_both, Arrive::after_one, Arrive::after_both}) {
    CAPTURE(static_cast<int>(when));
    Engine e;
    FlowNetwork net(e);
    const LinkId l = net.add_link(100.0, Duration::zero(), "L");
    const LinkId m = net.add_link(1000.0, Duration::zero(), "M");
    const std::vector<LinkId> over_l = path({l});
    const std::vector<LinkId> over_m_l = path({m, l});
    double c_done = -1;
    double d_done = -1;
    FlowId c{};
    FlowId d{};
    const auto arrive = [&] {
      c = net.start(over_m_l, 300.0, [&] { c_done = e.now().seconds(); });
      d = net.start(over_m_l, 600.0, [&] { d_done = e.now().seconds(); });
    };
    if (when == Arrive::before_both) e.at(Time::from_ps(2'000'000'000'000), [&] { arrive(); });
    int finished = 0;
    std::array<double, 2> ab_done{-1, -1};
    const auto finish = [&](int i) {
      ab_done[static_cast<std::size_t>(i)] = e.now().seconds();
      ++finished;
      if ((when == Arrive::after_one && finished == 1) || (when == Arrive::after_both && finished == 2))
        arrive();
    };
    (void)net.start(over_l, 100.0, [&] { finish(0); });
    (void)net.start(over_l, 100.0, [&] { finish(1); });
    e.run_until(Time::from_ps(2'000'000'000'001));
    CHECK(ab_done[0] == 2.0);
    CHECK(ab_done[1] == 2.0);
    CHECK(net.flows_on(l) == 2);
    CHECK(net.flows_on(m) == 2);
    CHECK(net.rate(c) == 50.0);
    CHECK(net.rate(d) == 50.0);
    e.run();
    CHECK(c_done == 8.0);
    CHECK(d_done == 11.0);
  }
  // The fresh network itself.
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(100.0, Duration::zero(), "L");
  const LinkId m = net.add_link(1000.0, Duration::zero(), "M");
  const std::vector<LinkId> over_m_l = path({m, l});
  double c_done = -1;
  double d_done = -1;
  const FlowId c = net.start(over_m_l, 300.0, [&] { c_done = e.now().seconds(); });
  const FlowId d = net.start(over_m_l, 600.0, [&] { d_done = e.now().seconds(); });
  e.run_until(Time::from_ps(1));
  CHECK(net.rate(c) == 50.0);
  CHECK(net.rate(d) == 50.0);
  e.run();
  CHECK(c_done == 6.0);
  CHECK(d_done == 9.0);
}
