// The scenario loader: exact keys, duplicates, YAML 1.1 surprises, every problem at once with locations,
// presets and overrides, cross-field checks, sweeps, and the dump -> load round trip.
#include "scenarios/loader.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "models/report/summary.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/error.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

const std::string& base = trainsim::testing::kSmallScenario;

/// Every diagnostic of loading `text`, joined by newlines ("" when it loads).
std::string errors_of(const std::string& text, const std::vector<Override>& overrides = {}) {
  try {
    (void)load_scenario_text(text, "t.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a minimal scenario loads with the SPEC defaults and dp resolved from auto") {
  const Scenario s = load_scenario_text(base, "dir/minimal.yaml");
  CHECK(s.name == "minimal");
  CHECK(s.model.name == "gpt3-125m");
  CHECK(s.model.layers == 12);
  CHECK(s.cluster.total_gpus() == 16);
  CHECK(s.parallelism.dp_auto);
  CHECK(s.parallelism.dp == 16);
  CHECK(s.training.precision == topo::Precision::bf16);
  CHECK(s.training.optimizer.kind == model::OptimizerKind::adamw);
  CHECK_FALSE(s.checkpoint.enabled);
}

TEST_CASE("an unknown key is an error with its location and a did-you-mean") {
  CHECK(errors_of(base + "parallelism: {tp: 2, pipeline: 2}\n") ==
        "t.yaml:4:22: parallelism.pipeline: unknown key \"pipeline\"; known keys here: tp, pp, dp, cp, ep, "
        "expert_folding, expert_tp, schedule, "
        "virtual_stages, stage_layers, micro_batch, sequence_parallel, zero, shard_group, recompute, "
        "offload, overlap_grad_reduce, bucket, order");
  CHECK(errors_of(base + "parallelism: {tp: 2, sequence_paralel: true}\n") ==
        "t.yaml:4:22: parallelism.sequence_paralel: unknown key \"sequence_paralel\" (did you mean "
        "\"sequence_parallel\"?)");
}

TEST_CASE("a duplicate key is an error naming both places") {
  CHECK(errors_of(base + "parallelism:\n  tp: 2\n  tp: 4\n") ==
        "t.yaml:6:3: duplicate key \"tp\" (first given at line 5:3)");
}

TEST_CASE("every problem is reported at once, in file order") {
  const std::string text = R"(model: gpt3-125m
cluster: {node: dgx-a100-80gb, nodes: 010}
parallelism: {tp: yes, bucket: 40}
training: {global_batch: 64, precision: bf17}
)";
  CHECK(errors_of(text) ==
        "t.yaml:2:39: cluster.nodes: leading zeros are not accepted (YAML 1.1 reads \"010\" as an octal "
        "number); "
        "write the number without them\n"
        "t.yaml:3:19: parallelism.tp: expected a number, found \"yes\"\n"
        "t.yaml:3:32: parallelism.bucket: expected a size with a unit, like \"80 GiB\" (B, kB, MB, GB, TB, "
        "KiB, MiB, "
        "GiB, TiB); found the bare number \"40\"\n"
        "t.yaml:4:41: training.precision: unknown value \"bf17\" (did you mean \"bf16\"?); expected one of "
        "fp32, fp16, "
        "bf16, fp8");
}

TEST_CASE("an empty block takes its defaults") {
  const Scenario s = load_scenario_text(base + "parallelism:\n  # tp: 2\n", "t.yaml");
  CHECK(s.parallelism.tp == 1);
  CHECK(s.parallelism.dp == 16);
}

TEST_CASE("missing blocks are named") {
  CHECK(errors_of("model: gpt3-125m\n") ==
        "t.yaml:1:1: cluster: missing key \"cluster\"\nt.yaml:1:1: training: missing key \"training\"");
}

TEST_CASE("a model mapping overrides its preset, and custom models need their sizes") {
  const Scenario s = load_scenario_text(
      "model: {preset: llama3-70b, seq_len: 4096}\ncluster: {node: dgx-h100, nodes: 4}\n"
      "parallelism: {tp: 8}\ntraining: {global_batch: 16}\n",
      "t.yaml");
  CHECK(s.model.layers == 80);
  CHECK(s.model.kv_heads == 8);
  CHECK(s.model.seq_len == 4096);
  CHECK(errors_of("model: {layers: 2, hidden: 64}\ncluster: {node: dgx-h100, nodes: 1}\ntraining: "
                  "{global_batch: 8}\n") ==
        "t.yaml:1:8: model.heads: missing key \"heads\"\nt.yaml:1:8: model.vocab: missing key \"vocab\"\n"
        "t.yaml:1:8: model.seq_len: missing key \"seq_len\"");
}

TEST_CASE("divisibility the scenario alone decides is checked and names the key") {
  CHECK(errors_of(base + "parallelism: {tp: 5}\n") ==
        "t.yaml:4:14: parallelism: the cluster's 16 GPUs are not divisible by tp·pp·cp·ep = 5·1·1·1 = 5 (dp: "
        "auto)\n"
        "t.yaml:4:19: parallelism.tp: the model's heads (12) must be divisible by tp (5)");
  CHECK(
      errors_of(base + "parallelism: {tp: 4, micro_batch: 3}\n") ==
      "t.yaml:3:26: training.global_batch: global_batch (64) must be divisible by dp·micro_batch = 4·3 = 12");
  CHECK(errors_of(base + "parallelism: {pp: 8, schedule: interleaved, virtual_stages: 2}\n") ==
        "t.yaml:4:61: parallelism.virtual_stages: with schedule: interleaved every one of the "
        "pp·virtual_stages = 8·2 virtual stages needs a layer (but the first and the last, given a "
        "stage_layers entry each); the model has 12");
  // Uneven interleaving loads (the remainder is spread; 12 layers on 4·2 virtual stages).
  CHECK(errors_of(base + "parallelism: {pp: 4, schedule: interleaved, virtual_stages: 2}\n").empty());
  CHECK(errors_of(base + "parallelism: {pp: 2, stage_layers: [5, 6]}\n") ==
        "t.yaml:4:36: parallelism.stage_layers: adds up to 11 layers; the model has 12");
  CHECK(errors_of(base + "parallelism: {dp: 4}\n") ==
        "t.yaml:4:19: parallelism.dp: tp·pp·cp·ep = 1·1·1·1 = 1 times dp = 4 is 4 GPUs, but the cluster has "
        "16 (use "
        "dp: auto)");
}

TEST_CASE("absurd sizes are clear errors while a million GPUs and ten trillion parameters load") {
  CHECK(
      errors_of("model: gpt3-125m\ncluster: {node: dgx-h100, nodes: 1e30}\ntraining: {global_batch: 8}\n") ==
      "t.yaml:2:34: cluster.nodes: must be at most 1e+07, found \"1e30\"");
  const Scenario big = load_scenario_text(
      "model: {layers: 200, hidden: 65536, heads: 512, vocab: 256000, seq_len: 8192}\n"
      "cluster: {node: dgx-h100, nodes: 131072}\nparallelism: {tp: 8, pp: 128}\n"
      "training: {global_batch: 1310720, tokens: 1.5e13}\n",
      "t.yaml");
  CHECK(big.cluster.total_gpus() == 1048576);
  CHECK(big.parallelism.dp == 1024);
  // 12·L·h² = 12 · 200 · 65536² ≈ 1.03e13 parameters in the layers alone.
  CHECK(12.0 * 200 * 65536.0 * 65536.0 > 1e13);
}

TEST_CASE("overrides are applied before conversion and validated like the file") {
  const Scenario s = load_scenario_text(base, "t.yaml",
                                        {{"cluster.nodes", "4"},
                                         {"training.optimizer", "adafactor"},
                                         {"model.seq_len", "1024"},
                                         {"parallelism.tp", "2"}});
  CHECK(s.cluster.nodes == 4);
  CHECK(s.training.optimizer.kind == model::OptimizerKind::adafactor);
  CHECK(s.model.name == "gpt3-125m");
  CHECK(s.model.seq_len == 1024);
  CHECK(s.parallelism.tp == 2);
  CHECK(s.parallelism.dp == 16);
  CHECK(errors_of(base, {{"cluster.network.nic", "200"}}) ==
        "override cluster.network.nic:1:1: cluster.network.nic: expected a bandwidth with a unit, like \"200 "
        "Gb/s\" or "
        "\"25 GB/s\" (b/s, kb/s, Mb/s, Gb/s, Tb/s, Gbps, B/s, kB/s, MB/s, GB/s, TB/s); found the bare number "
        "\"200\"");
  CHECK(errors_of(base, {{"clster.nodes", "4"}}) ==
        "override clster.nodes:1:1: clster: unknown key \"clster\" (did you mean \"cluster\"?)");
}

TEST_CASE("optimizer names and mappings are accepted; 8-bit Adam keeps int8 state") {
  for (const char* name : {"sgd", "sgd-momentum", "nesterov", "adagrad", "rmsprop", "adam", "adamw",
                           "adafactor", "lion", "lamb", "adam-8bit", "adam8bit", "muon", "shampoo", "soap"}) {
    CHECK(errors_of(base, {{"training.optimizer", name}}) == "");
  }
  const Scenario s = load_scenario_text(base, "t.yaml", {{"training.optimizer", "adam8bit"}});
  CHECK(s.training.optimizer.state_precision == topo::Precision::int8);
  const Scenario m = load_scenario_text(
      base, "t.yaml",
      {{"training.optimizer", "{kind: adamw, state_precision: bf16, master_weights: false}"}});
  CHECK(m.training.optimizer.state_precision == topo::Precision::bf16);
  CHECK_FALSE(m.training.optimizer.master_weights);
}

TEST_CASE("shampoo and soap take a block size and a refresh frequency; other optimizers refuse them") {
  const Scenario s = load_scenario_text(
      base, "t.yaml",
      {{"training.optimizer", "{kind: shampoo, max_preconditioner_dim: 8192, precondition_frequency: 100}"}});
  CHECK(s.training.optimizer.max_preconditioner_dim == 8192);
  CHECK(s.training.optimizer.precondition_frequency == 100);
  // Left out: 0, the kind's default (models/workload/preconditioner.hpp).
  const Scenario d = load_scenario_text(base, "t.yaml", {{"training.optimizer", "soap"}});
  CHECK(d.training.optimizer.max_preconditioner_dim == 0);
  CHECK(errors_of(base, {{"training.optimizer", "{kind: adamw, precondition_frequency: 10}"}})
            .find("training.optimizer.precondition_frequency: only shampoo and soap keep preconditioners") !=
        std::string::npos);
  CHECK(errors_of(base, {{"training.optimizer", "{kind: soap, precondition_frequency: 0}"}})
            .find("training.optimizer.precondition_frequency") != std::string::npos);
}

TEST_CASE("sweep values are checked in place and kept as YAML text") {
  const Scenario s = load_scenario_text(base +
                                            "sweep:\n  mode: zip\n  cluster.nodes: [1, 2]\n"
                                            "  training.optimizer: [adamw, {kind: lion}]\n",
                                        "t.yaml");
  REQUIRE(s.sweep.axes.size() == 2);
  CHECK(s.sweep.mode == SweepMode::zip);
  CHECK(s.sweep.axes[0].values == std::vector<std::string>{"1", "2"});
  CHECK(s.sweep.axes[1].values == std::vector<std::string>{"adamw", "{kind: lion}"});
  CHECK(errors_of(base + "sweep:\n  cluster.nodes: [1, \"2 nodes\"]\n") ==
        "t.yaml:5:22: cluster.nodes: expected a plain number, found \"2 nodes\" (no unit is expected here)");
}

TEST_CASE("a measured block takes SPEC output names, a source and tolerances") {
  const Scenario s = load_scenario_text(base +
                                            "measured: {source: \"paper\", iteration_time: 13.75, mfu: 0.5, "
                                            "tolerance: {iteration_time: 0.05}}\n",
                                        "t.yaml");
  REQUIRE(s.measured.has_value());
  CHECK(s.measured->values.size() == 2);
  CHECK(s.measured->tolerance_per_metric.at("iteration_time") == 0.05);
  CHECK(errors_of(base + "measured: {source: x, iteration_tme: 1}\n") ==
        "t.yaml:4:11: measured: no measured metric given (e.g. iteration_time: 13.75)\n"
        "t.yaml:4:23: measured.iteration_tme: unknown key \"iteration_tme\" (did you mean "
        "\"iteration_time\"?)");
  // A measured 0 has no relative error; a fraction above 1 is a percentage given by mistake. Each is the
  // one error of its block ("measured: {source: x, " is 22 columns: the value after "iteration_time: "
  // at 39).
  CHECK(errors_of(base + "measured: {source: x, iteration_time: 0}\n") ==
        "t.yaml:4:39: measured.iteration_time: must be above 0: the error against a measured 0 is undefined");
  CHECK(errors_of(base + "measured: {source: x, mfu: 50}\n")
            .find("t.yaml:4:28: measured.mfu: must be at most 1") != std::string::npos);
  CHECK(errors_of(base + "measured: {source: x, mfu: 0.5}\n") == "");
}

TEST_CASE("every shipped example loads") {
  int count = 0;
  int cluster_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TRAINSIM_SOURCE_DIR "/scenarios/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    // A cluster file (`trainsim cluster`) has a top-level `period:`, which no scenario accepts.
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.rfind("period:", 0) == 0 || text.find("\nperiod:") != std::string::npos) {
      CHECK_NOTHROW((void)load_cluster_file(entry.path().string()));
      ++cluster_files;
      continue;
    }
    CHECK_NOTHROW((void)load_scenario_file(entry.path().string()));
    ++count;
  }
  CHECK(count >= 4);
  CHECK(cluster_files >= 1);
}

