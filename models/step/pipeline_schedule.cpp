#include "models/step/pipeline_schedule.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "models/step/merged_passes.hpp"
#include "sim/error.hpp"
#include "sim/recent_results.hpp"

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
  const int warmup = one_f_one_b_warm_up(p, m, s);
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

// DeepSeek's DualPipeV program for rank r of d (deepseek-ai/DualPipe, dualpipev.py, DualPipeV.step()): its
// eight steps, each send, receive, batch wait and computation where that code issues it. Phase 0 is chunk 0
// (virtual stage r), phase 1 chunk 1 (virtual stage 2d−1−r); the last rank hands chunk 0's output to its
// own chunk 1 without a message. A backward "with zero bubble" defers its weight gradients, which a later
// weight step computes (first deferred, first computed); any other backward computes them at once (B then
// W as one step). An F&B step is one micro-batch's forward and another's whole backward, one step.
struct DualPipeVRank {
  DualPipeVRank(int ranks, int micro_batches, int rank, std::vector<PipelinePass>& rank_passes,
                std::vector<ProgramAction>& rank_program)
      : d(ranks), m(micro_batches), r(rank), passes(rank_passes), program(rank_program) {}
  int d, m, r;
  std::vector<PipelinePass>& passes;
  std::vector<ProgramAction>& program;
  std::array<int, 2> forwards{}, backwards{}, sent_forward{}, sent_backward{}, recv_forward{},
      recv_backward{};
  std::deque<PipelinePass> deferred_weights;

  [[nodiscard]] bool first() const { return r == 0; }
  [[nodiscard]] bool last() const { return r == d - 1; }
  [[nodiscard]] int vs(int chunk) const { return virtual_stage_of(Schedule::dualpipev, chunk, r, d); }
  void post(ProgramAction::Kind kind, bool gradient, int mb, int to) {
    program.push_back(ProgramAction{kind, gradient, mb, to, 0});
  }
  void post_recv_forward(int c) {
    if (first() && c == 0) return;  // the first virtual stage reads the data
    const int mb = recv_forward[static_cast<std::size_t>(c)]++;
    if (last() && c == 1) return;  // chunk 0's output on this rank
    post(ProgramAction::Kind::post_recv, false, mb, vs(c));
  }
  void post_send_forward(int c) {
    if (first() && c == 1) return;  // the last virtual stage: the loss
    const int mb = sent_forward[static_cast<std::size_t>(c)]++;
    if (last() && c == 0) return;
    post(ProgramAction::Kind::post_send, false, mb, vs(c) + 1);
  }
  void post_recv_backward(int c) {
    if (first() && c == 1) return;
    const int mb = recv_backward[static_cast<std::size_t>(c)]++;
    if (last() && c == 0) return;
    post(ProgramAction::Kind::post_recv, true, mb, vs(c));
  }
  void post_send_backward(int c) {
    if (first() && c == 0) return;
    const int mb = sent_backward[static_cast<std::size_t>(c)]++;
    if (last() && c == 1) return;
    post(ProgramAction::Kind::post_send, true, mb, vs(c) - 1);
  }
  void commit() { program.push_back(ProgramAction{ProgramAction::Kind::commit, false, 0, 0, 0}); }
  void compute(int count) {
    program.push_back(ProgramAction{ProgramAction::Kind::compute, false, 0, 0, count});
  }
  void forward_pass(int c) {
    passes.push_back({PassKind::forward, forwards[static_cast<std::size_t>(c)]++, c});
  }
  // Returns how many passes it added: B, or B and W.
  int backward_pass(int c, bool defer_weights) {
    const PipelinePass b{PassKind::backward, backwards[static_cast<std::size_t>(c)]++, c};
    passes.push_back(b);
    const PipelinePass w{PassKind::backward_weight, b.micro_batch, c};
    if (defer_weights) {
      deferred_weights.push_back(w);
      return 1;
    }
    passes.push_back(w);
    return 2;
  }
  void forward_chunk(int c, bool recv = true, bool send = true) {
    if (recv) post_recv_forward(c);
    commit();
    forward_pass(c);
    compute(1);
    if (send) post_send_forward(c);
  }
  void backward_chunk(int c, bool defer_weights = false, bool send = true) {
    post_recv_backward(c);
    commit();
    compute(backward_pass(c, defer_weights));
    if (send) post_send_backward(c);
  }
  void forward_backward_chunk(int c0, int c1, bool recv0 = true) {
    if (recv0) post_recv_forward(c0);
    post_recv_backward(c1);
    commit();
    forward_pass(c0);
    compute(1 + backward_pass(c1, false));
    post_send_forward(c0);
    post_send_backward(c1);
  }
  void weight_chunk() {
    commit();
    passes.push_back(deferred_weights.front());
    deferred_weights.pop_front();
    compute(1);
  }

