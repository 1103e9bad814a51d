#include "models/step/pipeline_schedule.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "models/step/recent_results.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

const char* pass_letter(PassKind kind) {
  switch (kind) {
    case PassKind::forward:
      return "F";
    case PassKind::backward:
      return "B";
    case PassKind::backward_weight:
      return "W";
  }
  return "?";
}

namespace {

std::vector<PipelinePass> gpipe_rank(int m) {
  std::vector<PipelinePass> passes;
  passes.reserve(2 * static_cast<std::size_t>(m));
  for (int mb = 0; mb < m; ++mb) passes.push_back({PassKind::forward, mb, 0});
  for (int mb = 0; mb < m; ++mb) passes.push_back({PassKind::backward, mb, 0});
  return passes;
}

// PipeDream-flush: a rank runs as many warm-up forwards as there are ranks after it, so that the last
// rank can start its first backward as early as possible, then alternates.
std::vector<PipelinePass> one_f_one_b_rank(int p, int m, int s, bool zero_bubble) {
  std::vector<PipelinePass> passes;
  passes.reserve(3 * static_cast<std::size_t>(m));
  const int warmup = std::min(p - s - 1, m);
  // ZB-H1 lets rank s run s backwards ahead of their weight-gradient (W) passes: the input-gradient chain
  // towards rank 0 then moves at the speed of B alone, and the deferred W passes fill the slots where 1F1B
  // waits. In-flight activations stay at most p per rank, as in 1F1B. (Derived by replaying the order:
  // this placement reaches the paper's bubble (p−1)(F + B − W); deferring p−s−1 instead does not.)
  const int deferred = s;
  int next_w = 0;
  for (int mb = 0; mb < warmup; ++mb) passes.push_back({PassKind::forward, mb, 0});
  for (int i = 0; i < m - warmup; ++i) {
    passes.push_back({PassKind::forward, warmup + i, 0});
    passes.push_back({PassKind::backward, i, 0});
    if (zero_bubble && i >= deferred) passes.push_back({PassKind::backward_weight, next_w++, 0});
  }
  for (int mb = m - warmup; mb < m; ++mb) {
    passes.push_back({PassKind::backward, mb, 0});
    // Cool-down: a rank would idle waiting for the next gradient; one deferred W fills the slot.
    if (zero_bubble && next_w <= mb) passes.push_back({PassKind::backward_weight, next_w++, 0});
  }
  while (zero_bubble && next_w < m) passes.push_back({PassKind::backward_weight, next_w++, 0});
  return passes;
}

// Megatron-LM's interleaved 1F1B (schedules.py, forward_backward_pipelining_with_interleaving): the k-th
// forward of a rank is micro-batch (k / (p·v))·p + k mod p of chunk (k / p) mod v; backwards visit the
// chunks in reverse. Warm-up is (p − s − 1)·2 + (v − 1)·p forwards.
std::vector<PipelinePass> interleaved_rank(int p, int m, int v, int s) {
  const int total = m * v;
  auto micro_batch = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto forward = [&](int k) { return PipelinePass{PassKind::forward, micro_batch(k), (k / p) % v}; };
  auto backward = [&](int k) {
    return PipelinePass{PassKind::backward, micro_batch(k), v - 1 - (k / p) % v};
  };
  const int warmup = (m == p) ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
  std::vector<PipelinePass> passes;
  passes.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) passes.push_back(forward(k));
  for (int i = 0; i < total - warmup; ++i) {
    passes.push_back(forward(warmup + i));
    passes.push_back(backward(i));
  }
  for (int k = total - warmup; k < total; ++k) passes.push_back(backward(k));
  return passes;
}

