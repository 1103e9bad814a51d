// Pass-level traces: a pass's slices on one lane become one slice named by the pass; everything else is
// handed on as it came.
#include "models/step/pass_detail_sink.hpp"

#include <doctest/doctest.h>

#include <span>
#include <string>
#include <vector>

using namespace trainsim;
using model::PassDetailSink;

namespace {

struct Seen {
  std::string lane, name, category;
  std::int64_t start_ps = 0, end_ps = 0;
  double path_place = 0;  // the critical_path arg; 0 without it
};

class Recorder : public sim::TraceSink {
 public:
  void record(const sim::TraceRecord& r) override {
    double place = 0;
    for (const sim::TraceArg& a : r.args) {
      if (a.key == sim::kCriticalPathArg) place = a.number;
    }
    seen.push_back(
        {std::string(r.lane), std::string(r.name), std::string(r.category), r.start.ps(), r.end.ps(), place});
  }
  std::vector<Seen> seen;
};

sim::TraceRecord slice(std::string_view lane, std::string_view name, std::string_view category,
                       std::int64_t from, std::int64_t to) {
  return sim::TraceRecord{lane, name, category, sim::Time::from_ps(from), sim::Time::from_ps(to), {}};
}

}  // namespace

TEST_CASE("the pass of a slice is its first three words, or the hand-over that carries it") {
  CHECK(PassDetailSink::pass_of("F mb3 c0 L12 qkv..out_proj") == "F mb3 c0");
  CHECK(PassDetailSink::pass_of("B mb12 c1 head lm_head.wgrad") == "B mb12 c1");
  CHECK(PassDetailSink::pass_of("W mb0 c0") == "W mb0 c0");
  CHECK(PassDetailSink::pass_of("send act F mb3 c0 latency") == "send act F mb3 c0");
  CHECK(PassDetailSink::pass_of("send grad B mb3 c1") == "send grad B mb3 c1");
  CHECK(PassDetailSink::pass_of("grad bucket c0 3").empty());
  CHECK(PassDetailSink::pass_of("optimizer").empty());
  CHECK(PassDetailSink::pass_of("F mbx c0 L1").empty());
  CHECK(PassDetailSink::pass_of("F mb3 cc").empty());
}

TEST_CASE("a pass's slices on a lane merge into one, zero-time joins included; others pass through") {
  Recorder inner;
  {
    PassDetailSink sink(inner);
    sink.record(slice("stage 0 / compute", "F mb0 c0 L0 qkv", "compute", 0, 10));
    sink.record(slice("stage 0 / compute", "F mb0 c0 L0 weights", "", 10, 10));
    sink.record(slice("stage 0 / tp comm", "F mb0 c0 L0 tp_all_gather", "tp", 10, 12));
    sink.record(slice("stage 0 / compute", "F mb0 c0 L1 out_proj", "compute", 12, 20));
    sink.record(slice("stage 0 / dp comm", "grad bucket c0 0", "dp", 15, 25));  // not a pass: at once
    sink.record(slice("stage 0 / compute", "B mb0 c0 L1 out_proj.dgrad", "compute", 20, 35));
    REQUIRE(inner.seen.size() == 2);
    CHECK(inner.seen[0].name == "grad bucket c0 0");
    CHECK(inner.seen[1].name == "F mb0 c0");  // closed by the backward on the same lane
    CHECK(inner.seen[1].category == "compute");
    CHECK(inner.seen[1].start_ps == 0);
    CHECK(inner.seen[1].end_ps == 20);
  }  // the destructor flushes what is open, in lane order
  REQUIRE(inner.seen.size() == 4);
  CHECK(inner.seen[2].lane == "stage 0 / compute");
  CHECK(inner.seen[2].name == "B mb0 c0");
  CHECK(inner.seen[2].end_ps == 35);
  CHECK(inner.seen[3].lane == "stage 0 / tp comm");
  CHECK(inner.seen[3].name == "F mb0 c0");
  CHECK(inner.seen[3].start_ps == 10);
}

TEST_CASE("a merged pass is on the critical path from the first place any of its slices has on it") {
  Recorder inner;
  const sim::TraceArg seventh{.key = sim::kCriticalPathArg, .number = 7};
  const sim::TraceArg fifth{.key = sim::kCriticalPathArg, .number = 5};
  sim::TraceRecord off = slice("stage 0 / compute", "F mb0 c0 L0 qkv", "compute", 0, 10);
  sim::TraceRecord later = slice("stage 0 / compute", "F mb0 c0 L1 qkv", "compute", 10, 20);
  later.args = std::span(&seventh, 1);
  sim::TraceRecord earlier = slice("stage 0 / compute", "F mb0 c0 L2 qkv", "compute", 20, 30);
  earlier.args = std::span(&fifth, 1);
  {
    PassDetailSink sink(inner);
    sink.record(off);
    sink.record(later);
    sink.record(earlier);
    sink.record(slice("stage 0 / compute", "B mb0 c0 L2 qkv", "compute", 30, 40));  // closes F, off the path
  }
  REQUIRE(inner.seen.size() == 2);
  CHECK(inner.seen[0].name == "F mb0 c0");
  CHECK(inner.seen[0].path_place == 5);
  CHECK(inner.seen[1].name == "B mb0 c0");
  CHECK(inner.seen[1].path_place == 0);
}