  void build() {
    for (int i = 0; i < (d - r - 1) * 2; ++i) forward_chunk(0);  // 1: nF0
    post_recv_forward(0);                                        // 2: nF0F1
    for (int i = 0; i < r + 1; ++i) {
      forward_chunk(0, false, false);
      post_recv_forward(0);
      forward_chunk(1, true, !last() || i < r);
      post_send_forward(0);
    }
    for (int i = 0; i < d - r - 1; ++i) {  // 3: nB1W1F1
      backward_chunk(1, true);
      post_recv_forward(1);
      weight_chunk();
      forward_chunk(1, false);
    }
    for (int i = 0; i < m - 2 * d + r + 1; ++i) {  // 4: nF0B1F1B0
      if (i == 0 && last()) {
        // DeepSeek does not overlap these two, to shorten the bubble.
        forward_chunk(0, false, false);
        post_send_forward(1);
        backward_chunk(1, false, false);
        post_send_forward(0);
        post_send_backward(1);
      } else {
        forward_backward_chunk(0, 1, i != 0);
      }
      forward_backward_chunk(1, 0);
    }
    for (int i = 0; i < d - r - 1; ++i) {  // 5: nB1F1B0
      backward_chunk(1);
      forward_backward_chunk(1, 0);
    }
    bool defer = false;  // 6: nB1B0, the second half with zero bubble
    for (int i = 0; i < r + 1; ++i) {
      if (i == (r + 1) / 2 && r % 2 == 1) defer = true;
      backward_chunk(1, defer);
      if (i == (r + 1) / 2 && r % 2 == 0) defer = true;
      backward_chunk(0, defer);
    }
    for (int i = 0; i < d - r - 1; ++i) {  // 7: nWB0
      weight_chunk();
      backward_chunk(0, true);
    }
    for (int i = 0; i < r + 1; ++i) weight_chunk();  // 8: nW
    commit();
  }
};

// Qi et al.'s ZB-V (sail-sg/zero-bubble-pipeline-parallelism, the handcrafted get_zb_v_schedule; "Pipeline
// Parallelism with Controllable Memory", arXiv:2405.15362, V-ZB) on rank r of p: 2(p−r)−1 forwards of
// chunk 0; r pairs of forwards (chunk 1, chunk 0); p−r steps of chunk 1's F, B, W; then F0 B0 W0 F1 B1 W1
// until every forward has run; then r pairs of backwards (B0, B1) with their W deferred, p−r of B0 W0, and
// the deferred W passes. Built for max(m, 2p−1) micro-batches, the passes of those past m dropped.
std::vector<PipelinePass> zb_v_rank(int p, int m, int r) {
  const int n = std::max(m, 2 * p - 1);
  std::vector<PipelinePass> passes;
  std::array<int, 2> f{}, b{};
  auto add = [&](PassKind kind, int mb, int chunk) {
    if (mb < m) passes.push_back({kind, mb, chunk});
  };
  auto forward = [&](int c) { add(PassKind::forward, f[static_cast<std::size_t>(c)]++, c); };
  auto backward = [&](int c, bool weight) {
    const int mb = b[static_cast<std::size_t>(c)]++;
    add(PassKind::backward, mb, c);
    if (weight) add(PassKind::backward_weight, mb, c);
  };
  for (int i = 0; i < 2 * (p - r) - 1; ++i) forward(0);
  for (int i = 0; i < r; ++i) {
    forward(1);
    forward(0);
  }
  for (int i = 0; i < p - r; ++i) {
    forward(1);
    backward(1, true);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n) forward(0);
    backward(0, true);
    forward(1);
    backward(1, true);
  }
  std::array<int, 2> w = b;  // the W passes not yet run start here
  for (int i = 0; i < r; ++i) {
    backward(0, false);
    backward(1, false);
  }
  for (int i = 0; i < p - r; ++i) {
    backward(0, false);
    add(PassKind::backward_weight, w[0]++, 0);
  }
  while (w[1] < b[1]) add(PassKind::backward_weight, w[1]++, 1);
  while (w[0] < b[0]) add(PassKind::backward_weight, w[0]++, 0);
  return passes;
}