TEST_CASE("the scenario printed in SPEC.md loads as written") {
  std::ifstream in(TRAINSIM_SOURCE_DIR "/../shared/SPEC.md");
  if (!in) return;  // the specification lives beside the checkout, not in it
  std::string line;
  std::string yaml;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```yaml") {
      inside = true;
    } else if (inside && line == "```") {
      break;
    } else if (inside) {
      yaml += line + "\n";
    }
  }
  REQUIRE(!yaml.empty());
  const Scenario s = load_scenario_text(yaml, "SPEC.md");
  CHECK(s.name == "gpt3-175b-1024-a100");
  CHECK(s.parallelism.dp == 8);  // 1024 GPUs / (8 · 16)
  CHECK(s.pricing.spot.preemptions_per_s == doctest::Approx(0.02 / 3600).scale(0));
  CHECK(s.budget.max_cost_usd == 4.5e6);
  CHECK(s.budget.deadline_s == 40 * 86400.0);
  CHECK(s.sweep.axes.size() == 2);
}

TEST_CASE("a dumped scenario loads back to the same structs") {
  for (const char* stem :
       {"gpt3-175b-1024-a100", "llama3-70b-512-h100", "llama3-8b-64-h100", "gpt3-1.3b-sweep"}) {
    INFO(stem);
    const Scenario a =
        load_scenario_file(std::string(TRAINSIM_SOURCE_DIR "/scenarios/examples/") + stem + ".yaml");
    const std::string text = dump_scenario(a);
    const Scenario b = load_scenario_text(text, "dumped.yaml");
    // The dump is a fixed point, and the fields it encodes compare equal.
    CHECK(dump_scenario(b) == text);
    CHECK(b.name == a.name);
    CHECK(b.tags == a.tags);
    CHECK(b.model.layers == a.model.layers);
    CHECK(b.model.kv_heads == a.model.kv_heads);
    CHECK(b.model.mlp == a.model.mlp);
    CHECK(b.cluster.node.gpu.peak.bf16 == a.cluster.node.gpu.peak.bf16);
    CHECK(b.cluster.node.gpu.hbm_bytes == a.cluster.node.gpu.hbm_bytes);
    CHECK(b.cluster.node.gpu.efficiency.kernel_overhead_s == a.cluster.node.gpu.efficiency.kernel_overhead_s);
    CHECK(b.cluster.node.nic_bytes_per_s == a.cluster.node.nic_bytes_per_s);
    CHECK(b.cluster.network.switch_latency_s == a.cluster.network.switch_latency_s);
    CHECK(b.cluster.storage.write_bytes_per_s == a.cluster.storage.write_bytes_per_s);
    CHECK(b.parallelism.dp == a.parallelism.dp);
    CHECK(b.parallelism.schedule == a.parallelism.schedule);
    CHECK(b.parallelism.bucket_bytes == a.parallelism.bucket_bytes);
    CHECK(b.training.tokens == a.training.tokens);
    CHECK(b.checkpoint.interval_s == a.checkpoint.interval_s);
    CHECK(b.failures.node_mtbf_s == a.failures.node_mtbf_s);
    CHECK(b.pricing.spot.preemptions_per_s == a.pricing.spot.preemptions_per_s);
    CHECK(b.pricing.storage.cold_after_s == a.pricing.storage.cold_after_s);
    CHECK(b.budget.max_cost_usd == a.budget.max_cost_usd);
    CHECK(b.sweep.axes.size() == a.sweep.axes.size());
  }
}

