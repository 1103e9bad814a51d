#include "sim/trace.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "sim/csv_field.hpp"
#include "sim/error.hpp"
#include "sim/json_string.hpp"

namespace trainsim::sim {

namespace {

constexpr std::string_view kLaneSeparator = " / ";

// Shortest text that reads back as the same double; JSON has no NaN or infinity, so those become null.
void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  std::array<char, 32> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  TRAINSIM_CHECK(ec == std::errc(), "a number did not fit its buffer");
  out.append(buffer.data(), end);
}

void append_integer(std::string& out, std::int64_t value) {
  std::array<char, 24> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  TRAINSIM_CHECK(ec == std::errc(), "an integer did not fit its buffer");
  out.append(buffer.data(), end);
}

std::int64_t to_ns(std::int64_t ps) {
  return ps >= 0 ? (ps + 500) / 1000 : -((-ps + 500) / 1000);
}

// Microseconds with exactly three decimals, from integer nanoseconds: exact, and the same on every machine.
void append_microseconds(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_integer(out, ns / 1000);
  const auto frac = static_cast<int>(ns % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

void append_args(std::string& out, std::span<const TraceArg> args) {
  bool first = true;
  for (const TraceArg& a : args) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, a.key);
    out += ':';
    if (!a.text.empty()) {
      append_json_string(out, a.text);
    } else {
      append_number(out, a.number);
    }
  }
}

std::uint32_t checked_u32(std::size_t value) {
  TRAINSIM_CHECK(value <= std::numeric_limits<std::uint32_t>::max(), "trace text exceeds 4 GiB");
  return static_cast<std::uint32_t>(value);
}

}  // namespace

void TraceSink::counter(std::string_view, std::string_view, Time, double) {}

// ---------------------------------------------------------------------------------------------------------
ChromeTraceWriter::ChromeTraceWriter(std::size_t event_cap) : cap_(event_cap) {}
ChromeTraceWriter::~ChromeTraceWriter() = default;

std::uint32_t ChromeTraceWriter::process_index(std::string_view process) {
  const auto it = process_ids_.find(process);
  if (it != process_ids_.end()) return it->second;
  const auto id = checked_u32(processes_.size());
  processes_.emplace_back(process);
  process_ids_.emplace(std::string(process), id);
  return id;
}

std::uint32_t ChromeTraceWriter::lane_index(std::string_view lane) {
  const auto it = lane_ids_.find(lane);
  if (it != lane_ids_.end()) return it->second;
  const std::size_t cut = lane.find(kLaneSeparator);
  const std::string_view process = cut == std::string_view::npos ? lane : lane.substr(0, cut);
  const std::string_view thread =
      cut == std::string_view::npos ? std::string_view("main") : lane.substr(cut + kLaneSeparator.size());
  const auto id = checked_u32(lanes_.size());
  lanes_.push_back(Lane{process_index(process), std::string(thread)});
  lane_ids_.emplace(std::string(lane), id);
  return id;
}

void ChromeTraceWriter::record(const TraceRecord& slice) {
  TRAINSIM_CHECK(slice.end >= slice.start, "a trace slice ends before it starts");
  if (events_.size() >= cap_) {
    ++dropped_;
    return;
  }
  Event e{.start_ps = slice.start.ps(),
          .end_ps = slice.end.ps(),
          .value = 0.0,
          .lane = lane_index(slice.lane),
          .text_offset = checked_u32(text_.size()),
          .name_length = checked_u32(slice.name.size()),
          .category_length = checked_u32(slice.category.size()),
          .args_length = 0,
          .is_counter = false};
  text_.append(slice.name);
  text_.append(slice.category);
  const std::size_t before = text_.size();
  append_args(text_, slice.args);
  e.args_length = checked_u32(text_.size() - before);
  events_.push_back(e);
  ++recorded_;
}

void ChromeTraceWriter::counter(std::string_view lane, std::string_view name, Time t, double value) {
  if (events_.size() >= cap_) {
    ++dropped_;
    return;
  }
  events_.push_back(Event{.start_ps = t.ps(),
                          .end_ps = t.ps(),
                          .value = value,
                          .lane = lane_index(lane),
                          .text_offset = checked_u32(text_.size()),
                          .name_length = checked_u32(name.size()),
                          .category_length = 0,
                          .args_length = 0,
                          .is_counter = true});
  text_.append(name);
  ++recorded_;
}

void ChromeTraceWriter::add_metadata(std::string key, std::string value) {
  metadata_.emplace_back(std::move(key), std::move(value));
}

