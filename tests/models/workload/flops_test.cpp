// FLOP counts against Korthikanti et al. 2022 (arXiv:2205.05198) eq. (7), Narayanan et al. 2021
// (arXiv:2104.04473) eq. for full recompute, and the 6·N·tokens rule of thumb (Kaplan et al. 2020).
#include "models/workload/flops.hpp"

#include <doctest/doctest.h>

#include "models/workload/parameters.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

// GPT-3 175B as trained in Korthikanti et al. 2022 (s 2048, vocab padded to 51200), standard attention.
TransformerSpec gpt3_korthikanti() {
  return trainsim::testing::gpt3_175b(Attention::standard);
}

double eq7(double batch, double l, double s, double h, double v) {
  return 72.0 * batch * l * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * l));
}

}  // namespace

TEST_CASE("model FLOPs per step equal Korthikanti eq. (7) for GPT-3 175B") {
  const TransformerSpec s = gpt3_korthikanti();
  CHECK(model_flops_per_step(s, 1536) == doctest::Approx(eq7(1536, 96, 2048, 12288, 51200)).epsilon(1e-12));
}

TEST_CASE("model FLOPs equal Korthikanti eq. (7) for the 22B, 530B and 1T models of Table 3") {
  struct Case {
    std::int64_t l, h, a;
  };
  for (const Case c : {Case{48, 6144, 64}, Case{105, 20480, 128}, Case{128, 25600, 160}}) {
    TransformerSpec s = gpt3_korthikanti();
    s.layers = c.l;
    s.hidden = c.h;
    s.heads = c.a;
    CHECK(model_flops_per_step(s, 8) ==
          doctest::Approx(eq7(8, static_cast<double>(c.l), 2048, static_cast<double>(c.h), 51200))
              .scale(0)
              .epsilon(1e-12));
  }
}

TEST_CASE("6·N·tokens matches model FLOPs once the attention term 12·L·s·h per token is added") {
  // 6N counts every weight once (the tied embedding stands for the LM head); model FLOPs add the
  // attention scores and context, 12·L·s·h per token. What remains (biases, norms, positions) is tiny.
  const TransformerSpec s = gpt3_korthikanti();
  const double tokens = 1536.0 * 2048.0;
  const double six_n = 6.0 * parameter_count(s) * tokens;
  const double attention = 12.0 * 96.0 * 2048.0 * 12288.0 * tokens;
  const double model = model_flops_per_step(s, 1536);
  CHECK(model == doctest::Approx(six_n + attention).epsilon(1e-3));
  CHECK(model > six_n * 1.02);  // without the attention term 6N underestimates by about 2.8% here
}

TEST_CASE("per-part forward FLOPs follow the GPT layer formula 24·s·h² + 4·s²·h") {
  const ForwardFlops f = forward_flops_per_sequence(gpt3_korthikanti());
  const double s = 2048, h = 12288;
  CHECK(f.layer_dense == 24.0 * s * h * h);
  CHECK(f.layer_attention == 4.0 * s * s * h);
  CHECK(f.head == 2.0 * s * h * 51200.0);
  CHECK(model_flops_per_token(gpt3_korthikanti()) == doctest::Approx(3.0 * f.total() / s).epsilon(1e-15));
}

TEST_CASE("grouped-query attention and swiglu change the projections, not the attention term") {
  // Llama-3 8B: QKV 2·s·h·(h + 2·1024), out 2·s·h², MLP 2·s·h·14336·3, attention 4·s²·h.
  const TransformerSpec s = trainsim::testing::llama3_8b();
  const ForwardFlops f = forward_flops_per_sequence(s);
  const double n = 8192, h = 4096;
  CHECK(f.layer_dense == 2 * n * h * (h + 2048) + 2 * n * h * h + 2 * n * h * 14336 * 3);
  CHECK(f.layer_attention == 4 * n * n * h);
}

