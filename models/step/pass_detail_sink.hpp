#pragma once
// Pass-level traces: a sink between the event lowering and a trace writer that merges the slices of one
// pass on one lane ("F mb3 c0 L12 qkv", "F mb3 c0 L12 tp_reduce_scatter", ...) into one slice named by the
// pass ("F mb3 c0"), spanning its first slice's start to its last one's end, with the first category any
// of them has (the pass's zero-time joins carry none), and the critical path's place of the first of them
// on it (sim/trace.hpp's kCriticalPathArg) when any is. The pass is the first three
// words of a name when they read "<F|B|W> mb<N> c<N>" (step_lowering.hpp's names); a hand-over's latency and
// flow ("send act F mb3 c0 latency", "send act F mb3 c0") merge into "send act F mb3 c0". Other slices
// (buckets, the optimizer) and the counters pass through unchanged. A 1,024-GPU step then holds a few
// thousand slices instead of hundreds of thousands.
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "sim/trace.hpp"

namespace trainsim::model {

class PassDetailSink : public sim::TraceSink {
 public:
  explicit PassDetailSink(sim::TraceSink& inner) : inner_(inner) {}
  PassDetailSink(const PassDetailSink&) = delete;
  PassDetailSink& operator=(const PassDetailSink&) = delete;
  ~PassDetailSink() override;

  void record(const sim::TraceRecord& slice) override;
  void counter(std::string_view lane, std::string_view name, sim::Time t, double value) override;
  /// Hands the passes still open to the inner sink (also done by the destructor); call before writing it.
  void flush();

  /// "F mb3 c0" of "F mb3 c0 L12 qkv", "send act F mb3 c0" of "send act F mb3 c0 latency", or "" when the
  /// name does not start with a pass.
  [[nodiscard]] static std::string_view pass_of(std::string_view name);

 private:
  struct Open {
    std::string name, category;
    sim::Time start, end;
    double path_place = 0;  // the lowest kCriticalPathArg of its slices; 0 when none is on the path
  };
  // Hands a merged pass on to the inner sink.
  void hand_on(std::string_view lane, const Open& open);
  sim::TraceSink& inner_;
  // Per lane, the pass being merged; looked up by the record's string_view lane (a record costs no
  // allocation unless it opens a lane) and handed on in lane order.
  std::map<std::string, Open, std::less<>> open_;
};

}  // namespace trainsim::model
