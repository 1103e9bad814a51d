// The `framework:` and `memory:` blocks: presets, single-flag overrides, errors with locations, and the
// dump -> load round trip.
#include "scenarios/framework_block.hpp"

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "models/step/layout_rules.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

const std::string& base = trainsim::testing::kSmallScenario;

}  // namespace

TEST_CASE("without a framework block the step follows megatron-core's flags and reserves nothing") {
  const Scenario s = load_scenario_text(base, "t.yaml");
  const model::Framework& f = s.parallelism.framework;
  CHECK(f.preset == model::FrameworkPreset::megatron_core);
  CHECK(f.tp_comm_overlap);
  CHECK(f.overlap_param_gather);
  CHECK_FALSE(f.blocking_p2p);
  CHECK(f.prefetch == 1);
  CHECK(f.memory_reserve == 0.0);
  CHECK(s.parallelism.overlap_grad_reduce);
  CHECK_FALSE(f.cuda_graphs);  // Megatron-Core runs eager unless --enable-cuda-graph
  CHECK(f.moe_host_sync);      // its dropless dispatchers read the token counts back
  CHECK(f.expert_launch_s == model::kDriverLaunchOverhead);  // TEGroupedMLP: one GEMM per expert
  CHECK(f.launch_overhead_s == model::kEagerLaunchOverhead);
}

TEST_CASE("a preset by name sets its flags; a mapping overrides them one by one") {
  Scenario s = load_scenario_text(base + "framework: megatron-lm-2021\n", "t.yaml");
  CHECK_FALSE(s.parallelism.framework.tp_comm_overlap);
  CHECK_FALSE(s.parallelism.framework.overlap_param_gather);
  CHECK_FALSE(s.parallelism.overlap_grad_reduce);  // gradients reduced after the backward

  s = load_scenario_text(base + "framework: {preset: deepspeed, prefetch: 2, grad_reduce_dtype: fp32}\n",
                         "t.yaml");
  CHECK(s.parallelism.framework.preset == model::FrameworkPreset::deepspeed);
  CHECK(s.parallelism.framework.gathers_per_layer == 4);
  CHECK(s.parallelism.framework.prefetch == 2);
  CHECK(s.parallelism.framework.grad_reduce_dtype == topo::Precision::fp32);
  CHECK(s.parallelism.framework.launch_overhead_s > model::kEagerLaunchOverhead);  // Megatron-DeepSpeed's

  CHECK_THROWS_WITH_AS((void)load_scenario_text(base + "framework: {launch_overhead: 20}\n", "t.yaml"),
                       doctest::Contains("t.yaml:4:30: framework.launch_overhead:"), InputError);

  // parallelism.overlap_grad_reduce, when given, wins over the preset's.
  s = load_scenario_text(base + "parallelism: {overlap_grad_reduce: true}\nframework: megatron-lm-2021\n",
                         "t.yaml");
  CHECK(s.parallelism.overlap_grad_reduce);

  s = load_scenario_text(base + "framework: {tp_comm_overlap: false}\nmemory: {reserve: 0.05}\n", "t.yaml");
  CHECK(s.parallelism.framework.preset == model::FrameworkPreset::megatron_core);
  CHECK_FALSE(s.parallelism.framework.tp_comm_overlap);
  CHECK(s.parallelism.framework.memory_reserve == doctest::Approx(0.05).scale(0));
}

TEST_CASE("a misspelt preset or flag is an error at its place") {
  const auto load = [](const std::string& text) { (void)load_scenario_text(base + text, "t.yaml"); };
  CHECK_THROWS_WITH_AS(load("framework: megatron-cor\n"), doctest::Contains("t.yaml:4:12: framework:"),
                       InputError);
  CHECK_THROWS_WITH_AS(load("framework: {preset: fsdp2, prefetc: 2}\n"),
                       "t.yaml:4:28: framework.prefetc: unknown key \"prefetc\" (did you mean \"prefetch\"?)",
                       InputError);
  CHECK_THROWS_WITH_AS(load("memory: {reserve: 2}\n"), doctest::Contains("t.yaml:4:19: memory.reserve:"),
                       InputError);
  CHECK_THROWS_WITH_AS(load("parallelism: {dp: 16, shard_group: 3, zero: 3}\n"),
                       doctest::Contains("t.yaml:4:36: parallelism.shard_group: must divide dp (16)"),
                       InputError);
  // HSDP shards within each group: with nothing sharded the key would mean nothing.
  CHECK_THROWS_WITH_AS(load("parallelism: {dp: 16, shard_group: 4, zero: 0}\n"),
                       doctest::Contains("t.yaml:4:36: parallelism.shard_group: applies to ZeRO 1-3"),
                       InputError);
}

