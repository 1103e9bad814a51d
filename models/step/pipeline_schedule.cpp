#include "models/step/pipeline_schedule.hpp"

#include <algorithm>
#include <string>
#include <utility>

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

// Finish times of every pass, indexed [kind][micro_batch][virtual stage]; negative = not run yet.
struct PassClock {
  std::size_t p, m, v;
  std::vector<double> finish;
  PassClock(int p_, int m_, int v_)
      : p(static_cast<std::size_t>(p_)),
        m(static_cast<std::size_t>(m_)),
        v(static_cast<std::size_t>(v_)),
        finish(3 * m * p * v, -1.0) {}
  double& at(PassKind kind, int mb, int vs) {
    const auto kind_index = static_cast<std::size_t>(kind);
    return finish[(kind_index * m + static_cast<std::size_t>(mb)) * p * v + static_cast<std::size_t>(vs)];
  }
};

struct Replay {
  bool complete = false;
  ScheduleTimeline timeline;
};

// Runs every rank's list in order, each pass as soon as its rank is free and its dependencies are done.
// Sweeps the ranks until no rank can advance: complete = false means a deadlock or a malformed list.
// kSpans: also record every pass's span into *spans (a template parameter, so the plain replay pays
// nothing for it).
template <bool kSpans = false>
Replay replay(const PipelineOrder& order, int p, int m, int v, const PassTimes& times,
              PassSpans* spans = nullptr) {
  Replay result;
  if (static_cast<int>(order.size()) != p) return result;
  const bool split = std::any_of(order.begin(), order.end(), [](const auto& rank) {
    return std::any_of(rank.begin(), rank.end(),
                       [](const PipelinePass& x) { return x.kind == PassKind::backward_weight; });
  });
  const auto nvs = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  TRAINSIM_CHECK(times.forward.size() == nvs && times.backward.size() == nvs &&
                     (times.weight.empty() || times.weight.size() == nvs) &&
                     (times.last_grads_extra.empty() || times.last_grads_extra.size() == nvs),
                 "time_schedule: one cost per virtual stage expected");
  auto weight = [&](int vs) {
    return times.weight.empty() ? 0.0 : times.weight[static_cast<std::size_t>(vs)];
  };
  PassClock clock(p, m, v);
  auto& tl = result.timeline;
  tl.rank_end.assign(static_cast<std::size_t>(p), 0.0);
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
  const int last_vs = p * v - 1;
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      const auto& passes = order[static_cast<std::size_t>(s)];
      auto& i = next[static_cast<std::size_t>(s)];
      auto& rank_free = tl.rank_end[static_cast<std::size_t>(s)];
      while (i < passes.size()) {
        const PipelinePass& x = passes[i];
        if (x.micro_batch < 0 || x.micro_batch >= m || x.chunk < 0 || x.chunk >= v) return result;
        const int vs = x.chunk * p + s;
        double ready = rank_free;
        double cost = 0;
        bool deps_done = true;
        auto need = [&](PassKind kind, int stage, double delay) {
          const double t = clock.at(kind, x.micro_batch, stage);
          if (t < 0) deps_done = false;
          ready = std::max(ready, t + delay);
        };
        switch (x.kind) {
          case PassKind::forward:
            if (vs > 0) need(PassKind::forward, vs - 1, times.p2p_s);
            cost = times.forward[static_cast<std::size_t>(vs)];
            break;
          case PassKind::backward:
            need(PassKind::forward, vs, 0);
            if (vs < last_vs) need(PassKind::backward, vs + 1, times.p2p_s);
            cost = times.backward[static_cast<std::size_t>(vs)] - (split ? weight(vs) : 0.0);
            break;
          case PassKind::backward_weight:
            need(PassKind::backward, vs, 0);
            cost = weight(vs);
            break;
        }
        if (!deps_done) break;
        const bool produces_grads =
            split ? x.kind == PassKind::backward_weight : x.kind == PassKind::backward;
        if (produces_grads && x.micro_batch == m - 1 && !times.last_grads_extra.empty())
          cost += times.last_grads_extra[static_cast<std::size_t>(vs)];
        double& slot = clock.at(x.kind, x.micro_batch, vs);
        if (slot >= 0) return result;  // the same pass twice
        slot = ready + cost;
        rank_free = slot;
        if constexpr (kSpans) (*spans)[static_cast<std::size_t>(s)][i] = PassSpan{ready, slot};
        tl.rank_busy[static_cast<std::size_t>(s)] += cost;
        if (produces_grads && slot >= tl.grads_ready[static_cast<std::size_t>(vs)]) {
          tl.grads_from[static_cast<std::size_t>(vs)] = ready;
          tl.grads_ready[static_cast<std::size_t>(vs)] = slot;
        }
        ++i;
        progress = true;
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

bool schedule_is_valid(const PipelineOrder& order, int p, int m, int v) {
  if (p < 1 || m < 1 || v < 1) return false;
  if (static_cast<int>(order.size()) != p) return false;
  return replay(order, p, m, v, uniform_times(p, v, 1.0, 2.0, 1.0)).complete;
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
  Replay r = spans != nullptr ? replay<true>(order, p, m, v, times, spans) : replay(order, p, m, v, times);
  TRAINSIM_CHECK(r.complete, "time_schedule: the schedule deadlocks or is malformed");
  return std::move(r.timeline);
}

double schedule_makespan(const PipelineOrder& order, int p, int m, int v, double forward_s, double backward_s,
                         double weight_s) {
  return time_schedule(order, p, m, v, uniform_times(p, v, forward_s, backward_s, weight_s)).makespan;
}

}  // namespace trainsim::model