namespace {

// Separates a JSON event from the one before it; `first`: no event written yet.
void begin_event(std::string& s, bool& first) {
  if (!first) s += ",\n";
  first = false;
}

// Where write() puts each slice: its sub-thread of its lane (overlapping slices that do not nest go to
// further sub-threads), each lane's count of sub-threads, and each lane's first thread id.
struct ThreadLayout {
  std::vector<std::uint32_t> sub_thread;           // per record
  std::vector<std::uint32_t> sub_threads_of_lane;  // per lane, at least 1
  std::vector<std::uint32_t> first_tid;            // per lane
};

// The slices among `events` (the writer's records) in writing order: by lane, then start, longer first,
// arrival.
std::vector<std::uint32_t> slice_order(const auto& events) {
  std::vector<std::uint32_t> order;
  order.reserve(events.size());
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    if (!events[i].is_counter) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&events](std::uint32_t a, std::uint32_t b) {
    const auto& x = events[a];
    const auto& y = events[b];
    if (x.lane != y.lane) return x.lane < y.lane;
    if (x.start_ps != y.start_ps) return x.start_ps < y.start_ps;
    return x.end_ps > y.end_ps;
  });
  return order;
}

// First-fit of each lane's slices, in `order`, onto sub-threads where each slice either follows the
// thread's open slices or nests inside the innermost one; then the lanes' thread ids.
ThreadLayout thread_layout(const auto& events, std::size_t lane_count,
                           const std::vector<std::uint32_t>& order) {
  ThreadLayout threads;
  threads.sub_thread.assign(events.size(), 0);
  threads.sub_threads_of_lane.assign(lane_count, 1);
  {
    std::vector<std::vector<std::int64_t>> open;  // per sub-thread: end times of the open nested slices
    std::uint32_t current_lane = std::numeric_limits<std::uint32_t>::max();
    for (const std::uint32_t i : order) {
      const auto& e = events[i];
      if (e.lane != current_lane) {
        current_lane = e.lane;
        open.assign(1, {});
      }
      std::uint32_t k = 0;
      for (;; ++k) {
        if (k == open.size()) open.emplace_back();
        auto& stack = open[k];
        while (!stack.empty() && stack.back() <= e.start_ps) stack.pop_back();
        if (stack.empty() || e.end_ps <= stack.back()) break;
      }
      open[k].push_back(e.end_ps);
      threads.sub_thread[i] = k;
      threads.sub_threads_of_lane[e.lane] = std::max(threads.sub_threads_of_lane[e.lane], k + 1);
    }
  }
  // Thread ids: unique across the trace, lanes in order of first appearance, then their sub-threads.
  threads.first_tid.assign(lane_count, 0);
  std::uint32_t next_tid = 1;
  for (std::size_t l = 0; l < lane_count; ++l) {
    threads.first_tid[l] = next_tid;
    next_tid += threads.sub_threads_of_lane[l];
  }
  return threads;
}

// "M" events naming and ordering each process and each lane's (sub-)threads.
void append_thread_names(std::string& s, bool& first, const std::vector<std::string>& processes,
                         const auto& lanes, const ThreadLayout& threads) {
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const auto pid = static_cast<std::int64_t>(p + 1);
    begin_event(s, first);
    s += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":";
    append_integer(s, pid);
    s += ",\"args\":{\"name\":";
    append_json_string(s, processes[p]);
    s += "}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":";
    append_integer(s, pid);
    s += ",\"args\":{\"sort_index\":";
    append_integer(s, pid);
    s += "}}";
  }
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    for (std::uint32_t k = 0; k < threads.sub_threads_of_lane[l]; ++k) {
      const std::uint32_t tid = threads.first_tid[l] + k;
      std::string name = lanes[l].thread;
      if (k > 0) name += " #" + std::to_string(k + 1);
      begin_event(s, first);
      s += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":";
      append_integer(s, lanes[l].process + 1);
      s += ",\"tid\":";
      append_integer(s, tid);
      s += ",\"args\":{\"name\":";
      append_json_string(s, name);
      s += "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":";
      append_integer(s, lanes[l].process + 1);
      s += ",\"tid\":";
      append_integer(s, tid);
      s += ",\"args\":{\"sort_index\":";
      append_integer(s, tid);
      s += "}}";
    }
  }
}

// An "X" event per slice, in `order`, on its sub-thread. `text`: the records' names, categories and args.
void append_slices(std::string& s, bool& first, const auto& events, std::string_view text, const auto& lanes,
                   const std::vector<std::uint32_t>& order, const ThreadLayout& threads) {
  for (const std::uint32_t i : order) {
    const auto& e = events[i];
    const std::int64_t start_ns = to_ns(e.start_ps);
    begin_event(s, first);
    s += "{\"name\":";
    append_json_string(s, text.substr(e.text_offset, e.name_length));
    if (e.category_length > 0) {
      s += ",\"cat\":";
      append_json_string(s, text.substr(e.text_offset + e.name_length, e.category_length));
    }
    s += ",\"ph\":\"X\",\"ts\":";
    append_microseconds(s, start_ns);
    s += ",\"dur\":";
    append_microseconds(s, to_ns(e.end_ps) - start_ns);
    s += ",\"pid\":";
    append_integer(s, lanes[e.lane].process + 1);
    s += ",\"tid\":";
    append_integer(s, threads.first_tid[e.lane] + threads.sub_thread[i]);
    if (e.args_length > 0) {
      s += ",\"args\":{";
      s += text.substr(e.text_offset + e.name_length + e.category_length, e.args_length);
      s += '}';
    }
    s += '}';
  }
}

