#include "models/report/summary.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

using namespace trainsim;

TEST_CASE("the summary uses the SPEC field names and CSV columns carry their units") {
  model::StepReport step;
  step.iteration_time = 13.75;
  step.memory_per_gpu = 64.0 * 1024 * 1024 * 1024;
  model::RunReport run;
  run.cost_total = 4.5e6;
  const auto s = model::summarize({{"scenario", "gpt3"}, {"team", "llm"}}, step, &run);
  CHECK(s.number("iteration_time") == doctest::Approx(13.75).scale(0));
  const std::string header = model::csv_header(s);
  CHECK(header.rfind("scenario,team,feasible,reason,", 0) == 0);
  CHECK(header.find(",iteration_time_s,") != std::string::npos);
  CHECK(header.find(",memory_per_gpu_gib,") != std::string::npos);
  CHECK(header.find(",cost_total_usd,") != std::string::npos);
  const std::string row = model::csv_row(s);
  CHECK(row.find(",13.75,") != std::string::npos);
  CHECK(row.find(",64,") != std::string::npos);  // GiB in CSV
}

TEST_CASE("summary JSON is valid, in SI units, with booleans for flags") {
  model::StepReport step;
  step.memory_per_gpu = 1e9;
  const auto j = nlohmann::json::parse(model::to_json(model::summarize({}, step, nullptr)));
  CHECK(j["memory_per_gpu"].get<double>() == 1e9);
  CHECK(j["fits"].get<bool>());
  CHECK_FALSE(j.contains("cost_total"));  // no run simulated
}

TEST_CASE("human units read like a person would write them") {
  using model::FieldUnit;
  CHECK(model::format_human(FieldUnit::seconds, 13.75) == "13.8 s");
  CHECK(model::format_human(FieldUnit::seconds, 30 * 86400.0) == "30.0 d");
  CHECK(model::format_human(FieldUnit::bytes, 80.0 * 1024 * 1024 * 1024) == "80.0 GiB");
  CHECK(model::format_human(FieldUnit::usd, 4.5e6) == "$4.50M");
  CHECK(model::format_human(FieldUnit::fraction, 0.415) == "41.5 %");
  CHECK(model::format_human(FieldUnit::seconds, 0.5) == "500.00 ms");
  CHECK(model::format_human(FieldUnit::seconds, 5400) == "90.0 min");
  CHECK(model::format_human(FieldUnit::bytes, 512) == "512 B");
  CHECK(model::format_human(FieldUnit::usd, 8.84e-7) == "$8.84e-07");  // a price per token
  CHECK(model::format_human(FieldUnit::usd, 250172) == "$250.2k");
  CHECK(model::format_human(FieldUnit::count, 476838) == "476.8K");
  CHECK(model::format_human(FieldUnit::count, 2e12) == "2.00T");
  // Rates, FLOPs, energy and mass take SI prefixes, never an exponent: 12,380 tokens/s is 12.38 k/s.
  CHECK(model::format_human(FieldUnit::per_second, 12380) == "12.38 k/s");
  CHECK(model::format_human(FieldUnit::per_second, 1.8977e6) == "1.898 M/s");
  CHECK(model::format_human(FieldUnit::per_second, 0.5) == "0.5 /s");
  CHECK(model::format_human(FieldUnit::flops, 1.7689e19) == "17.7 EFLOP");
  CHECK(model::format_human(FieldUnit::kwh, 52530) == "52.53 MWh");
  CHECK(model::format_human(FieldUnit::kg, 15760) == "15.76 t");
}

TEST_CASE("the display unit of a magnitude is the one format_human writes it in") {
  using model::FieldUnit;
  const auto days = model::human_scale(FieldUnit::seconds, 30 * 86400.0);
  CHECK(days.divisor == 86400);
  CHECK(std::string(days.suffix) == " d");
  const auto millions = model::human_scale(FieldUnit::usd, 4.5e6);
  CHECK(millions.divisor == 1e6);
  CHECK(std::string(millions.prefix) + std::string(millions.suffix) == "$M");
  CHECK(model::human_scale(FieldUnit::bytes, 80.0 * 1024 * 1024 * 1024).divisor == 1024.0 * 1024 * 1024);
  CHECK(model::human_scale(FieldUnit::fraction, 0.5).divisor == 0.01);
}

TEST_CASE("a field's unit and group are known by its name, for readers of summary.json and sweeps") {
  using model::FieldUnit;
  REQUIRE(model::field_schema("run_time") != nullptr);
  CHECK(model::field_schema("run_time")->unit == FieldUnit::seconds);
  CHECK(model::field_schema("run_time")->group == "run");
  CHECK(model::field_schema("memory_capacity")->unit == FieldUnit::bytes);
  CHECK(model::field_schema("spot_cost_total")->unit == FieldUnit::usd);  // an optional group's field
  CHECK(model::field_schema("scenario") == nullptr);                      // a label, not a field
  CHECK(model::group_title("run") == "Whole run");
  CHECK(model::group_title("other") == "other");
}

TEST_CASE("CSV text with commas or quotes is quoted") {
  model::StepReport step;
  step.feasible = false;
  step.reason = "stage 0 needs 91.2 GB of 80 GB: activations, \"buffers\"";
  const auto row = model::csv_row(model::summarize({}, step, nullptr));
  CHECK(row.find("\"stage 0 needs 91.2 GB of 80 GB: activations, \"\"buffers\"\"\"") != std::string::npos);
}