// Finish times of every pass, indexed [kind][micro_batch][virtual stage] and then by lane (one lane per
// set of pass times replayed together); negative = not run yet. The storage is the calling thread's, reused
// from one replay to the next: a search replays tens of thousands of schedules, and a fresh
// multi-megabyte array each time costs more in page faults than the replay itself.
template <int kLanes>
struct PassClock {
  std::size_t p, m, v;
  std::vector<double>& finish;
  PassClock(int p_, int m_, int v_, std::size_t kinds)
      : p(static_cast<std::size_t>(p_)),
        m(static_cast<std::size_t>(m_)),
        v(static_cast<std::size_t>(v_)),
        finish(storage()) {
    finish.assign(kinds * m * p * v * kLanes, -1.0);
  }
  [[nodiscard]] std::size_t index(PassKind kind, int mb, int vs) const {
    const auto kind_index = static_cast<std::size_t>(kind);
    return ((kind_index * m + static_cast<std::size_t>(mb)) * p * v + static_cast<std::size_t>(vs)) * kLanes;
  }
  double* at(std::size_t i) { return finish.data() + i; }

 private:
  static std::vector<double>& storage() {
    thread_local std::vector<double> buffer;
    return buffer;
  }
};

// The timeline of the first lane, and the rank ends of every lane.
template <int kLanes>
struct Replay {
  bool complete = false;
  ScheduleTimeline timeline;
  std::array<std::vector<double>, kLanes> rank_end;
};