// A "C" event per counter sample, in recording order (each series is recorded in time order by its
// producer).
void append_counters(std::string& s, bool& first, const auto& events, std::string_view text,
                     const auto& lanes) {
  for (const auto& e : events) {
    if (!e.is_counter) continue;
    const std::string_view name = text.substr(e.text_offset, e.name_length);
    begin_event(s, first);
    s += "{\"name\":";
    append_json_string(s, name);
    s += ",\"ph\":\"C\",\"ts\":";
    append_microseconds(s, to_ns(e.start_ps));
    s += ",\"pid\":";
    append_integer(s, lanes[e.lane].process + 1);
    s += ",\"args\":{";
    append_json_string(s, name);
    s += ':';
    append_number(s, e.value);
    s += "}}";
  }
}

// The end of the event list and "otherData": the cap, the counts, truncation and the metadata.
void append_other_data(std::string& s, std::size_t cap, std::size_t recorded, std::size_t dropped,
                       const std::vector<std::pair<std::string, std::string>>& metadata) {
  s += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"trainsim\",\"event_cap\":";
  append_integer(s, static_cast<std::int64_t>(cap));
  s += ",\"recorded_events\":";
  append_integer(s, static_cast<std::int64_t>(recorded));
  s += ",\"dropped_events\":";
  append_integer(s, static_cast<std::int64_t>(dropped));
  s += ",\"truncated\":";
  s += dropped > 0 ? "true" : "false";
  for (const auto& [key, value] : metadata) {
    s += ',';
    append_json_string(s, key);
    s += ':';
    append_json_string(s, value);
  }
  s += "}}\n";
}

}  // namespace

void ChromeTraceWriter::write(std::ostream& out) const {
  // The records' private type reaches the helpers as their deduced parameter types.
  const std::vector<std::uint32_t> order = slice_order(events_);
  const ThreadLayout threads = thread_layout(events_, lanes_.size(), order);
  std::string s;
  s.reserve(128 + events_.size() * 128);
  s += "{\"traceEvents\":[\n";
  bool first = true;
  append_thread_names(s, first, processes_, lanes_, threads);
  append_slices(s, first, events_, text_, lanes_, order, threads);
  append_counters(s, first, events_, text_, lanes_);
  append_other_data(s, cap_, recorded_, dropped_, metadata_);
  out << s;
}

std::string ChromeTraceWriter::str() const {
  std::ostringstream out;
  write(out);
  return out.str();
}

// ---------------------------------------------------------------------------------------------------------

CsvTraceWriter::CsvTraceWriter(std::ostream& out) : out_(&out) {
  *out_ << "lane,name,category,start_s,end_s\n";
}

void CsvTraceWriter::record(const TraceRecord& slice) {
  std::string row;
  append_csv_field(row, slice.lane);
  row += ',';
  append_csv_field(row, slice.name);
  row += ',';
  append_csv_field(row, slice.category);
  row += ',';
  append_number(row, slice.start.seconds());
  row += ',';
  append_number(row, slice.end.seconds());
  row += '\n';
  *out_ << row;
}

// ---------------------------------------------------------------------------------------------------------
FilteredSink::FilteredSink(TraceSink& inner, std::function<bool(std::string_view lane)> keep)
    : inner_(&inner), keep_(std::move(keep)) {}

std::function<bool(std::string_view)> FilteredSink::lanes_starting_with(std::vector<std::string> prefixes) {
  return [prefixes = std::move(prefixes)](std::string_view lane) {
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [lane](const std::string& prefix) { return lane.starts_with(prefix); });
  };
}

void FilteredSink::record(const TraceRecord& slice) {
  if (keep_(slice.lane)) inner_->record(slice);
}

void FilteredSink::counter(std::string_view lane, std::string_view name, Time t, double value) {
  if (keep_(lane)) inner_->counter(lane, name, t, value);
}

TeeSink::TeeSink(std::vector<TraceSink*> sinks) : sinks_(std::move(sinks)) {}

void TeeSink::record(const TraceRecord& slice) {
  for (TraceSink* s : sinks_) s->record(slice);
}

void TeeSink::counter(std::string_view lane, std::string_view name, Time t, double value) {
  for (TraceSink* s : sinks_) s->counter(lane, name, t, value);
}

}  // namespace trainsim::sim
