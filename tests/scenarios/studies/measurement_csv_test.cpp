#include "scenarios/studies/measurement_csv.hpp"

#include <doctest/doctest.h>

#include <fstream>

#include "sim/error.hpp"

using namespace trainsim::model;

TEST_CASE("a CSV record splits on commas outside quotes and unescapes doubled quotes") {
  const auto f = split_csv_record(R"(a,"b, c","say ""hi""",,d)", "m.csv", 1);
  REQUIRE(f.size() == 5);
  CHECK(f[1] == "b, c");
  CHECK(f[2] == R"(say "hi")");
  CHECK(f[3].empty());
}

TEST_CASE("a line that is not CSV is refused at its line and column, not split silently") {
  // The quote at column 3 sits inside an unquoted cell; the second line's quoted cell never closes.
  CHECK_THROWS_WITH_AS(split_csv_record(R"(ab"c,d)", "m.csv", 4),
                       doctest::Contains("m.csv:4:3: a double quote inside a cell"), trainsim::InputError);
  CHECK_THROWS_WITH_AS(split_csv_record(R"(a,"b)", "m.csv", 5),
                       doctest::Contains("m.csv:5:5: a quoted cell is not closed on its line"),
                       trainsim::InputError);
}

TEST_CASE("a vTrain multi-node row becomes an iteration time in seconds with the data set's setup") {
  const std::string csv =
      "Parameters (billion),# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
      "sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n"
      "3.6,64,512,8,3072,32,30,2048,1,64,1,3566.5\r\n\n";
  const auto rows = parse_measurements_csv(csv, "dir/ground_truth_multi.csv");
  REQUIRE(rows.size() == 1);
  const Measurement& m = rows[0];
  CHECK(m.id == "ground_truth_multi-1");
  CHECK(m.gpus == 64);
  CHECK(m.training.global_batch == 512);
  CHECK(m.plan.micro_batch == 8);
  CHECK(m.model.hidden == 3072);
  CHECK(m.model.heads == 32);
  CHECK(m.model.layers == 30);
  CHECK(m.model.seq_len == 2048);
  CHECK(m.model.ffn_hidden == 4 * 3072);
  CHECK(m.model.vocab == 51200);
  CHECK(m.plan.tp == 1);
  CHECK(m.plan.dp == 64);
  CHECK(m.plan.pp == 1);
  CHECK(m.plan.recompute == Recompute::full);
  CHECK(m.training.precision == Precision::fp16);
  CHECK(m.model.attention == Attention::standard);
  CHECK(m.metric == "iteration_time");
  CHECK(m.value == doctest::Approx(3.5665).scale(0));
}

TEST_CASE("the published format keeps whole-step rows, converts percentages and skips the rest") {
  const std::string csv =
      "id,source,model_name,params_b,layers,hidden,heads,ffn_hidden,seq_len,vocab,gpus,gpu_type,tp,pp,dp,cp,"
      "interleave_chunks,micro_batch,global_batch,recompute,zero_stage,metric,value,notes\n"
      "KOR22-T5-2b,\"Korthikanti, 2022\",175B "
      "(GPT-3),175,96,12288,96,49152,2048,51200,64,A100-SXM4-80GB,8,8,1,,3,"
      "1,64,selective+SP,,iteration_s,13.75,\"note, with comma\"\n"
      "KOR22-T5-2c,K,175B "
      "(GPT-3),175,96,12288,96,49152,2048,51200,64,A100-SXM4-80GB,8,8,1,,3,1,64,selective+SP,,"
      "mfu_pct,51.4,n\n"
      "NCCL-A100-1,N,,,,,,,,,8,A100-SXM4,,,,,,,,,,busbw_gbps,235,n\n"
      "KOR22-T4-1a,K,22B,22,48,6144,64,24576,2048,51200,8,A100-SXM4-80GB,8,1,1,,,4,4,none,,layer_fwd_ms,7.7,"
      "n\n";
  const auto rows = parse_measurements_csv(csv, "m.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].id == "KOR22-T5-2b");
  CHECK(rows[0].source == "Korthikanti, 2022");
  CHECK(rows[0].plan.schedule == Schedule::interleaved);
  CHECK(rows[0].plan.virtual_stages == 3);
  CHECK(rows[0].plan.sequence_parallel);
  CHECK(rows[0].plan.recompute == Recompute::selective);
  CHECK(rows[0].value == doctest::Approx(13.75).scale(0));
  CHECK(rows[1].metric == "mfu");
  CHECK(rows[1].value == doctest::Approx(0.514).scale(0));
}

TEST_CASE("an unknown header and a malformed number are refused with the file and line") {
  CHECK_THROWS_WITH_AS((void)parse_measurements_csv("a,b,c\n1,2,3\n", "x.csv"), doctest::Contains("x.csv:1"),
                       trainsim::InputError);
  const std::string bad =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
      "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n"
      "2,16,8,1024,16,24,1024,1,1,2,fast\n";
  CHECK_THROWS_WITH_AS((void)parse_measurements_csv(bad, "s.csv"), doctest::Contains("s.csv:2"),
                       trainsim::InputError);
  // The columns are read by position: pipeline before tensor parallelism keeps the GPU product of every
  // row, so only the header tells, and it is refused.
  const std::string swapped =
      "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
      "pipeline parallelism,data parallelism,tensor parallelism,iteration time (ms)\n"
      "8,16,1,2048,16,4,2048,1,2,4,128\n";
  CHECK_THROWS_WITH_AS((void)parse_measurements_csv(swapped, "p.csv"),
                       doctest::Contains("p.csv:1: column 8 is \"pipeline parallelism\", expected \"tensor "
                                         "parallelism\""),
                       trainsim::InputError);
}

TEST_CASE("the shipped vTrain and published files parse completely") {
  const std::string shared = std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/";
  if (!std::ifstream(shared + "published-measurements.csv")) return;  // outside the development tree
  CHECK(read_measurements_csv(shared + "vtrain/ground_truth_single.csv").size() == 1440);
  CHECK(read_measurements_csv(shared + "vtrain/ground_truth_multi.csv").size() == 109);
  // Korthikanti Table 5 + Sec 6.3 (16 + 3 rows of iteration/MFU/HFU) and Megatron-LM 2020 (12 iteration
  // times) describe whole steps; the other rows are collectives, specifications or per-layer times.
  CHECK(read_measurements_csv(shared + "published-measurements.csv").size() == 31);
}
