#include "scenarios/studies/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "models/report/summary.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/error_band.hpp"
#include "scenarios/studies/node_price_sweep.hpp"
#include "scenarios/studies/region_sweep.hpp"
#include "scenarios/yaml_tree.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

namespace {

std::string axis_name(const SweepAxis& axis) {
  return "sweep." + axis.key_path;
}

/// A row is one line whatever a reason holds (every diagnostic of an InputError is on its own line), so
/// that resume and merge can count rows by lines.
std::string one_line(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c == '\r' ? ' ' : c;
    }
  }
  while (out.ends_with("; ")) out.resize(out.size() - 2);
  return out;
}

/// A swept value as a label: a quoted YAML scalar ("10 min") by its value, so the CSV holds 10 min rather
/// than """10 min"""; anything else (numbers, names, flow mappings) as written. Axis values are kept as
/// to_yaml_text writes them, which quotes with double quotes only.
std::string label_text(const std::string& yaml) {
  if (yaml.empty() || yaml.front() != '"') return yaml;
  Diagnostics ignored;
  const std::optional<YamlValue> v = parse_yaml_tree(yaml, "sweep value", ignored);
  return v && v->is_scalar() ? v->scalar : yaml;
}

/// A swept value written as a plain number ("16", "1.5e3") becomes a JSON number; anything else a string.
template <typename Number>
bool plain_number(const std::string& text, Number& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size() && std::isfinite(static_cast<double>(value));
}

}  // namespace

std::int64_t sweep_size(const SweepSpec& sweep) {
  if (sweep.empty()) return 1;
  for (const auto& axis : sweep.axes) {
    if (axis.values.empty()) {
      throw InputError(std::vector<Diagnostic>{
          Diagnostic{.key_path = axis_name(axis), .message = "a swept key needs at least one value"}});
    }
  }
  if (sweep.mode == SweepMode::zip) {
    const std::size_t n = sweep.axes.front().values.size();
    for (const auto& axis : sweep.axes) {
      if (axis.values.size() != n) {
        throw InputError(std::vector<Diagnostic>{
            Diagnostic{.key_path = axis_name(axis),
                       .message = "zip sweeps need lists of equal length: " + sweep.axes.front().key_path +
                                  " has " + std::to_string(n) + " values, " + axis.key_path + " has " +
                                  std::to_string(axis.values.size())}});
      }
    }
    return static_cast<std::int64_t>(n);
  }
  std::int64_t size = 1;
  for (const auto& axis : sweep.axes) {
    const auto n = static_cast<std::int64_t>(axis.values.size());
    if (size > max_sweep_points / n) {
      throw InputError(std::vector<Diagnostic>{
          Diagnostic{.key_path = "sweep",
                     .message = "the grid has more than " + std::to_string(max_sweep_points) +
                                " points (the most a sweep runs); sweep fewer values"}});
    }
    size *= n;
  }
  return size;
}

SweepPoint sweep_point(const SweepSpec& sweep, std::int64_t index) {
  const std::int64_t size = sweep_size(sweep);
  TRAINSIM_CHECK(index >= 0 && index < size, "sweep point index out of range");
  SweepPoint point{.index = index, .overrides = std::vector<Override>(sweep.axes.size())};
  if (sweep.mode == SweepMode::zip) {
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      point.overrides[a] =
          Override{sweep.axes[a].key_path, sweep.axes[a].values[static_cast<std::size_t>(index)]};
    }
    return point;
  }
  // Mixed radix, last axis fastest: peel digits from the last axis backwards.
  std::int64_t rest = index;
  for (std::size_t a = sweep.axes.size(); a-- > 0;) {
    const auto& axis = sweep.axes[a];
    const auto n = static_cast<std::int64_t>(axis.values.size());
    point.overrides[a] = Override{axis.key_path, axis.values[static_cast<std::size_t>(rest % n)]};
    rest /= n;
  }
  return point;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& sweep) {
  const std::int64_t size = sweep_size(sweep);
  std::vector<SweepPoint> points;
  points.reserve(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) points.push_back(sweep_point(sweep, i));
  return points;
}

