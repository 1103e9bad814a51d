#include "tools/report_bound.hpp"

#include <doctest/doctest.h>

using namespace trainsim;

namespace {
constexpr double kGiB = 1024.0 * 1024 * 1024;
}

TEST_CASE("a step that is 85 % compute or more is compute-bound, and the line names its largest loss") {
  // 0.9 s of compute and 0.1 s of bubble in a 1 s step; MFU 50 %; memory half full.
  const auto b = cli::what_bounds(
      {.compute = 0.9, .bubble = 0.1, .memory = 40 * kGiB, .capacity = 80 * kGiB, .mfu = 0.5});
  CHECK(b.what == "compute");
  CHECK(b.why == "compute 90 % of the step (MFU 50 %); largest loss bubble 10 %");
}

TEST_CASE("below 85 % compute the largest loss bounds the step, unless memory is 90 % full") {
  // 0.6 compute, 0.3 exposed TP traffic, 0.1 bubble.
  const auto tp = cli::what_bounds(
      {.compute = 0.6, .tp = 0.3, .bubble = 0.1, .memory = 40 * kGiB, .capacity = 80 * kGiB, .mfu = 0.4});
  CHECK(tp.what == "TP communication");
  CHECK(tp.why ==
        "TP communication 30 % of the step; compute 60 % (MFU 40 %); memory 40.0 GiB of 80.0 GiB (50 %)");
  const auto bubble = cli::what_bounds(
      {.compute = 0.7, .pp = 0.05, .bubble = 0.25, .memory = 10 * kGiB, .capacity = 80 * kGiB});
  CHECK(bubble.what == "bubble");
  // 76 of 80 GiB is 95 % full: memory bounds it, the bubble is the loss it cannot trade away.
  const auto memory =
      cli::what_bounds({.compute = 0.7, .bubble = 0.3, .memory = 76 * kGiB, .capacity = 80 * kGiB});
  CHECK(memory.what == "memory");
  CHECK(memory.why ==
        "memory 76.0 GiB of 80.0 GiB (95 %): no room to trade memory for time; largest loss bubble 30 %, "
        "compute 70 %");
}

TEST_CASE("a compute-bound step that fills memory says both") {
  const auto b =
      cli::what_bounds({.compute = 0.9, .dp = 0.1, .memory = 76 * kGiB, .capacity = 80 * kGiB, .mfu = 0.55});
  CHECK(b.what == "compute");
  CHECK(b.why ==
        "compute 90 % of the step (MFU 55 %); largest loss DP communication 10 %; memory 76.0 GiB of 80.0 "
        "GiB (95 %)");
  CHECK(cli::what_bounds({}).what == "unknown");
}
