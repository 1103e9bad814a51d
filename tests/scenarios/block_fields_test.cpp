// The scenario blocks' field tables against SPEC.md: every row is documented in its block's key table with
// the same kind, unit, bounds and help, and every key SPEC.md documents for such a block has a row. Then
// the tables against the reader and the dump: a documented key is read, and written back as it was read.
#include "scenarios/block_fields.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "scenarios/field_table.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

// SPEC.md's key tables: the heading "#### `path`" of each block, then a table whose rows are
// "| `key` | kind | unit | bounds | help |" (the header and its rule skipped).
using SpecRow = std::vector<std::string>;
std::map<std::string, std::map<std::string, SpecRow>> spec_key_tables() {
  std::ifstream in(TRAINSIM_SOURCE_DIR "/SPEC.md");
  REQUIRE(in);
  std::map<std::string, std::map<std::string, SpecRow>> tables;
  std::string line;
  std::string block;
  while (std::getline(in, line)) {
    if (line.rfind("#### `", 0) == 0 && line.size() > 7 && line.back() == '`') {
      block = line.substr(6, line.size() - 7);
      tables[block];
      continue;
    }
    if (block.empty()) continue;
    if (line.rfind("| `", 0) != 0) {
      if (line.rfind("|", 0) != 0 && !line.empty()) block.clear();  // prose after the table ends it
      continue;
    }
    SpecRow cells;
    std::stringstream cut(line.substr(1));
    std::string cell;
    while (std::getline(cut, cell, '|')) {
      const auto first = cell.find_first_not_of(' ');
      const auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
    }
    REQUIRE_MESSAGE(cells.size() == 5, line);
    const std::string key = cells[0].substr(1, cells[0].size() - 2);  // without the backticks
    CHECK_MESSAGE(tables[block].emplace(key, cells).second, "documented twice: ", block, ".", key);
  }
  return tables;
}

// The row as SPEC.md spells it; an empty cell is "—".
SpecRow expected_row(const FieldInfo& f) {
  const auto cell = [](std::string text) { return text.empty() ? std::string("—") : text; };
  return {"`" + std::string(f.key) + "`", cell(field_kind_text(f)), cell(field_unit(f)),
          cell(field_bounds(f)), field_help(f)};
}

std::string as_markdown(const SpecRow& row) {
  std::string out = "|";
  for (const std::string& c : row) out += " " + c + " |";
  return out;
}

}  // namespace

TEST_CASE(
    "every field table row is in SPEC.md's key table of its block, and every documented key has a row") {
  const auto spec = spec_key_tables();
  const std::vector<DocumentedBlock> blocks = documented_blocks();
  REQUIRE(!blocks.empty());
  std::set<std::string> with_table;
  for (const DocumentedBlock& block : blocks) {
    const std::string path(block.path);
    with_table.insert(path);
    INFO("block ", path);
    const auto it = spec.find(path);
    if (it == spec.end()) {
      std::string table =
          "#### `" + path + "`\n| key | kind | unit | bounds | meaning |\n|---|---|---|---|---|\n";
      for (const FieldInfo& f : block.rows) table += as_markdown(expected_row(f)) + "\n";
      FAIL_CHECK("SPEC.md has no key table for this block; it would read:\n", table);
      continue;
    }
    for (const FieldInfo& f : block.rows) {
      const auto row = it->second.find(std::string(f.key));
      if (row == it->second.end()) {
        FAIL_CHECK("not documented: ", as_markdown(expected_row(f)));
      } else {
        CHECK_MESSAGE(row->second == expected_row(f), "SPEC.md: ", as_markdown(row->second),
                      "\nthe table: ", as_markdown(expected_row(f)));
      }
    }
    for (const auto& [key, row] : it->second) {
      bool has_row = false;
      for (const FieldInfo& f : block.rows) has_row = has_row || f.key == key;
      CHECK_MESSAGE(has_row, "SPEC.md documents ", path, ".", key, ", which the block's table does not have");
    }
  }
  // A key table in SPEC.md for a block the code has no table of would be checked by nothing.
  for (const auto& [path, rows] : spec)
    CHECK_MESSAGE(with_table.count(path) == 1, "SPEC.md's table of ", path);
}

TEST_CASE("a table-driven block is read from its keys and dumped back in table order") {
  const std::string text =
      trainsim::testing::kSmallScenario + "checkpoint: {keep: 2, every_steps: 500, mode: sync}\n";
  const Scenario s = load_scenario_text(text, "t.yaml");
  CHECK(s.checkpoint.every_steps == 500);
  CHECK(s.checkpoint.mode == model::CheckpointMode::sync);
  CHECK(s.checkpoint.keep == 2);
  const std::string dump = dump_scenario(s);
  // interval is unset, so not written; the rest in the table's order, whatever order the file gave.
  CHECK(dump.find("checkpoint: {every_steps: 500, mode: sync, keep: 2}\n") != std::string::npos);
}

