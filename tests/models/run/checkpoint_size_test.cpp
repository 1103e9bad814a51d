#include "models/run/checkpoint_size.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "models/workload/parameters.hpp"

using namespace trainsim::model;
using trainsim::topo::Precision;

namespace {

TrainingSpec training_with(OptimizerKind kind, Precision precision = Precision::bf16) {
  TrainingSpec t;
  t.precision = precision;
  t.optimizer.kind = kind;
  return t;
}

TransformerSpec gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab) {
  TransformerSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.vocab = vocab;
  m.seq_len = 2048;
  m.tied_embeddings = true;
  return m;
}

}  // namespace

TEST_CASE("a mixed-precision Adam checkpoint is 14 bytes per parameter") {
  // bf16 weights 2 + fp32 master 4 + momentum 4 + variance 4.
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::adamw)) == doctest::Approx(14.0).scale(0));
}

TEST_CASE("SGD, SGD-momentum, Adafactor and 8-bit Adam checkpoints are smaller than Adam's") {
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::sgd)) == doctest::Approx(6.0).scale(0));
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::sgd_momentum)) ==
        doctest::Approx(10.0).scale(0));
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::adafactor)) ==
        doctest::Approx(6.0).epsilon(1e-4));
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::adam8bit)) ==
        doctest::Approx(8.0 + 8.0 / 2048).scale(0));
  // fp32 training: weights are the master copy.
  CHECK(checkpoint_bytes_per_param(training_with(OptimizerKind::adam, Precision::fp32)) ==
        doctest::Approx(12.0).scale(0));
}

TEST_CASE("BLOOM-176B's checkpoint is 329 GB of bf16 weights and 2.3 TB with optimizer states") {
  // bigscience/bloom model card: 70 layers, hidden 14336, 112 heads, vocab 250,880, ALiBi, tied
  // embeddings. "Bf16 weights: 329GB; full checkpoint with optimizer states: 2.3TB" — binary units
  // (176.2e9 params x 2 B = 352e9 B = 328 GiB).
  TransformerSpec bloom = gpt(70, 14336, 112, 250880);
  bloom.position = Position::rope;  // ALiBi: no position parameters
  ParallelPlan p{.tp = 4, .pp = 12, .dp = 8, .zero = ZeroStage::optimizer_states};
  const CheckpointSize c = checkpoint_size(bloom, p, training_with(OptimizerKind::adam));
  const double gib = std::pow(2.0, 30);
  CHECK(c.weights / gib == doctest::Approx(329).epsilon(0.01));
  CHECK(c.total() / (1024 * gib) == doctest::Approx(2.3).epsilon(0.05));
  CHECK(c.total() == doctest::Approx(14 * parameter_count(bloom)).epsilon(1e-6));
}

TEST_CASE("Megatron's 1T-parameter model has a 13.8 TB checkpoint") {
  // Narayanan et al. 2021 (arXiv:2104.04473), Table 1: 128 layers, hidden 25600, 160 heads; "13.8 terabytes".
  const TransformerSpec m = gpt(128, 25600, 160, 51200);
  ParallelPlan p{.tp = 8, .pp = 64, .dp = 6, .zero = ZeroStage::none};
  const CheckpointSize c = checkpoint_size(m, p, training_with(OptimizerKind::adam));
  CHECK(c.total() / 1e12 == doctest::Approx(13.8).epsilon(0.05));
}

TEST_CASE("without ZeRO one replica's model-parallel ranks write; with ZeRO-1 every rank writes its shard") {
  const TransformerSpec m = gpt(96, 12288, 96, 51200);
  ParallelPlan p{.tp = 8, .pp = 16, .dp = 8, .zero = ZeroStage::none};
  const TrainingSpec t = training_with(OptimizerKind::adam);
  const CheckpointSize replica = checkpoint_size(m, p, t);
  CHECK(replica.writing_ranks == 128);
  // Busiest writer: the first stage (6 layers + embedding) / tp 8 plus the learned positions every tp rank
  // keeps whole, 14 bytes per parameter.
  const double positions = 2048.0 * 12288;
  const double stage0 = (stage_parameter_count(m, 6, true, false) - positions) / 8 + positions;
  CHECK(replica.bytes_per_rank_max == doctest::Approx(14 * stage0).epsilon(0.001));
  p.zero = ZeroStage::optimizer_states;
  const CheckpointSize sharded = checkpoint_size(m, p, t);
  CHECK(sharded.writing_ranks == 1024);
  CHECK(sharded.bytes_per_rank_max == doctest::Approx((2 + 12.0 / 8) * stage0).epsilon(0.001));
  CHECK(sharded.total() == doctest::Approx(replica.total()).scale(0));
}
