// The note for a scenario that names no framework while its layout is one Megatron-Core does not run.
#include "scenarios/framework_note.hpp"

#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"

using namespace trainsim::scenario;

namespace {

const std::string base = R"(model: gpt3-125m
cluster: {node: dgx-a100-80gb, nodes: 2}
training: {global_batch: 64}
)";

std::string note_for(const std::string& extra) {
  return unnamed_framework_note(load_scenario_text(base + extra, "t.yaml"));
}

}  // namespace

TEST_CASE(
    "ZeRO 2 or 3 without model parallelism and without a framework block gets a note naming the choice") {
  const std::string zero3 = note_for("parallelism: {zero: 3}\n");
  CHECK(zero3.find("ZeRO-3") != std::string::npos);
  CHECK(zero3.find("framework: fsdp2") != std::string::npos);
  CHECK(note_for("parallelism: {zero: 2}\n").find("ZeRO-2") != std::string::npos);
}

TEST_CASE("no note once the framework is named, for Megatron's own layouts, or with model parallelism") {
  CHECK(note_for("parallelism: {zero: 3}\nframework: fsdp2\n").empty());
  CHECK(note_for("parallelism: {zero: 3}\nframework: megatron-core\n").empty());
  CHECK(note_for("parallelism: {zero: 1}\n").empty());
  CHECK(note_for("parallelism: {zero: 0}\n").empty());
  CHECK(note_for("parallelism: {zero: 3, tp: 2}\n").empty());
  CHECK(note_for("parallelism: {zero: 3, pp: 2}\n").empty());
}