TEST_CASE("budget.memory_headroom takes a fraction of HBM or a size with a unit") {
  const std::string head =
      "name: h\nmodel: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 1}\ntraining: {global_batch: 8}\n";
  const Scenario fraction = load_scenario_text(head + "budget: {memory_headroom: 0.1}\n", "h.yaml");
  CHECK(fraction.budget.memory_headroom == 0.1);
  CHECK_FALSE(fraction.budget.memory_headroom_bytes);
  const Scenario size = load_scenario_text(head + "budget: {memory_headroom: \"8 GiB\"}\n", "h.yaml");
  CHECK_FALSE(size.budget.memory_headroom);
  REQUIRE(size.budget.memory_headroom_bytes);
  CHECK(*size.budget.memory_headroom_bytes == 8.0 * 1024 * 1024 * 1024);
  // 8 GiB of the A100's 80 GiB is a tenth.
  CHECK(*size.budget.headroom_fraction(size.cluster.node.gpu.hbm_bytes) == doctest::Approx(0.1));
  // The dump writes the size back as a size.
  CHECK(dump_scenario(size).find("memory_headroom: \"8589934592 B\"") != std::string::npos);
  CHECK_THROWS_WITH_AS(load_scenario_text(head + "budget: {memory_headroom: \"8 parsecs\"}\n", "h.yaml"),
                       doctest::Contains("or a size with a unit (e.g. \"8 GiB\"), found \"8 parsecs\""),
                       trainsim::InputError);
}

