#include "sim/resource.hpp"

#include <doctest/doctest.h>

#include <vector>

using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::Resource;
using trainsim::sim::Time;

TEST_CASE("work on a serial resource runs back to back in submission order") {
  Engine e;
  Resource gpu(e, "gpu 0 / compute");
  std::vector<std::int64_t> done;
  const auto a = gpu.submit(Duration::from_ps(10), [&] { done.push_back(e.now().ps()); });
  const auto b = gpu.submit(Duration::from_ps(5), [&] { done.push_back(e.now().ps()); });
  CHECK(a.start == Time::zero());
  CHECK(a.end == Time::from_ps(10));
  CHECK(b.start == Time::from_ps(10));
  CHECK(b.end == Time::from_ps(15));
  e.run();
  CHECK(done == std::vector<std::int64_t>{10, 15});
}

TEST_CASE("an idle resource starts new work at the current time and counts only busy time") {
  Engine e;
  Resource copy(e, "copy");
  copy.submit(Duration::from_ps(10), nullptr);
  e.run_until(Time::from_ps(30));
  const auto s = copy.submit(Duration::from_ps(10), nullptr);
  CHECK(s.start == Time::from_ps(30));
  e.run();
  CHECK(copy.busy_time() == Duration::from_ps(20));
  CHECK(copy.submitted() == 2);
  CHECK(copy.utilisation(Time::from_ps(40)) == doctest::Approx(0.5).scale(0));
  CHECK(copy.utilisation(Time::zero()) == 0.0);
}
