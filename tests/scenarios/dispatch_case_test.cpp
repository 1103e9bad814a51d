// MoE dispatch validation cases go through the scenario reader: exact keys, units, file:line:col errors.
#include "scenarios/dispatch_case.hpp"

#include <doctest/doctest.h>

#include <string>

#include "scenarios/component_case.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

std::string errors_of(const std::string& path) {
  try {
    (void)load_dispatch_case_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The shape keys of a valid dispatch block, and a valid measured block.
const std::string kShape =
    "tokens: 4096, hidden: 7168, top_k: 8, experts: 256, bytes_per_element: 2, op: dispatch";
const std::string kMeasured = "measured: {source: s, time: \"661 us\"}\n";

}  // namespace

TEST_CASE("a shipped dispatch case reads as the file states it") {
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) +
                           "/scenarios/validation/moe-dispatch/mcore-t7-h100-hybridep-dispatch-ep16.yaml";
  REQUIRE(is_dispatch_case_file(path));
  const DispatchCase c = load_dispatch_case_file(path);
  CHECK(c.name == "mcore-t7-h100-hybridep-dispatch-ep16");
  CHECK(c.cluster.node.name == "dgx-h100");
  CHECK(c.cluster.nodes == 2);
  CHECK(c.cluster.total_gpus() == 16);
  CHECK(c.ep == 16);
  CHECK(c.dispatcher == model::MoeDispatcher::hybridep);
  CHECK(c.op == DispatchOp::dispatch);
  CHECK(c.time == doctest::Approx(1485e-6).epsilon(1e-12));  // "1485 us"
  // 4096 tokens · 8 copies · 7168 elements · 2 bytes = 469,762,048 bytes of slots per rank.
  CHECK(c.slot_bytes() == 469762048.0);
  // DeepSeek-V3's routing, as the case assumes it: 8 copies from 4 of 8 groups.
  const topo::TokenRouting routing = c.routing();
  CHECK(routing.copies == 8.0);
  CHECK(routing.groups == 8);
  CHECK(routing.group_top_k == 4);
}

TEST_CASE("group-limited routing in a dispatch case: both keys, as a model's") {
  const trainsim::testing::TempDir dir;
  const std::string head = "dispatch: {node: dgx-h100, ep: 8, dispatcher: hybridep, " + kShape;
  CHECK(errors_of(dir.write("ok.yaml", head + ", routing_groups: 8, routing_group_top_k: 4}\n" + kMeasured))
            .empty());
  // Without the other key; groups that do not divide the 256 experts; more groups picked than exist.
  std::string e = errors_of(dir.write("one.yaml", head + ", routing_groups: 8}\n" + kMeasured));
  CHECK(e.find("dispatch.routing_groups: group-limited routing needs both routing_groups and "
               "routing_group_top_k") != std::string::npos);
  e = errors_of(dir.write("split.yaml", head + ", routing_groups: 3, routing_group_top_k: 1}\n" + kMeasured));
  CHECK(e.find("dispatch.routing_groups: routing_groups (3) must divide experts (256)") != std::string::npos);
  e = errors_of(dir.write("many.yaml", head + ", routing_groups: 8, routing_group_top_k: 9}\n" + kMeasured));
  CHECK(e.find("must be at most routing_groups (8) and top_k (8)") != std::string::npos);
}

TEST_CASE("a scenario and a collective case are not dispatch cases") {
  const std::string root = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/";
  CHECK_FALSE(is_dispatch_case_file(root + "collectives/nccl-h200-1n-01.yaml"));
  CHECK_FALSE(is_dispatch_case_file(root + "korthikanti/kor22-t5-22b-full.yaml"));
}

TEST_CASE("dispatch and collective cases are component cases, a scenario is not") {
  const std::string root = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/";
  CHECK(is_component_case_file(root + "moe-dispatch/mcore-t7-h100-hybridep-dispatch-ep16.yaml"));
  CHECK(is_component_case_file(root + "collectives/nccl-h200-1n-01.yaml"));
  CHECK_FALSE(is_component_case_file(root + "korthikanti/kor22-t5-22b-full.yaml"));
}