TEST_CASE("--set with a block's key written at the top suggests the block's key path") {
  const std::string text =
      "name: t\nmodel: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 1}\nparallelism: {tp: 1}\n"
      "training: {global_batch: 8}\n";
  CHECK_THROWS_WITH_AS(load_scenario_text(text, "t.yaml", {Override{"tp", "8"}}),
                       doctest::Contains("tp: unknown key \"tp\" (did you mean \"parallelism.tp\"?)"),
                       trainsim::InputError);
}

TEST_CASE("closest_match suggests only near misses") {
  CHECK(closest_match("paralelism", {"parallelism", "pricing"}) == "parallelism");
  CHECK(closest_match("GPU", {"gpu", "nodes"}) == "gpu");
  CHECK(closest_match("zzzzzz", {"tp", "pp"}).empty());
}

TEST_CASE("scenarios load concurrently from many threads, as a parallel sweep does") {
  const std::string path = TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-1.3b-sweep.yaml";
  std::vector<std::thread> threads;
  std::vector<std::int64_t> nodes(8, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) {
        // 1 to 16 nodes: 512 sequences still divide by dp · micro_batch = 8 · nodes · 4.
        nodes[i] = load_scenario_file(path, {{"cluster.nodes", std::to_string(1 << (i % 5))}}).cluster.nodes;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < nodes.size(); ++i) CHECK(nodes[i] == (std::int64_t{1} << (i % 5)));
}

