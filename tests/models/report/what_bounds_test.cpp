#include "models/report/what_bounds.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <string_view>

using namespace trainsim;

namespace {
constexpr double kGiB = 1024.0 * 1024 * 1024;

// Each part holds the number its source was given: compute 1, tp 2, ep 3, dp 4, pp 5, optimizer 6,
// bubble 7, memory 8, capacity 9, MFU 0.5.
void check_one_to_nine(const model::StepShares& s) {
  CHECK(s.compute == 1);
  CHECK(s.tp == 2);
  CHECK(s.ep == 3);
  CHECK(s.dp == 4);
  CHECK(s.pp == 5);
  CHECK(s.optimizer == 6);
  CHECK(s.bubble == 7);
  CHECK(s.memory == 8);
  CHECK(s.capacity == 9);
  CHECK(s.mfu == 0.5);
}
}  // namespace

TEST_CASE("a step that is 85 % compute or more is compute-bound, and the line names its largest loss") {
  // 0.9 s of compute and 0.1 s of bubble in a 1 s step; MFU 50 %; memory half full.
  const auto b = model::what_bounds(
      {.compute = 0.9, .bubble = 0.1, .memory = 40 * kGiB, .capacity = 80 * kGiB, .mfu = 0.5});
  CHECK(b.what == "compute");
  CHECK(b.why == "compute 90 % of the step (MFU 50 %); largest loss bubble 10 %");
}

TEST_CASE("below 85 % compute the largest loss bounds the step, unless memory is 90 % full") {
  // 0.6 compute, 0.3 exposed TP traffic, 0.1 bubble.
  const auto tp = model::what_bounds(
      {.compute = 0.6, .tp = 0.3, .bubble = 0.1, .memory = 40 * kGiB, .capacity = 80 * kGiB, .mfu = 0.4});
  CHECK(tp.what == "TP communication");
  CHECK(tp.why ==
        "TP communication 30 % of the step; compute 60 % (MFU 40 %); memory 40.0 GiB of 80.0 GiB (50 %)");
  const auto bubble = model::what_bounds(
      {.compute = 0.7, .pp = 0.05, .bubble = 0.25, .memory = 10 * kGiB, .capacity = 80 * kGiB});
  CHECK(bubble.what == "bubble");
  // 76 of 80 GiB is 95 % full: memory bounds it, the bubble is the loss it cannot trade away.
  const auto memory =
      model::what_bounds({.compute = 0.7, .bubble = 0.3, .memory = 76 * kGiB, .capacity = 80 * kGiB});
  CHECK(memory.what == "memory");
  CHECK(memory.why ==
        "memory 76.0 GiB of 80.0 GiB (95 %): no room to trade memory for time; largest loss bubble 30 %, "
        "compute 70 %");
}

TEST_CASE("a compute-bound step that fills memory says both") {
  const auto b = model::what_bounds(
      {.compute = 0.9, .dp = 0.1, .memory = 76 * kGiB, .capacity = 80 * kGiB, .mfu = 0.55});
  CHECK(b.what == "compute");
  CHECK(b.why ==
        "compute 90 % of the step (MFU 55 %); largest loss DP communication 10 %; memory 76.0 GiB of 80.0 "
        "GiB (95 %)");
  CHECK(model::what_bounds({}).what == "unknown");
}

TEST_CASE("the shares are read from the summary's fields, each into its own part") {
  // Each field given a different number: a field read into the wrong part would show.
  const std::map<std::string, double, std::less<>> fields{{"compute", 1},         {"exposed_tp_comm", 2},
                                                          {"exposed_ep_comm", 3}, {"exposed_dp_comm", 4},
                                                          {"exposed_pp_comm", 5}, {"optimizer", 6},
                                                          {"bubble", 7},          {"memory_per_gpu", 8},
                                                          {"memory_capacity", 9}, {"mfu", 0.5}};
  const model::StepShares s = model::step_shares([&](std::string_view f) {
    const auto it = fields.find(f);
    return it == fields.end() ? -1.0 : it->second;
  });
  check_one_to_nine(s);
}

TEST_CASE("a simulated step's shares are its time breakdown and its worst GPU's memory") {
  model::StepReport step;
  step.time = {.compute = 1,
               .exposed_tp_comm = 2,
               .exposed_ep_comm = 3,
               .exposed_dp_comm = 4,
               .exposed_pp_comm = 5,
               .optimizer = 6,
               .bubble = 7};
  step.memory_per_gpu = 8;
  step.memory_capacity = 9;
  step.mfu = 0.5;
  const model::StepShares s = model::step_shares(step);
  check_one_to_nine(s);
}