namespace {

struct ThreeKeys {
  double a = 1;
  double b = 2;
  std::optional<double> c;
};

const FieldTable<ThreeKeys>& three_keys_table() {
  static const FieldTable<ThreeKeys> kTable{
      number_field("a", &ThreeKeys::a, 0, 10, "first"),
      number_field("b", &ThreeKeys::b, 0, 10, "second"),
      number_field("c", &ThreeKeys::c, 0, 10, "third, written when set"),
  };
  return kTable;
}

}  // namespace

TEST_CASE("keys a dump writes out of table order come in the order it names them; unwritten ones stay out") {
  ThreeKeys k;
  k.c = 3;
  CHECK(block_fields(three_keys_table(), k, "  ") == "  a: 1\n  b: 2\n  c: 3\n");
  CHECK(block_fields(three_keys_table(), k, "  ", {"c", "a"}) == "  b: 2\n  c: 3\n  a: 1\n");
  CHECK(flow_fields(three_keys_table(), k, {"c", "b"}) == "c: 3, b: 2, a: 1");
  k.c.reset();
  CHECK(block_fields(three_keys_table(), k, "  ", {"c", "a"}) == "  b: 2\n  a: 1\n");
  CHECK(flow_fields(three_keys_table(), k, {"c"}) == "a: 1, b: 2");
  CHECK_THROWS_AS((void)flow_fields(three_keys_table(), k, {"d"}), std::logic_error);
}

TEST_CASE("rows that are not written at zero or in another form stay out of the dump") {
  const std::string text = trainsim::testing::kSmallScenario +
                           "failures: {gpu_mtbf: \"20000 h\"}\n"
                           "people: [{role: on-call, rate: \"$40/h\", coverage: \"24x7\"}]\n";
  const Scenario s = load_scenario_text(text, "t.yaml");
  CHECK(s.failures.gpu_mtbf_s == 20000 * 3600.0);
  CHECK(s.failures.node_mtbf_s == 0);
  REQUIRE(s.people.size() == 1);
  CHECK(s.people[0].round_the_clock);
  const std::string dump = dump_scenario(s);
  CHECK(dump.find("failures: {gpu_mtbf: ") != std::string::npos);  // node_mtbf 0: none, not written
  CHECK(dump.find("node_mtbf") == std::string::npos);
  CHECK(dump.find("  - {role: \"on-call\", count: 1, rate: \"$40/h\", coverage: \"24x7\"}\n") !=
        std::string::npos);
  const Scenario back = load_scenario_text(dump, "dump.yaml");
  CHECK(back.failures.gpu_mtbf_s == s.failures.gpu_mtbf_s);
  REQUIRE(back.people.size() == 1);
  CHECK(back.people[0].round_the_clock);
}

TEST_CASE("a table's required keys and a row's own rule give file:line:col errors naming the key") {
  using trainsim::testing::errors_of;
  CHECK(errors_of(trainsim::testing::kSmallScenario + "people: [{count: 2}]\n") ==
        "t.yaml:4:10: people[0].role: missing key \"role\"\n"
        "t.yaml:4:10: people[0].rate: missing key \"rate\"");
  CHECK(errors_of(trainsim::testing::kSmallScenario +
                  "people: [{role: a, rate: \"$1/h\", coverage: \"24x7\", hours_per_week: 8}]\n") ==
        "t.yaml:4:44: people[0].coverage: give coverage or hours_per_week, not both");
}

TEST_CASE("an empty block (a key with nothing after it) reports its missing keys at the key itself") {
  using trainsim::testing::errors_of;
  // yaml-cpp marks the empty value at the next token, line 3's `training`; the error belongs to line 2.
  CHECK(errors_of("model: gpt3-125m\ncluster:\ntraining: {global_batch: 64}\n") ==
        "t.yaml:2:1: cluster.node: missing key \"node\"\n"
        "t.yaml:2:1: cluster.nodes: missing key \"nodes\"");
  // Nested: the empty block's key on line 5, column 3, its neighbour's on line 6.
  CHECK(errors_of(trainsim::testing::kSmallScenario + "parallelism:\n  offload:\n  zero: 1\n") ==
        "t.yaml:5:3: parallelism.offload.modules: missing key \"modules\"");
}