TEST_CASE("measured: takes exactly the summary's numeric field names") {
  // The names come from the summary itself; spot-check that they are the SPEC output names users write
  // and that every one of them loads in a measured block, while a name the summary lacks does not.
  const auto& names = model::numeric_field_names();
  for (const char* spec_name : {"iteration_time", "tokens_per_s_per_gpu", "mfu", "memory_per_gpu",
                                "cost_total", "goodput", "run_time_p95", "spot_cost_total"})
    CHECK(std::find(names.begin(), names.end(), spec_name) != names.end());
  CHECK(std::find(names.begin(), names.end(), "reason") == names.end());  // text, not measurable
  CHECK(std::find(names.begin(), names.end(), "fits") == names.end());    // a flag
  // 0.5 is a valid value of every metric, fractions too.
  for (const std::string& name : names)
    CHECK_MESSAGE(errors_of(base + "measured: {source: \"s\", " + name + ": 0.5}\n").empty(), name);
  CHECK(errors_of(base + "measured: {source: \"s\", iteration_tim: 1.5}\n").find("did you mean") !=
        std::string::npos);
}

TEST_CASE("parallel degrees whose product overflows 64 bits are an error, not a crash") {
  // 1e6^4 = 1e24 > 2^63: the product used to wrap (to 0 for some inputs, a division by zero).
  const std::string e =
      errors_of(base + "parallelism: {tp: 1000000, pp: 1000000, cp: 1000000, ep: 1000000}\n");
  CHECK(e.find("parallelism: tp·pp·cp·ep·dp = 1000000·1000000·1000000·1000000") != std::string::npos);
  CHECK(e.find("overflows 64 bits") != std::string::npos);
  model::ParallelPlan p;
  p.tp = 1 << 20;
  p.pp = 1 << 20;
  p.cp = 1 << 20;
  p.ep = 1 << 4;  // 2^64: exactly one past the largest product
  CHECK(p.model_parallel_size() == model::ParallelPlan::kOverflowedSize);
  p.ep = 1 << 2;  // 2^62 still fits
  CHECK(p.model_parallel_size() == std::int64_t{1} << 62);
}

