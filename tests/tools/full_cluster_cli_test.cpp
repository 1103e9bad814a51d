// `trainsim run --full-cluster`: every data-parallel replica and pipeline rank simulated, its transfers
// routed over the cluster graph; the summary says which mode ran, and the flag is refused where it means
// nothing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/tools/binary_harness.hpp"

using namespace trainsim::e2e;

namespace {

const std::string example = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-1024-a100.yaml";

}  // namespace

TEST_CASE("run --full-cluster routes the 1,024-GPU example's transfers and says so; never faster") {
  const Outcome collapsed = run_trainsim({"run", example, "--format", "json"});
  REQUIRE_MESSAGE(collapsed.exit_code == 0, describe(collapsed));
  const Outcome full = run_trainsim({"run", example, "--format", "json", "--full-cluster"});
  REQUIRE_MESSAGE(full.exit_code == 0, describe(full));
  const auto a = nlohmann::json::parse(collapsed.out);
  const auto b = nlohmann::json::parse(full.out);
  CHECK(a["step_mode"] == "collapsed");
  CHECK(b["step_mode"] == "full-cluster");
  // 128 nodes under 64-port rail leaves of 32 nodes each: the data-parallel rings and pipeline sends that
  // cross leaves meet on spine links, so the step can only lengthen; the compute is the same.
  CHECK(b["iteration_time_s"].get<double>() >= a["iteration_time_s"].get<double>() - 1e-8);
  CHECK(b["compute_s"].get<double>() == doctest::Approx(a["compute_s"].get<double>()).epsilon(1e-9));
}

TEST_CASE("--full-cluster at the analytic fidelity is exit 2 saying it needs events") {
  const Outcome o = run_trainsim({"run", example, "--fidelity", "analytic", "--full-cluster"});
  CHECK_MESSAGE(o.exit_code == 2, describe(o));
  CHECK(o.err.find("--fidelity event") != std::string::npos);
}

TEST_CASE("a full-cluster trace has one process per replica and stage") {
  const TempDir out;
  const Outcome o = run_trainsim(
      {"run", example, "--full-cluster", "--trace-detail", "pass", "-o", out.path().string()}, 60.0);
  REQUIRE_MESSAGE(o.exit_code == 0, describe(o));
  const std::string trace = read_file(out.path() / "trace.json");
  CHECK(trace.find("\"replica 7 stage 15\"") != std::string::npos);
  CHECK(trace.find("replica 8 stage") == std::string::npos);  // dp 8: replicas 0..7
}

TEST_CASE("run --full-cluster refuses early, with its estimate, a graph past the limits --help states") {
  const Outcome help = run_trainsim({"run", "--help"});
  REQUIRE_MESSAGE(help.exit_code == 0, describe(help));
  CHECK(help.out.find("more than 8 GiB and 60 s of CPU") != std::string::npos);
  // The interleaved Llama-3 405B example on 131,072 H100 (16,384 nodes, dp 1,024, 16 micro-batches a
  // replica): tens of millions of tasks, refused from the estimate before anything is built.
  const std::string llama =
      std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-405b-8k-16k-h100.yaml";
  const Outcome o = run_trainsim({"run", llama, "--full-cluster", "--set", "cluster.nodes=16384", "--set",
                                  "parallelism.dp=1024", "--set", "training.global_batch=16384"},
                                 30.0);
  CHECK_MESSAGE(o.exit_code == 2, describe(o));
  CHECK(o.err.find("(the lowering's estimate)") != std::string::npos);
  CHECK(o.err.find("more than the limit of 8 GiB and 60 s of CPU") != std::string::npos);
}