// Runs every rank's list in order, each pass as soon as its rank is free and its dependencies are done,
// once per lane: lane k with times[k]. The lanes share the order, hence which passes are done, and differ
// only in when. A rank runs until a dependency is missing, then waits on that pass; a rank that finishes a
// pass wakes its neighbour (the only other rank whose passes depend on it: virtual stage vs ± 1) if it
// waits on that pass. So every pass is looked at a bounded number of times, O(passes · lanes). A pass's end
// depends only on its rank's previous pass and its inputs, never on which rank advanced first, so the times
// are those of any order of advancing. complete = false means a deadlock or a malformed list.
// kSpans: also record every pass's span of lane 0 into *spans (a template parameter, so the plain replay
// pays nothing for it).
template <int kLanes, bool kSpans = false>
Replay<kLanes> replay(const PipelineOrder& order, int p, int m, int v,
                      const std::array<const PassTimes*, kLanes>& times, PassSpans* spans = nullptr) {
  Replay<kLanes> result;
  if (static_cast<int>(order.size()) != p) return result;
  const bool split = std::any_of(order.begin(), order.end(), [](const auto& rank) {
    return std::any_of(rank.begin(), rank.end(),
                       [](const PipelinePass& x) { return x.kind == PassKind::backward_weight; });
  });
  const auto nvs = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  for (const PassTimes* t : times) {
    TRAINSIM_CHECK(t->forward.size() == nvs && t->backward.size() == nvs &&
                       (t->weight.empty() || t->weight.size() == nvs) &&
                       (t->last_grads_extra.empty() || t->last_grads_extra.size() == nvs),
                   "time_schedule: one cost per virtual stage expected");
  }
  PassClock<kLanes> clock(p, m, v, split ? 3 : 2);
  auto& tl = result.timeline;
  for (auto& end : result.rank_end) end.assign(static_cast<std::size_t>(p), 0.0);
  tl.rank_busy.assign(static_cast<std::size_t>(p), 0.0);
  tl.grads_from.assign(nvs, 0.0);
  tl.grads_ready.assign(nvs, 0.0);
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  if constexpr (kSpans) {
    spans->resize(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      (*spans)[static_cast<std::size_t>(s)].assign(order[static_cast<std::size_t>(s)].size(), PassSpan{});
    }
  }
  constexpr std::size_t kRunnable = ~std::size_t{0};
  // Per rank: the clock index of the pass it waits for, or kRunnable.
  std::vector<std::size_t> waits_for(static_cast<std::size_t>(p), kRunnable);
  std::vector<int> runnable(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) runnable[static_cast<std::size_t>(s)] = p - 1 - s;  // rank 0 first
  const int last_vs = p * v - 1;
  const auto wake = [&](int rank, std::size_t done) {
    auto& w = waits_for[static_cast<std::size_t>(rank)];
    if (w != done) return;
    w = kRunnable;
    runnable.push_back(rank);
  };
  while (!runnable.empty()) {
    const int s = runnable.back();
    runnable.pop_back();
    const auto rank = static_cast<std::size_t>(s);
    const auto& passes = order[rank];
    auto& i = next[rank];
    while (i < passes.size()) {
      const PipelinePass& x = passes[i];
      if (x.micro_batch < 0 || x.micro_batch >= m || x.chunk < 0 || x.chunk >= v) return result;
      const int vs = x.chunk * p + s;
      const auto at_vs = static_cast<std::size_t>(vs);
      // The dependencies: the pass before on another rank (sent: + p2p) and the one before on this rank.
      std::size_t sent = kRunnable;
      std::size_t local = kRunnable;
      switch (x.kind) {
        case PassKind::forward:
          if (vs > 0) sent = clock.index(PassKind::forward, x.micro_batch, vs - 1);
          break;
        case PassKind::backward:
          local = clock.index(PassKind::forward, x.micro_batch, vs);
          if (vs < last_vs) sent = clock.index(PassKind::backward, x.micro_batch, vs + 1);
          break;
        case PassKind::backward_weight:
          local = clock.index(PassKind::backward, x.micro_batch, vs);
          break;
      }
      if (local != kRunnable && *clock.at(local) < 0) {
        waits_for[rank] = local;
        break;
      }
      if (sent != kRunnable && *clock.at(sent) < 0) {
        waits_for[rank] = sent;
        break;
      }
      const std::size_t at = clock.index(x.kind, x.micro_batch, vs);
      double* slot = clock.at(at);
      if (slot[0] >= 0) return result;  // the same pass twice
      const bool produces_grads = split ? x.kind == PassKind::backward_weight : x.kind == PassKind::backward;
      const bool last_grads = produces_grads && x.micro_batch == m - 1;
      for (int k = 0; k < kLanes; ++k) {
        const PassTimes& t = *times[static_cast<std::size_t>(k)];
        const double weight = t.weight.empty() ? 0.0 : t.weight[at_vs];
        double cost = 0;
        switch (x.kind) {
          case PassKind::forward:
            cost = t.forward[at_vs];
            break;
          case PassKind::backward:
            cost = t.backward[at_vs] - (split ? weight : 0.0);
            break;
          case PassKind::backward_weight:
            cost = weight;
            break;
        }
        if (last_grads && !t.last_grads_extra.empty()) cost += t.last_grads_extra[at_vs];
        double& rank_free = result.rank_end[static_cast<std::size_t>(k)][rank];
        double ready = rank_free;
        if (local != kRunnable) ready = std::max(ready, clock.at(local)[k]);
        if (sent != kRunnable) ready = std::max(ready, clock.at(sent)[k] + t.p2p_s);
        slot[k] = ready + cost;
        rank_free = slot[k];
        if (k == 0) {
          if constexpr (kSpans) (*spans)[rank][i] = PassSpan{ready, slot[0]};
          tl.rank_busy[rank] += cost;
          if (produces_grads && slot[0] >= tl.grads_ready[at_vs]) {
            tl.grads_from[at_vs] = ready;
            tl.grads_ready[at_vs] = slot[0];
          }
        }
      }
      ++i;
      if (p > 1) {
        wake((s + 1) % p, at);
        wake((s + p - 1) % p, at);
      }
    }
  }
  for (int s = 0; s < p; ++s) {
    if (next[static_cast<std::size_t>(s)] != order[static_cast<std::size_t>(s)].size()) return result;
  }
  // Every pass ran exactly once (none twice, and the counts below are the full sets).
  const std::size_t per_rank = (split ? 3U : 2U) * static_cast<std::size_t>(m) * static_cast<std::size_t>(v);
  for (const auto& rank : order) {
    if (rank.size() != per_rank) return result;
  }
  result.complete = true;
  tl.rank_end = result.rank_end[0];
  tl.makespan = *std::max_element(tl.rank_end.begin(), tl.rank_end.end());
  return result;
}

PassTimes uniform_times(int p, int v, double forward_s, double backward_s, double weight_s) {
  const auto n = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  return PassTimes{std::vector<double>(n, forward_s), std::vector<double>(n, backward_s),
                   std::vector<double>(n, weight_s), 0.0};
}

}  // namespace

