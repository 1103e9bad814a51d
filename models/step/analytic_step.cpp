#include "models/step/analytic_step.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "models/step/shared_port.hpp"
#include "sim/recent_results.hpp"

namespace trainsim::model {

namespace {

// Gradient buckets of rank s: each chunk's share of the buckets becomes ready evenly over its last
// backward (or all after the rank's last pass without overlap_grad_reduce); the dp stream reduces them in
// order of readiness. Returns when the stream is free (0 without buckets). on_bucket(chunk, start, end)
// sees each bucket: a template parameter so that the timing-only path, which passes a no-op, pays nothing.
template <class OnBucket>
double lay_buckets(const ParallelPlan& pl, const StepPlan& plan, const StageCost& sc,
                   const ScheduleTimeline& tl, int s, OnBucket&& on_bucket) {
  double dp_free = 0;
  if (shards_weights(pl.zero) || sc.bucket_s <= 0) return dp_free;
  const int v = plan.virtual_stages;
  std::vector<int> chunks(static_cast<std::size_t>(v));
  for (int c = 0; c < v; ++c) chunks[static_cast<std::size_t>(c)] = c;
  auto vs_of = [&](int c) { return plan.virtual_stage_index(c, s); };
  std::sort(chunks.begin(), chunks.end(),
            [&](int a, int b) { return tl.grads_ready[vs_of(a)] < tl.grads_ready[vs_of(b)]; });
  for (int c : chunks) {
    const int nb = std::max(
        1, static_cast<int>(std::lround(static_cast<double>(sc.buckets) * plan.chunk_layers[vs_of(c)] /
                                        plan.stage_layers[static_cast<std::size_t>(s)])));
    const double from = tl.grads_from[vs_of(c)];
    const double ready = tl.grads_ready[vs_of(c)];
    const double chunk_total = sc.bucket_s * sc.buckets * plan.chunk_layers[vs_of(c)] /
                               plan.stage_layers[static_cast<std::size_t>(s)];
    const double each = chunk_total / nb;
    for (int i = 0; i < nb; ++i) {
      const double available = pl.overlap_grad_reduce ? from + (ready - from) * (i + 1) / nb
                                                      : tl.rank_end[static_cast<std::size_t>(s)];
      const double start = std::max(dp_free, available);
      dp_free = start + each;
      on_bucket(c, start, dp_free);
    }
  }
  return dp_free;
}

// The recordings of the schedules (kind, p, m, v) the calling thread replayed last: as many as fit in
// kBytes (at least the last one), the oldest dropped first. A search scores the layouts of one schedule
// one after another (layout_search.cpp), a benchmark cycles through a few dozen small ones.
class KeptRecordings {
 public:
  using Key = std::tuple<Schedule, int, int, int>;
  [[nodiscard]] const RecordedSchedule* find(const Key& key) const {
    for (const auto& [k, recorded] : kept_) {
      if (k == key) return &recorded;
    }
    return nullptr;
  }
  /// Keeps `recorded` under `key`; returns it, kept (it stays until a later keep() drops it).
  const RecordedSchedule& keep(const Key& key, RecordedSchedule recorded) {
    bytes_ += bytes(recorded);
    kept_.emplace_back(key, std::move(recorded));
    while (kept_.size() > 1 && (bytes_ > kBytes || kept_.size() > kMost)) {
      bytes_ -= bytes(kept_.front().second);
      kept_.pop_front();
    }
    return kept_.back().second;
  }

