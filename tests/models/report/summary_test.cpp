#include "models/report/summary.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace trainsim;

TEST_CASE("the summary uses the SPEC field names and its columns carry their units") {
  model::StepReport step;
  step.iteration_time = 13.75;
  step.memory_per_gpu = 64.0 * 1024 * 1024 * 1024;
  model::RunReport run;
  run.cost_total = 4.5e6;
  const auto s = model::summarize({{"scenario", "gpt3"}, {"team", "llm"}}, step, &run);
  CHECK(s.number("iteration_time") == doctest::Approx(13.75).scale(0));
  const std::string header = model::csv_header(s);
  CHECK(header.rfind("scenario,team,fits,feasible,reason,", 0) == 0);
  CHECK(header.find(",iteration_time_s,") != std::string::npos);
  CHECK(header.find(",memory_per_gpu_bytes,") != std::string::npos);
  CHECK(header.find(",cost_total_usd,") != std::string::npos);
  const std::string row = model::csv_row(s);
  CHECK(row.find(",13.75,") != std::string::npos);
  CHECK(row.find(",6.871947674e+10,") != std::string::npos);  // 64 GiB in bytes, 10 significant digits
}

TEST_CASE("summary JSON is valid, in SI units under the column names, with booleans for flags") {
  model::StepReport step;
  step.memory_per_gpu = 1e9;
  const auto j = nlohmann::json::parse(model::to_json(model::summarize({}, step, nullptr)));
  CHECK(j["memory_per_gpu_bytes"].get<double>() == 1e9);
  CHECK(j["fits"].get<bool>());
  CHECK_FALSE(j.contains("memory_per_gpu"));
  CHECK_FALSE(j.contains("cost_total_usd"));  // no run simulated
}

TEST_CASE("the summary leads with the memory verdict: a layout that does not fit is not feasible") {
  model::StepReport step;  // the layout rules accept it; its busiest GPU needs more than the GPU has
  step.fits = false;
  step.memory_per_gpu = 321.6 * 1073741824.0;
  step.reason = "stage 0 needs 321.6 GiB of 80 GiB";
  const auto unfit = model::summarize({{"scenario", "x"}}, step, nullptr);
  CHECK(model::csv_header(unfit).rfind("scenario,fits,feasible,reason,", 0) == 0);
  const auto j = nlohmann::json::parse(model::to_json(unfit));
  CHECK_FALSE(j["fits"].get<bool>());
  CHECK_FALSE(j["feasible"].get<bool>());
  step.fits = true;
  step.reason.clear();
  CHECK(nlohmann::json::parse(model::to_json(model::summarize({}, step, nullptr)))["feasible"].get<bool>());
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

namespace {

/// A run summary with every optional group, every number distinct (k + 0.5 for the k-th numeric field).
model::Summary every_field() {
  model::RunReport run;
  run.run_time_spread.mean = 1;
  run.spot = run.convergence = run.tuning = run.data = run.people = run.commitment = true;
  run.region = "us-east";
  run.budget_alerts.push_back({.fraction = 0.5, .usd = 2e6, .reached = true, .time = 86400});
  model::Summary s = model::summarize({{"scenario", "s"}}, model::StepReport{}, &run);
  double k = 0;
  for (auto& f : s.fields)
    if (f.unit != model::FieldUnit::text && f.unit != model::FieldUnit::flag) f.number = (k += 1) + 0.5;
  return s;
}

/// The cells of one CSV line that quotes nothing (every_field's text holds no comma or quote).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream in(line + ",");
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

}  // namespace

TEST_CASE("CSV and JSON name every field alike and give it the same value") {
  const model::Summary s = every_field();
  const auto j = nlohmann::ordered_json::parse(model::to_json(s));
  const std::vector<std::string> header = csv_cells(model::csv_header(s));
  const std::vector<std::string> row = csv_cells(model::csv_row(s));
  REQUIRE(header.size() == j.size());
  REQUIRE(row.size() == header.size());
  std::size_t c = 0;
  for (const auto& [key, value] : j.items()) {
    CAPTURE(key);
    CHECK(header[c] == key);  // same names, same order
    if (value.is_number()) {
      CHECK(std::stod(row[c]) == doctest::Approx(value.get<double>()).epsilon(1e-12));
    } else if (value.is_boolean()) {
      CHECK(row[c] == (value.get<bool>() ? "true" : "false"));
    } else {
      CHECK(row[c] == value.get<std::string>());
    }
    ++c;
  }
  CHECK(j["region"] == "us-east");
}

TEST_CASE("every dimensioned field's column says its unit") {
  using model::FieldUnit;
  const model::Summary s = every_field();
  for (const model::SummaryField& f : s.fields) {
    const std::string c = model::column_name(f);
    CAPTURE(c);
    const auto ends = [&](const std::string& suffix) {
      return c.size() > suffix.size() && c.compare(c.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    switch (f.unit) {
      case FieldUnit::seconds:
        CHECK(ends("_s"));
        break;
      case FieldUnit::bytes:
        CHECK(ends("_bytes"));
        break;
      case FieldUnit::usd:
        CHECK(ends("_usd"));
        break;
      case FieldUnit::kwh:
        CHECK(ends("_kwh"));
        break;
      case FieldUnit::kg:
        CHECK(ends("_kg"));
        break;
      case FieldUnit::per_second:
        CHECK(c.find("_per_s") != std::string::npos);
        break;
      case FieldUnit::flops:
      case FieldUnit::tflops:
        CHECK(c.find("flops") != std::string::npos);
        break;
      default:
        CHECK(c == f.name);  // counts, fractions, flags and text have no unit to add
        break;
    }
    // The name is the column's one source: readers find the field again by it.
    CHECK(model::column_schema(c) == model::field_schema(f.name));
  }
  CHECK(model::column_name("iteration_time") == "iteration_time_s");
  CHECK(model::column_name("memory_per_gpu") == "memory_per_gpu_bytes");
  CHECK(model::column_name("cost_total") == "cost_total_usd");
  CHECK(model::column_name("energy_kwh") == "energy_kwh");  // the unit already in the name
  CHECK(model::column_name("mfu") == "mfu");
  CHECK(model::column_name("scenario") == "scenario");  // a label
}