TEST_CASE("the training, framework and convergence tables read and dump their mappings") {
  const std::string text =
      "model: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 2}\n"
      "training: {global_batch: 64, optimizer: {kind: adamw8bit}, steps: 10, schedule: {kind: wsd}}\n"
      "framework: {grad_reduce_dtype: bf16, prefetch: 2}\n"
      "convergence: {target_loss: 3, law: {E: 1.5, A: 400, B: 410, alpha: 0.3, beta: 0.25}}\n";
  // convergence sets the run's length, so it cannot stand beside steps: load the two halves apart.
  const std::string training = text.substr(0, text.find("convergence:"));
  const Scenario s = load_scenario_text(training, "t.yaml");
  // An alias read as its kind; 8-bit Adam's moments in int8 unless state_precision says otherwise.
  CHECK(s.training.optimizer.kind == model::OptimizerKind::adam8bit);
  CHECK(s.training.optimizer.state_precision == topo::Precision::int8);
  CHECK(s.training.steps == 10);
  CHECK(s.parallelism.framework.grad_reduce_dtype == topo::Precision::bf16);
  CHECK(s.parallelism.framework.prefetch == 2);
  const std::string dump = dump_scenario(s);
  // The canonical name; the struct's defaults for the keys not given; the preconditioner keys (0: the
  // kind's default) left out; decay_fraction's default written for wsd.
  CHECK(dump.find("  optimizer: {kind: adam-8bit, state_precision: int8, master_weights: true, "
                  "quantization_block: 2048, grad_clipping: true}\n") != std::string::npos);
  CHECK(dump.find("  steps: 10\n  schedule: {kind: wsd, decay_fraction: 0.2}\n") != std::string::npos);
  CHECK(dump.find("  prefetch: 2\n") != std::string::npos);
  // grad_reduce_dtype after gradient_staging, the framework block's last line.
  CHECK(dump.find("  grad_reduce_dtype: bf16\nmemory:\n  reserve: 0\n") != std::string::npos);

  const std::string with_target =
      "model: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 2}\ntraining: {global_batch: 64}\n" +
      text.substr(text.find("convergence:"));
  const Scenario c = load_scenario_text(with_target, "t.yaml");
  REQUIRE(c.convergence);
  CHECK(c.convergence->law == model::LossLawName::custom);
  CHECK(c.convergence->beta == 0.25);
  CHECK(dump_scenario(c).find("  law: {E: 1.5, A: 400, B: 410, alpha: 0.3, beta: 0.25}\n") !=
        std::string::npos);
}

TEST_CASE("a row's own rule is checked before its range") {
  using trainsim::testing::errors_of;
  CHECK(errors_of("model: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 2}\n"
                  "training: {global_batch: 64, optimizer: {kind: adamw, max_preconditioner_dim: 1}}\n") ==
        "t.yaml:3:79: training.optimizer.max_preconditioner_dim: only shampoo and soap keep preconditioners; "
        "adamw has none: remove it or set kind: shampoo\n"
        "t.yaml:3:79: training.optimizer.max_preconditioner_dim: must be at least 2, found \"1\"");
  CHECK(errors_of("model: gpt3-125m\ncluster: {node: dgx-a100-80gb, nodes: 2}\n"
                  "training: {global_batch: 64, epochs: 0, dataset_tokens: 1e9}\n") ==
        "t.yaml:3:38: training.epochs: must be greater than zero, found \"0\"");
}

TEST_CASE("the model table reads a model's keys and dumps only those that say something") {
  // A custom MoE model routed dropless, with a window over every other layer: the dump writes the keys in
  // the table's order whatever order the file gave; leaves out the widths at 0 (kv_heads, head_dim,
  // ffn_hidden: their defaults), capacity_factor (dropless has none), the MLA widths (no kv_lora_rank) and
  // attention_sinks (false); and writes the struct's defaults for the keys not given.
  const std::string text =
      "model: {mlp: swiglu, layers: 4, hidden: 256, heads: 8, vocab: 1000, seq_len: 512, experts: 8,\n"
      "        top_k: 2, routing: dropless, imbalance: 1.5, sliding_window: 128,\n"
      "        layer_types: [sliding_attention, full_attention]}\n"
      "cluster: {node: dgx-a100-80gb, nodes: 2}\ntraining: {global_batch: 64}\n";
  const Scenario s = load_scenario_text(text, "t.yaml");
  CHECK(s.model.name == "custom");
  CHECK(s.model.routing == model::Routing::dropless);
  CHECK(s.model.imbalance == 1.5);
  CHECK(s.model.window_layers == std::vector<bool>{true, false});
  const std::string dump = dump_scenario(s);
  CHECK(dump.find("model: {name: \"custom\", layers: 4, hidden: 256, heads: 8, vocab: 1000, seq_len: 512, "
                  "mlp: swiglu, norm: layernorm, position: learned, bias: true, tied_embeddings: false, "
                  "experts: 8, top_k: 2, routing: dropless, imbalance: 1.5, expert_ffn_hidden: 0, "
                  "sliding_window: 128, layer_types: [sliding_attention, full_attention], attention: flash, "
                  "causal: true, dropout: 0.1}\n") != std::string::npos);
  const Scenario back = load_scenario_text(dump, "dump.yaml");
  CHECK(back.model.window_layers == s.model.window_layers);
  CHECK(back.model.imbalance == 1.5);
  CHECK(dump_scenario(back) == dump);
}

