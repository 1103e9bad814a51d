#include "models/report/column_reading.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace trainsim;

namespace {

std::vector<std::string> columns(const std::string& name) {
  std::vector<std::string> out;
  for (const model::ColumnReading& r : model::columns_read(name)) out.push_back(r.column);
  return out;
}

}  // namespace

TEST_CASE("a field is looked for under its column name, then its plain name, then in GiB for bytes") {
  CHECK(columns("iteration_time") == std::vector<std::string>{"iteration_time_s", "iteration_time"});
  CHECK(columns("memory_per_gpu") ==
        std::vector<std::string>{"memory_per_gpu_bytes", "memory_per_gpu", "memory_per_gpu_gib"});
  // 1 GiB = 2^30 bytes.
  CHECK(model::columns_read("memory_per_gpu").back().to_si == 1073741824.0);
  CHECK(model::columns_read("memory_per_gpu").front().to_si == 1.0);
  // A fraction's column is its name; a label or unknown name is looked for under itself.
  CHECK(columns("mfu") == std::vector<std::string>{"mfu"});
  CHECK(columns("scenario") == std::vector<std::string>{"scenario"});
  CHECK(columns("no_such_field") == std::vector<std::string>{"no_such_field"});
}

TEST_CASE("a column of any version names its field") {
  REQUIRE(model::schema_of_any_column("iteration_time_s") != nullptr);
  CHECK(model::schema_of_any_column("iteration_time_s")->name == "iteration_time");
  REQUIRE(model::schema_of_any_column("iteration_time") != nullptr);
  CHECK(model::schema_of_any_column("iteration_time")->name == "iteration_time");
  CHECK(model::schema_of_any_column("no_such_column") == nullptr);
}

TEST_CASE("a column's unit is read from its suffix, the older _gib included") {
  REQUIRE(model::read_unit_suffix("wait_s"));
  CHECK(model::read_unit_suffix("wait_s")->unit == model::FieldUnit::seconds);
  CHECK(model::read_unit_suffix("memory_per_gpu_bytes")->unit == model::FieldUnit::bytes);
  CHECK(model::read_unit_suffix("cost_total_usd")->unit == model::FieldUnit::usd);
  REQUIRE(model::read_unit_suffix("memory_per_gpu_gib"));
  CHECK(model::read_unit_suffix("memory_per_gpu_gib")->unit == model::FieldUnit::bytes);
  CHECK(model::read_unit_suffix("memory_per_gpu_gib")->to_si == 1073741824.0);
  CHECK(model::read_unit_suffix("memory_per_gpu_gib")->suffix == "_gib");
  // Units the writer keeps in a name, unitless columns and a bare suffix: none.
  CHECK_FALSE(model::read_unit_suffix("energy_kwh"));
  CHECK_FALSE(model::read_unit_suffix("gpu_hours"));
  CHECK_FALSE(model::read_unit_suffix("mfu"));
  CHECK_FALSE(model::read_unit_suffix("_s"));
}

TEST_CASE("a row's verdict, from files written before and after `feasible` took the memory verdict in") {
  using model::Verdict;
  constexpr double gib = 1073741824.0;
  // Files where `fits` leads: a layout that does not fit says feasible false beside its memory estimate; a
  // refused one has none.
  CHECK(model::read_verdict(true, true, 60 * gib) == Verdict::runs);
  CHECK(model::read_verdict(false, false, 321.6 * gib) == Verdict::does_not_fit);
  CHECK(model::read_verdict(false, false, 0) == Verdict::infeasible);
  CHECK(model::read_verdict(false, true, 60 * gib) == Verdict::infeasible);  // the run, not the memory
  // Files written with feasible true beside fits false.
  CHECK(model::read_verdict(true, false, 321.6 * gib) == Verdict::does_not_fit);
  // Columns missing: what is there decides.
  CHECK(model::read_verdict(std::nullopt, std::nullopt, 0) == Verdict::runs);
  CHECK(model::read_verdict(false, std::nullopt, 0) == Verdict::infeasible);
}
