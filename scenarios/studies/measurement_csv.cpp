#include "scenarios/studies/measurement_csv.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/csv_record.hpp"
#include "sim/error.hpp"
#include "sim/input_files.hpp"

namespace trainsim::model {

namespace {

std::string stem_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

[[noreturn]] void fail(const std::string& label, std::size_t line, const std::string& message) {
  throw InputError(
      std::vector<Diagnostic>{{.file = label, .line = static_cast<int>(line), .message = message}});
}

double number(const std::string& text, const std::string& label, std::size_t line,
              const std::string& column) {
  double v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  while (first < last && *first == ' ') ++first;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || !std::isfinite(v)) {
    fail(label, line, "column '" + column + "': expected a number, found '" + text + "'");
  }
  return v;
}

std::int64_t count(const std::string& text, const std::string& label, std::size_t line,
                   const std::string& column) {
  const double v = number(text, label, line, column);
  if (v < 1 || v != std::floor(v) || v > 1e15) {
    fail(label, line, "column '" + column + "': expected a positive whole number, found '" + text + "'");
  }
  return static_cast<std::int64_t>(v);
}

/// The split lines of a CSV text; records never span lines in either supported format.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t,") == std::string::npos;
}

// The published setup of the vTrain data set (shared/validation/README.md): GPT models as
// Megatron-DeepSpeed builds them, fp16, full recomputation, 1F1B, no gradient bucketing.
Measurement vtrain_defaults() {
  Measurement m;
  m.model.name = "custom";
  m.model.vocab = 51200;
  m.model.mlp = Mlp::gelu;
  m.model.attention = Attention::standard;
  m.plan.dp_auto = false;
  m.plan.schedule = Schedule::one_f_one_b;
  m.plan.recompute = Recompute::full;
  m.plan.sequence_parallel = false;
  m.plan.overlap_grad_reduce = false;
  m.training.precision = Precision::fp16;
  m.training.optimizer.kind = OptimizerKind::adam;
  m.training.steps = 1;
  m.metric = "iteration_time";
  return m;
}

