// `trainsim explain S.yaml`: the parameter count, the attention kernel assumed and the memory
// breakdown per GPU with the numbers behind each line; on a layout that does not fit, which stage and why.
// Expected numbers: GPT-3 175B has 174.6B parameters (96 layers, hidden 12288, vocab 50257, seq 2048; Brown
// et al. 2020 / Narayanan et al. 2021 Table 1), mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter
// (Rajbhandari et al. 2020, ZeRO).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "binary_harness.hpp"

namespace {

using trainsim::e2e::describe;
using trainsim::e2e::Outcome;
using trainsim::e2e::run_trainsim;
using trainsim::e2e::TempDir;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

/// The GiB figure on the first line of `text` that starts with `label` (after indentation); -1 if none.
double gib_line(const std::string& text, const std::string& label) {
  const std::regex pattern("(^|\\n)\\s*" + label + R"(\s+([0-9]+(\.[0-9]+)?)\s*GiB)");
  std::smatch match;
  if (!std::regex_search(text, match, pattern)) return -1.0;
  return std::stod(match[2].str());
}

}  // namespace

TEST_CASE(
    "explain on GPT-3 175B over 1,024 A100 prints the parameter count, the attention kernel and memory") {
  const Outcome o =
      run_trainsim({"explain", TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  INFO(o.out);

  SUBCASE("the parameter count is 174.6B") {
    CHECK(std::regex_search(o.out, std::regex(R"(parameters\s+174\.6[0-9]*\s*B)")));
  }

  SUBCASE("the attention kernel assumed is named (flash is the default)") {
    CHECK(o.out.find("attention") != std::string::npos);
    CHECK(o.out.find("flash") != std::string::npos);
  }

  SUBCASE("the memory breakdown of the worst GPU has every part, consistent with hand arithmetic") {
    const std::size_t memory = o.out.find("memory per GPU");
    REQUIRE(memory != std::string::npos);
    const std::string breakdown = o.out.substr(memory);
    const double weights = gib_line(breakdown, "weights");
    const double grads = gib_line(breakdown, "grads");
    const double optimizer = gib_line(breakdown, "optimizer state");
    const double activations = gib_line(breakdown, "activations");
    const double buffers = gib_line(breakdown, "buffers");
    const double total = gib_line(breakdown, "total");
    // tp 8 x pp 16 = 128 model shards; the worst stage holds at least its 1/128 of the bf16 weights
    // (2 B x 174.6e9 / 128 = 2.54 GiB) plus an embedding shard, not more than ~10% extra.
    const double share = 2.0 * 174.6e9 / 128.0 / kGiB;
    CHECK(weights >= share);
    CHECK(weights <= 1.1 * share);
    // bf16 gradients are as big as bf16 weights (ZeRO-1 does not shard them).
    CHECK(grads == doctest::Approx(weights).epsilon(0.01));
    // AdamW fp32 master + two moments = 12 B/param, sharded over dp = 1024 / 128 = 8: 12 / 2 / 8 = 0.75 of
    // the weights' bytes.
    CHECK(optimizer == doctest::Approx(0.75 * weights).epsilon(0.02));
    CHECK(activations > 0.0);
    CHECK(buffers > 0.0);
    CHECK(total == doctest::Approx(weights + grads + optimizer + activations + buffers).epsilon(0.01));
    CHECK(total <= 80.0);  // A100 80GB
    CHECK(breakdown.find("fits") != std::string::npos);
  }

  SUBCASE("the time of one iteration on the critical stage follows, down to the kernels and the bubble") {
    const std::size_t time = o.out.find("time per iteration, stage ");
    REQUIRE(time != std::string::npos);
    const std::string section = o.out.substr(time);
    CHECK(section.find("(critical)") != std::string::npos);
    CHECK(section.find("kernels, forward layer") != std::string::npos);
    CHECK(section.find("pipeline bubble") != std::string::npos);
    CHECK(section.find("interleaved schedule, pp 16 x 2 chunks") != std::string::npos);
    CHECK(section.find("\n  iteration ") != std::string::npos);
  }
}

TEST_CASE("explain on GPT-3 175B squeezed onto 8 GPUs names the stage that does not fit and why") {
  const TempDir dir;
  const std::string scenario = dir.file("gpt3-175b-8-gpus.yaml");
  {
    std::ofstream out(scenario);
    out << "model: gpt3-175b\n"
           "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
           "parallelism: {tp: 8, pp: 1, dp: 1, micro_batch: 1, zero: 0, recompute: none}\n"
           "training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 10}\n";
  }
  const Outcome o = run_trainsim({"explain", scenario});
  INFO(describe(o));
  // Explaining a layout that does not fit is the command's purpose, not bad input.
  CHECK((o.exit_code == 0 || o.exit_code == 1));
  INFO(o.out);
  const std::regex reason(R"(does not fit: stage 0 needs ([0-9.]+) GiB of 80 GiB)");
  std::smatch match;
  REQUIRE(std::regex_search(o.out, match, reason));
  // 16 B/param of model states alone (ZeRO paper, mixed-precision Adam) over tp 8: 16 x 174.6e9 / 8 B =
  // 325 GiB, before any activation.
  CHECK(std::stod(match[1].str()) >= 16.0 * 174.6e9 / 8.0 / kGiB);
  // The reason lists the parts, the largest (the optimizer state: 12 of the 16 bytes) among them.
  const std::string why = o.out.substr(static_cast<std::size_t>(match.position(0)));
  CHECK(why.find("optimizer state") != std::string::npos);
  CHECK(why.find("weights") != std::string::npos);
  CHECK(why.find("activations") != std::string::npos);
}

TEST_CASE(
    "explain --json gives the exact GPT-3 175B parameter count and, on no fit, fits=false with the reason") {
  const Outcome o =
      run_trainsim({"explain", "--json", TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const auto doc = nlohmann::json::parse(o.out);
  CHECK(doc.at("fits") == true);
  // h = 12288, vocab 50257, seq 2048, tied LM head: embedding 50257 h = 617,558,016; positions 2048 h =
  // 25,165,824; per layer 12 h^2 + 13 h (QKV 3h^2+3h, projection h^2+h, MLP 8h^2+5h, two norms 4h) =
  // 1,812,099,072, x 96 = 173,961,510,912; final norm 2h = 24,576. Sum: 174,604,259,328.
  bool found = false;
  for (const auto& section : doc.at("sections"))
    for (const auto& line : section.at("lines"))
      if (line.at("label") == "parameters") {
        found = true;
        CHECK(line.at("value").get<double>() == 174604259328.0);
      }
  CHECK(found);

  const TempDir dir;
  const std::string scenario = dir.file("gpt3-175b-8-gpus.yaml");
  {
    std::ofstream out(scenario);
    out << "model: gpt3-175b\n"
           "cluster: {node: dgx-a100-80gb, nodes: 1}\n"
           "parallelism: {tp: 8, pp: 1, dp: 1, micro_batch: 1, zero: 0, recompute: none}\n"
           "training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 10}\n";
  }
  const Outcome no_fit = run_trainsim({"explain", "--json", scenario});
  INFO(describe(no_fit));
  REQUIRE((no_fit.exit_code == 0 || no_fit.exit_code == 1));
  const auto why = nlohmann::json::parse(no_fit.out);
  CHECK(why.at("fits") == false);
  CHECK(why.at("reason").get<std::string>().rfind("stage 0 needs", 0) == 0);
}

TEST_CASE("explain names the attention kernel: standard attention keeps 5as^2b/t bytes of scores per layer") {
  // The kept-scores line of the "attention kernel" section, in bytes, for the example under `attention`.
  const auto kept_scores = [](const std::string& attention) {
    const TempDir dir;
    const std::string scenario = dir.file("gpt3-175b-" + attention + ".yaml");
    {
      std::ofstream out(scenario);
      out << "model: {preset: gpt3-175b, attention: " << attention
          << "}\n"
             "cluster: {node: dgx-a100-80gb, nodes: 128}\n"
             "parallelism: {tp: 8, pp: 16, micro_batch: 1, sequence_parallel: true, recompute: none}\n"
             "training: {global_batch: 1536, precision: bf16, optimizer: adamw, steps: 10}\n";
    }
    const Outcome o = run_trainsim({"explain", "--json", scenario});
    INFO(attention << ": " << describe(o));
    REQUIRE(o.exit_code == 0);
    const auto doc = nlohmann::json::parse(o.out);
    for (const auto& section : doc.at("sections"))
      if (section.at("title") == "attention kernel") {
        const auto& lines = section.at("lines");
        REQUIRE(!lines.empty());
        const std::string label = lines.front().at("label");
        CHECK(label.find(attention) != std::string::npos);
        return lines.front().at("value").get<double>();
      }
    FAIL("no attention kernel section");
    return -1.0;
  };
  // Korthikanti et al. 2022, Sec. 4.1 (the 5as^2b term of sbh(34 + 5as/h)): softmax output 2as^2b, dropout
  // mask as^2b, dropout output 2as^2b, split over tp: 5 x 96 x 2048^2 x 1 / 8 = 251,658,240 bytes.
  CHECK(kept_scores("standard") == 251658240.0);
  CHECK(kept_scores("flash") == 0.0);
}

TEST_CASE("explain on a missing file is bad input: exit 2") {
  const Outcome o = run_trainsim({"explain", "no-such-scenario.yaml"});
  INFO(describe(o));
  CHECK(o.exit_code == 2);
  CHECK(o.err.find("no-such-scenario.yaml") != std::string::npos);
}

TEST_CASE("explain states the default memory headroom with its sources, and takes --set") {
  const std::string example = TRAINSIM_SOURCE_DIR "/scenarios/examples/llama3-70b-512-h100.yaml";
  const Outcome o = run_trainsim({"explain", example});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const std::size_t at = o.out.find("memory headroom\n");
  REQUIRE(at != std::string::npos);
  const std::string section = o.out.substr(at, o.out.find("\n\n", at) - at);
  CHECK(section.find("pytorch/pytorch#107667") != std::string::npos);
  CHECK(section.find("NVIDIA/nccl#964") != std::string::npos);
  CHECK(section.find("arXiv:2401.08156") != std::string::npos);
  // 2 x 688 MB + 15 % of 80 GiB = 1.282 GiB + 12 GiB = 13.28 GiB.
  CHECK(gib_line(section, "default headroom") == doctest::Approx(13.28).epsilon(0.001));
  CHECK(section.find("leaves it free") != std::string::npos);

  const Outcome given = run_trainsim({"explain", example, "--set", "budget.memory_headroom=8 GiB"});
  REQUIRE(given.exit_code == 0);
  CHECK(gib_line(given.out, "budget.memory_headroom") == doctest::Approx(8.0));
  CHECK(given.out.find("default headroom") == std::string::npos);
  // A layout that leaves less than the headroom is told so: 75 GiB of 80 must stay free.
  const Outcome tight = run_trainsim({"explain", example, "--set", "budget.memory_headroom=75 GiB"});
  CHECK(tight.out.find("does not leave it free") != std::string::npos);
}

TEST_CASE("explain ends with what bounds the layout, on the step its time section breaks down") {
  const Outcome o =
      run_trainsim({"explain", "--json", TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml"});
  INFO(describe(o));
  REQUIRE(o.exit_code == 0);
  const auto doc = nlohmann::json::parse(o.out);
  // The time section's last line is the iteration; every line before it that is not a kernel run (exposed
  // collectives, data-parallel and pipeline traffic, bubble, optimizer) is time that is not compute.
  double not_compute = 0, iteration = 0;
  const nlohmann::json* bound = nullptr;
  for (const auto& section : doc.at("sections")) {
    const std::string title = section.at("title");
    if (title.starts_with("time per iteration")) {
      for (const auto& line : section.at("lines")) {
        const std::string label = line.at("label");
        if (label == "iteration") {
          iteration = line.at("value").get<double>();
        } else if (!label.starts_with("kernels, ")) {
          not_compute += line.at("value").get<double>();
        }
      }
    }
    if (title == "what bounds this layout, closed form") bound = &section;
  }
  REQUIRE(bound != nullptr);
  CHECK(&doc.at("sections").back() == bound);
  REQUIRE(iteration > 0);
  const auto& lines = bound->at("lines");
  // The compute share, the memory fill, and (an eager step) the host's headroom.
  REQUIRE(lines.size() == 3);
  CHECK(lines[2].at("label") == "host headroom");
  CHECK(lines[0].at("label") == "compute share");
  const double share = lines[0].at("value").get<double>();
  CHECK(share == doctest::Approx((iteration - not_compute) / iteration).epsilon(1e-9));
  CHECK(lines[1].at("label") == "memory fill");
  const double fill = lines[1].at("value").get<double>();
  // The rule: compute-bound at 0.85 of the step or more, else memory-bound at 0.90 full or more.
  const std::string note = bound->at("notes").at(0);
  if (share >= 0.85) {
    CHECK(note.starts_with("bound by compute: "));
  } else if (fill >= 0.90) {
    CHECK(note.starts_with("bound by memory: "));
  } else {
    CHECK(!note.starts_with("bound by compute"));
    CHECK(!note.starts_with("bound by memory"));
  }
}

TEST_CASE("explain --ops lists one layer's ops after the time, and only when asked") {
  const std::string scenario = TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml";
  const Outcome plain = run_trainsim({"explain", scenario});
  const Outcome ops = run_trainsim({"explain", scenario, "--ops"});
  INFO(describe(ops));
  REQUIRE(plain.exit_code == 0);
  REQUIRE(ops.exit_code == 0);
  CHECK(plain.out.find("ops of one layer") == std::string::npos);
  const std::size_t time = ops.out.find("time per iteration");
  const std::size_t section = ops.out.find("ops of one layer per micro-batch on one GPU");
  REQUIRE(time != std::string::npos);
  REQUIRE(section != std::string::npos);
  CHECK(time < section);
  // GPT-3's fc1 at tp 8 on 2,048 tokens: 2,048 x 6,144 x 12,288 (h = 12,288, ffn 4h / 8).
  CHECK(std::regex_search(ops.out, std::regex(R"(forward fc1 +[0-9.]+ ms += 2048 x 6144 x 12288, )")));
  CHECK(std::regex_search(ops.out, std::regex(R"(forward, kernels +[0-9.]+ ms)")));
}
