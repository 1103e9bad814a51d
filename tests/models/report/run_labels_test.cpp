// A run's labels come first in its summary, and a tag may not take the name of a built-in column.
#include "models/report/run_labels.hpp"

#include <doctest/doctest.h>

using namespace trainsim;

TEST_CASE("a run's labels are the scenario, the fidelity, then the tags in their order") {
  const model::Labels labels = model::run_labels("s", "analytic", {{"team", "llm"}, {"project", "x"}});
  const model::Labels expected = {
      {"scenario", "s"}, {"fidelity", "analytic"}, {"team", "llm"}, {"project", "x"}};
  CHECK(labels == expected);
}

TEST_CASE("a tag named like a built-in column clashes with that column, named as summary.json writes it") {
  // The two fixed labels.
  CHECK(model::tag_column_clash("scenario") == "scenario");
  CHECK(model::tag_column_clash("fidelity") == "fidelity");
  // A field by its name: a count keeps it, seconds gain _s, dollars _usd (SPEC "Outputs").
  CHECK(model::tag_column_clash("steps") == "steps");
  CHECK(model::tag_column_clash("iteration_time") == "iteration_time_s");
  CHECK(model::tag_column_clash("cost_total") == "cost_total_usd");
  // ...or by its column name, text and flag fields included.
  CHECK(model::tag_column_clash("cost_total_usd") == "cost_total_usd");
  CHECK(model::tag_column_clash("memory_per_gpu_bytes") == "memory_per_gpu_bytes");
  CHECK(model::tag_column_clash("region") == "region");
  CHECK(model::tag_column_clash("fits") == "fits");
  // Fields of the optional groups clash even when the scenario has no such block.
  CHECK(model::tag_column_clash("tuning_time") == "tuning_time_s");
  CHECK(model::tag_column_clash("cost_fixed_idle_usd") == "cost_fixed_idle_usd");
  // Alert k's fields, whatever k.
  CHECK(model::tag_column_clash("budget_alert_12_cost_usd") == "budget_alert_12_cost_usd");
  // Free names stay free; the comparison is exact.
  for (const char* free : {"team", "project", "model", "tags", "Steps", "steps_", "cost", "budget"}) {
    CAPTURE(free);
    CHECK_FALSE(model::tag_column_clash(free).has_value());
  }
}