std::string_view schedule_constraint_error(Schedule kind, int p, int m, int v) {
  if (p < 1) return "pipeline degree must be at least 1";
  if (m < 1) return "a step needs at least one micro-batch";
  if (v < 1) return "virtual_stages must be at least 1";
  if (kind == Schedule::interleaved) {
    if (v > 1 && p == 1) return "the interleaved schedule needs pp > 1";
    if (v > 1 && m % p != 0)
      return "the interleaved schedule needs the micro-batch count to be a multiple of pp";
  } else if (v != 1) {
    return "virtual_stages > 1 needs the interleaved schedule";
  }
  return "";
}

PipelineOrder pipeline_schedule(Schedule kind, int p, int m, int v) {
  if (const auto why = schedule_constraint_error(kind, p, m, v); !why.empty())
    throw InputError(std::string(why));
  PipelineOrder order(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    auto& rank = order[static_cast<std::size_t>(s)];
    switch (kind) {
      case Schedule::gpipe:
        rank = gpipe_rank(m);
        break;
      case Schedule::one_f_one_b:
        rank = one_f_one_b_rank(p, m, s, false);
        break;
      case Schedule::interleaved:
        rank = v == 1 ? one_f_one_b_rank(p, m, s, false) : interleaved_rank(p, m, v, s);
        break;
      case Schedule::zero_bubble_h1:
        rank = one_f_one_b_rank(p, m, s, true);
        break;
    }
  }
  return order;
}

std::shared_ptr<const PipelineOrder> shared_pipeline_schedule(Schedule kind, int p, int m, int v) {
  thread_local RecentResults<std::tuple<Schedule, int, int, int>, std::shared_ptr<const PipelineOrder>, 8>
      kept;
  return kept.get_or_compute(std::tuple{kind, p, m, v}, [&] {
    return std::make_shared<const PipelineOrder>(pipeline_schedule(kind, p, m, v));
  });
}

bool schedule_is_valid(const PipelineOrder& order, int p, int m, int v) {
  if (p < 1 || m < 1 || v < 1) return false;
  if (static_cast<int>(order.size()) != p) return false;
  const PassTimes times = uniform_times(p, v, 1.0, 2.0, 1.0);
  return replay<1>(order, p, m, v, {&times}).complete;
}

int peak_in_flight(const std::vector<PipelinePass>& rank_passes) {
  int live = 0;
  int peak = 0;
  for (const PipelinePass& x : rank_passes) {
    if (x.kind == PassKind::forward) peak = std::max(peak, ++live);
    if (x.kind == PassKind::backward) --live;
  }
  return peak;
}

ScheduleTimeline time_schedule(const PipelineOrder& order, int p, int m, int v, const PassTimes& times,
                               PassSpans* spans) {
  Replay<1> r = spans != nullptr ? replay<1, true>(order, p, m, v, {&times}, spans)
                                 : replay<1>(order, p, m, v, {&times});
  TRAINSIM_CHECK(r.complete, "time_schedule: the schedule deadlocks or is malformed");
  return std::move(r.timeline);
}

ScheduleTimelines time_schedule_twice(const PipelineOrder& order, int p, int m, int v, const PassTimes& times,
                                      const PassTimes& other, PassSpans* spans) {
  Replay<2> r = spans != nullptr ? replay<2, true>(order, p, m, v, {&times, &other}, spans)
                                 : replay<2>(order, p, m, v, {&times, &other});
  TRAINSIM_CHECK(r.complete, "time_schedule: the schedule deadlocks or is malformed");
  return ScheduleTimelines{.timeline = std::move(r.timeline), .other_rank_end = std::move(r.rank_end[1])};
}

double schedule_makespan(const PipelineOrder& order, int p, int m, int v, double forward_s, double backward_s,
                         double weight_s) {
  return time_schedule(order, p, m, v, uniform_times(p, v, forward_s, backward_s, weight_s)).makespan;
}

}  // namespace trainsim::model
