#pragma once
// Trace sinks: where executed tasks are recorded (each exactly once, by the DAG executor or anyone else).
//
// A lane names where a slice runs, as "process / thread" (e.g. "gpu 3 / compute"): the text before the
// first " / " becomes a Chrome process, the rest a thread of it; a lane without " / " is a process with
// one thread "main". Writers are deterministic: the same records in the same order give byte-identical
// output.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace trainsim::sim {

/// An extra detail shown with a slice: a number (finite) or, when `text` is non-empty, a string.
struct TraceArg {
  std::string_view key;
  double number = 0.0;
  std::string_view text;
};

/// The arg that marks a slice on the critical path (sim/dag.hpp's critical_path), with its place on it: 1
/// for the first, 2 for the next, ... A slice off the path does not have it.
inline constexpr std::string_view kCriticalPathArg = "critical_path";

/// One executed slice of work. Views are valid only during the record() call.
struct TraceRecord {
  std::string_view lane;
  std::string_view name;
  std::string_view category;  ///< may be empty
  Time start;
  Time end;  ///< >= start
  std::span<const TraceArg> args;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void record(const TraceRecord& slice) = 0;
  /// A sampled value (e.g. bytes of memory in use) of series `name` on `lane`'s process at time t.
  /// Sinks that do not show counters ignore it.
  virtual void counter(std::string_view lane, std::string_view name, Time t, double value);
};

/// Chrome Trace Event Format (object form), for ui.perfetto.dev and chrome://tracing:
/// {"traceEvents":[...],"otherData":{...}}. Slices become "X" events with ts/dur in microseconds printed
/// with exact nanosecond precision; processes and threads are named with "M" events; counters become
/// "C" events. Slices of one lane that overlap without nesting (e.g. concurrent transfers) are spread
/// over extra threads ("dp comm #2") so every thread's slices nest strictly. pid/tid are small positive
/// integers assigned in order of first appearance. After `event_cap` events (slices + counters) it stops
/// recording and says so in otherData ("truncated", "dropped_events"). Records are buffered; write()
/// sorts them by thread then start time.
class ChromeTraceWriter : public TraceSink {
 public:
  explicit ChromeTraceWriter(std::size_t event_cap = 1'000'000);
  ~ChromeTraceWriter() override;

  void record(const TraceRecord& slice) override;
  void counter(std::string_view lane, std::string_view name, Time t, double value) override;
  /// Adds a string entry to "otherData" (written in the order added; keys should be unique).
  void add_metadata(std::string key, std::string value);

  /// Writes the whole trace as JSON. Non-finite numbers are written as null.
  void write(std::ostream& out) const;
  [[nodiscard]] std::string str() const;

  /// The processes recorded so far ("stage 0", "gpu 3"), in order of first appearance.
  [[nodiscard]] const std::vector<std::string>& processes() const { return processes_; }
  [[nodiscard]] std::size_t recorded() const { return recorded_; }
  [[nodiscard]] std::size_t dropped() const { return dropped_; }

 private:
  struct Event {
    std::int64_t start_ps;
    std::int64_t end_ps;  // counters: unused
    double value;         // counters: the sample
    std::uint32_t lane;
    std::uint32_t text_offset;  // into text_: name, then category, then args as a JSON object body
    std::uint32_t name_length;
    std::uint32_t category_length;
    std::uint32_t args_length;
    bool is_counter;
  };
  struct Lane {
    std::uint32_t process;  // index into processes_
    std::string thread;
  };

  std::uint32_t lane_index(std::string_view lane);
  std::uint32_t process_index(std::string_view process);

  std::size_t cap_;
  std::size_t recorded_ = 0;
  std::size_t dropped_ = 0;
  std::vector<std::string> processes_;
  std::vector<Lane> lanes_;
  std::map<std::string, std::uint32_t, std::less<>> lane_ids_;
  std::map<std::string, std::uint32_t, std::less<>> process_ids_;
  std::vector<Event> events_;
  std::string text_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

/// CSV, one row per slice, written as it is recorded: header `lane,name,category,start_s,end_s`;
/// times in seconds printed as the shortest decimal that round-trips; fields quoted when needed.
/// Counters are ignored. The stream must outlive the writer.
class CsvTraceWriter : public TraceSink {
 public:
  explicit CsvTraceWriter(std::ostream& out);
  void record(const TraceRecord& slice) override;

 private:
  std::ostream* out_;
};

/// Passes on only the slices and counters whose lane `keep` accepts (e.g. representative ranks), to bound
/// trace size. `inner` must outlive the filter.
class FilteredSink : public TraceSink {
 public:
  FilteredSink(TraceSink& inner, std::function<bool(std::string_view lane)> keep);
  /// Keeps lanes starting with any of `prefixes` (e.g. {"gpu 0 /", "gpu 8 /"}).
  static std::function<bool(std::string_view)> lanes_starting_with(std::vector<std::string> prefixes);

  void record(const TraceRecord& slice) override;
  void counter(std::string_view lane, std::string_view name, Time t, double value) override;

 private:
  TraceSink* inner_;
  std::function<bool(std::string_view)> keep_;
};

/// Sends every slice and counter to each of several sinks (e.g. a Chrome trace and a CSV), in order.
class TeeSink : public TraceSink {
 public:
  explicit TeeSink(std::vector<TraceSink*> sinks);
  void record(const TraceRecord& slice) override;
  void counter(std::string_view lane, std::string_view name, Time t, double value) override;

 private:
  std::vector<TraceSink*> sinks_;
};

}  // namespace trainsim::sim