TEST_CASE("the host-cost flags refuse a bad value at its key") {
  const auto error = [](const std::string& flags) {
    return std::string(trainsim::testing::errors_of(base + "framework: {" + flags + "}\n").c_str());
  };
  // The value's column: "framework: {" is 12 characters, then the key, ": ", the value.
  CHECK(error("moe_host_sync: 1") ==
        "t.yaml:4:28: framework.moe_host_sync: expected true or false, found \"1\"");
  CHECK(error("expert_launch: \"-1 us\"") ==
        "t.yaml:4:28: framework.expert_launch: must not be negative, found \"-1 us\"");
  CHECK(error("optimizer_tensor_ops: 1001") ==
        "t.yaml:4:35: framework.optimizer_tensor_ops: must be at most 1000, found \"1001\"");
  CHECK(error("optimizer_tensor_ops: 2.5") ==
        "t.yaml:4:35: framework.optimizer_tensor_ops: expected a whole number, found \"2.5\"");
  CHECK(error("moe_host_sync: false, expert_launch: \"10 us\", optimizer_tensor_ops: 8").empty());
}

TEST_CASE("deepspeed-2021 gathers tensor by tensor, synchronously, and its host costs can be overridden") {
  Scenario s = load_scenario_text(base + "framework: deepspeed-2021\n", "t.yaml");
  const model::Framework& f = s.parallelism.framework;
  CHECK(f.gather_per_tensor);
  CHECK(f.synchronous_collectives);
  CHECK(f.prefetch == 0);
  CHECK(f.gather_host_s == doctest::Approx(350e-6).scale(0));
  CHECK(f.collective_host_per_rank_s == doctest::Approx(3e-6).scale(0));
  CHECK_FALSE(s.parallelism.overlap_grad_reduce);

  s = load_scenario_text(base +
                             "framework: {preset: deepspeed-2021, collective_host_per_rank: \"5 us\", "
                             "gather_host: \"0.1 ms\", synchronous_collectives: false}\n",
                         "t.yaml");
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  for (const Scenario* x : std::initializer_list<const Scenario*>{&s, &back}) {
    CHECK(x->parallelism.framework.collective_host_per_rank_s == doctest::Approx(5e-6).scale(0));
    CHECK(x->parallelism.framework.gather_host_s == doctest::Approx(1e-4).scale(0));
    CHECK_FALSE(x->parallelism.framework.synchronous_collectives);
    CHECK(x->parallelism.framework.gather_per_tensor);
  }
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "framework: {collective_host_per_rank: -1}\n", "t.yaml"),
      doctest::Contains("framework.collective_host_per_rank"), InputError);
}

TEST_CASE("a dumped scenario loads back with the same framework flags") {
  const Scenario s = load_scenario_text(
      base +
          "parallelism: {zero: 3, shard_group: 8}\nframework: {preset: fsdp2, prefetch: 2, "
          "reshard_after_forward: false, launch_overhead: \"35 us\", cuda_graphs: true, moe_host_sync: "
          "false, "
          "expert_launch: \"7 us\"}\n"
          "memory: {reserve: 0.03}\n",
      "t.yaml");
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  const model::Framework& a = s.parallelism.framework;
  const model::Framework& b = back.parallelism.framework;
  CHECK(b.preset == a.preset);
  CHECK(b.prefetch == 2);
  CHECK_FALSE(b.reshard_after_forward);
  CHECK(b.grad_reduce_dtype == a.grad_reduce_dtype);
  CHECK(b.memory_reserve == doctest::Approx(0.03).scale(0));
  CHECK(b.launch_overhead_s == doctest::Approx(35e-6).scale(0));
  CHECK(b.cuda_graphs);
  CHECK_FALSE(b.moe_host_sync);
  CHECK(b.expert_launch_s == doctest::Approx(7e-6).scale(0));
  CHECK(back.parallelism.shard_group == 8);
  CHECK(back.parallelism.overlap_grad_reduce == s.parallelism.overlap_grad_reduce);
}