std::vector<SweptValue> load_swept_values(std::string_view text, const std::string& path,
                                          const std::vector<Override>& overrides, const SweepSpec& sweep,
                                          std::string_view key) {
  const auto axis = std::find_if(sweep.axes.begin(), sweep.axes.end(),
                                 [&](const SweepAxis& a) { return a.key_path == key; });
  std::vector<SweptValue> out;
  if (axis == sweep.axes.end() || sweep_size(sweep) == 0) return out;
  const std::size_t axis_index = static_cast<std::size_t>(axis - sweep.axes.begin());
  const SweepPoint first = sweep_point(sweep, 0);
  for (const std::string& value : axis->values) {
    std::vector<Override> point = overrides;
    for (std::size_t i = 0; i < first.overrides.size(); ++i) {
      point.push_back(i == axis_index ? Override{std::string(key), value} : first.overrides[i]);
    }
    point.push_back(Override{"sweep", "{}"});
    try {
      out.push_back({value, load_scenario_text(text, path, point)});
    } catch (const InputError&) {
      continue;  // that point's rows say why
    }
  }
  return out;
}

Shard parse_shard(std::string_view text) {
  const auto fail = [&] {
    throw InputError("--shard expects i/N with 0 <= i < N (e.g. 0/4), got '" + std::string(text) + "'");
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) fail();
  Shard shard;
  const auto parse = [&](std::string_view part, int& out) {
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (ec != std::errc{} || end != part.data() + part.size() || part.empty()) fail();
  };
  parse(text.substr(0, slash), shard.index);
  parse(text.substr(slash + 1), shard.count);
  if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) fail();
  return shard;
}

std::int64_t run_in_order(std::span<const std::int64_t> points, int threads,
                          const std::function<std::string(std::int64_t)>& evaluate,
                          const std::function<void(std::int64_t, std::string&&)>& emit,
                          std::stop_token stop) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto n = static_cast<std::int64_t>(points.size());
  threads = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(n, 1)));

  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;                             // guards everything below
  std::map<std::int64_t, std::string> pending;  // finished out of order, by position
  std::int64_t emitted = 0;
  std::exception_ptr error;

  const auto worker = [&] {
    while (!failed.load(std::memory_order_relaxed) && !stop.stop_requested()) {
      const std::int64_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= n) return;
      try {
        std::string result = evaluate(points[static_cast<std::size_t>(k)]);
        std::lock_guard lock(mutex);
        pending.emplace(k, std::move(result));
        // Whoever completes the next position in order drains the contiguous prefix; emitting under the
        // lock keeps the writes serialised and in order.
        for (auto it = pending.begin(); it != pending.end() && it->first == emitted; it = pending.erase(it)) {
          emit(points[static_cast<std::size_t>(emitted)], std::move(it->second));
          ++emitted;
        }
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();  // the calling thread works too
  }
  if (error) std::rethrow_exception(error);
  return emitted;
}

std::int64_t point_index(std::string_view cell) {
  std::int64_t index = -1;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), index);
  if (cell.empty() || cell.front() == '-' || ec != std::errc{} || end != cell.data() + cell.size() ||
      index >= max_sweep_points)
    return -1;
  return index;
}

std::int64_t row_point_index(std::string_view line, RowFormat format) {
  if (line.empty() || line.back() != '\n') return -1;
  std::string_view digits = line;
  if (format == RowFormat::jsonl) {
    constexpr std::string_view kPrefix = "{\"point\":";
    if (!line.starts_with(kPrefix) || !line.ends_with("}\n")) return -1;
    digits.remove_prefix(kPrefix.size());
  }
  const std::size_t comma = digits.find(',');
  if (comma == std::string_view::npos) return -1;
  return point_index(digits.substr(0, comma));
}

std::string_view row_fingerprint(std::string_view line, RowFormat format) {
  if (row_point_index(line, format) < 0) return {};
  std::string_view rest = line.substr(line.find(',') + 1);
  if (format == RowFormat::jsonl) {
    constexpr std::string_view kKey = "\"sweep_fingerprint\":\"";
    if (!rest.starts_with(kKey)) return {};
    rest.remove_prefix(kKey.size());
    return rest.substr(0, std::min(rest.find('"'), rest.size()));
  }
  return rest.substr(0, std::min(rest.find_first_of(",\n"), rest.size()));
}

namespace {

// FNV-1a, 64 bits, as 16 hex digits: stable across platforms and library versions, unlike std::hash; a
// fingerprint tells sweeps apart, it is not a defence against a forger.
std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

}  // namespace

// ---- SweepTable ----------------------------------------------------------------------------------------