TEST_CASE(
    "a tag named like a built-in column of the run's summary is an error at the tag, naming the column") {
  // `tags: {team: llm, steps: x}` on line 4: `steps` starts at column 19 (7 for "tags: {", 11 for
  // "team: llm, "). steps is a count, so its column keeps its name.
  CHECK(
      errors_of(base + "tags: {team: llm, steps: x}\n") ==
      "t.yaml:4:19: tags.steps: a tag cannot be called \"steps\": `trainsim run` writes each tag as a column "
      "of its summary under the tag's key, and the summary already has the column steps; rename the tag");
  // A field's name clashes with its unit-suffixed column; the fixed labels and an alert's fields too.
  CHECK(errors_of(base + "tags:\n  iteration_time: x\n").find("t.yaml:5:3: tags.iteration_time:") == 0);
  CHECK(errors_of(base + "tags:\n  iteration_time: x\n").find("the column iteration_time_s;") !=
        std::string::npos);
  for (const char* key : {"scenario", "fidelity", "cost_total_usd", "region", "budget_alert_1_time_s"}) {
    CAPTURE(key);
    CHECK(errors_of(base + "tags: {" + key + ": x}\n").find(std::string("the column ") + key + ";") !=
          std::string::npos);
  }
  // Each clashing tag is reported; the others load.
  const std::string both = errors_of(base + "tags: {mfu: a, team: llm, fits: b}\n");
  CHECK(both.find("tags.mfu:") != std::string::npos);
  CHECK(both.find("tags.fits:") != std::string::npos);
  CHECK(both.find("tags.team") == std::string::npos);
  // --set goes through the same reader.
  CHECK(errors_of(base, {{"tags.fits", "yes"}}).find("tags.fits: a tag cannot be called \"fits\"") !=
        std::string::npos);
  CHECK(errors_of(base + "tags: {team: llm, steps_note: x}\n").empty());
}

TEST_CASE("a name and tags holding quotes, backslashes and control characters dump and load back") {
  std::string text = "name: \"a \\\"b\\\" \\\\ \\x01\"\n" + base;
  text += "tags: {note: \"tab\\there\\nnext\"}\n";
  const Scenario a = load_scenario_text(text, "t.yaml");
  REQUIRE(a.name == std::string("a \"b\" \\ \x01"));
  const Scenario b = load_scenario_text(dump_scenario(a), "dumped.yaml");
  CHECK(b.name == a.name);
  CHECK(b.tags == a.tags);
  REQUIRE(b.tags.size() == 1);
  CHECK(b.tags[0].second == "tab\there\nnext");
}

TEST_CASE("torus_dims must be one size per torus dimension, multiplying to the node count") {
  const std::string head =
      "model: gpt3-125m\ntraining: {global_batch: 128}\ncluster:\n  node: dgx-a100-80gb\n  nodes: 16\n";
  CHECK(errors_of(head + "  network: {topology: torus-2d, torus_dims: [4, 4]}\n").empty());
  CHECK(errors_of(head + "  network: {topology: torus-2d, torus_dims: [4, 8]}\n") ==
        "t.yaml:6:45: cluster.network.torus_dims: the sizes multiply to 32 nodes; the cluster has 16");
  CHECK(errors_of(head + "  network: {topology: torus-3d, torus_dims: [4, 4]}\n") ==
        "t.yaml:6:45: cluster.network.torus_dims: a torus-3d needs 3 sizes, not 2");
  CHECK(errors_of(head + "  network: {topology: fat-tree, torus_dims: [4, 4]}\n") ==
        "t.yaml:6:45: cluster.network.torus_dims: applies to a torus-2d or torus-3d topology; this one is "
        "fat-tree");
}