TEST_CASE(
    "llm-foundry: Composer's FSDP around eager MPT ops, gradients reduced in fp32, nothing overlapped") {
  const Scenario s = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {node: dgx-h100, nodes: 1}\n"
      "parallelism: {zero: 3}\ntraining: {global_batch: 64}\nframework: llm-foundry\n",
      "t.yaml");
  const model::Framework& f = s.parallelism.framework;
  CHECK(f.preset == model::FrameworkPreset::llm_foundry);
  CHECK_FALSE(f.tp_comm_overlap);
  CHECK_FALSE(f.overlap_param_gather);
  CHECK_FALSE(f.fused_elementwise);
  CHECK_FALSE(f.cuda_graphs);
  CHECK(f.grad_reduce_dtype == trainsim::topo::Precision::fp32);
  CHECK(f.prefetch == 1);
  CHECK(f.optimizer_tensor_ops == 8);  // DecoupledAdamW: .item() and 8 kernels per tensor
  CHECK(f.gathers_per_layer == 1);
  CHECK(f.reshard_after_forward);
  CHECK(f.unpadded_attention);               // flash_attn_fn's unpad/pad copies
  CHECK(s.parallelism.overlap_grad_reduce);  // FSDP reduce-scatters each unit during the backward
  // The flag alone, over another preset, and its default elsewhere.
  const Scenario o = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {node: dgx-h100, nodes: 1}\n"
      "training: {global_batch: 64}\nframework: {preset: fsdp2, unpadded_attention: true}\n",
      "t.yaml");
  CHECK(o.parallelism.framework.unpadded_attention);
  CHECK_FALSE(o.parallelism.framework.cp_kv_all_gather);
  const Scenario gathered = load_scenario_text(
      "model: {preset: llama3-8b}\ncluster: {node: dgx-h100, nodes: 1}\nparallelism: {cp: 2}\n"
      "training: {global_batch: 64}\nframework: {preset: fsdp2, cp_kv_all_gather: true}\n",
      "t.yaml");
  CHECK(gathered.parallelism.framework.cp_kv_all_gather);
  CHECK_FALSE(model::framework_preset(model::FrameworkPreset::fsdp2).unpadded_attention);
}

TEST_CASE("attention: flash is FlashAttention-2 under torchtitan, the GPU's default under the others") {
  const std::string h100 = R"(model: {preset: llama3-8b, attention: flash}
cluster: {node: dgx-h100, nodes: 1}
training: {global_batch: 64}
)";
  // Megatron-Core runs TransformerEngine's fused attention: `flash` stays the GPU's default (cuDNN on H100);
  // FSDP2 and DeepSpeed wrap a model without choosing its attention.
  CHECK(load_scenario_text(h100, "t.yaml").model.attention == model::Attention::flash);
  for (const char* preset : {"fsdp2", "deepspeed", "nemo"}) {
    CAPTURE(preset);
    CHECK(load_scenario_text(h100 + "framework: " + preset + "\n", "t.yaml").model.attention ==
          model::Attention::flash);
  }
  // torchtitan's models call PyTorch's scaled_dot_product_attention, llm-foundry's MPT the flash-attn
  // package: FlashAttention-2 both.
  CHECK(load_scenario_text(h100 + "framework: torchtitan\n", "t.yaml").model.attention ==
        model::Attention::flash2);
  CHECK(load_scenario_text(h100 + "framework: llm-foundry\n", "t.yaml").model.attention ==
        model::Attention::flash2);
  // A kernel named outright is kept whatever the framework.
  const Scenario named = load_scenario_text(
      "model: {preset: llama3-8b, attention: cudnn}\ncluster: {node: dgx-h100, nodes: 1}\n"
      "training: {global_batch: 64}\nframework: torchtitan\n",
      "t.yaml");
  CHECK(named.model.attention == model::Attention::cudnn);
}

namespace {

// Mixtral 8x7B on two DGX H100 nodes, its parallelism on line 4; with ep 8, the framework block follows on
// line 5.
const std::string kMixtral = R"(model: {preset: mixtral-8x7b}
cluster: {node: dgx-h100, nodes: 2}
training: {global_batch: 64}
)";
const std::string kMixtralEp8 = kMixtral + "parallelism: {ep: 8}\n";

}  // namespace