struct SweepTable::Impl {
  std::string path;
  std::string text;  // the scenario file, read once
  Scenario base;
  model::Fidelity fidelity = model::Fidelity::analytic;
  RowFormat format = RowFormat::csv;
  std::int64_t size = 0;
  std::vector<model::SummaryField> columns;  // the reference field list: names and units of every column
  std::set<std::string> swept;               // key paths of the sweep axes
  std::string fingerprint;
  std::vector<Override> overrides;  // --set, before each point's own
  mutable PresetLibrary presets;    // every point's presets, read once for the whole sweep (thread-safe)
  std::vector<std::string> notes;

  model::Labels labels(const Scenario& s, const SweepPoint& point) const {
    model::Labels out;
    out.emplace_back("scenario", base.name);
    for (const auto& o : point.overrides) out.emplace_back(o.key_path, label_text(o.yaml_value));
    // A swept tag (`tags.team: [a, b]`) already has its column among the swept keys, holding the value the
    // point gave the tag: it is written there once, not again among the tags.
    for (const auto& [key, value] : s.tags) {
      if (!swept.contains("tags." + key)) out.emplace_back("tags." + key, value);
    }
    return out;
  }

  static model::RunReport reference_run(const Scenario& s) {
    model::RunReport run;
    run.spot = s.pricing.spot.enabled;
    // The campaign blocks' columns (target loss, trials, data, people, commitment) as the base has them.
    run.convergence = s.convergence.has_value();
    run.tuning = s.tuning.has_value();
    run.data = s.data.has_value();
    run.people = !s.people.empty();
    run.commitment = s.pricing.commitment.enabled;
    if (s.failures.trials > 0) run.run_time_spread.mean = 1;  // makes the spread columns appear
    if (s.budget.max_cost_usd) {  // one set of columns per alert, its time included
      for (double fraction : s.budget.alerts)
        run.budget_alerts.push_back({.fraction = fraction, .usd = 0, .reached = true, .time = 0});
    }
    return run;
  }

  std::string format_row(std::int64_t index, const model::Summary& summary, bool blank_numbers) const;
  /// Fills every member from the loaded base scenario and its text (one rule for both constructors).
  void init(const ScenarioText& scenario, Scenario loaded, model::Fidelity row_fidelity, RowFormat row_format,
            std::vector<Override> set_overrides);
};