TEST_CASE("an unknown key in a dispatch case is an error with its line, column and key path") {
  const trainsim::testing::TempDir dir;
  const std::string path =
      dir.write("unknown.yaml", "dispatch: {node: dgx-h100, ep: 8, dispatcher: hybridep, " + kShape +
                                    ", top_kk: 8}\n" + kMeasured);
  // top_kk starts after the 56 characters of "dispatch: {node: dgx-h100, ep: 8, dispatcher: hybridep, ",
  // kShape's 86 and ", ": column 56 + 86 + 2 + 1 = 145 of line 1.
  CHECK(kShape.size() == 86);
  const std::string e = errors_of(path);
  CHECK(e.find("unknown.yaml:1:145: dispatch.top_kk: unknown key \"top_kk\" (did you mean \"top_k\"?)") !=
        std::string::npos);
}

TEST_CASE("the all-gather dispatcher, an unknown op and a time without its unit are each reported") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.write(
      "bad.yaml",
      "dispatch: {node: dgx-h100, ep: 8, dispatcher: allgather, tokens: 4096, hidden: 7168, top_k: 8, "
      "experts: 256, bytes_per_element: 2, op: shuffle}\n"
      "measured: {source: s, time: 661}\n");
  const std::string e = errors_of(path);
  CHECK(e.find("dispatch.dispatcher") != std::string::npos);
  CHECK(e.find("no all-to-all") != std::string::npos);
  CHECK(e.find("dispatch.op") != std::string::npos);
  CHECK(e.find("measured.time") != std::string::npos);
}

TEST_CASE("ep other than the cluster's GPUs, experts that do not split, top_k above the experts") {
  const trainsim::testing::TempDir dir;
  // 2 nodes of 8 GPUs are 16 ranks, not 8; 100 experts over 8 ranks is 12.5 each.
  std::string path =
      dir.write("ep.yaml",
                "dispatch: {node: dgx-h100, nodes: 2, ep: 8, dispatcher: alltoall, tokens: 4096, "
                "hidden: 7168, top_k: 8, experts: 100, bytes_per_element: 2, op: combine}\n" +
                    kMeasured);
  std::string e = errors_of(path);
  CHECK(e.find("dispatch.ep") != std::string::npos);
  CHECK(e.find("= 16, not 8") != std::string::npos);
  CHECK(e.find("dispatch.experts") != std::string::npos);
  path = dir.write(
      "topk.yaml",
      "dispatch: {node: dgx-h100, ep: 8, dispatcher: deepep, tokens: 4096, hidden: 7168, top_k: 16, "
      "experts: 8, bytes_per_element: 2, op: dispatch}\n" +
          kMeasured);
  e = errors_of(path);
  CHECK(e.find("dispatch.top_k") != std::string::npos);
  CHECK(e.find("dispatch.ep") == std::string::npos);
}

TEST_CASE("more GPUs per node than the node preset has is refused at the key") {
  const trainsim::testing::TempDir dir;
  const std::string path =
      dir.write("gpn.yaml", "dispatch: {node: dgx-h100, gpus_per_node: 16, ep: 16, dispatcher: alltoall, " +
                                kShape + "}\n" + kMeasured);
  const std::string e = errors_of(path);
  CHECK(e.find("dispatch.gpus_per_node") != std::string::npos);
  CHECK(e.find("has 8 GPUs") != std::string::npos);
}

TEST_CASE("a dispatch case without its shape or measured: is refused, naming each missing key") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.write("missing.yaml", "dispatch: {node: dgx-h100, ep: 8}\n");
  const std::string e = errors_of(path);
  CHECK(e.find("dispatch.dispatcher") != std::string::npos);
  CHECK(e.find("dispatch.top_k") != std::string::npos);
  CHECK(e.find("measured") != std::string::npos);
}

TEST_CASE("an empty dispatch: block reports its missing keys at the dispatch key, not at the next line") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.write("empty.yaml", "dispatch:\n" + kMeasured);
  const std::string e = errors_of(path);
  CHECK(e.find("empty.yaml:1:1: dispatch.node: missing key \"node\"") != std::string::npos);
  CHECK(e.find("empty.yaml:1:1: dispatch.bytes_per_element: missing key \"bytes_per_element\"") !=
        std::string::npos);
  CHECK(e.find("empty.yaml:2:") == std::string::npos);  // line 2 is measured:, which is complete
}