TEST_CASE("moe_dispatcher: alltoall by default, allgather by name, dumped and loaded back, errors placed") {
  const std::string& mixtral = kMixtral;
  const Scenario plain = load_scenario_text(mixtral, "t.yaml");
  CHECK(plain.parallelism.framework.moe_dispatcher == model::MoeDispatcher::all_to_all);
  const Scenario s = load_scenario_text(
      mixtral +
          "parallelism: {tp: 2, sequence_parallel: true, ep: 8}\nframework: {moe_dispatcher: allgather}\n",
      "t.yaml");
  CHECK(s.parallelism.framework.moe_dispatcher == model::MoeDispatcher::all_gather);
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK(back.parallelism.framework.moe_dispatcher == model::MoeDispatcher::all_gather);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(mixtral + "framework: {moe_dispatcher: all-gather}\n", "t.yaml"),
      doctest::Contains("t.yaml:4:29: framework.moe_dispatcher:"), InputError);
  // Under tp without sequence parallelism each tp rank would dispatch the same tokens: refused at the key.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(
          mixtral + "parallelism: {tp: 2, ep: 8}\nframework: {moe_dispatcher: allgather}\n", "t.yaml"),
      doctest::Contains("t.yaml:5:29: framework.moe_dispatcher: allgather with tp 2 needs "
                        "parallelism.sequence_parallel: true"),
      InputError);
  // Megatron-Core overlaps the alltoall and flex dispatchers' all-to-alls only: refused at the dispatcher.
  CHECK_THROWS_WITH_AS((void)load_scenario_text(mixtral + "parallelism: {ep: 8}\nframework: {moe_dispatcher: "
                                                          "allgather, ep_comm_overlap: true}\n",
                                                "t.yaml"),
                       doctest::Contains("t.yaml:5:29: framework.moe_dispatcher: allgather does not run with "
                                         "framework.ep_comm_overlap: true"),
                       InputError);
}

TEST_CASE("moe_dispatcher_sms: the flex backend's default or the count given, dumped back, below the GPU's") {
  const std::string& mixtral = kMixtralEp8;
  const auto sms = [&](const std::string& framework) {
    return model::flex_dispatcher_sms(
        load_scenario_text(mixtral + framework, "t.yaml").parallelism.framework);
  };
  CHECK(sms("framework: {moe_dispatcher: alltoall}\n") == 0);
  CHECK(sms("framework: {moe_dispatcher: deepep}\n") == 20);
  CHECK(sms("framework: {moe_dispatcher: hybridep}\n") == 16);
  CHECK(sms("framework: {moe_dispatcher: hybridep, moe_dispatcher_sms: 64}\n") == 64);
  const Scenario s =
      load_scenario_text(mixtral + "framework: {moe_dispatcher: deepep, moe_dispatcher_sms: 24}\n", "t.yaml");
  CHECK(load_scenario_text(dump_scenario(s), "t.yaml").parallelism.framework.moe_dispatcher_sms == 24);
  // The NCCL dispatchers hold no SMs of their own to name.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(mixtral + "framework: {moe_dispatcher: alltoall, moe_dispatcher_sms: 24}\n",
                               "t.yaml"),
      doctest::Contains("framework.moe_dispatcher_sms: applies to the flex dispatcher's backends"),
      InputError);
  // An H100 has 132 SMs: a dispatcher holding all of them leaves none to the kernels beside it.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(mixtral + "framework: {moe_dispatcher: deepep, moe_dispatcher_sms: 132}\n",
                               "t.yaml"),
      doctest::Contains("t.yaml:5:57: framework.moe_dispatcher_sms: deepep holds 132 SMs, but the GPU "
                        "h100-sxm has 132: expected fewer"),
      InputError);
}