// Finish times of every pass, indexed [kind][micro_batch][virtual stage] and then by lane (one lane per
// set of pass times replayed together); negative = not run yet. The storage is the calling thread's, reused
// from one replay to the next: a search replays tens of thousands of schedules, and a fresh
// multi-megabyte array each time costs more in page faults than the replay itself. Without lanes (kLanes 0:
// a walk that only records the order, ScheduleReplay) there is no storage: its indices, one per pass, index
// the recording's positions, which say whether a pass ran.
template <int kLanes>
struct PassClock {
  static constexpr std::size_t kSlots = std::max<std::size_t>(kLanes, 1);
  std::size_t p, m, v;
  std::vector<double>& finish;
  PassClock(int p_, int m_, int v_, std::size_t kinds)
      : p(static_cast<std::size_t>(p_)),
        m(static_cast<std::size_t>(m_)),
        v(static_cast<std::size_t>(v_)),
        finish(storage()) {
    finish.assign(kLanes > 0 ? kinds * m * p * v * kSlots : 0, -1.0);
  }
  [[nodiscard]] std::size_t index(PassKind kind, int mb, int vs) const {
    const auto kind_index = static_cast<std::size_t>(kind);
    return ((kind_index * m + static_cast<std::size_t>(mb)) * p * v + static_cast<std::size_t>(vs)) * kSlots;
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

// Whether the order runs weight-gradient (W) passes apart from their backwards (ZB-H1).
bool runs_weight_passes(const PipelineOrder& order) {
  return std::any_of(order.begin(), order.end(), [](const auto& rank) {
    return std::any_of(rank.begin(), rank.end(),
                       [](const PipelinePass& x) { return x.kind == PassKind::backward_weight; });
  });
}

// Every lane gives one cost per virtual stage (`stages` of them).
template <int kLanes>
void check_stage_times(const std::array<const PassTimes*, kLanes>& times, std::size_t stages) {
  for (const PassTimes* t : times) {
    TRAINSIM_CHECK(t->forward.size() == stages && t->backward.size() == stages &&
                       (t->weight.empty() || t->weight.size() == stages) &&
                       (t->forward_alone.empty() || t->forward_alone.size() == stages) &&
                       (t->backward_alone.empty() || t->backward_alone.size() == stages) &&
                       (t->last_grads_extra.empty() || t->last_grads_extra.size() == stages),
                   "time_schedule: one cost per virtual stage expected");
  }
}

// No pass: a pass without that input, or a rank that waits for nothing.
constexpr std::size_t kNoPass = ~std::size_t{0};

// A pass's inputs as clock indices: the pass before it on another rank (`sent`: its end + p2p) and the one
// before it on its own rank (`local`); kNoPass where there is none.
struct PassInputs {
  std::size_t sent = kNoPass;
  std::size_t local = kNoPass;
};

template <int kLanes>
PassInputs pass_inputs(const PipelinePass& x, int vs, int last_vs, const PassClock<kLanes>& clock) {
  PassInputs in;
  switch (x.kind) {
    case PassKind::forward:
      if (vs > 0) in.sent = clock.index(PassKind::forward, x.micro_batch, vs - 1);
      break;
    case PassKind::backward:
      in.local = clock.index(PassKind::forward, x.micro_batch, vs);
      if (vs < last_vs) in.sent = clock.index(PassKind::backward, x.micro_batch, vs + 1);
      break;
    case PassKind::backward_weight:
      in.local = clock.index(PassKind::backward, x.micro_batch, vs);
      break;
  }
  return in;
}

// A recorded pass's cost index (RecordedSchedule::Pass::code): one per kind, last micro-batch's gradients,
// run alone and virtual stage.
constexpr std::size_t kRecordedCostKinds = kPassKindCount * 2 * 2;
constexpr std::size_t recorded_cost_index(PassKind kind, bool last_grads, bool alone, std::size_t nvs,
                                          std::size_t vs) {
  return ((static_cast<std::size_t>(kind) * 2 + (last_grads ? 1 : 0)) * 2 + (alone ? 1 : 0)) * nvs + vs;
}

// A pass's own seconds on one lane at virtual stage `vs`: a forward's; a backward's, less its weight-
// gradient part when W passes run apart (`split`); a W pass's that part; the last micro-batch's pass that
// produces the gradients adds last_grads_extra; a forward or backward run `alone` adds forward_alone or
// backward_alone.
double pass_cost(const PassTimes& t, PassKind kind, std::size_t vs, bool split, bool last_grads, bool alone) {
  const double weight = t.weight.empty() ? 0.0 : t.weight[vs];
  double cost = 0;
  switch (kind) {
    case PassKind::forward:
      cost = t.forward[vs] + (alone && !t.forward_alone.empty() ? t.forward_alone[vs] : 0.0);
      break;
    case PassKind::backward:
      cost = t.backward[vs] - (split ? weight : 0.0) +
             (alone && !t.backward_alone.empty() ? t.backward_alone[vs] : 0.0);
      break;
    case PassKind::backward_weight:
      cost = weight;
      break;
  }
  if (last_grads && !t.last_grads_extra.empty()) cost += t.last_grads_extra[vs];
  return cost;
}

// A replay before its first pass: every rank free at 0 and idle so far, no gradients yet; with kSpans, one
// span per pass of each rank's list in *spans.
template <int kLanes, bool kSpans>
void start_replay(Replay<kLanes>& result, const PipelineOrder& order, int p, int v, PassSpans* spans) {
  const auto nvs = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  auto& tl = result.timeline;
  for (auto& end : result.rank_end) end.assign(static_cast<std::size_t>(p), 0.0);
  tl.rank_busy.assign(static_cast<std::size_t>(p), 0.0);
  tl.grads_from.assign(nvs, 0.0);
  tl.grads_ready.assign(nvs, 0.0);
  if constexpr (kSpans) {
    spans->resize(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      (*spans)[static_cast<std::size_t>(s)].assign(order[static_cast<std::size_t>(s)].size(), PassSpan{});
    }
  }
}

// A replay that timed every pass: complete, its timeline that of lane 0 (none without lanes).
template <int kLanes>
Replay<kLanes> complete_timeline(Replay<kLanes> result) {
  result.complete = true;
  if constexpr (kLanes > 0) {
    result.timeline.rank_end = result.rank_end[0];
    result.timeline.makespan =
        *std::max_element(result.timeline.rank_end.begin(), result.timeline.rank_end.end());
  }
  return result;
}

// A replay that ran every rank's list to its end: complete when every list holds `per_rank` passes (with
// none run twice, every pass once), its timeline then that of lane 0.
template <int kLanes>
Replay<kLanes> complete_replay(Replay<kLanes> result, const PipelineOrder& order, std::size_t per_rank) {
  for (const auto& rank : order) {
    if (rank.size() != per_rank) return result;
  }
  return complete_timeline(std::move(result));
}

// Runs a DualPipeV program (PipelineOrder::program), once per lane. A rank runs its actions in order: a
// post joins the batch it is building; a commit issues the batch when the rank gets there (each message
// is issued once, at that moment) and waits until every message of it is issued at its other end too,
// then until the hand-over (p2p_s) is done; a compute step runs its passes back to back. A rank that waits
// on a message is retried after any other rank advances: the programs are short (a few actions per pass).
template <int kLanes, bool kSpans>
Replay<kLanes> run_program(const PipelineOrder& order, int p, int m, int v,
                           const std::array<const PassTimes*, kLanes>& times, PassSpans* spans) {
  Replay<kLanes> result;
  const auto& program = order.program;
  if (static_cast<int>(program.size()) != p || v != 2) return result;
  const int nvs = p * v;
  const auto nvs_size = static_cast<std::size_t>(nvs);
  check_stage_times<kLanes>(times, nvs_size);
  start_replay<kLanes, kSpans>(result, order, p, v, spans);
  auto& tl = result.timeline;
  // When each message was issued at each end (negative: not yet), per lane.
  const auto message = [&](const ProgramAction& a) {
    return ((a.gradient ? 1U : 0U) * static_cast<std::size_t>(m) + static_cast<std::size_t>(a.micro_batch)) *
               nvs_size +
           static_cast<std::size_t>(a.to_virtual_stage);
  };
  const std::size_t messages = 2 * static_cast<std::size_t>(m) * nvs_size;
  for (int k = 0; k < kLanes; ++k) {
    const PassTimes& t = *times[static_cast<std::size_t>(k)];
    std::vector<double> sent(messages, -1.0), received(messages, -1.0);
    std::vector<double> now(static_cast<std::size_t>(p), 0.0);
    std::vector<std::size_t> at(static_cast<std::size_t>(p), 0), next_pass(static_cast<std::size_t>(p), 0);
    std::vector<std::size_t> batch_from(static_cast<std::size_t>(p), 0);  // first post of the open batch
    std::vector<bool> issued(static_cast<std::size_t>(p), false);
    for (bool progress = true; progress;) {
      progress = false;
      for (int s = 0; s < p; ++s) {
        const auto rank = static_cast<std::size_t>(s);
        const auto& actions = program[rank];
        const auto& passes = order[rank];
        while (at[rank] < actions.size()) {
          const ProgramAction& a = actions[at[rank]];
          if (a.kind == ProgramAction::Kind::post_recv || a.kind == ProgramAction::Kind::post_send) {
            ++at[rank];
            continue;
          }
          if (a.kind == ProgramAction::Kind::commit) {
            if (!issued[rank]) {
              for (std::size_t i = batch_from[rank]; i < at[rank]; ++i) {
                const ProgramAction& x = actions[i];
                if (x.kind == ProgramAction::Kind::commit || x.kind == ProgramAction::Kind::compute) continue;
                auto& mine = x.kind == ProgramAction::Kind::post_send ? sent : received;
                if (mine[message(x)] >= 0) return result;  // the same message twice
                mine[message(x)] = now[rank];
              }
              issued[rank] = true;
              progress = true;
            }
            double done = now[rank];
            bool complete = true;
            for (std::size_t i = batch_from[rank]; i < at[rank] && complete; ++i) {
              const ProgramAction& x = actions[i];
              if (x.kind == ProgramAction::Kind::commit || x.kind == ProgramAction::Kind::compute) continue;
              const double other = (x.kind == ProgramAction::Kind::post_send ? received : sent)[message(x)];
              if (other < 0) complete = false;
              done = std::max(done, std::max(other, now[rank]) + t.p2p_s);
            }
            if (!complete) break;
            now[rank] = done;
            issued[rank] = false;
            batch_from[rank] = ++at[rank];
            progress = true;
            continue;
          }
          // compute: the next a.passes passes, back to back.
          for (int j = 0; j < a.passes; ++j) {
            const std::size_t i = next_pass[rank]++;
            if (i >= passes.size()) return result;
            const PipelinePass& x = passes[i];
            const auto vs = static_cast<std::size_t>(virtual_stage_of(Schedule::dualpipev, x.chunk, s, p));
            const bool last_grads = x.kind == PassKind::backward_weight && x.micro_batch == m - 1;
            const double cost = pass_cost(t, x.kind, vs, true, last_grads, runs_alone(order, rank, i));
            const double start = now[rank];
            now[rank] += cost;
            if (k == 0) {
              if constexpr (kSpans) (*spans)[rank][i] = PassSpan{start, now[rank]};
              tl.rank_busy[rank] += cost;
              if (last_grads) {
                tl.grads_from[vs] = start;
                tl.grads_ready[vs] = now[rank];
              }
            }
          }
          batch_from[rank] = ++at[rank];
          progress = true;
        }
      }
    }
    for (int s = 0; s < p; ++s) {
      const auto rank = static_cast<std::size_t>(s);
      if (at[rank] != program[rank].size() || next_pass[rank] != order[rank].size()) return result;
    }
    result.rank_end[static_cast<std::size_t>(k)] = now;
  }
  return complete_replay(std::move(result), order,
                         3U * static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
}

// Runs every rank's list in order, each pass as soon as its rank is free and its dependencies are done,
// once per lane: lane k with times[k]. The lanes share the order, hence which passes are done, and differ
// only in when. A rank runs until a dependency is missing, then waits on that pass; a rank that finishes a
// pass wakes its neighbour (the only other rank whose passes depend on it: virtual stage vs ± 1) if it
// waits on that pass. So every pass is looked at a bounded number of times, O(passes · lanes). A pass's end
// depends only on its rank's previous pass and its inputs, never on which rank advanced first, so the times
// are those of any order of advancing. complete = false means a deadlock or a malformed list.
// kSpans: also record every pass's span of lane 0 into *spans (a template parameter, so the plain replay
// pays nothing for it). kLanes = 0 times nothing and writes every pass into `recorded` (RecordedSchedule):
// record_schedule's walk.
template <int kLanes, bool kSpans>
class ScheduleReplay {
 public:
  ScheduleReplay(const PipelineOrder& order, int p, int m, int v, bool split,
                 const std::array<const PassTimes*, kLanes>& times, PassSpans* spans,
                 RecordedSchedule* recorded)
      : order_(order),
        p_(p),
        m_(m),
        v_(v),
        split_(split),
        v_shape_(is_v_shape(order.kind)),
        times_(times),
        spans_(spans),
        clock_(p, m, v, split ? 3 : 2),
        next_(static_cast<std::size_t>(p), 0),
        waits_for_(static_cast<std::size_t>(p), kNoPass),
        runnable_(static_cast<std::size_t>(p)),
        recorded_(recorded) {
    if constexpr (kLanes == 0) TRAINSIM_CHECK(recorded != nullptr, "a replay without lanes only records");
    start_replay<kLanes, kSpans>(result_, order, p, v, spans);
    for (int s = 0; s < p; ++s) runnable_[static_cast<std::size_t>(s)] = p - 1 - s;  // rank 0 first
    if constexpr (kLanes == 0) start_recording(split);
  }

  Replay<kLanes> run() && {
    while (!runnable_.empty()) {
      const int s = runnable_.back();
      runnable_.pop_back();
      if (!advance(s)) return std::move(result_);
    }
    // Every rank at the end of its list; complete_replay checks that the lists are the full sets (so that,
    // none run twice, every pass ran once).
    for (int s = 0; s < p_; ++s) {
      if (next_[static_cast<std::size_t>(s)] != order_[static_cast<std::size_t>(s)].size())
        return std::move(result_);
    }
    return complete_replay(std::move(result_), order_,
                           (split_ ? 3U : 2U) * static_cast<std::size_t>(m_) * static_cast<std::size_t>(v_));
  }

 private:
  void start_recording(bool split) {
    RecordedSchedule& r = *recorded_;
    r = RecordedSchedule{.p = p_, .m = m_, .v = v_, .split = split};
    const auto nvs = static_cast<std::size_t>(p_) * static_cast<std::size_t>(v_);
    r.passes.reserve((split ? 3 : 2) * static_cast<std::size_t>(m_) * nvs);
    r.rank_of_stage.resize(nvs);
    for (std::size_t vs = 0; vs < nvs; ++vs)
      r.rank_of_stage[vs] =
          static_cast<std::uint32_t>(rank_of_virtual_stage(order_.kind, static_cast<int>(vs), p_));
    r.last_of_rank.assign(static_cast<std::size_t>(p_), RecordedSchedule::kRankStart);
    position_of_.assign((split ? 3 : 2) * static_cast<std::size_t>(m_) * nvs, RecordedSchedule::kNoInput);
  }

  // The recording's position of the pass at clock index `at`.
  [[nodiscard]] std::uint32_t position(std::size_t at) const {
    return at == kNoPass ? RecordedSchedule::kNoInput : position_of_[at / PassClock<kLanes>::kSlots];
  }

  // Writes the pass just timed (clock index `at`) into the recording.
  void record(PassKind kind, std::size_t vs, std::size_t at, const PassInputs& in, std::size_t rank,
              bool last_grads, bool alone, bool hand_over, bool produces_grads) {
    RecordedSchedule& r = *recorded_;
    const std::size_t nvs = r.rank_of_stage.size();
    const auto cost = recorded_cost_index(kind, last_grads, alone, nvs, vs);
    const auto here = static_cast<std::uint32_t>(r.passes.size() + RecordedSchedule::kFirstPass);
    r.passes.push_back(RecordedSchedule::Pass{
        .previous = r.last_of_rank[rank],
        .local = position(in.local),
        .sent = position(in.sent),
        .code = static_cast<std::uint32_t>(cost) | (hand_over ? RecordedSchedule::kHandOver : 0U) |
                (produces_grads ? RecordedSchedule::kProducesGrads : 0U)});
    position_of_[at / PassClock<kLanes>::kSlots] = here;
    r.last_of_rank[rank] = here;
  }

  // Runs rank s's passes in order until one waits for an input not yet done (recorded in waits_for_).
  // false: a malformed list (a pass outside the schedule, or the same pass twice).
  bool advance(int s) {
    const auto rank = static_cast<std::size_t>(s);
    const auto& passes = order_[rank];
    auto& i = next_[rank];
    while (i < passes.size()) {
      const PipelinePass& x = passes[i];
      if (x.micro_batch < 0 || x.micro_batch >= m_ || x.chunk < 0 || x.chunk >= v_) return false;
      const int vs = virtual_stage_of(order_.kind, x.chunk, s, p_);
      const PassInputs in = pass_inputs(x, vs, p_ * v_ - 1, clock_);
      if (in.local != kNoPass && !ran(in.local)) {
        waits_for_[rank] = in.local;
        return true;
      }
      if (in.sent != kNoPass && !ran(in.sent)) {
        waits_for_[rank] = in.sent;
        return true;
      }
      const std::size_t at = clock_.index(x.kind, x.micro_batch, vs);
      if (ran(at)) return false;  // the same pass twice
      time_pass(x, static_cast<std::size_t>(vs), at, in, rank, i);
      ++i;
      if (p_ > 1) {
        wake(s + 1 == p_ ? 0 : s + 1, at);
        wake(s == 0 ? p_ - 1 : s - 1, at);
      }
    }
    return true;
  }

  // Times the pass (clock index `at`, the i-th of its rank) on every lane: it ends its cost after its rank
  // is free and its inputs are done. Lane 0 also gives the timeline: the rank's busy time, the pass's span,
  // and each stage's gradients from the pass that produces them last.
  void time_pass(const PipelinePass& x, std::size_t vs, std::size_t at, const PassInputs& in,
                 std::size_t rank, std::size_t i) {
    auto& tl = result_.timeline;
    double* slot = kLanes > 0 ? clock_.at(at) : nullptr;
    const bool produces_grads = split_ ? x.kind == PassKind::backward_weight : x.kind == PassKind::backward;
    const bool last_grads = produces_grads && x.micro_batch == m_ - 1;
    // The tip of a V (virtual stages p−1 and p, both on rank p−1) hands over without a send.
    const bool at_tip = v_shape_ && ((x.kind == PassKind::forward && static_cast<int>(vs) == p_) ||
                                     (x.kind == PassKind::backward && static_cast<int>(vs) == p_ - 1));
    const bool alone = runs_alone(order_, rank, i);
    for (int k = 0; k < kLanes; ++k) {
      const PassTimes& t = *times_[static_cast<std::size_t>(k)];
      const double cost = pass_cost(t, x.kind, vs, split_, last_grads, alone);
      double& rank_free = result_.rank_end[static_cast<std::size_t>(k)][rank];
      double ready = rank_free;
      if (in.local != kNoPass) ready = std::max(ready, clock_.at(in.local)[k]);
      if (in.sent != kNoPass) ready = std::max(ready, clock_.at(in.sent)[k] + (at_tip ? 0.0 : t.p2p_s));
      slot[k] = ready + cost;
      rank_free = slot[k];
      if (k == 0) {
        if constexpr (kSpans) (*spans_)[rank][i] = PassSpan{ready, slot[0]};
        tl.rank_busy[rank] += cost;
        if (produces_grads && slot[0] >= tl.grads_ready[vs]) {
          tl.grads_from[vs] = ready;
          tl.grads_ready[vs] = slot[0];
        }
      }
    }
    if constexpr (kLanes == 0) record(x.kind, vs, at, in, rank, last_grads, alone, !at_tip, produces_grads);
  }

  // Whether the pass at clock index `at` has run: its finish time is set, or without lanes (a walk that
  // only records), its position in the recording.
  [[nodiscard]] bool ran(std::size_t at) {
    if constexpr (kLanes == 0) return position_of_[at] != RecordedSchedule::kNoInput;
    return *clock_.at(at) >= 0;
  }

  // Makes `rank` runnable again if it waits for the pass at clock index `done`.
  void wake(int rank, std::size_t done) {
    auto& w = waits_for_[static_cast<std::size_t>(rank)];
    if (w != done) return;
    w = kNoPass;
    runnable_.push_back(rank);
  }

  const PipelineOrder& order_;
  int p_, m_, v_;
  bool split_;
  bool v_shape_;  // the order's chunks lie in a V (virtual_stage_of)
  const std::array<const PassTimes*, kLanes>& times_;
  PassSpans* spans_;
  PassClock<kLanes> clock_;
  Replay<kLanes> result_;
  std::vector<std::size_t> next_;       // per rank: its next pass
  std::vector<std::size_t> waits_for_;  // per rank: the clock index of the pass it waits for, or kNoPass
  std::vector<int> runnable_;
  RecordedSchedule* recorded_;              // kLanes = 0: the recording; else null
  std::vector<std::uint32_t> position_of_;  // recording: per pass (clock index / kSlots), its position
};

// The replay of `order` with `times` (ScheduleReplay); incomplete when the order does not have p ranks.
// kLanes = 0: the walk is recorded in `recorded`; where it is incomplete, record_schedule (the one caller)
// empties it.
template <int kLanes, bool kSpans = false>
Replay<kLanes> replay(const PipelineOrder& order, int p, int m, int v,
                      const std::array<const PassTimes*, kLanes>& times, PassSpans* spans = nullptr,
                      RecordedSchedule* recorded = nullptr) {
  if (!order.program.empty()) return run_program<kLanes, kSpans>(order, p, m, v, times, spans);
  if (static_cast<int>(order.size()) != p) return {};
  const bool split = runs_weight_passes(order);
  check_stage_times<kLanes>(times, static_cast<std::size_t>(p) * static_cast<std::size_t>(v));
  return ScheduleReplay<kLanes, kSpans>(order, p, m, v, split, times, spans, recorded).run();
}

// The replay of a recording with `times` (RecordedSchedule): each pass ends, on each lane, at
// max(its rank's previous pass, its local input, its sent input + the hand-over) + its cost, the
// operations of ScheduleReplay::time_pass in its order, so the same values to the bit.
template <int kLanes>
Replay<kLanes> replay_recorded(const RecordedSchedule& recorded,
                               const std::array<const PassTimes*, kLanes>& times) {
  using Pass = RecordedSchedule::Pass;
  constexpr auto kLaneCount = static_cast<std::size_t>(kLanes);
  const auto p = static_cast<std::size_t>(recorded.p);
  const std::size_t nvs = recorded.rank_of_stage.size();
  check_stage_times<kLanes>(times, nvs);
  // Each lane's cost of a pass of every (kind, last micro-batch's gradients, virtual stage), as pass_cost
  // gives it, the lanes side by side (costs[index · kLanes + lane]), and its hand-over delay, likewise:
  // none at a V's tip (hand_over[0 · kLanes + lane]), else p2p_s (hand_over[1 · kLanes + lane]). Side by
  // side, one pass's lanes are one load, one max and one add each.
  const std::size_t cost_indices = kRecordedCostKinds * nvs;
  thread_local std::vector<double> costs_storage;
  costs_storage.resize(cost_indices * kLaneCount);
  double* const costs = costs_storage.data();
  std::array<double, 2 * kLaneCount> hand_over{};
  for (std::size_t k = 0; k < kLaneCount; ++k) {
    const PassTimes& t = *times[k];
    for (const PassKind kind : {PassKind::forward, PassKind::backward, PassKind::backward_weight}) {
      for (const bool last : {false, true}) {
        for (const bool alone : {false, true}) {
          for (std::size_t vs = 0; vs < nvs; ++vs) {
            costs[recorded_cost_index(kind, last, alone, nvs, vs) * kLaneCount + k] =
                pass_cost(t, kind, vs, recorded.split, last, alone);
          }
        }
      }
    }
    hand_over[kLaneCount + k] = t.p2p_s;
  }
  // Each cost index's virtual stage and rank (a table: the index's remainder by p·v is a division).
  struct Stage {
    std::uint32_t vs, rank;
  };
  thread_local std::vector<Stage> stage_storage;
  stage_storage.resize(cost_indices);
  Stage* const stage_of = stage_storage.data();
  for (std::size_t i = 0; i < cost_indices; ++i)
    stage_of[i] = Stage{static_cast<std::uint32_t>(i % nvs), recorded.rank_of_stage[i % nvs]};
  Replay<kLanes> result;
  for (auto& end : result.rank_end) end.assign(p, 0.0);
  ScheduleTimeline& tl = result.timeline;
  tl.rank_busy.assign(p, 0.0);
  tl.grads_from.assign(nvs, 0.0);
  tl.grads_ready.assign(nvs, 0.0);
  double* const rank_busy = tl.rank_busy.data();
  double* const grads_from = tl.grads_from.data();
  double* const grads_ready = tl.grads_ready.data();
  // Finish times by position and lane, the calling thread's (as PassClock's): every pass's slot is
  // written before it is read.
  thread_local std::vector<double> finish_storage;
  finish_storage.resize((recorded.passes.size() + RecordedSchedule::kFirstPass) * kLaneCount);
  double* finish = finish_storage.data();
  for (std::size_t k = 0; k < kLaneCount; ++k) {
    finish[std::size_t{RecordedSchedule::kRankStart} * kLaneCount + k] = 0.0;
    finish[std::size_t{RecordedSchedule::kNoInput} * kLaneCount + k] =
        -std::numeric_limits<double>::infinity();
  }
  double* out = finish + std::size_t{RecordedSchedule::kFirstPass} * kLaneCount;
  for (const Pass& x : recorded.passes) {
    const std::uint32_t cost_index = x.code & RecordedSchedule::kCostBits;
    const double* const previous = finish + std::size_t{x.previous} * kLaneCount;
    const double* const local = finish + std::size_t{x.local} * kLaneCount;
    const double* const sent = finish + std::size_t{x.sent} * kLaneCount;
    const double* const delay =
        hand_over.data() + ((x.code & RecordedSchedule::kHandOver) != 0 ? kLaneCount : 0);
    const double* const cost = costs + std::size_t{cost_index} * kLaneCount;
    // A missing input is -inf: max() keeps the other operand, as the replay skips it.
    std::array<double, kLaneCount> ready;
    if constexpr (kLanes == 2) {
      // Two lanes (analytic_step's: with and without the hand-overs) as one pair of doubles: the same
      // operations lane by lane, so the same values, in half the instructions.
      using Pair = double __attribute__((vector_size(16)));
      const auto load = [](const double* at) {
        Pair v;
        std::memcpy(&v, at, sizeof v);
        return v;
      };
      const auto max = [](Pair a, Pair b) { return a < b ? b : a; };  // std::max, lane by lane
      const Pair r = max(max(load(previous), load(local)), load(sent) + load(delay));
      const Pair o = r + load(cost);
      std::memcpy(out, &o, sizeof o);
      ready[0] = r[0];
    } else {
      for (std::size_t k = 0; k < kLaneCount; ++k) {
        ready[k] = std::max(std::max(previous[k], local[k]), sent[k] + delay[k]);
        out[k] = ready[k] + cost[k];
      }
    }
    const Stage stage = stage_of[cost_index];
    rank_busy[stage.rank] += cost[0];
    if ((x.code & RecordedSchedule::kProducesGrads) != 0 && out[0] >= grads_ready[stage.vs]) {
      grads_from[stage.vs] = ready[0];
      grads_ready[stage.vs] = out[0];
    }
    out += kLaneCount;
  }
  for (std::size_t k = 0; k < kLaneCount; ++k) {
    for (std::size_t s = 0; s < p; ++s)
      result.rank_end[k][s] = finish[std::size_t{recorded.last_of_rank[s]} * kLaneCount + k];
  }
  return complete_timeline(std::move(result));
}

PassTimes uniform_times(int p, int v, double forward_s, double backward_s, double weight_s) {
  const auto n = static_cast<std::size_t>(p) * static_cast<std::size_t>(v);
  return PassTimes{std::vector<double>(n, forward_s), std::vector<double>(n, backward_s),
                   std::vector<double>(n, weight_s), 0.0};
}

}  // namespace

std::string_view bubble_formula(Schedule kind) {
  switch (kind) {
    case Schedule::gpipe:
    case Schedule::one_f_one_b:
      return "(pp-1)(F+B)";
    case Schedule::interleaved:
      return "(pp-1)(F+B)/v (Narayanan et al. 2021)";
    case Schedule::zero_bubble_h1:
      return "(pp-1)(F+B-2W), B the whole backward (Qi et al. 2023 ZB-H1; DeepSeek-V3 Table 2 ZB1P)";
    case Schedule::dualpipe:
      return "(PP/2-1)(F&B+B-3W), PP = pp stages (DeepSeek-V3 Table 2)";
    case Schedule::dualpipev:
      return "(PP/2-1)(F&B+B-3W), PP = 2*pp stages (DeepSeek-V3 Table 2, DualPipe README)";
    case Schedule::zb_v:
      return "none after each rank's first pass when F = B = W, with 1F1B's activations (Qi et al. 2024, "
             "V-ZB)";
  }
  return "";
}

std::string_view schedule_constraint_error(Schedule kind, int p, int m, int v) {
  if (p < 1) return "pipeline degree must be at least 1";
  if (m < 1) return "a step needs at least one micro-batch";
  if (v < 1) return "virtual_stages must be at least 1";
  if (kind == Schedule::zb_v) return v == 2 ? "" : "ZB-V runs two chunks per rank";
  if (is_dualpipe(kind)) {
    if (v != 2) return "DualPipeV runs two chunks per rank";
    if (m < 2 * p) return "DualPipeV needs at least 2·pp micro-batches (DualPipe: 2·pp, an even count)";
    return "";
  }
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
  order.kind = kind;
  if (is_dualpipe(kind)) {
    order.program.resize(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      DualPipeVRank{p, m, s, order[static_cast<std::size_t>(s)], order.program[static_cast<std::size_t>(s)]}
          .build();
    }
    mark_merged_passes(order);
    return order;
  }
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
      case Schedule::zb_v:
        rank = zb_v_rank(p, m, s);
        break;
      case Schedule::dualpipe:
      case Schedule::dualpipev:
        break;  // built above
    }
  }
  mark_merged_passes(order);
  return order;
}