TEST_CASE("a model without a preset needs the table's required keys; with one, none") {
  using trainsim::testing::errors_of;
  const std::string rest = "cluster: {node: dgx-a100-80gb, nodes: 2}\ntraining: {global_batch: 64}\n";
  CHECK(errors_of("model: {layers: 2, hidden: 64}\n" + rest) ==
        "t.yaml:1:8: model.heads: missing key \"heads\"\n"
        "t.yaml:1:8: model.vocab: missing key \"vocab\"\n"
        "t.yaml:1:8: model.seq_len: missing key \"seq_len\"");
  CHECK(errors_of("model: {preset: gpt3-125m, layers: 2}\n" + rest) == "");
}

TEST_CASE("the parallelism table reads its keys and mappings, and dumps them in the block's key order") {
  // 2 nodes of 8 GPUs: tp 2 × dp 8; shard_group 2 divides dp; attn_proj offloaded beside core_attn.
  const std::string text =
      trainsim::testing::kSmallScenario +
      "parallelism: {zero: 3, offload: {modules: [attn_proj, core_attn]}, dp: 8, tp: 2,\n"
      "  recompute: {modules: [mlp, core_attn]}, shard_group: 2, order: [pp, tp, cp, ep, dp]}\n";
  const Scenario s = load_scenario_text(text, "t.yaml");
  const model::ParallelPlan& p = s.parallelism;
  CHECK(p.zero == model::ZeroStage::parameters);
  CHECK(p.tp == 2);
  CHECK(p.dp == 8);
  CHECK_FALSE(p.dp_auto);
  CHECK(p.shard_group == 2);
  CHECK(p.recompute == model::Recompute::selective);  // the mapping form is selective recompute
  CHECK(p.recompute_modules == (static_cast<std::uint8_t>(model::RecomputeModule::core_attn) |
                                static_cast<std::uint8_t>(model::RecomputeModule::mlp)));
  CHECK(p.offload_modules == (static_cast<std::uint8_t>(model::OffloadModule::core_attn) |
                              static_cast<std::uint8_t>(model::OffloadModule::attn_proj)));
  CHECK(p.order.front() == model::ParallelAxis::pp);
  const std::string dump = dump_scenario(s);
  CHECK(dump.find("parallelism:\n  tp: 2\n  pp: 1\n  dp: 8\n  cp: 1\n  ep: 1\n  expert_folding: false\n"
                  "  schedule: 1f1b\n") != std::string::npos);  // expert_tp unset: not written
  // Modules in their table's order, whatever order the file gave; shard_group and offload after order.
  CHECK(dump.find("  zero: 3\n  recompute: {modules: [core_attn, mlp]}\n") != std::string::npos);
  CHECK(dump.find("  order: [pp, tp, cp, ep, dp]\n  shard_group: 2\n"
                  "  offload: {modules: [core_attn, attn_proj]}\nframework:\n") != std::string::npos);
  const Scenario back = load_scenario_text(dump, "dump.yaml");
  CHECK(dump_scenario(back) == dump);
}

TEST_CASE("the parallelism table's rows and mappings give file:line:col errors naming the key") {
  using trainsim::testing::errors_of;
  const std::string& base = trainsim::testing::kSmallScenario;
  CHECK(errors_of(base + "parallelism: {zero: 4}\n") ==
        "t.yaml:4:21: parallelism.zero: must be at most 3, found \"4\"");
  CHECK(errors_of(base + "parallelism: {recompute: {modules: [mlp, mlp]}}\n") ==
        "t.yaml:4:42: parallelism.recompute.modules: module mlp appears twice");
  CHECK(errors_of(base + "parallelism: {offload: {module: [core_attn]}}\n") ==
        "t.yaml:4:24: parallelism.offload.modules: missing key \"modules\"\n"
        "t.yaml:4:25: parallelism.offload.module: unknown key \"module\" (did you mean \"modules\"?)");
  CHECK(errors_of(base + "parallelism: {dp: automatic}\n") ==
        "t.yaml:4:19: parallelism.dp: expected a number, found \"automatic\"");
}
