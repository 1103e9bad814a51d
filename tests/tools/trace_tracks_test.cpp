// The optimizer and checkpoint tracks of `trainsim run -o DIR`'s trace.json (SPEC "Outputs"): the update on
// each stage's "optimizer" thread, and the checkpoint that closes a segment on its "checkpoint" thread, each
// as long as the summary says and as the hand arithmetic below gives, at both fidelities.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/tools/binary_harness.hpp"

using namespace trainsim::e2e;
using nlohmann::json;

namespace {

// One A100 (gpus_per_node 1: no communicator has more than one rank, so there is no gradient-norm
// all-reduce), fp32 training with plain SGD and no clipping: the update moves 12 bytes per parameter
// (read and write the fp32 weight, read the fp32 gradient) and keeps no state, so a checkpoint is the
// fp32 weights, 4 bytes per parameter, written by the one GPU.
const char* const kScenario = R"(name: tracks
model: gpt3-1.3b
cluster:
  node: dgx-a100-80gb
  nodes: 1
  gpus_per_node: 1
  storage: {write: "1 GB/s", read: "2 GB/s", latency: "1 ms"}
  variability: {spread: 0}   # the preset's constants as stated: no slowest-GPU term in the arithmetic
parallelism: {tp: 1, pp: 1, dp: 1, micro_batch: 1}
training:
  global_batch: 1
  precision: fp32
  optimizer: {kind: sgd, grad_clipping: false}
  steps: 100
checkpoint: {every_steps: 10, mode: sync}
)";

struct Slice {
  std::string thread, name, category;
  double start_s = 0, duration_s = 0;
};

/// The X slices of a trace with their thread's name.
std::vector<Slice> slices_of(const json& trace) {
  std::map<std::pair<long long, long long>, std::string> threads;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      threads[{e["pid"].get<long long>(), e["tid"].get<long long>()}] = e["args"]["name"].get<std::string>();
  }
  std::vector<Slice> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    out.push_back({threads[{e["pid"].get<long long>(), e["tid"].get<long long>()}],
                   e["name"].get<std::string>(), e.value("cat", std::string{}), e["ts"].get<double>() * 1e-6,
                   e["dur"].get<double>() * 1e-6});
  }
  return out;
}

const Slice* find(const std::vector<Slice>& slices, const std::string& thread, const std::string& name) {
  for (const Slice& s : slices)
    if (s.thread == thread && s.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("the trace's optimizer and checkpoint tracks last as long as the summary and the arithmetic say") {
  const TempDir dir;
  std::ofstream(dir.file("tracks.yaml")) << kScenario;
  for (const char* fidelity : {"analytic", "event"}) {
    CAPTURE(fidelity);
    const Outcome out =
        run_trainsim({"run", dir.file("tracks.yaml"), "--fidelity", fidelity, "-o", dir.file(fidelity)});
    REQUIRE_MESSAGE(out.exit_code == 0, describe(out));
    const json summary = json::parse(read_file(dir.path() / fidelity / "summary.json"));
    const std::vector<Slice> slices = slices_of(json::parse(read_file(dir.path() / fidelity / "trace.json")));
    // µs with ns resolution in the trace.
    constexpr double kTraceRounding = 2e-9;

    // The update: P · 12 B at the A100's 2,039 GB/s × memory_bandwidth_fraction 0.5973, plus one 4 µs kernel
    // launch (topologies/presets/gpus/a100-sxm4-80gb.yaml). P is the model's count (tested by the presets).
    const double params = summary["parameters"].get<double>();
    const double update = params * 12.0 / (2039e9 * 0.5973) + 4e-6;
    const Slice* optimizer = find(slices, "optimizer", "optimizer");
    REQUIRE(optimizer != nullptr);
    CHECK(optimizer->category == "optimizer");
    CHECK(optimizer->duration_s == doctest::Approx(update).epsilon(1e-9));
    // With no gradient-norm all-reduce the summary's optimizer time is the update alone.
    CHECK(std::abs(optimizer->duration_s - summary["optimizer_s"].get<double>()) <= kTraceRounding);
    // It is the iteration's last work.
    CHECK(std::abs(optimizer->start_s + optimizer->duration_s - summary["iteration_time_s"].get<double>()) <=
          kTraceRounding);

    // The checkpoint: 4P bytes; written at the storage's 1 GB/s (the node's NICs are faster) after its 1 ms
    // latency; copied out over the node's 32 GB/s PCIe first; synchronous, so training stops for both.
    const double bytes = 4.0 * params;
    CHECK(summary["checkpoint_size_bytes"].get<double>() == doctest::Approx(bytes).epsilon(1e-12));
    const double write = 1e-3 + bytes / 1e9;
    const double copy_out = bytes / 32e9;
    const double checkpoints = summary["checkpoints"].get<double>();
    REQUIRE(checkpoints > 0);
    const Slice* stall = find(slices, "checkpoint", "checkpoint stall");
    const Slice* written = find(slices, "checkpoint", "checkpoint write");
    REQUIRE(stall != nullptr);
    REQUIRE(written != nullptr);
    CHECK(stall->category == "checkpoint");
    CHECK(written->duration_s == doctest::Approx(write).epsilon(1e-9));
    CHECK(std::abs(written->duration_s - summary["checkpoint_write_time_s"].get<double>()) <= kTraceRounding);
    CHECK(stall->duration_s == doctest::Approx(copy_out + write).epsilon(1e-9));
    CHECK(stall->duration_s ==
          doctest::Approx(summary["checkpoint_stall_s"].get<double>() / checkpoints).epsilon(1e-9));
    // After the iteration: the stall from its end, the write from the end of the copy.
    CHECK(std::abs(stall->start_s - summary["iteration_time_s"].get<double>()) <= kTraceRounding);
    CHECK(std::abs(written->start_s - (stall->start_s + copy_out)) <= 1e-6 * copy_out + kTraceRounding);
  }
}

TEST_CASE("a run that writes no checkpoint has no checkpoint track") {
  const TempDir dir;
  std::string scenario = kScenario;
  scenario.replace(scenario.find("checkpoint: {every_steps: 10, mode: sync}"), 41, "");
  std::ofstream(dir.file("none.yaml")) << scenario;
  const Outcome out =
      run_trainsim({"run", dir.file("none.yaml"), "--fidelity", "analytic", "-o", dir.file("o")});
  REQUIRE_MESSAGE(out.exit_code == 0, describe(out));
  const std::vector<Slice> slices = slices_of(json::parse(read_file(dir.path() / "o" / "trace.json")));
  CHECK(find(slices, "optimizer", "optimizer") != nullptr);
  for (const Slice& s : slices) CHECK(s.category != "checkpoint");
}