TEST_CASE("cluster.stragglers names nodes of the cluster once each, slowed by at least 1, and dumps back") {
  const std::string head =
      "model: gpt3-125m\ntraining: {global_batch: 16}\ncluster:\n  node: dgx-a100-80gb\n  nodes: 2\n";
  const Scenario s = load_scenario_text(head + "  stragglers: [{node: 1, slowdown: 1.15}]\n", "t.yaml");
  REQUIRE(s.cluster.stragglers.size() == 1);
  CHECK(s.cluster.stragglers[0].node == 1);
  CHECK(s.cluster.stragglers[0].slowdown == 1.15);
  const Scenario back = load_scenario_text(dump_scenario(s), "dumped.yaml");
  REQUIRE(back.cluster.stragglers.size() == 1);
  CHECK(back.cluster.stragglers[0].slowdown == 1.15);
  CHECK(errors_of(head + "  stragglers: [{node: 2, slowdown: 1.1}]\n")
            .find("t.yaml:6:23: cluster.stragglers[0].node: must be at most 1") == 0);
  CHECK(errors_of(head + "  stragglers: [{node: 0, slowdown: 0.9}]\n")
            .find("t.yaml:6:36: cluster.stragglers[0].slowdown: must be at least 1") == 0);
  CHECK(errors_of(head + "  stragglers: [{node: 0, slowdown: 1.1}, {node: 0, slowdown: 1.2}]\n") ==
        "t.yaml:6:49: cluster.stragglers[1].node: node 0 is listed twice");
  CHECK(errors_of(head + "  stragglers: {node: 0}\n").find("expected a list of {node, slowdown}") !=
        std::string::npos);
}

TEST_CASE("cluster.variability takes a spread and a seed, defaults to the GPU preset's, and dumps back") {
  const std::string head =
      "model: gpt3-125m\ntraining: {global_batch: 16}\ncluster:\n  node: dgx-a100-80gb\n  nodes: 2\n";
  const Scenario preset = load_scenario_text(head, "t.yaml");
  CHECK(preset.cluster.variability < 0);  // not given: the GPU preset's `variability`
  // The shipped A100 preset: Sinha et al.'s σ, and its constants fitted to vTrain's 64-512 GPU steps.
  CHECK(preset.cluster.node.gpu.variability == 0.015);
  CHECK(preset.cluster.node.gpu.efficiency_fit_gpus == 273);
  const Scenario s = load_scenario_text(head + "  variability: {spread: 0.015, seed: 42}\n", "t.yaml");
  CHECK(s.cluster.variability == 0.015);
  CHECK(s.cluster.variability_seed == 42);
  const Scenario back = load_scenario_text(dump_scenario(s), "dumped.yaml");
  CHECK(back.cluster.variability == 0.015);
  CHECK(back.cluster.variability_seed == 42);
  CHECK(errors_of(head + "  variability: {spread: 0.9}\n")
            .find("t.yaml:6:25: cluster.variability.spread: must be at most 0.5") == 0);
  CHECK(errors_of(head + "  variability: {sigma: 0.01}\n").find("cluster.variability.sigma") !=
        std::string::npos);
}

TEST_CASE("cluster.degraded names a NIC of the cluster once, with a bandwidth, and dumps back") {
  const std::string head =
      "model: gpt3-125m\ntraining: {global_batch: 16}\ncluster:\n  node: dgx-a100-80gb\n  nodes: 2\n";
  const Scenario s =
      load_scenario_text(head + "  degraded: [{node: 1, nic: 7, bandwidth: \"100 Gb/s\"}]\n", "t.yaml");
  REQUIRE(s.cluster.degraded.size() == 1);
  CHECK(s.cluster.degraded[0].nic == 7);
  CHECK(s.cluster.degraded[0].bytes_per_s == 12.5e9);
  const Scenario back = load_scenario_text(dump_scenario(s), "dumped.yaml");
  REQUIRE(back.cluster.degraded.size() == 1);
  CHECK(back.cluster.degraded[0].bytes_per_s == 12.5e9);
  CHECK(errors_of(head + "  degraded: [{node: 1, nic: 8, bandwidth: \"100 Gb/s\"}]\n")
            .find("cluster.degraded[0].nic: must be at most 7") != std::string::npos);
  CHECK(errors_of(head + "  degraded: [{node: 1, nic: 0}]\n").find("bandwidth") != std::string::npos);
  CHECK(errors_of(head +
                  "  degraded: [{node: 0, nic: 1, bandwidth: \"1 Gb/s\"}, {node: 0, nic: 1, bandwidth: "
                  "\"2 Gb/s\"}]\n")
            .find("NIC 1 of node 0 is listed twice") != std::string::npos);
}

