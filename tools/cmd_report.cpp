// `trainsim report IN [-o report.html]`: a self-contained HTML report with charts from a run directory
// (`trainsim run -o DIR`), a shared cluster's directory (`trainsim cluster -o DIR`), or a sweep's or a
// search's output (CSV, JSON Lines or a JSON array). The pages are report/html.hpp.
#include <filesystem>
#include <iostream>
#include <optional>

#include "report/html.hpp"
#include "sim/error.hpp"
#include "sim/gzip.hpp"
#include "sim/input_files.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

namespace {

// Run folders and sweep outputs that a page can still show: beyond this a browser cannot open the report.
constexpr std::size_t kMaxReportInputBytes = std::size_t{1} << 30;

std::string read_text(const std::filesystem::path& path) {
  return sim::read_input_file(path, {.what = "a run's summary.json, run.csv or trace.json, or a sweep output",
                                     .limit = "report inputs",
                                     .max_bytes = kMaxReportInputBytes});
}

/// The name a page shows for its input: the folder's or the file's own name ("runs/llama/" -> "llama").
std::string display_name(const std::filesystem::path& in) {
  std::filesystem::path p = std::filesystem::absolute(in).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

/// trace.json, or trace.json.gz (`run -o DIR --gzip`); nothing when the folder has neither.
std::optional<report::IterationTrace> read_trace_of(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "trace.json"))
    return report::read_trace(read_text(dir / "trace.json"), (dir / "trace.json").string());
  if (std::filesystem::exists(dir / "trace.json.gz")) {
    const std::string label = (dir / "trace.json.gz").string();
    const std::string gz =
        sim::read_input_file(dir / "trace.json.gz", {.what = "a gzipped trace (`run --gzip`)",
                                                     .limit = "report inputs",
                                                     .max_bytes = kMaxReportInputBytes,
                                                     .refuse_nul = false});
    return report::read_trace(sim::gunzip(gz, kMaxReportInputBytes, label), label);
  }
  return std::nullopt;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto* sub =
      app.add_subcommand("report", "write a self-contained HTML report from a run directory or sweep output");
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  sub->add_option(
         "IN", *input,
         "run directory (summary.json, run.csv, trace.json), cluster directory (jobs.csv, cluster.csv, "
         "queue.json), "
         "or sweep or search output (.csv, .jsonl or .json)")
      ->required();
  sub->add_option("-o,--output", *output, "HTML file to write (default: IN/report.html or IN with .html)");
  sub->callback([input, output, &exit_code] {
    namespace fs = std::filesystem;
    const fs::path in(*input);
    std::string html;
    fs::path out;
    if (fs::is_directory(in) && !fs::exists(in / "summary.json") && fs::exists(in / "jobs.csv") &&
        fs::exists(in / "cluster.csv")) {
      report::Table links;
      if (fs::exists(in / "links.csv"))
        links = report::parse_csv(read_text(in / "links.csv"), (in / "links.csv").string());
      html = report::cluster_report_html(
          display_name(in), report::parse_csv(read_text(in / "jobs.csv"), (in / "jobs.csv").string()),
          report::parse_csv(read_text(in / "cluster.csv"), (in / "cluster.csv").string()), links,
          fs::exists(in / "queue.json") ? read_text(in / "queue.json") : "");
      out = in / "report.html";
    } else if (fs::is_directory(in)) {
      const fs::path summary = in / "summary.json";
      if (!fs::exists(summary)) {
        throw InputError(
            {Diagnostic{.file = in.string(),
                        .message = "no summary.json (nor jobs.csv and cluster.csv) here: expected the folder "
                                   "of `trainsim run -o DIR` or `trainsim cluster -o DIR`"}});
      }
      report::Table timeline;
      if (fs::exists(in / "run.csv"))
        timeline = report::parse_csv(read_text(in / "run.csv"), (in / "run.csv").string());
      html = report::run_report_html(display_name(in), read_text(summary), timeline, read_trace_of(in));
      out = in / "report.html";
    } else if (fs::exists(in)) {
      const std::string ext = in.extension().string();
      const std::string text = read_text(in);
      const report::Table table = (ext == ".jsonl" || ext == ".json")
                                      ? report::parse_json_lines(text, in.string())
                                      : report::parse_csv(text, in.string());
      const std::string name = in.filename().string();
      // Anything else read as rows would make a page of nothing: a sweep's rows carry their point and the
      // sweep's fingerprint, a search's its rank and whether it is on the Pareto front.
      if (!report::is_search_output(table) &&
          (table.column("point") < 0 || table.column("sweep_fingerprint") < 0)) {
        throw InputError(
            {Diagnostic{.file = in.string(),
                        .message = "not a sweep's output (no point and sweep_fingerprint columns) "
                                   "nor a search's (no rank and on_pareto columns)"}});
      }
      html = report::is_search_output(table) ? report::search_report_html(name, table)
                                             : report::sweep_report_html(name, table);
      out = fs::path(in).replace_extension(".html");
    } else {
      throw InputError({Diagnostic{.file = in.string(), .message = "no such file or directory"}});
    }
    if (!output->empty()) out = *output;
    sim::write_file_atomically(out, html);
    std::cout << "wrote " << out.string() << '\n';
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