std::vector<Measurement> parse_vtrain(const std::vector<std::string>& lines, const std::string& label) {
  const std::vector<std::string> header = split_csv_record(lines[0], label, 1);
  const std::size_t skip = header[0].rfind("Parameters", 0) == 0 ? 1 : 0;
  // The columns are read by position, so the header must name them in vTrain's order: a file whose
  // parallelism columns come in another order has the same GPU product and would read without a word.
  static const char* const kHeader[] = {"# GPUs",
                                        "global batch",
                                        "micro batch",
                                        "hidden size",
                                        "attention heads",
                                        "# layers",
                                        "sequence length",
                                        "tensor parallelism",
                                        "data parallelism",
                                        "pipeline parallelism",
                                        "iteration time (ms)"};
  if (header.size() != skip + 11) fail(label, 1, "expected " + std::to_string(skip + 11) + " columns");
  for (std::size_t k = 0; k < 11; ++k) {
    if (header[skip + k] != kHeader[k]) {
      fail(label, 1,
           "column " + std::to_string(skip + k + 1) + " is \"" + header[skip + k] + "\", expected \"" +
               kHeader[k] + "\" (vTrain's columns, in its order)");
    }
  }
  std::vector<Measurement> out;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const std::vector<std::string> f = split_csv_record(lines[i], label, i + 1);
    if (f.size() != skip + 11) fail(label, i + 1, "expected " + std::to_string(skip + 11) + " columns");
    std::int64_t v[10];
    for (std::size_t k = 0; k < 10; ++k) v[k] = count(f[skip + k], label, i + 1, kHeader[k]);
    Measurement m = vtrain_defaults();
    m.id = stem_of(label) + "-" + std::to_string(i);
    m.source = "vTrain ground truth (Bang et al., MICRO'24), " + stem_of(label) + " row " + std::to_string(i);
    m.gpus = v[0];
    m.training.global_batch = v[1];
    m.plan.micro_batch = static_cast<int>(v[2]);
    m.model.hidden = v[3];
    m.model.heads = v[4];
    m.model.layers = v[5];
    m.model.seq_len = v[6];
    m.model.ffn_hidden = 4 * v[3];
    m.plan.tp = static_cast<int>(v[7]);
    m.plan.dp = v[8];
    m.plan.pp = static_cast<int>(v[9]);
    if (m.plan.world_size() != m.gpus) fail(label, i + 1, "tensor x data x pipeline parallelism != GPUs");
    m.value = number(f[skip + 10], label, i + 1, kHeader[10]) / 1000.0;
    if (!(m.value > 0)) fail(label, i + 1, "iteration time must be positive");
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> parse_published(const std::vector<std::string>& lines, const std::string& label) {
  const std::vector<std::string> header = split_csv_record(lines[0], label, 1);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  static const std::map<std::string, std::pair<std::string, double>> kMetrics = {
      {"iteration_s", {"iteration_time", 1.0}}, {"mfu_pct", {"mfu", 0.01}}, {"hfu_pct", {"hfu", 0.01}}};
  std::vector<Measurement> out;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (blank(lines[i])) continue;
    const std::vector<std::string> f = split_csv_record(lines[i], label, i + 1);
    if (f.size() != header.size()) {
      fail(label, i + 1,
           "expected " + std::to_string(header.size()) + " columns, found " + std::to_string(f.size()));
    }
    const auto get = [&](const char* name) -> const std::string& { return f[col.at(name)]; };
    const auto metric = kMetrics.find(get("metric"));
    if (metric == kMetrics.end()) continue;
    bool complete = true;
    for (const char* needed : {"layers", "hidden", "heads", "seq_len", "gpus", "global_batch", "tp"}) {
      complete = complete && !get(needed).empty();
    }
    if (!complete) continue;  // a step that the source does not describe fully cannot be simulated
    const auto opt_count = [&](const char* name, std::int64_t fallback) {
      return get(name).empty() ? fallback : count(get(name), label, i + 1, name);
    };
    Measurement m;
    m.id = get("id");
    m.source = get("source");
    m.gpu_type = get("gpu_type");
    m.gpus = count(get("gpus"), label, i + 1, "gpus");
    m.model.name = get("model_name").empty() ? "custom" : get("model_name");
    m.model.layers = count(get("layers"), label, i + 1, "layers");
    m.model.hidden = count(get("hidden"), label, i + 1, "hidden");
    m.model.heads = count(get("heads"), label, i + 1, "heads");
    m.model.ffn_hidden = opt_count("ffn_hidden", 4 * m.model.hidden);
    m.model.seq_len = count(get("seq_len"), label, i + 1, "seq_len");
    m.model.vocab = opt_count("vocab", 51200);
    m.model.mlp = Mlp::gelu;
    // The sources in this format predate fused attention kernels (2020-2022), except where noted.
    m.model.attention = Attention::standard;
    m.plan.dp_auto = false;
    m.plan.tp = static_cast<int>(count(get("tp"), label, i + 1, "tp"));
    m.plan.pp = static_cast<int>(opt_count("pp", 1));
    m.plan.cp = static_cast<int>(opt_count("cp", 1));
    m.plan.dp = opt_count("dp", m.gpus / (static_cast<std::int64_t>(m.plan.tp) * m.plan.pp * m.plan.cp));
    m.plan.virtual_stages = static_cast<int>(opt_count("interleave_chunks", 1));
    m.plan.schedule = m.plan.virtual_stages > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    m.training.global_batch = count(get("global_batch"), label, i + 1, "global_batch");
    m.plan.micro_batch = static_cast<int>(opt_count("micro_batch", m.training.global_batch / m.plan.dp));
    const double zero = get("zero_stage").empty() ? 0 : number(get("zero_stage"), label, i + 1, "zero_stage");
    const std::optional<ZeroStage> stage = zero_stage_numbered(static_cast<int>(zero));
    if (!stage || zero != static_cast<int>(zero)) {
      fail(label, i + 1, "zero_stage: expected 0, 1, 2 or 3, got " + get("zero_stage"));
    }
    m.plan.zero = *stage;
    const std::string& rc = get("recompute");
    m.plan.sequence_parallel = rc.find("+SP") != std::string::npos;
    if (rc.rfind("selective", 0) == 0) {
      m.plan.recompute = Recompute::selective;
    } else if (rc.rfind("none", 0) == 0) {
      m.plan.recompute = Recompute::none;
    } else {
      m.plan.recompute = Recompute::full;  // "full", or unstated: the default of the era's scripts
    }
    if (rc.find("microbatch-level") != std::string::npos) continue;  // no such recompute mode here
    m.training.precision = m.gpu_type.rfind("V100", 0) == 0 ? Precision::fp16 : Precision::bf16;
    m.training.optimizer.kind = OptimizerKind::adam;
    m.training.steps = 1;
    m.metric = metric->second.first;
    m.value = number(get("value"), label, i + 1, "value") * metric->second.second;
    if (m.plan.world_size() != m.gpus) fail(label, i + 1, "tp x pp x cp x dp != gpus");
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::vector<std::string> split_csv_record(std::string_view line, const std::string& label,
                                          std::size_t line_number) {
  if (line.empty()) return {""};
  sim::CsvRecord r = sim::read_csv_record(line, 0);
  if (r.error.empty() && r.in_quotes) {
    r.error = "a quoted cell is not closed on its line";
    r.error_at = line.size();
  }
  if (!r.error.empty()) {
    throw InputError(std::vector<Diagnostic>{{.file = label,
                                              .line = static_cast<int>(line_number),
                                              .column = static_cast<int>(r.error_at) + 1,
                                              .message = r.error}});
  }
  return std::move(r.cells);
}

MeasurementFormat detect_measurement_format(std::string_view header_line, const std::string& label) {
  const std::vector<std::string> h = split_csv_record(header_line, label, 1);
  if (!h.empty() && h[0] == "id" && header_line.find("metric") != std::string_view::npos &&
      header_line.find("value") != std::string_view::npos) {
    return MeasurementFormat::published;
  }
  if (header_line.find("# GPUs") != std::string_view::npos &&
      header_line.find("iteration time (ms)") != std::string_view::npos) {
    return MeasurementFormat::vtrain;
  }
  fail(label, 1,
       "unrecognised CSV header: expected the vTrain ground-truth columns (# GPUs, …, iteration time (ms)) "
       "or the published-measurements columns (id, source, …, metric, value, notes)");
}

std::vector<Measurement> parse_measurements_csv(std::string_view text, const std::string& label) {
  std::vector<std::string> lines = lines_of(text);
  while (!lines.empty() && blank(lines.back())) lines.pop_back();
  if (lines.empty()) fail(label, 0, "empty CSV file");
  if (lines[0].rfind("\xEF\xBB\xBF", 0) == 0) lines[0].erase(0, 3);  // UTF-8 byte-order mark
  return detect_measurement_format(lines[0], label) == MeasurementFormat::vtrain
             ? parse_vtrain(lines, label)
             : parse_published(lines, label);
}

std::vector<Measurement> read_measurements_csv(const std::string& path) {
  // A measurement file holds rows of measured steps; a gigabyte of them is not one.
  constexpr std::size_t kMaxMeasurementBytes = std::size_t{1} << 28;
  return parse_measurements_csv(sim::read_input_file(path, {.what = "a CSV of measured steps",
                                                            .limit = "measurement files",
                                                            .max_bytes = kMaxMeasurementBytes}),
                                path);
}

}  // namespace trainsim::model
