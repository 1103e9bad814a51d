#include "sim/flow_network.hpp"

#include <doctest/doctest.h>

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
