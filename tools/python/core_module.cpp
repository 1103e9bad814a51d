// trainsim._core: the compiled half of the Python module (tools/python/README.md). Each function is one
// command of the command line, calling the same library functions its cmd_*.cpp calls, and returns what
// that command writes (summary.json's object, the sweep's CSV, ...) as text; the Python half
// (trainsim/__init__.py) turns the text into dicts and DataFrames. Every function releases the GIL while it
// loads and simulates (arguments and results are C++ values, converted outside), so Python threads
// estimate in parallel. trainsim::InputError becomes trainsim.InputError with its diagnostics.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/cluster/queue_outputs.hpp"
#include "models/cluster/queue_simulator.hpp"
#include "models/report/run_labels.hpp"
#include "models/report/summary.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/shipped_data.hpp"
#include "scenarios/studies/cluster_queue.hpp"
#include "scenarios/studies/error_band.hpp"
#include "scenarios/studies/layout_search.hpp"
#include "scenarios/studies/scenario_explanation.hpp"
#include "scenarios/studies/search_rows.hpp"
#include "scenarios/studies/simulation.hpp"
#include "scenarios/studies/sweep.hpp"
#include "scenarios/studies/validation_runner.hpp"
#include "sim/error.hpp"

namespace py = pybind11;

namespace trainsim::python {

namespace {

using Sets = std::vector<std::pair<std::string, std::string>>;  // (key path, YAML text), as --set gives them

/// Where a scenario comes from: a file (`text` is its path) or YAML text in memory labelled `label` in
/// messages ("<string>", "<dict>").
struct Source {
  std::string text;
  bool is_path = true;
  std::string label;
};

std::vector<scenario::Override> overrides_of(const Sets& sets) {
  std::vector<scenario::Override> out;
  for (const auto& [key, value] : sets) out.push_back({key, value});
  return out;
}

/// The module's presets: read once for the Python process, as a script calls run() thousands of times
/// (thread-safe: the GIL is released while simulating).
scenario::PresetLibrary& module_presets() {
  static scenario::PresetLibrary presets;
  return presets;
}

scenario::Scenario load(const Source& source, const Sets& sets) {
  return source.is_path
             ? scenario::load_scenario_file(source.text, overrides_of(sets), &module_presets())
             : scenario::load_scenario_text(source.text, source.label, overrides_of(sets), &module_presets());
}

/// `trainsim run`'s summary: (summary.json's object as text, feasible, fits, reason, budget violations,
/// the notes the command prints on standard error).
using RunOutcome =
    std::tuple<std::string, bool, bool, std::string, std::vector<std::string>, std::vector<std::string>>;

RunOutcome run(const Source& source, const Sets& sets, const std::string& fidelity_name, bool full_cluster) {
  const scenario::Scenario s = load(source, sets);
  const model::Fidelity fidelity = model::parse_fidelity(fidelity_name);
  model::StepOptions options;
  if (full_cluster) options.mode = model::StepMode::full_cluster;
  const scenario::ScenarioResult result = scenario::simulate_scenario(s, fidelity, options);
  const model::Summary summary = scenario::run_summary(s, fidelity, result);
  return {model::to_json(summary, 2), result.step.feasible,         result.step.fits,
          result.step.reason,         result.run.budget_violations, scenario::run_notes(s)};
}

std::string explain(const Source& source, const Sets& sets, bool ops) {
  return scenario::explanation_json(scenario::explain_scenario(load(source, sets), {.ops = ops}));
}

/// The sweep's CSV (header and every row in point order, as `trainsim sweep` writes it) and its notes.
std::pair<std::string, std::vector<std::string>> sweep(const Source& source, const Sets& sets,
                                                       const std::string& fidelity, int jobs) {
  const model::Fidelity f = model::parse_fidelity(fidelity);
  const scenario::RowFormat csv = scenario::RowFormat::csv;
  const scenario::SweepTable table =
      source.is_path ? scenario::SweepTable(source.text, f, csv, overrides_of(sets))
                     : scenario::SweepTable(scenario::ScenarioText{source.text, source.label}, f, csv,
                                            overrides_of(sets));
  std::vector<std::int64_t> points(static_cast<std::size_t>(table.size()));
  std::iota(points.begin(), points.end(), std::int64_t{0});
  std::string out = table.header();
  scenario::run_in_order(
      points, jobs, [&table](std::int64_t point) { return table.row(point); },
      [&out](std::int64_t, std::string&& row) { out += row; });
  return {out, table.notes()};
}

struct SearchArgs {
  std::string objective;
  int top = 10;
  int jobs = 0;
  std::vector<std::int64_t> nodes;
  bool event = true;
  std::int64_t max_layouts = 0;  // 0: the library's default
};

std::string search(const Source& source, const Sets& sets, const SearchArgs& args) {
  const scenario::Scenario s = load(source, sets);
  scenario::SearchOptions options;
  if (args.objective != "time" && args.objective != "cost") {
    throw InputError("objective must be \"time\" or \"cost\", found \"" + args.objective + "\"");
  }
  options.objective = args.objective == "cost" ? scenario::Objective::cost : scenario::Objective::time;
  options.top_k = args.top;
  options.threads = args.jobs;
  options.event_rerank = args.event;
  options.space.nodes = args.nodes;
  if (args.max_layouts > 0) options.max_layouts = args.max_layouts;
  return scenario::search_rows_csv(scenario::search_rows(scenario::search_layouts(s, options), s));
}

std::string validate(const std::vector<std::string>& paths, const std::vector<std::string>& suites,
                     const std::string& fidelity, int jobs, const Sets& sets, const std::string& settings) {
  const std::vector<std::string> files = scenario::validation_case_files(paths, suites);
  scenario::ValidationOptions options{
      .fidelity = model::parse_fidelity(fidelity), .jobs = jobs, .overrides = overrides_of(sets)};
  if (!settings.empty()) options.settings = scenario::load_case_settings_for(settings, files);
  return scenario::format_validation_csv(scenario::run_cases(files, options));
}

/// `trainsim cluster --format json`'s object as text.
std::string cluster(const std::string& path) {
  const scenario::ClusterStudy study = scenario::build_cluster_study(scenario::load_cluster_file(path));
  const model::QueueReport report = model::simulate_queue(study.spec);
  return model::queue_json(study.spec, report, scenario::cluster_study_notes(study));
}

/// trainsim::InputError as trainsim.InputError(message, [(file, line, column, key_path, message), ...]).
void raise_input_error(const InputError& e) {
  py::list diagnostics;
  for (const Diagnostic& d : e.diagnostics()) {
    diagnostics.append(py::make_tuple(d.file, d.line, d.column, d.key_path, d.message));
  }
  const py::object type = py::module_::import("trainsim._errors").attr("InputError");
  const py::object error = type(e.what(), diagnostics);
  PyErr_SetObject(type.ptr(), error.ptr());
}

}  // namespace

}  // namespace trainsim::python