SweepTable::SweepTable(const std::string& scenario_path, model::Fidelity fidelity, RowFormat format,
                       std::vector<Override> overrides)
    : impl_(std::make_unique<Impl>()) {
  // The loader's own file checks (missing, a directory, too large) come first; the text is then kept so
  // that each point re-parses it without touching the file again.
  Scenario base = load_scenario_file(scenario_path, overrides, &impl_->presets);
  std::ifstream in(scenario_path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  impl_->init(ScenarioText{buffer.str(), scenario_path}, std::move(base), fidelity, format,
              std::move(overrides));
}

SweepTable::SweepTable(const ScenarioText& scenario, model::Fidelity fidelity, RowFormat format,
                       std::vector<Override> overrides)
    : impl_(std::make_unique<Impl>()) {
  Scenario base = load_scenario_text(scenario.yaml, scenario.label, overrides, &impl_->presets);
  impl_->init(scenario, std::move(base), fidelity, format, std::move(overrides));
}

void SweepTable::Impl::init(const ScenarioText& scenario, Scenario loaded, model::Fidelity row_fidelity,
                            RowFormat row_format, std::vector<Override> set_overrides) {
  overrides = std::move(set_overrides);
  path = scenario.label;
  text = scenario.yaml;
  fidelity = row_fidelity;
  format = row_format;
  base = std::move(loaded);
  size = sweep_size(base.sweep);
  if (std::string note = check_region_sweep(text, path, overrides, base.sweep); !note.empty()) {
    notes.push_back(std::move(note));
  }
  if (std::string note = check_node_price_sweep(text, path, overrides, base.sweep); !note.empty()) {
    notes.push_back(std::move(note));
  }
  const SweepPoint first = sweep_point(base.sweep, 0);
  const model::RunReport run = reference_run(base);
  for (const auto& axis : base.sweep.axes) swept.insert(axis.key_path);
  model::Summary reference = model::summarize(labels(base, first), model::StepReport{}, &run);
  // The error band's columns as the base scenario has them, like the campaign blocks' (a point that is not
  // validated leaves them empty).
  add_error_band(reference, error_band_of(base));
  columns = std::move(reference.fields);
  // The column names are part of it: rows written under other names (an older naming) are not resumed into.
  std::string names;
  for (const auto& column : columns) names += model::column_name(column) + ",";
  fingerprint = fnv1a_hex(dump_scenario(base) + "fidelity: " + model::to_string(fidelity) + "\nformat: " +
                          (format == RowFormat::csv ? "csv" : "jsonl") + "\ncolumns: " + names + "\n");
}

SweepTable::~SweepTable() = default;

const Scenario& SweepTable::base() const {
  return impl_->base;
}
std::int64_t SweepTable::size() const {
  return impl_->size;
}
RowFormat SweepTable::format() const {
  return impl_->format;
}

std::string SweepTable::header() const {
  if (impl_->format == RowFormat::jsonl) return "";
  model::Summary reference{impl_->columns};
  return "point,sweep_fingerprint," + model::csv_header(reference) + "\n";
}

const std::vector<std::string>& SweepTable::notes() const {
  return impl_->notes;
}

const std::string& SweepTable::fingerprint() const {
  return impl_->fingerprint;
}

std::string SweepTable::Impl::format_row(std::int64_t index, const model::Summary& summary,
                                         bool blank_numbers) const {
  std::string line;
  if (format == RowFormat::csv) {
    line = std::to_string(index) + "," + fingerprint;
    for (const auto& column : columns) {
      line += ',';
      const model::SummaryField* field = summary.find(column.name);
      if (field == nullptr) continue;
      const bool numeric = field->unit != model::FieldUnit::text && field->unit != model::FieldUnit::flag;
      if (blank_numbers && numeric) continue;
      // One cell formatted by the shared CSV writer, so sweep rows and `trainsim run` agree digit for digit.
      line += model::csv_row(model::Summary{{*field}});
    }
  } else {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    j["point"] = index;
    j["sweep_fingerprint"] = fingerprint;
    for (const auto& column : columns) {
      const model::SummaryField* field = summary.find(column.name);
      const std::string key = model::column_name(column);
      if (field == nullptr) {
        j[key] = nullptr;
        continue;
      }
      if (field->unit == model::FieldUnit::text) {
        std::int64_t integer = 0;
        double number = 0;
        if (swept.contains(column.name) && plain_number(field->text, integer)) {
          j[key] = integer;
        } else if (swept.contains(column.name) && plain_number(field->text, number)) {
          j[key] = number;
        } else {
          j[key] = field->text;
        }
      } else if (field->unit == model::FieldUnit::flag) {
        j[key] = field->number != 0;
      } else if (blank_numbers) {
        j[key] = nullptr;
      } else {
        TRAINSIM_CHECK(std::isfinite(field->number), "sweep row field " + key + " is not finite");
        j[key] = field->number;
      }
    }
    line = j.dump();
  }
  line += '\n';
  return line;
}

std::string SweepTable::row(std::int64_t index, RowFacts* facts) const {
  const Impl& m = *impl_;
  const SweepPoint point = sweep_point(m.base.sweep, index);
  model::Labels labels;
  try {
    // The point's file is the scenario with its overrides and without the sweep block: the loader checks
    // every swept value in place on each load, which the constructor already did once for all points.
    std::vector<Override> overrides = m.overrides;
    overrides.insert(overrides.end(), point.overrides.begin(), point.overrides.end());
    overrides.push_back(Override{"sweep", "{}"});
    const Scenario s = load_scenario_text(m.text, m.path, overrides, &m.presets);
    labels = m.labels(s, point);
    ScenarioResult result = simulate_scenario(s, m.fidelity);
    if (facts != nullptr) {
      const bool fits = result.step.feasible && result.step.fits;
      *facts = RowFacts{fits && result.run.feasible, fits,
                        result.step.feasible ? result.step.iteration_time : 0.0};
    }
    result.step.reason = one_line(result.step.reason);
    result.run.reason = one_line(result.run.reason);
    return m.format_row(index, run_summary(s, labels, result), !result.step.feasible);
  } catch (const InputError& e) {
    if (labels.empty()) labels = m.labels(m.base, point);
    model::StepReport step;
    step.feasible = false;
    step.fits = false;
    step.reason = one_line(e.what());
    return m.format_row(index, model::summarize(labels, step, nullptr), true);
  }
}

}  // namespace trainsim::scenario
