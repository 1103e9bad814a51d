// How a plan cuts one micro-batch across ranks, and the divisibility errors users see.
#include "models/workload/shard.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim::model;

TEST_CASE("the shard of a plan carries its micro-batch, parallel degrees and recompute mode") {
  ParallelPlan plan;
  plan.tp = 4;
  plan.cp = 2;
  plan.ep = 8;
  plan.micro_batch = 3;
  plan.sequence_parallel = true;
  plan.recompute = Recompute::selective;
  const Shard s = shard_of(plan, trainsim::topo::Precision::fp16);
  CHECK(s.tp == 4);
  CHECK(s.cp == 2);
  CHECK(s.ep == 8);
  CHECK(s.micro_batch == 3);
  CHECK(s.sequence_parallel);
  CHECK(s.recompute == Recompute::selective);
  CHECK(s.precision == trainsim::topo::Precision::fp16);
}

TEST_CASE("degrees that do not divide the model are reported together, each with its key path") {
  TransformerSpec spec;
  spec.layers = 2;
  spec.hidden = 768;
  spec.heads = 12;
  spec.vocab = 1000;
  spec.seq_len = 1000;
  Shard s;
  s.tp = 8;
  s.cp = 3;
  try {
    check_shard(spec, s);
    FAIL("expected InputError");
  } catch (const trainsim::InputError& e) {
    REQUIRE(e.diagnostics().size() == 2);
    CHECK(e.diagnostics()[0].to_string() == "parallelism.tp: tp 8 does not divide heads 12");
    CHECK(e.diagnostics()[1].to_string() == "parallelism.cp: cp 3 does not divide seq_len 1000");
  }
  s.tp = 4;
  s.cp = 8;
  CHECK_NOTHROW(check_shard(spec, s));
}
