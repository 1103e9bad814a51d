#include "models/step/pass_detail_sink.hpp"

#include <algorithm>
#include <cctype>

namespace trainsim::model {

namespace {

bool digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The slice's place on the critical path; 0 when it is not on it.
double path_place(const sim::TraceRecord& slice) {
  for (const sim::TraceArg& arg : slice.args) {
    if (arg.key == sim::kCriticalPathArg) return arg.number;
  }
  return 0;
}

}  // namespace

std::string_view PassDetailSink::pass_of(std::string_view name) {
  // A hand-over: "send act " or "send grad " and the pass it carries (its latency and its flow merge).
  for (const std::string_view send : {std::string_view("send act "), std::string_view("send grad ")}) {
    if (!name.starts_with(send)) continue;
    const std::string_view pass = pass_of(name.substr(send.size()));
    return pass.empty() ? std::string_view{} : name.substr(0, send.size() + pass.size());
  }
  // "<F|B|W> mb<N> c<N>" followed by the end or a space.
  if (name.size() < 2 || (name[0] != 'F' && name[0] != 'B' && name[0] != 'W') || name[1] != ' ') return {};
  const std::size_t mb_end = name.find(' ', 2);
  if (mb_end == std::string_view::npos || name.substr(2, 2) != "mb" || !digits(name.substr(4, mb_end - 4)))
    return {};
  const std::size_t c_begin = mb_end + 1;
  const std::size_t c_end = std::min(name.find(' ', c_begin), name.size());
  if (name.substr(c_begin, 1) != "c" || !digits(name.substr(c_begin + 1, c_end - c_begin - 1))) return {};
  return name.substr(0, c_end);
}

PassDetailSink::~PassDetailSink() {
  flush();
}

void PassDetailSink::record(const sim::TraceRecord& slice) {
  const std::string_view pass = pass_of(slice.name);
  if (pass.empty()) {
    inner_.record(slice);
    return;
  }
  const double place = path_place(slice);
  auto it = open_.find(slice.lane);
  if (it == open_.end()) {
    open_.emplace(std::string(slice.lane),
                  Open{std::string(pass), std::string(slice.category), slice.start, slice.end, place});
    return;
  }
  Open& open = it->second;
  if (open.name != pass) {  // the lane's pass ended: hand it on, open this one
    hand_on(it->first, open);
    open.name.assign(pass);
    open.category.assign(slice.category);
    open.start = slice.start;
    open.end = slice.end;
    open.path_place = place;
  } else {
    open.start = std::min(open.start, slice.start);
    open.end = std::max(open.end, slice.end);
    if (open.category.empty()) open.category = slice.category;  // zero-time joins carry none
    if (place > 0 && (open.path_place == 0 || place < open.path_place)) open.path_place = place;
  }
}

void PassDetailSink::hand_on(std::string_view lane, const Open& open) {
  const sim::TraceArg on_path{.key = sim::kCriticalPathArg, .number = open.path_place};
  const std::span<const sim::TraceArg> args(&on_path, open.path_place > 0 ? 1 : 0);
  inner_.record(sim::TraceRecord{lane, open.name, open.category, open.start, open.end, args});
}

void PassDetailSink::counter(std::string_view lane, std::string_view name, sim::Time t, double value) {
  inner_.counter(lane, name, t, value);
}

void PassDetailSink::flush() {
  // In lane order, so the inner sink sees the same sequence on every run.
  for (const auto& [lane, o] : open_) hand_on(lane, o);
  open_.clear();
}

}  // namespace trainsim::model
