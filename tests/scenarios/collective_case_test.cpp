// Collective validation cases go through the scenario reader: exact keys, units, file:line:col errors.
#include "scenarios/collective_case.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

std::string errors_of(const std::string& path) {
  try {
    (void)load_collective_case_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a shipped nccl-tests case reads as the file states it") {
  const std::string path =
      std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/validation/collectives/nccl-h200-1n-01.yaml";
  REQUIRE(is_collective_case_file(path));
  const CollectiveCase c = load_collective_case_file(path);
  CHECK(c.name == "nccl-h200-1n-01");
  CHECK(c.cluster.node.name == "hgx-h200");
  CHECK(c.cluster.nodes == 1);
  CHECK(c.op == topo::CollectiveOp::all_reduce);
  CHECK(c.algo == topo::CollectiveAlgo::auto_select);
  CHECK(c.bytes == 32.0 * 1024);  // "32 KiB"
  CHECK(c.busbw == 3.2e9);
  CHECK(c.tolerance == 0.15);
}

TEST_CASE("an unknown key in a collective case is an error with its line, column and key path") {
  const trainsim::testing::TempDir dir;
  const std::string path =
      dir.write("unknown.yaml",
                "collective: {node: hgx-h200, op: all-reduce, size: \"1 MiB\", algoo: ring}\n"
                "measured: {source: s, busbw: 1e9}\n");
  const std::string e = errors_of(path);
  CHECK(e.find(":1:") != std::string::npos);
  CHECK(e.find("collective.algoo") != std::string::npos);
  CHECK(e.find("did you mean") != std::string::npos);
}

TEST_CASE("a size without its unit and an unknown op are both reported") {
  const trainsim::testing::TempDir dir;
  const std::string path = dir.write("bad.yaml",
                                     "collective: {node: hgx-h200, op: all-shuffle, size: 1024}\n"
                                     "measured: {source: s, busbw: 1e9}\n");
  const std::string e = errors_of(path);
  CHECK(e.find("collective.size") != std::string::npos);
  CHECK(e.find("collective.op") != std::string::npos);
  CHECK(e.find("all-shuffle") != std::string::npos);
}

TEST_CASE("a case without measured: is refused") {
  const trainsim::testing::TempDir dir;
  const std::string path =
      dir.write("nomeasured.yaml", "collective: {node: hgx-h200, op: all-reduce, size: \"1 MiB\"}\n");
  CHECK(errors_of(path).find("measured") != std::string::npos);
}

TEST_CASE("a named algorithm that does not run the op there, or a single GPU, is refused at its key") {
  // NCCL's tree runs all-reduce only: an all-to-all under it would be priced as ring under its name. And a
  // bus bandwidth needs a group: one GPU has none.
  const trainsim::testing::TempDir dir;
  const std::string measured = "measured: {source: s, busbw: 1e9}\n";
  const std::string tree = dir.write(
      "tree.yaml", "collective: {node: hgx-h200, op: all-to-all, size: \"1 MiB\", algo: tree}\n" + measured);
  CHECK(errors_of(tree).find("collective.algo: tree does not run all-to-all on this group (8 GPUs)") !=
        std::string::npos);
  const std::string allreduce = dir.write(
      "allreduce.yaml",
      "collective: {node: hgx-h200, nodes: 2, op: all-reduce, size: \"1 MiB\", algo: tree}\n" + measured);
  CHECK(errors_of(allreduce).empty());
  const std::string one = dir.write(
      "one.yaml",
      "collective: {node: hgx-h200, gpus_per_node: 1, op: all-reduce, size: \"1 MiB\"}\n" + measured);
  CHECK(errors_of(one).find("collective.gpus_per_node: a collective runs between at least two GPUs") !=
        std::string::npos);
}