 private:
  static constexpr std::size_t kBytes = std::size_t{32} << 20;
  static constexpr std::size_t kMost = 64;
  static std::size_t bytes(const RecordedSchedule& r) {
    return r.passes.size() * sizeof(RecordedSchedule::Pass);
  }
  std::deque<std::pair<Key, RecordedSchedule>> kept_;
  std::size_t bytes_ = 0;
};

// The replay of schedule (kind, p, m, v) with `times` and, with `without` (may be null), those too, from
// its recording (the same values as replaying the order, without the search for which pass runs next):
// the one the calling thread kept, else the order's, recorded now (record_schedule) and kept. DualPipeV's
// program, which is not recorded, is replayed.
ScheduleTimelines replay_or_record(Schedule kind, int p, int m, int v, const PassTimes& times,
                                   const PassTimes* without) {
  thread_local KeptRecordings recordings;
  const KeptRecordings::Key key{kind, p, m, v};
  const RecordedSchedule* recorded = recordings.find(key);
  if (recorded == nullptr) {
    const std::shared_ptr<const PipelineOrder> order = shared_pipeline_schedule(kind, p, m, v);
    RecordedSchedule r = record_schedule(*order, p, m, v);
    if (r.empty()) {  // DualPipeV's program; or an order that deadlocks, which time_schedule reports
      return without != nullptr ? time_schedule_twice(*order, p, m, v, times, *without)
                                : ScheduleTimelines{.timeline = time_schedule(*order, p, m, v, times)};
    }
    recorded = &recordings.keep(key, std::move(r));
  }
  if (without != nullptr) return time_recorded_twice(*recorded, times, *without);
  return ScheduleTimelines{.timeline = time_recorded(*recorded, times)};
}

// The pipeline replay of analytic_step: `times`, and with `without` (may be null) the same schedule timed
// with those costs too. Layouts of a search that differ only in what the replay does not see (a ZeRO
// stage without weight gathers, its sharding group, the optimizer) replay the same schedule with the same
// pass times: the calling thread keeps its last replays with their inputs and reuses an identical one
// (equal inputs, so an equal result).
ScheduleTimelines replay_schedule(Schedule kind, int p, int m, int v, const PassTimes& times,
                                  const PassTimes* without) {
  std::vector<double> key{static_cast<double>(kind), static_cast<double>(p), static_cast<double>(m),
                          static_cast<double>(v)};
  for (const PassTimes* t : {&times, without}) {
    if (t == nullptr) {
      key.push_back(-1);
      continue;
    }
    for (const std::vector<double>* list : {&t->forward, &t->backward, &t->weight, &t->last_grads_extra,
                                            &t->forward_alone, &t->backward_alone}) {
      key.push_back(static_cast<double>(list->size()));
      key.insert(key.end(), list->begin(), list->end());
    }
    key.push_back(t->p2p_s);
  }
  thread_local sim::RecentResults<std::vector<double>, ScheduleTimelines, 16> kept;
  return kept.get_or_compute(key, [&] { return replay_or_record(kind, p, m, v, times, without); });
}

// The schedule replayed with the passes' times, and its ranks' ends without the hand-overs when `without`
// is given. A trace (`spans`) times every pass on the schedule's order and keeps their spans; otherwise
// replay_schedule may time a recorded schedule.
ScheduleTimelines replay_passes(const StepPlan& plan, const PipelineOrder* order, const PassTimes& times,
                                const PassTimes* without, PassSpans* spans) {
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const auto m = static_cast<int>(plan.micro_batches);
  if (spans == nullptr) return replay_schedule(plan.schedule, p, m, v, times, without);
  if (without != nullptr) return time_schedule_twice(*order, p, m, v, times, *without, spans);
  ScheduleTimelines out;
  out.timeline = time_schedule(*order, p, m, v, times, spans);
  return out;
}

// ZeRO-3: per rank, the gathers' waits within the replay (times 's passes lengthened by them) and the
// reductions that run on after the rank's last backward.
struct Zero3Waits {
  explicit Zero3Waits(int ranks)
      : exposed(static_cast<std::size_t>(ranks), 0.0), reduce_tail(static_cast<std::size_t>(ranks), 0.0) {}
  std::vector<double> exposed;
  std::vector<double> reduce_tail;
};

// Each unit waits for its weights, gathered `prefetch` units ahead (gathered_pass); a pass is lengthened by
// the waits, and each rank's last reductions run on after its last backward. Virtual stages of the same
// units in the same runs (a pipeline's middle stages) pass alike: each distinct list is timed once.
Zero3Waits zero3_waits(const StepCosts& costs, const StepPlan& plan, const Framework& fw, int m,
                       PassTimes& times) {
  const int nvs = plan.pp * plan.virtual_stages;
  Zero3Waits out(plan.pp);
  struct Timed {
    int vs;
    GatheredPass forward, backward;
  };
  std::vector<Timed> timed;
  auto same_units = [&](int a, int b) {
    return std::equal(
        costs.chunk_units[static_cast<std::size_t>(a)].begin(),
        costs.chunk_units[static_cast<std::size_t>(a)].end(),
        costs.chunk_units[static_cast<std::size_t>(b)].begin(),
        costs.chunk_units[static_cast<std::size_t>(b)].end(),
        [](const UnitRun& x, const UnitRun& y) { return x.unit == y.unit && x.count == y.count; });
  };
  for (int vs = 0; vs < nvs; ++vs) {
    const int s = plan.rank_of(vs);
    auto known =
        std::find_if(timed.begin(), timed.end(), [&](const Timed& t) { return same_units(t.vs, vs); });
    if (known == timed.end()) {
      timed.push_back(Timed{vs, gathered_pass(costs, vs, false, true),
                            gathered_pass(costs, vs, true, fw.reshard_after_forward)});
      known = timed.end() - 1;
    }
    const GatheredPass& f = known->forward;
    const GatheredPass& b = known->backward;
    times.forward[static_cast<std::size_t>(vs)] += f.extra;
    times.backward[static_cast<std::size_t>(vs)] += b.extra;
    out.exposed[static_cast<std::size_t>(s)] += m * (f.extra + b.extra);
    if (static_cast<std::size_t>(vs) == plan.virtual_stage_index(0, s))  // chunk 0's backward ends last
      out.reduce_tail[static_cast<std::size_t>(s)] = b.reduce_tail;
  }
  return out;
}

}  // namespace

PassTimes pass_times(const StepCosts& costs) {
  PassTimes t;
  t.p2p_s = costs.p2p_s;
  for (const PassCost& pc : costs.passes) {
    t.forward.push_back(pc.forward());
    t.backward.push_back(pc.backward());
    t.weight.push_back(pc.weight_compute);
  }
  // framework.ep_comm_overlap: what a pass run alone adds.
  const bool alone = std::any_of(costs.passes.begin(), costs.passes.end(), [](const PassCost& pc) {
    return pc.forward_alone > 0 || pc.backward_alone > 0;
  });
  if (alone) {
    for (const PassCost& pc : costs.passes) {
      t.forward_alone.push_back(pc.forward_alone);
      t.backward_alone.push_back(pc.backward_alone);
    }
  }
  return t;
}

int busiest_stage(const std::vector<TimeBreakdown>& works, const std::vector<double>& exposed) {
  int best = 0;
  double best_busy = -1;
  for (std::size_t s = 0; s < works.size(); ++s) {
    const double busy = works[s].busy() + exposed[s];
    if (busy > best_busy * (1 + 1e-9)) {
      best = static_cast<int>(s);
      best_busy = busy;
    }
  }
  return best;
}

void set_fleet_fractions(StepTiming& t, const std::vector<TimeBreakdown>& works) {
  if (!(t.iteration_time > 0)) return;
  const TimeBreakdown& shown = works[static_cast<std::size_t>(t.critical_stage)];
  double compute = 0, short_of_shown = 0;
  for (const TimeBreakdown& w : works) {
    compute += w.compute;
    short_of_shown += std::max(0.0, shown.busy() - w.busy());
  }
  const double ranks = static_cast<double>(works.size());
  t.fleet_compute_fraction = std::clamp(compute / ranks / t.iteration_time, 0.0, 1.0);
  t.fleet_idle_fraction = std::clamp(t.bubble_fraction + short_of_shown / ranks / t.iteration_time, 0.0, 1.0);
}

StepTiming analytic_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                         AnalyticLayout* layout) {
  const ParallelPlan& pl = in.plan;
  const Framework& fw = pl.framework;
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const int nvs = p * v;
  const auto m = static_cast<int>(plan.micro_batches);
  // The schedule's order: only a trace needs it here (replay_schedule fetches it when it replays).
  std::shared_ptr<const PipelineOrder> order;
  if (layout != nullptr) order = shared_pipeline_schedule(plan.schedule, p, m, v);

  PassTimes times = pass_times(costs);
  // ZeRO 0–2: each chunk's last gradient-producing pass computes beside its gradient buckets.
  if (costs.bucket_overlap_slowdown > 0) {
    times.last_grads_extra.resize(static_cast<std::size_t>(nvs));
    for (int vs = 0; vs < nvs; ++vs)
      times.last_grads_extra[static_cast<std::size_t>(vs)] = last_grads_extra(costs, plan, vs);
  }
  // ZeRO-3: each unit waits for its weights (gathered_pass); the waits lengthen the passes.
  const Zero3Waits zero3 = costs.gathers_weights ? zero3_waits(costs, plan, fw, m, times) : Zero3Waits(p);
  const std::vector<double>& zero3_exposed = zero3.exposed;
  const std::vector<double>& reduce_tail = zero3.reduce_tail;
  // Blocking hand-overs: the sender waits for its transfer, which then is part of its pass, and the
  // receiver starts when that pass ends.
  PassTimes without_p2p = times;
  without_p2p.p2p_s = 0;
  if (fw.blocking_p2p && costs.p2p_s > 0) {
    for (int vs = 0; vs < nvs; ++vs) {
      if (sends_to_neighbour(PassKind::forward, vs, nvs))
        times.forward[static_cast<std::size_t>(vs)] += costs.p2p_s;
      if (sends_to_neighbour(PassKind::backward, vs, nvs))
        times.backward[static_cast<std::size_t>(vs)] += costs.p2p_s;
    }
    times.p2p_s = 0;
  }
  // With hand-overs, the same schedule without them is timed in the same replay (exposed_pp_comm below).
  ScheduleTimelines replayed = replay_passes(
      plan, order.get(), times, costs.p2p_s > 0 ? &without_p2p : nullptr, layout ? &layout->passes : nullptr);
  const ScheduleTimeline tl = std::move(replayed.timeline);
  const std::vector<double> rank_end_without_p2p = std::move(replayed.other_rank_end);
  if (layout != nullptr) {
    layout->order = *order;
    layout->buckets.assign(static_cast<std::size_t>(p), {});
    layout->reduced.assign(static_cast<std::size_t>(p), 0.0);
    layout->finish.assign(static_cast<std::size_t>(p), 0.0);
  }

  StepTiming out;
  std::vector<double> finish(static_cast<std::size_t>(p), 0.0);
  std::vector<double> dp_tail(static_cast<std::size_t>(p), 0.0);
  std::vector<double> gather_exposed(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < p; ++s) {
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    const double end = tl.rank_end[static_cast<std::size_t>(s)] + reduce_tail[static_cast<std::size_t>(s)];
    const double dp_free =
        layout == nullptr
            ? lay_buckets(pl, plan, sc, tl, s, [](int, double, double) {})
            : lay_buckets(pl, plan, sc, tl, s, [&](int c, double from, double to) {
                layout->buckets[static_cast<std::size_t>(s)].push_back(AnalyticLayout::Bucket{c, from, to});
              });
    const double reduced = std::max(end, dp_free);
    dp_tail[static_cast<std::size_t>(s)] = reduced - end + reduce_tail[static_cast<std::size_t>(s)];
    gather_exposed[static_cast<std::size_t>(s)] = exposed_param_gather(in, plan, costs, s);
    finish[static_cast<std::size_t>(s)] = reduced + sc.grad_norm_s + sc.optimizer_comm_s + sc.optimizer_s +
                                          gather_exposed[static_cast<std::size_t>(s)];
    if (layout != nullptr) {
      layout->reduced[static_cast<std::size_t>(s)] = reduced;
      layout->finish[static_cast<std::size_t>(s)] = finish[static_cast<std::size_t>(s)];
    }
  }
  out.iteration_time = *std::max_element(finish.begin(), finish.end());
  std::vector<double> exposed(static_cast<std::size_t>(p), 0.0);
  for (std::size_t s = 0; s < exposed.size(); ++s)
    exposed[s] = zero3_exposed[s] + dp_tail[s] + gather_exposed[s];
  const std::vector<TimeBreakdown> works = stage_works(costs, plan);
  const int crit = busiest_stage(works, exposed);
  const auto cs = static_cast<std::size_t>(crit);
  out.critical_stage = crit;

  out.time = works[cs];
  TimeBreakdown& tb = out.time;
  tb.exposed_dp_comm = zero3_exposed[cs] + dp_tail[cs] + gather_exposed[cs];
  // Pipeline hand-overs: what they add to this rank's end, measured against the same schedule without them.
  if (costs.p2p_s > 0) {
    tb.exposed_pp_comm = std::max(0.0, tl.rank_end[cs] - rank_end_without_p2p[cs]);
  }
  tb.bubble = out.iteration_time - tb.busy();
  if (tb.bubble < 0) {  // rounding only: the parts above are each a lower bound of the rank's time
    tb.exposed_pp_comm = std::max(0.0, tb.exposed_pp_comm + tb.bubble);
    tb.bubble = 0;
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  set_fleet_fractions(out, works);
  return out;
}

GatheredPass gathered_pass(const StepCosts& costs, int vs, bool backward, bool gather) {
  const auto& runs = costs.chunk_units[static_cast<std::size_t>(vs)];
  const int ahead = std::max(0, costs.zero3_prefetch);
  // Compute start of each unit so far, in execution order; kept per thread, as the port below, since the
  // search calls this for every virtual stage of every layout it scores.
  thread_local std::vector<double> starts;
  starts.clear();
  std::size_t units = 0;
  for (const UnitRun& r : runs) units += static_cast<std::size_t>(r.count);
  starts.reserve(units);
  GatheredPass out;
  // The gathers and the reductions, each on its own stream, share the GPU's port (shared_port.hpp); one
  // port per thread, its buffers kept from pass to pass (a search times many).
  using StreamId = SharedPort::StreamId;
  thread_local SharedPort port;
  port.clear();
  double compute_free = 0, kernels = 0;
  bool reduces = false;
  auto unit = [&](const UnitCost& u) {
    const double c = backward ? u.total.backward() : u.total.forward();
    double ready = 0;
    if (gather && u.gather_s > 0) {
      const auto k = starts.size();
      // Issued when the unit `ahead` places earlier starts computing (on demand: when the last one ends).
      const double issue =
          ahead == 0 ? compute_free : (k >= static_cast<std::size_t>(ahead) ? starts[k - ahead] : 0.0);
      const LatencySplit part = split_latency(u.gather_s, u.gather_latency_s);
      port.add(StreamId::gathers, issue, part.latency_s, part.bandwidth_s);
      ready = port.finish(StreamId::gathers);
    }
    const double start = std::max(compute_free, ready);
    starts.push_back(start);
    compute_free = start + c;
    kernels += c;
    if (backward && u.reduce_s > 0) {
      const LatencySplit part = split_latency(u.reduce_s, u.reduce_latency_s);
      port.add(StreamId::reductions, compute_free, part.latency_s, part.bandwidth_s);
      reduces = true;
      // Synchronous collectives: the next unit's gather waits for this reduction.
      if (costs.synchronous_zero3) compute_free = port.finish(StreamId::reductions);
    }
  };
  const int n = static_cast<int>(runs.size());
  for (int ri = 0; ri < n; ++ri) {
    const UnitRun& r = runs[static_cast<std::size_t>(backward ? n - 1 - ri : ri)];
    for (int i = 0; i < r.count; ++i) unit(costs.units[static_cast<std::size_t>(r.unit)]);
  }
  out.extra = std::max(0.0, compute_free - kernels);
  if (reduces) out.reduce_tail = std::max(0.0, port.finish(StreamId::reductions) - compute_free);
  return out;
}

double exposed_param_gather(const StepInput& in, const StepPlan& plan, const StepCosts& costs, int s) {
  const ParallelPlan& pl = in.plan;
  const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
  if (!shards_optimizer_states(pl.zero) || shards_weights(pl.zero) || !(sc.param_gather_s > 0)) return 0;
  if (!pl.framework.overlap_param_gather) return sc.param_gather_s;
  // Under the next step's first micro-batch: bucket by bucket, each before its layers' forward; the
  // first bucket cannot hide.
  double first_forward = 0;
  for (int c = 0; c < plan.virtual_stages; ++c) {
    first_forward += costs.passes[plan.virtual_stage_index(c, s)].forward_compute;
  }
  const double bucket = sc.param_gather_s / std::max(1, sc.buckets);
  return std::max(bucket, sc.param_gather_s - first_forward);
}

}  // namespace trainsim::model
