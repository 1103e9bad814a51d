#include "models/analytic_step.hpp"

#include <algorithm>
#include <cmath>

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
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  std::vector<int> chunks(static_cast<std::size_t>(v));
  for (int c = 0; c < v; ++c) chunks[static_cast<std::size_t>(c)] = c;
  auto vs_of = [&](int c) { return static_cast<std::size_t>(c * p + s); };
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

}  // namespace

PassTimes pass_times(const StepCosts& costs) {
  PassTimes t;
  t.p2p_s = costs.p2p_s;
  for (const PassCost& pc : costs.passes) {
    t.forward.push_back(pc.forward());
    t.backward.push_back(pc.backward());
    t.weight.push_back(pc.weight_compute);
  }
  return t;
}

StepTiming analytic_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                         AnalyticLayout* layout) {
  const ParallelPlan& pl = in.plan;
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const auto m = static_cast<int>(plan.micro_batches);
  const PipelineOrder order = pipeline_schedule(pl.schedule, p, m, v);

  // ZeRO-3: each layer waits for its weights; gathers are prefetched one layer ahead on the dp stream, so a
  // pass is lengthened only by what its dp traffic exceeds its own compute (and the very first layer's
  // gather).
  PassTimes times = pass_times(costs);
  std::vector<double> zero3_exposed(static_cast<std::size_t>(p), 0.0);  // per rank, within the replay
  std::vector<double> first_gather(static_cast<std::size_t>(p), 0.0);   // per rank, before its first pass
  if (shards_weights(pl.zero) && pl.dp * pl.cp * pl.ep > 1) {  // gradients have copies to gather from
    for (int vs = 0; vs < p * v; ++vs) {
      const int s = vs % p;
      const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
      const double share = static_cast<double>(plan.chunk_layers[static_cast<std::size_t>(vs)]) /
                           plan.stage_layers[static_cast<std::size_t>(s)];
      const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
      const double f = std::max(0.0, share * sc.zero3_gather_s - pc.forward());
      const double b = std::max(0.0, share * (sc.zero3_gather_s + sc.zero3_reduce_s) - pc.backward());
      times.forward[static_cast<std::size_t>(vs)] += f;
      times.backward[static_cast<std::size_t>(vs)] += b;
      zero3_exposed[static_cast<std::size_t>(s)] += m * (f + b);
      // Weights are gathered layer by layer: only the first layer's gather cannot be prefetched.
      if (vs == s) {
        first_gather[static_cast<std::size_t>(s)] =
            sc.zero3_gather_s / std::max(1, plan.stage_layers[static_cast<std::size_t>(s)]);
      }
    }
  }
  const ScheduleTimeline tl = time_schedule(order, p, m, v, times, layout ? &layout->passes : nullptr);
  if (layout != nullptr) {
    layout->order = order;
    layout->first_gather = first_gather;
    layout->buckets.assign(static_cast<std::size_t>(p), {});
    layout->reduced.assign(static_cast<std::size_t>(p), 0.0);
    layout->finish.assign(static_cast<std::size_t>(p), 0.0);
  }

  StepTiming out;
  std::vector<double> finish(static_cast<std::size_t>(p), 0.0);
  std::vector<double> dp_tail(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < p; ++s) {
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    const double end = tl.rank_end[static_cast<std::size_t>(s)] + first_gather[static_cast<std::size_t>(s)];
    const double dp_free =
        layout == nullptr
            ? lay_buckets(pl, plan, sc, tl, s, [](int, double, double) {})
            : lay_buckets(pl, plan, sc, tl, s, [&](int c, double from, double to) {
                layout->buckets[static_cast<std::size_t>(s)].push_back(AnalyticLayout::Bucket{c, from, to});
              });
    const double reduced = std::max(end, dp_free);
    dp_tail[static_cast<std::size_t>(s)] = reduced - end;
    finish[static_cast<std::size_t>(s)] = reduced + sc.grad_norm_s + sc.optimizer_s + sc.param_gather_s;
    if (layout != nullptr) {
      layout->reduced[static_cast<std::size_t>(s)] = reduced;
      layout->finish[static_cast<std::size_t>(s)] = finish[static_cast<std::size_t>(s)];
    }
  }
  const int crit = static_cast<int>(std::max_element(finish.begin(), finish.end()) - finish.begin());
  const auto cs = static_cast<std::size_t>(crit);
  out.critical_stage = crit;
  out.iteration_time = finish[cs];

  TimeBreakdown& tb = out.time;
  for (int c = 0; c < v; ++c) {
    const PassCost& pc = costs.passes[static_cast<std::size_t>(c * p + crit)];
    tb.compute += m * (pc.forward_compute + pc.backward_compute);
    tb.exposed_tp_comm += m * (pc.forward_comm + pc.backward_comm);
  }
  const StageCost& sc = costs.stages[cs];
  tb.exposed_dp_comm = zero3_exposed[cs] + first_gather[cs] + dp_tail[cs] + sc.param_gather_s;
  tb.optimizer = sc.optimizer_s + sc.grad_norm_s;
  // Pipeline hand-overs: what they add to this rank's end, measured against the same schedule without them.
  if (costs.p2p_s > 0) {
    PassTimes no_p2p = times;
    no_p2p.p2p_s = 0;
    const double without = time_schedule(order, p, m, v, no_p2p).rank_end[cs];
    tb.exposed_pp_comm = std::max(0.0, tl.rank_end[cs] - without);
  }
  tb.bubble = out.iteration_time -
              (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm + tb.exposed_pp_comm + tb.optimizer);
  if (tb.bubble < 0) {  // rounding only: the parts above are each a lower bound of the rank's time
    tb.exposed_pp_comm = std::max(0.0, tb.exposed_pp_comm + tb.bubble);
    tb.bubble = 0;
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  return out;
}

}  // namespace trainsim::model
