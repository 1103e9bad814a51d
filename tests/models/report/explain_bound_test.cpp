// The last section of explain: what bounds the layout, and how much room the eager host leaves.
#include "models/report/explain_bound.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <optional>
#include <string>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// The section's "host headroom" line, copied out of the section explain_bound returns.
std::optional<ExplainLine> host_headroom(const StepInput& in) {
  for (const ExplainLine& l : explain_bound(in).lines) {
    if (l.label == "host headroom") return l;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("the host headroom: a layer pass's GPU time over its host issue, and the launch cost that binds") {
  StepInput in = testing::small_gpt_on_a100(2, 8, 2, 1, 16);
  in.plan.framework.launch_overhead_s = 20e-6;
  in.plan.framework.expert_launch_s = 0;
  const std::optional<ExplainLine> at20 = host_headroom(in);
  REQUIRE(at20.has_value());
  CHECK(at20->value > 0);
  // Twice the launch cost, twice the host's issue of every pass and the same GPU time: half the room, and
  // the same launch cost at which the host would set the pass.
  in.plan.framework.launch_overhead_s = 40e-6;
  const std::optional<ExplainLine> at40 = host_headroom(in);
  REQUIRE(at40.has_value());
  CHECK(at40->value == doctest::Approx(at20->value / 2).epsilon(1e-12));
  const std::string binds = fmt::format("from about {:.0f} us an op", at20->value * 20);
  CHECK(at20->formula.find(binds) != std::string::npos);
  CHECK(at40->formula.find(binds) != std::string::npos);
  CHECK(at20->formula.find("in a layer ") != std::string::npos);  // never the embedding's or head's pass
  // Past that cost the host sets the pass: the GPU's time, the wait left out, is below its issue.
  in.plan.framework.launch_overhead_s = 20e-6 * at20->value * 4;
  const std::optional<ExplainLine> bound = host_headroom(in);
  REQUIRE(bound.has_value());
  CHECK(bound->value == doctest::Approx(0.25).epsilon(1e-9));
  // A step captured as CUDA graphs launches once: no line.
  in.plan.framework.cuda_graphs = true;
  CHECK_FALSE(host_headroom(in).has_value());
}