TEST_CASE("a second YAML document is an error at the line where it starts") {
  CHECK(errors_of(base + "---\nmodel: gpt3-175b\n") ==
        "t.yaml:4:1: a second YAML document starts here; a scenario file holds exactly one document");
  CHECK(errors_of(base + "...\ngarbage: [\n").find("t.yaml:5:1: a second YAML document") == 0);
  CHECK(errors_of("---\n" + base).empty());  // a document start marker before the one document
  CHECK(errors_of("%YAML 1.2\n---\n" + base).empty());
  CHECK(errors_of(base + "...\n# only a comment after the end\n").empty());
}

TEST_CASE("text that is not well-formed UTF-8 is refused: overlong forms, surrogates, beyond U+10FFFF") {
  for (const std::string bad :
       {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF0\x80\x80\xAF"}) {
    const std::string e = errors_of(base + "tags: {team: \"a" + bad + "\"}\n");
    CHECK_MESSAGE(e.find("t.yaml:4:") == 0, e);
    CHECK(e.find("is not a text file") != std::string::npos);
  }
  CHECK(errors_of(base + "tags: {team: \"\xF0\x9F\x98\x80 \xE2\x82\xAC \xED\x9F\xBF\"}\n")
            .empty());  // U+1F600, U+20AC, U+D7FF
}

TEST_CASE("aliases of a large value that expand past the byte bound are refused before they are copied") {
  // 200 aliases of a 100 kB scalar: 201 nodes, well under the node bound, but 20 MB of text once walked.
  std::string yaml = base + "big: &a \"" + std::string(100000, 'x') + "\"\ncopies: [";
  for (int i = 0; i < 200; ++i) yaml += i ? ", *a" : "*a";
  yaml += "]\n";
  REQUIRE(yaml.size() < max_scenario_bytes);
  CHECK(errors_of(yaml).find("expands to more than 16 MiB of text") != std::string::npos);
}

TEST_CASE("cluster.background takes a fraction of every switch-to-switch link, checked and dumped") {
  const std::string with = R"(model: gpt3-125m
cluster: {node: dgx-a100-80gb, nodes: 2, background: {fraction: 0.3}}
training: {global_batch: 64}
)";
  const Scenario s = load_scenario_text(with, "t.yaml");
  CHECK(s.cluster.background_fraction == 0.3);
  CHECK(load_scenario_text(dump_scenario(s), "dumped.yaml").cluster.background_fraction == 0.3);
  CHECK(load_scenario_text(base, "t.yaml").cluster.background_fraction == 0.0);
  auto with_background = [](const std::string& block) {
    return "model: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 2, background: " + block +
           "}\ntraining: {global_batch: 64}\n";
  };
  const std::string too_much = errors_of(with_background("{fraction: 1.5}"));
  CHECK(too_much.find("t.yaml:2:") == 0);
  CHECK(too_much.find("cluster.background.fraction") != std::string::npos);
  CHECK(errors_of(with_background("{fraction: -0.1}")).find("cluster.background.fraction") !=
        std::string::npos);
  CHECK(errors_of(with_background("{}")).find("cluster.background") != std::string::npos);
  CHECK(errors_of(with_background("{share: 0.3}")).find("unknown key \"share\"") != std::string::npos);
}

TEST_CASE("training.fp8_recipe: read under fp8, unset by default, dumped and read back, refused otherwise") {
  const Override h100{"cluster.node", "dgx-h100"};  // a GPU with fp8 throughput
  CHECK_FALSE(load_scenario_text(base, "t.yaml", {h100, {"training.precision", "fp8"}}).training.fp8_recipe);
  const Scenario s = load_scenario_text(
      base, "t.yaml", {h100, {"training.precision", "fp8"}, {"training.fp8_recipe", "mxfp8"}});
  REQUIRE(s.training.fp8_recipe.has_value());
  CHECK(*s.training.fp8_recipe == model::Fp8Recipe::mxfp8);
  CHECK(load_scenario_text(dump_scenario(s), "d.yaml").training == s.training);
  CHECK(errors_of(base, {{"training.fp8_recipe", "mxfp8"}})
            .find("training.fp8_recipe: an fp8 recipe needs precision: fp8, found precision bf16") !=
        std::string::npos);
  CHECK(errors_of(base, {h100, {"training.precision", "fp8"}, {"training.fp8_recipe", "mxfp4"}})
            .find("expected one of delayed, tensorwise, blockwise, mxfp8") != std::string::npos);
}