TEST_CASE("delay_wgrad_compute: off by default, read, dumped back, and only with ep_comm_overlap") {
  const std::string& mixtral = kMixtralEp8;
  CHECK_FALSE(load_scenario_text(mixtral, "t.yaml").parallelism.framework.delay_wgrad_compute);
  const Scenario s = load_scenario_text(
      mixtral + "framework: {ep_comm_overlap: true, delay_wgrad_compute: true}\n", "t.yaml");
  CHECK(s.parallelism.framework.delay_wgrad_compute);
  CHECK(load_scenario_text(dump_scenario(s), "t.yaml").parallelism.framework.delay_wgrad_compute);
  // Megatron-Core merges layers only in 1f1b and interleaved schedules; zero-bubble runs the weight gradients
  // as passes of their own.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(kMixtral + "parallelism: {ep: 8, pp: 2, schedule: zero-bubble-h1}\n"
                                          "framework: {ep_comm_overlap: true, delay_wgrad_compute: true}\n",
                               "t.yaml"),
      doctest::Contains("framework.delay_wgrad_compute: needs the 1f1b or interleaved schedule, found "
                        "zero-bubble-h1"),
      InputError);
  // The schedule rule is a layout rule: a sweep over schedules loads, and its zero-bubble point is the
  // sweep's infeasible row; the search and step plan apply the same rule.
  const Scenario swept = load_scenario_text(
      kMixtral +
          "parallelism: {ep: 8, pp: 2}\nframework: {ep_comm_overlap: true, delay_wgrad_compute: true}\n"
          "sweep: {parallelism.schedule: [1f1b, zero-bubble-h1]}\n",
      "t.yaml");
  model::ParallelPlan zero_bubble = swept.parallelism;
  zero_bubble.schedule = model::Schedule::zero_bubble_h1;
  const auto problems = model::layout_rules(swept.model, zero_bubble, swept.training, 16);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].key == model::LayoutKey::delay_wgrad_compute);
  CHECK(model::layout_rules(swept.model, swept.parallelism, swept.training, 16).empty());
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(mixtral + "framework: {delay_wgrad_compute: true}\n", "t.yaml"),
      doctest::Contains("t.yaml:5:34: framework.delay_wgrad_compute: needs framework.ep_comm_overlap: true"),
      InputError);
}

TEST_CASE("fused_grouped_mlp: off by default, read, dumped back, and only on a MoE model in fp8") {
  const std::string fp8_mixtral = R"(model: {preset: mixtral-8x7b}
cluster: {node: dgx-h100, nodes: 2}
training: {global_batch: 64, precision: fp8}
)";
  const std::string ep8 = "parallelism: {ep: 8}\n";
  CHECK_FALSE(load_scenario_text(fp8_mixtral + ep8, "t.yaml").parallelism.framework.fused_grouped_mlp);
  const Scenario s =
      load_scenario_text(fp8_mixtral + ep8 + "framework: {fused_grouped_mlp: true}\n", "t.yaml");
  CHECK(s.parallelism.framework.fused_grouped_mlp);
  CHECK(load_scenario_text(dump_scenario(s), "t.yaml").parallelism.framework.fused_grouped_mlp);
  // Its kernels are MXFP8 grouped GEMMs: bf16 training is refused at the key.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(kMixtralEp8 + "framework: {fused_grouped_mlp: true}\n", "t.yaml"),
      doctest::Contains("t.yaml:5:32: framework.fused_grouped_mlp: needs training.precision: fp8"),
      InputError);
  // A dense model has no grouped GEMMs to fuse.
  CHECK_THROWS_WITH_AS((void)load_scenario_text(base + "framework: {fused_grouped_mlp: true}\n", "t.yaml"),
                       doctest::Contains("framework.fused_grouped_mlp: needs a mixture-of-experts model"),
                       InputError);
  // The activation has no pass of its own to recompute.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(fp8_mixtral + "framework: {fused_grouped_mlp: true}\n" +
                                   "parallelism: {ep: 8, recompute: {modules: [moe_act]}}\n",
                               "t.yaml"),
      doctest::Contains("framework.fused_grouped_mlp: runs the activation inside fc1's GEMM"), InputError);
  // Nor one of its own to offload.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(fp8_mixtral + "framework: {fused_grouped_mlp: true}\n" +
                                   "parallelism: {ep: 8, offload: {modules: [moe_act]}}\n",
                               "t.yaml"),
      doctest::Contains("framework.fused_grouped_mlp: runs the activation inside fc1's GEMM"), InputError);
}

TEST_CASE("deepep needs tp·ep > 1, as Megatron-Core's flex dispatcher asserts; hybridep does not") {
  CHECK_THROWS_WITH_AS((void)load_scenario_text(kMixtral + "framework: {moe_dispatcher: deepep}\n", "t.yaml"),
                       doctest::Contains("framework.moe_dispatcher: deepep needs tp·ep > 1"), InputError);
  CHECK(load_scenario_text(kMixtralEp8 + "framework: {moe_dispatcher: deepep}\n", "t.yaml").parallelism.ep ==
        8);
  CHECK(load_scenario_text(kMixtral + "framework: {moe_dispatcher: hybridep}\n", "t.yaml").parallelism.ep ==
        1);
}