TEST_CASE("full recompute adds one forward of every layer: Narayanan's 96·B·L·s·h²(1 + s/6h + v/16hL)") {
  const TransformerSpec s = gpt3_korthikanti();
  const double expected =
      96.0 * 64 * 96 * 2048 * 12288.0 * 12288 * (1.0 + 2048 / (6.0 * 12288) + 51200 / (16.0 * 12288 * 96));
  CHECK(hardware_flops_per_step(s, 64, Recompute::full) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("selective recompute adds the attention forward 4·s²·h per layer under the standard kernel") {
  const TransformerSpec s = gpt3_korthikanti();
  const double extra = 4.0 * 2048 * 2048 * 12288 * 96 * 64;
  CHECK(hardware_flops_per_step(s, 64, Recompute::selective) - model_flops_per_step(s, 64) ==
        doctest::Approx(extra).epsilon(1e-9));
  CHECK(hardware_flops_per_step(s, 64, Recompute::none) == model_flops_per_step(s, 64));
}

TEST_CASE("Korthikanti eq. (8) reproduces the paper's HFU/MFU ratio for 175B and 22B") {
  // Table 5: 175B MFU 51.4%, HFU 52.8%; 22B MFU 41.5%, HFU 43.7% (ratios of rounded percentages).
  const TransformerSpec s175 = gpt3_korthikanti();
  CHECK(korthikanti_selective_hardware_flops(s175, 1) / model_flops_per_step(s175, 1) ==
        doctest::Approx(52.8 / 51.4).epsilon(0.002));
  TransformerSpec s22 = s175;
  s22.layers = 48;
  s22.hidden = 6144;
  s22.heads = 64;
  CHECK(korthikanti_selective_hardware_flops(s22, 1) / model_flops_per_step(s22, 1) ==
        doctest::Approx(43.7 / 41.5).epsilon(0.002));
}

TEST_CASE("flash attention hardware FLOPs exceed model FLOPs by the recomputed score matmuls 2·s²·h") {
  TransformerSpec s = gpt3_korthikanti();
  s.attention = Attention::flash;
  const double scores = 2.0 * 2048 * 2048 * 12288 * 96;  // per sequence, all layers
  CHECK(hardware_flops_per_step(s, 8, Recompute::none) - model_flops_per_step(s, 8) ==
        doctest::Approx(8 * scores).epsilon(1e-9));
  // Selective recompute has no score tensor to drop under flash: nothing more is recomputed.
  CHECK(hardware_flops_per_step(s, 8, Recompute::selective) ==
        hardware_flops_per_step(s, 8, Recompute::none));
  // Model FLOPs do not depend on the kernel.
  CHECK(model_flops_per_step(s, 8) == model_flops_per_step(gpt3_korthikanti(), 8));
}

TEST_CASE("mixture of experts counts top_k experts and the router in model FLOPs") {
  TransformerSpec s;
  s.layers = 1;
  s.hidden = 1024;
  s.heads = 8;
  s.ffn_hidden = 4096;
  s.vocab = 1000;
  s.seq_len = 100;
  s.experts = 8;
  s.top_k = 2;
  const double dense_mlp = 2.0 * 100 * 1024 * 4096 * 2;
  const ForwardFlops f = forward_flops_per_sequence(s);
  CHECK(f.layer_dense ==
        2.0 * 100 * 1024 * 3 * 1024 + 2.0 * 100 * 1024 * 1024 + 2 * dense_mlp + 2.0 * 100 * 1024 * 8);
}

TEST_CASE("a generic model's step FLOPs are three forwards per sample") {
  TransformerSpec s;
  s.generic_layers = {{"a", 10, 1e9, 0}, {"b", 10, 2e9, 0}};
  CHECK(model_flops_per_step(s, 4) == 3.0 * 3e9 * 4);
  CHECK(model_flops_per_token(s) == 9e9);
  CHECK(hardware_flops_per_step(s, 4, Recompute::full) == 4.0 * 3e9 * 4);
}