PYBIND11_MODULE(_core, m) {
  using namespace trainsim::python;
  m.doc() = "trainsim's engine; use the functions of the trainsim package, which wrap these.";
  py::class_<Source>(m, "Source")
      .def(py::init<std::string, bool, std::string>(), py::arg("text"), py::arg("is_path"), py::arg("label"));
  py::class_<SearchArgs>(m, "SearchArgs")
      .def(py::init<>())
      .def_readwrite("objective", &SearchArgs::objective)
      .def_readwrite("top", &SearchArgs::top)
      .def_readwrite("jobs", &SearchArgs::jobs)
      .def_readwrite("nodes", &SearchArgs::nodes)
      .def_readwrite("event", &SearchArgs::event)
      .def_readwrite("max_layouts", &SearchArgs::max_layouts);
  const auto no_gil = py::call_guard<py::gil_scoped_release>();
  m.def("run", &run, no_gil, py::arg("source"), py::arg("sets"), py::arg("fidelity"),
        py::arg("full_cluster"));
  m.def("explain", &explain, no_gil, py::arg("source"), py::arg("sets"), py::arg("ops"));
  m.def("sweep", &sweep, no_gil, py::arg("source"), py::arg("sets"), py::arg("fidelity"), py::arg("jobs"));
  m.def("search", &search, no_gil, py::arg("source"), py::arg("sets"), py::arg("args"));
  m.def("validate", &validate, no_gil, py::arg("paths"), py::arg("suites"), py::arg("fidelity"),
        py::arg("jobs"), py::arg("sets"), py::arg("settings"));
  m.def("cluster", &cluster, no_gil, py::arg("path"));
  m.def("examples_folder",
        [] { return trainsim::scenario::shipped_folder(trainsim::scenario::ShippedData::examples); });
  m.def("validation_suites", &trainsim::scenario::validation_suites);
  // pybind11's translator type is void(*)(std::exception_ptr): the parameter is taken by value.
  py::register_exception_translator(
      [](std::exception_ptr thrown) {  // NOLINT(performance-unnecessary-value-param)
        try {
          if (thrown) std::rethrow_exception(thrown);
        } catch (const trainsim::InputError& e) {
          raise_input_error(e);
        }
      });
}
