#include "models/step_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

constexpr std::int64_t kMaxFullClusterGpus = 4096;

sim::Duration dur(double seconds) {
  return sim::Duration::from_seconds(std::max(0.0, seconds));
}

struct Lanes {
  sim::LaneId compute, tp, pp, dp;
};

// Where each pass's cross-stage edges attach: the task that must wait for the incoming hand-over, and
// the send that carries the outgoing one.
struct PassTasks {
  sim::TaskId entry = 0;
  sim::TaskId send = 0;
  bool has_send = false;
};

const char* kind_letter(PassKind k) {
  switch (k) {
    case PassKind::forward:
      return "F";
    case PassKind::backward:
      return "B";
    case PassKind::backward_weight:
      return "W";
  }
  return "?";
}

}  // namespace

StepGraph lower_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs, bool full_cluster) {
  TRAINSIM_CHECK(plan.feasible, "lower_step needs a feasible plan");
  const ParallelPlan& pl = in.plan;
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const auto m = static_cast<int>(plan.micro_batches);
  const int nvs = p * v;
  const std::int64_t model_ranks =
      static_cast<std::int64_t>(pl.tp) * pl.cp * pl.ep;  // share tp-like collectives
  if (full_cluster && pl.world_size() > kMaxFullClusterGpus) {
    throw InputError(fmt::format("a full-cluster simulation is limited to {} GPUs; this layout has {}",
                                 kMaxFullClusterGpus, pl.world_size()));
  }
  const int n_inst = full_cluster ? static_cast<int>(model_ranks * pl.dp) : 1;
  const int n_tp = full_cluster ? static_cast<int>(model_ranks) : 1;  // instance = dp_index·n_tp + tp_index
  const PipelineOrder order = pipeline_schedule(pl.schedule, p, m, v);
  const bool split_w = pl.schedule == Schedule::zero_bubble_h1;

  StepGraph g;
  g.instances = n_inst;
  sim::Dag& dag = g.dag;
  std::size_t passes_per_rank = order.front().size();
  dag.reserve(static_cast<std::size_t>(n_inst) * p * (passes_per_rank * 3 + 160),
              static_cast<std::size_t>(n_inst) * p * (passes_per_rank * 5 + 320));

  auto idx = [&](int inst, int s) { return static_cast<std::size_t>(inst * p + s); };
  std::vector<Lanes> lanes(static_cast<std::size_t>(n_inst * p));
  for (int i = 0; i < n_inst; ++i) {
    for (int s = 0; s < p; ++s) {
      const std::string proc = full_cluster ? fmt::format("gpu {}", i * p + s) : fmt::format("stage {}", s);
      lanes[idx(i, s)] = Lanes{dag.lane(proc + " / compute"), dag.lane(proc + " / tp comm"),
                               dag.lane(proc + " / pp comm"), dag.lane(proc + " / dp comm")};
    }
  }
  // A collective among the instances of one group: each member's task waits for all members' inputs.
  // Collapsed, the group is the one simulated GPU and no join is needed.
  auto collective = [&](int s, const std::vector<sim::TaskId>& inputs, bool dp_group, double seconds,
                        const std::string& name, const char* category) {
    std::vector<sim::TaskId> out(inputs.size());
    const int group = dp_group ? static_cast<int>(pl.dp) : n_tp;
    for (int i = 0; i < n_inst; ++i) {
      const sim::LaneId lane = dp_group ? lanes[idx(i, s)].dp : lanes[idx(i, s)].tp;
      out[static_cast<std::size_t>(i)] = dag.busy(lane, dur(seconds), name, category);
    }
    if (!full_cluster || group == 1) {
      for (int i = 0; i < n_inst; ++i)
        dag.depend(inputs[static_cast<std::size_t>(i)], out[static_cast<std::size_t>(i)]);
      return out;
    }
    // Members of instance i's group: dp group = same tp index, any dp index; tp group = same dp index.
    const int n_groups = n_inst / group;
    for (int gi = 0; gi < n_groups; ++gi) {
      const sim::TaskId join =
          dag.join(dp_group ? lanes[idx(gi, s)].dp : lanes[idx(gi * n_tp, s)].tp, name + " sync");
      for (int k = 0; k < group; ++k) {
        const int i = dp_group ? k * n_tp + gi : gi * n_tp + k;
        dag.depend(inputs[static_cast<std::size_t>(i)], join);
        dag.depend(join, out[static_cast<std::size_t>(i)]);
      }
    }
    return out;
  };

  // Per instance, stage: the task the next pass chains after, and per pass the attach points.
  std::vector<sim::TaskId> chain(static_cast<std::size_t>(n_inst * p));
  std::vector<bool> has_chain(static_cast<std::size_t>(n_inst * p), false);
  auto pass_key = [&](int inst, PassKind k, int mb, int vs) {
    return ((static_cast<std::size_t>(inst) * 2 + (k == PassKind::forward ? 0 : 1)) *
                static_cast<std::size_t>(m) +
            static_cast<std::size_t>(mb)) *
               static_cast<std::size_t>(nvs) +
           static_cast<std::size_t>(vs);
  };
  std::vector<PassTasks> hand(static_cast<std::size_t>(n_inst) * 2 * m * nvs);
  std::vector<std::vector<sim::TaskId>> buckets(static_cast<std::size_t>(n_inst * p));

  for (int s = 0; s < p; ++s) {
    const auto& passes = order[static_cast<std::size_t>(s)];
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    // The last gradient-producing pass of each chunk: its compute carries the bucket reductions.
    std::vector<std::size_t> last_grad(static_cast<std::size_t>(v), passes.size());
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const PassKind want = split_w ? PassKind::backward_weight : PassKind::backward;
      if (passes[k].kind == want) last_grad[static_cast<std::size_t>(passes[k].chunk)] = k;
    }
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const PipelinePass& x = passes[k];
      const int vs = x.chunk * p + s;
      const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
      const double share = static_cast<double>(plan.chunk_layers[static_cast<std::size_t>(vs)]) /
                           plan.stage_layers[static_cast<std::size_t>(s)];
      double compute = 0, comm = 0;
      switch (x.kind) {
        case PassKind::forward:
          compute = pc.forward_compute;
          comm = pc.forward_comm;
          break;
        case PassKind::backward:
          compute = pc.backward_compute - (split_w ? pc.weight_compute : 0.0);
          comm = pc.backward_comm;
          break;
        case PassKind::backward_weight:
          compute = pc.weight_compute;
          break;
      }
      const std::string label = fmt::format("{} mb{} c{}", kind_letter(x.kind), x.micro_batch, x.chunk);
      const bool zero3 = pl.zero == 3 && pl.dp * pl.cp * pl.ep > 1 && x.kind != PassKind::backward_weight;
      std::vector<sim::TaskId> gather;
      if (zero3) {
        // FSDP gathers layer by layer, one layer ahead of the compute (and reduce-scatters each layer's
        // gradients as soon as its backward is done), so over a pass this traffic streams beside the
        // kernels: the pass lasts the longer of the two. The very first pass waits for its weights.
        std::vector<sim::TaskId> after(static_cast<std::size_t>(n_inst));
        for (int i = 0; i < n_inst; ++i) {
          after[static_cast<std::size_t>(i)] =
              has_chain[idx(i, s)] ? chain[idx(i, s)] : dag.join(lanes[idx(i, s)].dp, "step start");
        }
        const bool bwd = x.kind == PassKind::backward;
        gather = collective(s, after, true, share * (sc.zero3_gather_s + (bwd ? sc.zero3_reduce_s : 0.0)),
                            (bwd ? "zero3 gather+reduce " : "zero3 gather ") + label, "dp");
      }
      const bool bucketed = pl.zero < 3 && sc.buckets > 0 && pl.overlap_grad_reduce &&
                            k == last_grad[static_cast<std::size_t>(x.chunk)];
      const int segments = bucketed ? std::max(1, static_cast<int>(std::lround(sc.buckets * share))) : 1;
      for (int seg = 0; seg < segments; ++seg) {
        std::vector<sim::TaskId> seg_tasks(static_cast<std::size_t>(n_inst));
        for (int i = 0; i < n_inst; ++i) {
          const auto c = idx(i, s);
          const sim::TaskId t =
              dag.busy(lanes[c].compute, dur(compute / segments),
                       segments > 1 ? fmt::format("{} part {}", label, seg) : label, "compute");
          if (has_chain[c]) dag.depend(chain[c], t);
          if (zero3 && seg == 0 && !has_chain[c]) dag.depend(gather[static_cast<std::size_t>(i)], t);
          if (seg == 0 && x.kind != PassKind::backward_weight) {
            hand[pass_key(i, x.kind, x.micro_batch, vs)].entry = t;
          }
          chain[c] = t;
          has_chain[c] = true;
          seg_tasks[static_cast<std::size_t>(i)] = t;
          if (i == 0 && seg + 1 == segments && x.kind != PassKind::backward_weight) {
            g.stash_marks.push_back({s, t, x.kind == PassKind::forward ? 1 : -1});
          }
        }
        if (bucketed) {
          const auto reduced = collective(s, seg_tasks, true, sc.bucket_s * sc.buckets * share / segments,
                                          fmt::format("grad bucket c{} {}", x.chunk, seg), "dp");
          for (int i = 0; i < n_inst; ++i) buckets[idx(i, s)].push_back(reduced[static_cast<std::size_t>(i)]);
        }
      }
      if (comm > 0) {
        std::vector<sim::TaskId> in_tasks(static_cast<std::size_t>(n_inst));
        for (int i = 0; i < n_inst; ++i) in_tasks[static_cast<std::size_t>(i)] = chain[idx(i, s)];
        const auto tp = collective(s, in_tasks, false, comm, "tp " + label, "tp");
        for (int i = 0; i < n_inst; ++i) chain[idx(i, s)] = tp[static_cast<std::size_t>(i)];
      }
      if (zero3) {  // the pass ends when both its kernels and its streamed gathers are done
        for (int i = 0; i < n_inst; ++i) {
          const sim::TaskId j = dag.join(lanes[idx(i, s)].compute, "weights gathered " + label);
          dag.depend(chain[idx(i, s)], j);
          dag.depend(gather[static_cast<std::size_t>(i)], j);
          chain[idx(i, s)] = j;
        }
      }
      // Hand-over to the neighbouring virtual stage.
      const bool sends =
          (x.kind == PassKind::forward && vs < nvs - 1) || (x.kind == PassKind::backward && vs > 0);
      if (sends) {
        for (int i = 0; i < n_inst; ++i) {
          const sim::TaskId t =
              dag.busy(lanes[idx(i, s)].pp, dur(costs.p2p_s),
                       (x.kind == PassKind::forward ? "send act " : "send grad ") + label, "pp");
          dag.depend(chain[idx(i, s)], t);
          PassTasks& h = hand[pass_key(i, x.kind, x.micro_batch, vs)];
          h.send = t;
          h.has_send = true;
        }
      }
    }
  }
  // Cross-stage edges: a forward waits for the previous virtual stage's activation, a backward for the
  // next one's gradient.
  for (int i = 0; i < n_inst; ++i) {
    for (int mb = 0; mb < m; ++mb) {
      for (int vs = 0; vs < nvs; ++vs) {
        if (vs > 0)
          dag.depend(hand[pass_key(i, PassKind::forward, mb, vs - 1)].send,
                     hand[pass_key(i, PassKind::forward, mb, vs)].entry);
        if (vs < nvs - 1)
          dag.depend(hand[pass_key(i, PassKind::backward, mb, vs + 1)].send,
                     hand[pass_key(i, PassKind::backward, mb, vs)].entry);
      }
    }
  }
  // The step's tail on every stage: remaining (non-overlapped) buckets, gradient norm, update, gather.
  g.last_pass.resize(static_cast<std::size_t>(p));
  g.grad_norm.resize(static_cast<std::size_t>(p));
  g.optimizer.resize(static_cast<std::size_t>(p));
  g.final_task.resize(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    std::vector<sim::TaskId> ends(static_cast<std::size_t>(n_inst));
    for (int i = 0; i < n_inst; ++i) ends[static_cast<std::size_t>(i)] = chain[idx(i, s)];
    g.last_pass[static_cast<std::size_t>(s)] = ends.front();
    if (pl.zero < 3 && sc.buckets > 0 && !pl.overlap_grad_reduce) {
      std::vector<sim::TaskId> prev = ends;
      for (int b = 0; b < sc.buckets; ++b) {
        prev = collective(s, prev, true, sc.bucket_s, fmt::format("grad bucket {}", b), "dp");
        for (int i = 0; i < n_inst; ++i) buckets[idx(i, s)].push_back(prev[static_cast<std::size_t>(i)]);
      }
    }
    std::vector<sim::TaskId> reduced(static_cast<std::size_t>(n_inst));
    for (int i = 0; i < n_inst; ++i) {
      const sim::TaskId j = dag.join(lanes[idx(i, s)].dp, "grads reduced");
      dag.depend(ends[static_cast<std::size_t>(i)], j);
      for (sim::TaskId b : buckets[idx(i, s)]) dag.depend(b, j);
      reduced[static_cast<std::size_t>(i)] = j;
    }
    const auto norm = collective(s, reduced, true, sc.grad_norm_s, "grad norm all-reduce", "dp");
    std::vector<sim::TaskId> opt(static_cast<std::size_t>(n_inst));
    for (int i = 0; i < n_inst; ++i) {
      opt[static_cast<std::size_t>(i)] =
          dag.busy(lanes[idx(i, s)].compute, dur(sc.optimizer_s), "optimizer", "optimizer");
      dag.depend(norm[static_cast<std::size_t>(i)], opt[static_cast<std::size_t>(i)]);
    }
    g.grad_norm[static_cast<std::size_t>(s)] = norm.front();
    g.optimizer[static_cast<std::size_t>(s)] = opt.front();
    g.final_task[static_cast<std::size_t>(s)] = opt.front();
    if (pl.zero >= 1 && pl.zero < 3 && sc.param_gather_s > 0) {
      const auto gathered = collective(s, opt, true, sc.param_gather_s, "param all-gather", "dp");
      g.final_task[static_cast<std::size_t>(s)] = gathered.front();
    }
  }
  return g;
}

