// Presets: every shipped file loads, names are looked up with a did-you-mean, TRAINSIM_PATH adds folders,
// and the published parameter counts come out of model::parameter_count.
#include "scenarios/presets.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "models/workload/parameters.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

TEST_CASE("every shipped preset loads and the interface names are all there") {
  for (const char* name : {"v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm", "h200-sxm",
                           "b200", "mi300x", "l40s"}) {
    CHECK(gpu_preset(name).name == name);
  }
  for (const char* name : {"dgx-v100", "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "hgx-h200", "dgx-b200",
                           "mi300x-8", "pcie-l40s-8"}) {
    CHECK(node_preset(name).gpus_per_node == 8);
  }
  for (const auto& name : model_preset_names()) CHECK_NOTHROW((void)model_preset(name));
  CHECK(model_preset_names().size() >= 28);
}

TEST_CASE("DGX A100 80GB and DGX H100 carry the datasheet numbers") {
  const topo::NodeSpec a = node_preset("dgx-a100-80gb");
  CHECK(a.gpu.name == "a100-sxm4-80gb");
  CHECK(a.gpu.peak.bf16 == 312e12);
  CHECK(a.gpu.hbm_bytes == 80.0 * 1024 * 1024 * 1024);
  CHECK(a.intra_bytes_per_s == 300e9);
  CHECK(a.nics_per_node == 8);
  CHECK(a.nic_bytes_per_s == 25e9);  // 200 Gb/s
  const topo::NodeSpec h = node_preset("dgx-h100");
  CHECK(h.intra_bytes_per_s == 450e9);
  CHECK(h.nic_bytes_per_s == 50e9);  // 400 Gb/s
  CHECK(h.gpu.tdp_w == 700);
}

TEST_CASE("the Korthikanti configurations are shipped as published") {
  const auto m22 = model_preset("megatron-22b");
  CHECK((m22.layers == 48 && m22.hidden == 6144 && m22.heads == 64));
  const auto m530 = model_preset("megatron-530b");
  CHECK((m530.layers == 105 && m530.hidden == 20480 && m530.heads == 128 && m530.vocab == 51200));
  const auto m1t = model_preset("megatron-1t");
  CHECK((m1t.layers == 128 && m1t.hidden == 25600 && m1t.heads == 160 && m1t.seq_len == 2048));
}

TEST_CASE("published parameter counts come out of model::parameter_count") {
  // GPT-3 175B: 174.6B (Narayanan et al. 2021, Table 1); Llama 3: 8.03B, 70.6B, 405.9B (model cards).
  CHECK(model::parameter_count(model_preset("gpt3-175b")) / 1e9 == doctest::Approx(174.6).epsilon(0.001));
  CHECK(model::parameter_count(model_preset("llama3-8b")) / 1e9 == doctest::Approx(8.03).epsilon(0.001));
  CHECK(model::parameter_count(model_preset("llama3-70b")) / 1e9 == doctest::Approx(70.6).epsilon(0.001));
  CHECK(model::parameter_count(model_preset("llama3-405b")) / 1e9 == doctest::Approx(405.9).epsilon(0.001));
  // Mixtral 8x7B: 46.7B total (Jiang et al. 2024).
  CHECK(model::parameter_count(model_preset("mixtral-8x7b")) / 1e9 == doctest::Approx(46.7).epsilon(0.002));
}

TEST_CASE("an unknown preset name suggests the closest and lists the names") {
  try {
    (void)gpu_preset("h100-sxm5");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("unknown GPU preset \"h100-sxm5\" (did you mean \"h100-sxm\"?); known: a100-sxm4-40gb, ",
                     0) == 0);
  }
  CHECK_THROWS_AS((void)model_preset("../../etc/passwd"), InputError);
}

TEST_CASE("TRAINSIM_PATH folders add presets; one that a shipped preset would hide is an error") {
  const trainsim::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  std::filesystem::create_directories(dir / "models");
  std::ofstream(dir / "models" / "tiny-test.yaml")
      << "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 32\n";
  std::ofstream(dir / "models" / "gpt3-125m.yaml")
      << "layers: 1\nhidden: 8\nheads: 1\nvocab: 1\nseq_len: 1\n";
  ::setenv("TRAINSIM_PATH", ("/nonexistent:" + dir.string()).c_str(), 1);
  const model::TransformerSpec tiny = model_preset("tiny-test");
  CHECK(tiny.name == "tiny-test");
  CHECK(tiny.hidden == 64);
  // The shipped gpt3-125m is found first: the user's file of that name would be silently unused.
  const std::string hidden =
      (dir / "models" / "gpt3-125m.yaml").string() + " has the name of the model preset";
  CHECK_THROWS_WITH_AS((void)model_preset("gpt3-125m"), doctest::Contains(hidden.c_str()), InputError);
  // A name whose entry is not a file is said so, not called unknown with itself as the suggestion.
  std::filesystem::create_directories(dir / "models" / "a-folder.yaml");
  CHECK_THROWS_WITH_AS((void)model_preset("a-folder"),
                       doctest::Contains("a-folder.yaml is not a readable file"), InputError);
  ::unsetenv("TRAINSIM_PATH");
}

TEST_CASE("a preset library reads each file once; a new library reads it again, edited") {
  const trainsim::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  std::filesystem::create_directories(dir / "models");
  const auto file = dir / "models" / "edited-test.yaml";
  std::ofstream(file) << "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 32\n";
  ::setenv("TRAINSIM_PATH", dir.string().c_str(), 1);
  PresetLibrary first;
  CHECK(first.model("edited-test").layers == 2);
  std::ofstream(file) << "layers: 3\nhidden: 64\nheads: 4\nvocab: 100\nseq_len: 32\n";
  CHECK(first.model("edited-test").layers == 2);  // read once, for this owner's loads
  PresetLibrary second;
  CHECK(second.model("edited-test").layers == 3);  // no cache outlives its owner
  CHECK(model_preset("edited-test").layers == 3);
  // A preset deriving from itself stops at the depth limit, whichever library reads it.
  std::ofstream(dir / "models" / "loop-test.yaml") << "preset: loop-test\n";
  CHECK_THROWS_WITH_AS((void)second.model("loop-test"), doctest::Contains("levels deep (a cycle?)"),
                       InputError);
  ::unsetenv("TRAINSIM_PATH");
}