std::shared_ptr<const PipelineOrder> shared_pipeline_schedule(Schedule kind, int p, int m, int v) {
  thread_local sim::RecentResults<std::tuple<Schedule, int, int, int>, std::shared_ptr<const PipelineOrder>,
                                  8>
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

RecordedSchedule record_schedule(const PipelineOrder& order, int p, int m, int v) {
  // A DualPipeV program is never recorded (replay leaves it empty): no walk to find that out.
  if (!order.program.empty()) return RecordedSchedule{};
  RecordedSchedule recorded;
  if (!replay<0>(order, p, m, v, {}, nullptr, &recorded).complete) recorded = RecordedSchedule{};
  return recorded;
}

ScheduleTimeline time_recorded(const RecordedSchedule& recorded, const PassTimes& times) {
  TRAINSIM_CHECK(!recorded.empty(), "time_recorded: nothing recorded");
  return replay_recorded<1>(recorded, {&times}).timeline;
}

ScheduleTimelines time_recorded_twice(const RecordedSchedule& recorded, const PassTimes& times,
                                      const PassTimes& other) {
  TRAINSIM_CHECK(!recorded.empty(), "time_recorded: nothing recorded");
  Replay<2> r = replay_recorded<2>(recorded, {&times, &other});
  return ScheduleTimelines{.timeline = std::move(r.timeline), .other_rank_end = std::move(r.rank_end[1])};
}

double schedule_makespan(const PipelineOrder& order, int p, int m, int v, double forward_s, double backward_s,
                         double weight_s) {
  return time_schedule(order, p, m, v, uniform_times(p, v, forward_s, backward_s, weight_s)).makespan;
}

}  // namespace trainsim::model