StepTiming run_step_graph(const StepGraph& graph, const StepInput& in, const StepPlan& plan,
                          const StepCosts& costs, sim::TraceSink* sink, const StageMemoryTrack* memory) {
  sim::Engine engine;
  const sim::DagResult r = sim::execute(graph.dag, engine, nullptr, sink);
  if (sink != nullptr && memory != nullptr) {
    std::vector<std::pair<sim::Time, const StepGraph::StashMark*>> marks;
    marks.reserve(graph.stash_marks.size());
    for (const auto& mark : graph.stash_marks) marks.emplace_back(r.tasks[mark.task].end, &mark);
    std::stable_sort(marks.begin(), marks.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> in_use = memory->resident;
    for (std::size_t s = 0; s < in_use.size(); ++s) {
      sink->counter(fmt::format("stage {} / compute", s), "memory_bytes", r.started, in_use[s]);
    }
    for (const auto& [t, mark] : marks) {
      const auto s = static_cast<std::size_t>(mark->stage);
      in_use[s] += mark->delta * memory->per_micro_batch[s];
      sink->counter(fmt::format("stage {} / compute", s), "memory_bytes", t, in_use[s]);
    }
  }
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const auto m = static_cast<double>(plan.micro_batches);
  StepTiming out;
  out.iteration_time = r.makespan.seconds();
  int crit = 0;
  for (int s = 1; s < p; ++s) {
    if (r.tasks[graph.final_task[static_cast<std::size_t>(s)]].end >
        r.tasks[graph.final_task[static_cast<std::size_t>(crit)]].end) {
      crit = s;
    }
  }
  const auto cs = static_cast<std::size_t>(crit);
  out.critical_stage = crit;
  TimeBreakdown& tb = out.time;
  for (int c = 0; c < v; ++c) {
    const PassCost& pc = costs.passes[static_cast<std::size_t>(c * p + crit)];
    tb.compute += m * (pc.forward_compute + pc.backward_compute);
    tb.exposed_tp_comm += m * (pc.forward_comm + pc.backward_comm);
  }
  const StageCost& sc = costs.stages[cs];
  tb.optimizer = sc.optimizer_s + sc.grad_norm_s;
  const double last_pass_end = r.tasks[graph.last_pass[cs]].end.seconds();
  const double norm_start = r.tasks[graph.grad_norm[cs]].start.seconds();
  // What an event run cannot attribute (waiting on a hand-over vs waiting on a gather vs the schedule's
  // idle slots) comes from the analytic model of the same costs.
  const StepTiming a = analytic_step(in, plan, costs);
  const double zero3 = in.plan.zero == 3 ? a.time.exposed_dp_comm - sc.param_gather_s : 0.0;
  tb.exposed_dp_comm = std::max(0.0, norm_start - last_pass_end) + std::max(0.0, zero3) +
                       (in.plan.zero >= 1 && in.plan.zero < 3 ? sc.param_gather_s : 0.0);
  tb.exposed_pp_comm = a.critical_stage == crit ? a.time.exposed_pp_comm : 0.0;
  tb.bubble = out.iteration_time -
              (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm + tb.exposed_pp_comm + tb.optimizer);
  if (tb.bubble < 0) {
    tb.exposed_pp_comm = std::max(0.0, tb.exposed_pp_comm + tb.bubble);
    tb.bubble = std::max(0.0, out.iteration_time - (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm +
                                                    tb.exposed_pp_comm + tb.optimizer));
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  return out;
}

}  // namespace trainsim::model
