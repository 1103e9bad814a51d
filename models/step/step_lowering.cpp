#include "models/step/step_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>

#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

constexpr std::int64_t kMaxFullClusterGpus = 4096;
// Every GPU's layers as tasks: beyond this a full-cluster graph needs gigabytes (~100 bytes a task with
// its name and edges); the symmetric collapse gives the same time.
constexpr std::size_t kMaxFullClusterTasks = std::size_t{16} << 20;

sim::Duration dur(double seconds) {
  return sim::Duration::from_seconds(std::max(0.0, seconds));
}

struct Lanes {
  sim::LaneId compute, tp, pp, dp;
};

// Which communicator a collective runs on: tensor-like (tp, cp, ep; a busy task), data-parallel, or
// ZeRO-3's gradient reduce-scatters (data-parallel, their own stream).
enum class Comm : std::uint8_t { tp, dp, dp_reduce };

// Where each pass's cross-stage edges attach: the task that must wait for the incoming hand-over, and
// the send that carries the outgoing one.
struct PassTasks {
  sim::TaskId entry = 0;
  sim::TaskId send = 0;
  bool has_send = false;
};

const char* comm_category(CommGroup g) {
  switch (g) {
    case CommGroup::tp:
      return "tp";
    case CommGroup::cp:
      return "cp";
    case CommGroup::ep:
      return "ep";
  }
  return "tp";
}

void append_int(std::string& s, long long v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

}  // namespace

StepGraph lower_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                     const LoweringOptions& options) {
  const bool full_cluster = options.full_cluster;
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
  TRAINSIM_CHECK(costs.chunk_units.size() == static_cast<std::size_t>(nvs),
                 "lower_step needs step_costs' per-layer pieces (hand-made costs serve analytic_step only)");
  const std::vector<UnitCost>& units = costs.units;
  const std::vector<std::vector<UnitRun>>& chunk_units = costs.chunk_units;

  StepGraph g;
  g.instances = n_inst;
  g.network =
      StepNetwork(in.cluster, costs, StepLayout{n_inst, p, full_cluster ? static_cast<int>(pl.dp) : 1},
                  options.contention);
  sim::Dag& dag = g.dag;
  {
    // Tasks per pass of each virtual stage: its pieces (an overlapped piece is three tasks) plus a few
    // per layer (ZeRO-3 gather and reduce-scatter, buckets) and per pass (hand-over, entry).
    std::vector<std::size_t> fwd(static_cast<std::size_t>(nvs), 4), bwd(static_cast<std::size_t>(nvs), 4);
    for (int vs = 0; vs < nvs; ++vs) {
      for (const UnitRun& r : chunk_units[static_cast<std::size_t>(vs)]) {
        const UnitCost& u = units[static_cast<std::size_t>(r.unit)];
        const auto n = static_cast<std::size_t>(r.count);
        fwd[static_cast<std::size_t>(vs)] += n * (3 * u.forward.size() + 2);
        bwd[static_cast<std::size_t>(vs)] += n * (3 * u.backward.size() + 4);
      }
    }
    std::size_t per_instance = 0;
    for (int s = 0; s < p; ++s) {
      per_instance += 160;
      for (const PipelinePass& x : order[static_cast<std::size_t>(s)]) {
        const auto vs = static_cast<std::size_t>(x.chunk * p + s);
        per_instance += x.kind == PassKind::forward ? fwd[vs] : bwd[vs];
      }
    }
    const auto n = static_cast<std::size_t>(n_inst);
    if (full_cluster && n * per_instance > kMaxFullClusterTasks) {
      throw InputError(
          fmt::format("a full-cluster simulation of this layout needs about {}M tasks (limit {}M); "
                      "simulate one GPU per symmetry class instead",
                      n * per_instance >> 20, kMaxFullClusterTasks >> 20));
    }
    dag.reserve(n * per_instance, n * per_instance * (full_cluster ? 3 : 2));
  }

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
  // Collapsed, the group is the one simulated GPU and no join is needed. Writes the members' tasks to
  // `out` (not `inputs`). Data-parallel ones are a busy task of their size-independent `latency_s` and a
  // flow (step_network.hpp), in order on their stream: ZeRO-3's reduce-scatters have their own (FSDP
  // gathers and reduce-scatters on separate streams); everything else data-parallel shares one.
  std::string sync_name;
  std::vector<sim::TaskId> first;
  auto collective = [&](int s, const std::vector<sim::TaskId>& inputs, Comm comm, double seconds,
                        double latency_s, std::string_view name, std::string_view category,
                        std::vector<sim::TaskId>& out) {
    TRAINSIM_CHECK(&inputs != &out, "collective: inputs and outputs must differ");
    out.resize(inputs.size());
    first.resize(inputs.size());
    const bool dp_group = comm != Comm::tp;
    const int group = dp_group ? static_cast<int>(pl.dp) : n_tp;
    for (int i = 0; i < n_inst; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (dp_group) {
        const LoweredTransfer t =
            g.network.dp_collective(dag, lanes[idx(i, s)].dp, i, s, seconds, latency_s, name, category,
                                    comm == Comm::dp_reduce ? Stream::reduce_scatter : Stream::data_parallel);
        first[k] = t.first;
        out[k] = t.last;
      } else {
        out[k] = first[k] = dag.busy(lanes[idx(i, s)].tp, dur(seconds), name, category);
      }
    }
    if (!full_cluster || group == 1) {
      for (int i = 0; i < n_inst; ++i)
        dag.depend(inputs[static_cast<std::size_t>(i)], first[static_cast<std::size_t>(i)]);
      return;
    }
    // Members of instance i's group: dp group = same tp index, any dp index; tp group = same dp index.
    sync_name.assign(name);
    sync_name += " sync";
    const int n_groups = n_inst / group;
    for (int gi = 0; gi < n_groups; ++gi) {
      const sim::TaskId join =
          dag.join(dp_group ? lanes[idx(gi, s)].dp : lanes[idx(gi * n_tp, s)].tp, sync_name);
      for (int k = 0; k < group; ++k) {
        const int i = dp_group ? k * n_tp + gi : gi * n_tp + k;
        dag.depend(inputs[static_cast<std::size_t>(i)], join);
        dag.depend(join, first[static_cast<std::size_t>(i)]);
      }
    }
  };
  auto collective_v = [&](int s, const std::vector<sim::TaskId>& inputs, Comm comm, double seconds,
                          double latency_s, std::string_view name, std::string_view category) {
    std::vector<sim::TaskId> out;
    collective(s, inputs, comm, seconds, latency_s, name, category, out);
    return out;
  };

  // Per instance, stage: the task the next piece chains after, and per pass the attach points.
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
  // ZeRO-3 prefetch: per instance, the task each unit of the current pass started after (the previous
  // unit's last task, or the pass's entry); unit k's gather is issued after unit k − prefetch's, so its
  // weights arrive `prefetch` units ahead (analytic_step.hpp's gathered_pass).
  std::vector<std::vector<sim::TaskId>> unit_start(static_cast<std::size_t>(n_inst));
  const auto ahead = static_cast<std::size_t>(std::max(0, costs.zero3_prefetch));

  // Scratch, reused across pieces.
  std::vector<sim::TaskId> inputs(static_cast<std::size_t>(n_inst)), outs, side;
  std::string label, name;

  for (int s = 0; s < p; ++s) {
    const auto& passes = order[static_cast<std::size_t>(s)];
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    const double stage_layers = std::max(1, plan.stage_layers[static_cast<std::size_t>(s)]);
    // The last gradient-producing pass of each chunk: its layer boundaries release the gradient buckets.
    std::vector<std::size_t> last_grad(static_cast<std::size_t>(v), passes.size());
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const PassKind want = split_w ? PassKind::backward_weight : PassKind::backward;
      if (passes[k].kind == want) last_grad[static_cast<std::size_t>(passes[k].chunk)] = k;
    }
    for (std::size_t k = 0; k < passes.size(); ++k) {
      const PipelinePass& x = passes[k];
      const int vs = x.chunk * p + s;
      const auto& runs = chunk_units[static_cast<std::size_t>(vs)];
      const double share =
          static_cast<double>(plan.chunk_layers[static_cast<std::size_t>(vs)]) / stage_layers;
      label.assign(pass_letter(x.kind));
      label += " mb";
      append_int(label, x.micro_batch);
      label += " c";
      append_int(label, x.chunk);
      const bool fwd = x.kind == PassKind::forward;
      const bool zero3 = costs.gathers_weights && x.kind != PassKind::backward_weight;
      // Gradient buckets (ZeRO 0–2, overlapped): the chunk's share of the buckets, each ready when the
      // backward of the units whose gradients it holds is done — bucket j after unit ⌈(j+1)·U/nb⌉ of the
      // U units in backward order.
      const bool bucketed = !shards_weights(pl.zero) && sc.buckets > 0 && pl.overlap_grad_reduce &&
                            k == last_grad[static_cast<std::size_t>(x.chunk)];
      const int nb = bucketed ? std::max(1, static_cast<int>(std::lround(sc.buckets * share))) : 0;
      const double bucket_each = bucketed ? sc.bucket_s * sc.buckets * share / nb : 0.0;
      const double bucket_latency = bucketed ? sc.bucket_latency_s * sc.buckets * share / nb : 0.0;
      std::int64_t n_units = 0;
      for (const UnitRun& r : runs) n_units += r.count;
      int next_bucket = 0;
      auto release_buckets = [&](std::int64_t done_units) {  // units of this pass finished so far
        while (next_bucket < nb &&
               (done_units >= n_units || static_cast<std::int64_t>(next_bucket + 1) * n_units <=
                                             done_units * static_cast<std::int64_t>(nb))) {
          for (int i = 0; i < n_inst; ++i) inputs[static_cast<std::size_t>(i)] = chain[idx(i, s)];
          name.assign("grad bucket c");
          append_int(name, x.chunk);
          name += ' ';
          append_int(name, next_bucket);
          collective(s, inputs, Comm::dp, bucket_each, bucket_latency, name, "dp", outs);
          for (int i = 0; i < n_inst; ++i) buckets[idx(i, s)].push_back(outs[static_cast<std::size_t>(i)]);
          ++next_bucket;
        }
      };

      bool first_task = true;
      // Chains `t` of instance i after the previous task; the pass's first task is its entry.
      auto link = [&](int i, sim::TaskId t) {
        const auto c = idx(i, s);
        if (has_chain[c]) dag.depend(chain[c], t);
        chain[c] = t;
        has_chain[c] = true;
      };
      auto open_pass = [&](bool entry_is_compute) {
        // The hand-over from the neighbouring stage attaches to the pass's first task; when that is not
        // a lone kernel, a zero-time entry on the compute stream stands in for it.
        if (!first_task) return;
        first_task = false;
        if (entry_is_compute) return;
        for (int i = 0; i < n_inst; ++i) link(i, dag.join(lanes[idx(i, s)].compute, label));
      };
      auto mark_entry = [&](int i) {
        if (x.kind != PassKind::backward_weight)
          hand[pass_key(i, x.kind, x.micro_batch, vs)].entry = chain[idx(i, s)];
      };
      auto emit_compute = [&](double seconds, bool is_first) {
        for (int i = 0; i < n_inst; ++i) {
          link(i, dag.busy(lanes[idx(i, s)].compute, dur(seconds), name, "compute"));
          if (is_first) mark_entry(i);
        }
      };

      if (zero3) {
        // The pass's first gathers go out at its entry (after the hand-over from the neighbour).
        open_pass(false);
        for (int i = 0; i < n_inst; ++i) {
          mark_entry(i);
          unit_start[static_cast<std::size_t>(i)].clear();
        }
      }
      std::int64_t done = 0;
      const int n_runs = static_cast<int>(runs.size());
      for (int ri = 0; ri < n_runs; ++ri) {
        const UnitRun& r = runs[static_cast<std::size_t>(fwd ? ri : n_runs - 1 - ri)];
        const UnitCost& u = units[static_cast<std::size_t>(r.unit)];
        const std::vector<CostPiece>& pieces = fwd ? u.forward : u.backward;
        for (int li = 0; li < r.count; ++li) {
          const int layer = r.first_layer < 0 ? -1 : r.first_layer + (fwd ? li : r.count - 1 - li);
          // "F mb3 c0 L12 " or "B mb3 c0 head "
          const std::size_t prefix = [&] {
            name.assign(label);
            if (layer >= 0) {
              name += " L";
              append_int(name, layer);
            } else {
              name += ' ';
              name += u.name;
            }
            name += ' ';
            return name.size();
          }();
          // ZeRO-3: this unit's weights, gathered `ahead` units ahead on the dp stream.
          const bool gathers = zero3 && u.gather_s > 0 && (fwd || pl.framework.reshard_after_forward);
          if (zero3) {
            for (int i = 0; i < n_inst; ++i)
              unit_start[static_cast<std::size_t>(i)].push_back(chain[idx(i, s)]);
          }
          if (gathers) {
            for (int i = 0; i < n_inst; ++i) {
              const auto& starts = unit_start[static_cast<std::size_t>(i)];
              const std::size_t unit_index = starts.size() - 1;
              inputs[static_cast<std::size_t>(i)] =
                  starts[ahead == 0 ? unit_index : (unit_index >= ahead ? unit_index - ahead : 0)];
            }
            name.resize(prefix);
            name += "zero3 gather";
            collective(s, inputs, Comm::dp, u.gather_s, u.gather_latency_s, name, "dp", side);
          }
          bool layer_first = true;
          auto wait_weights = [&](int i, sim::TaskId t) {
            if (gathers && layer_first) dag.depend(side[static_cast<std::size_t>(i)], t);
          };
          if (gathers && (pieces.empty() || pieces.front().kind != CostPiece::Kind::compute)) {
            // The layer opens with a collective: a zero-time task on the compute stream waits for the
            // weights instead.
            const bool is_first = first_task;
            open_pass(true);
            name.resize(prefix);
            name += "weights";
            for (int i = 0; i < n_inst; ++i) {
              const sim::TaskId j = dag.join(lanes[idx(i, s)].compute, name);
              wait_weights(i, j);
              link(i, j);
              if (is_first) mark_entry(i);
            }
            layer_first = false;
          }
          if (x.kind == PassKind::backward_weight) {
            const bool is_first = first_task;
            open_pass(true);
            name.resize(prefix);
            name += "wgrad";
            emit_compute(u.total.weight_compute, is_first);
          } else {
            for (const CostPiece& pc : pieces) {
              const bool is_first = first_task;
              name.resize(prefix);
              switch (pc.kind) {
                case CostPiece::Kind::compute: {
                  open_pass(true);
                  name += pc.name;
                  const double sec = pc.compute - (split_w && !fwd ? pc.weight : 0.0);
                  for (int i = 0; i < n_inst; ++i) {
                    const sim::TaskId t = dag.busy(lanes[idx(i, s)].compute, dur(sec), name, "compute");
                    wait_weights(i, t);
                    link(i, t);
                    if (is_first) mark_entry(i);
                  }
                  break;
                }
                case CostPiece::Kind::collective: {
                  if (pc.comm <= 0) continue;
                  open_pass(false);
                  if (is_first)
                    for (int i = 0; i < n_inst; ++i) mark_entry(i);
                  name += pc.name;
                  for (int i = 0; i < n_inst; ++i) inputs[static_cast<std::size_t>(i)] = chain[idx(i, s)];
                  collective(s, inputs, Comm::tp, pc.comm, pc.comm, name, comm_category(pc.group), outs);
                  for (int i = 0; i < n_inst; ++i) chain[idx(i, s)] = outs[static_cast<std::size_t>(i)];
                  break;
                }
                case CostPiece::Kind::overlapped: {
                  // The collective streams beside the kernel it hides under; the next piece waits for both.
                  open_pass(false);
                  if (is_first)
                    for (int i = 0; i < n_inst; ++i) mark_entry(i);
                  name += pc.comm_name;
                  for (int i = 0; i < n_inst; ++i) inputs[static_cast<std::size_t>(i)] = chain[idx(i, s)];
                  collective(s, inputs, Comm::tp, pc.comm, pc.comm, name, comm_category(pc.group), outs);
                  name.resize(prefix);
                  name += pc.name;
                  const double sec = pc.compute - (split_w && !fwd ? pc.weight : 0.0);
                  for (int i = 0; i < n_inst; ++i) {
                    const auto c = idx(i, s);
                    const sim::TaskId t = dag.busy(lanes[c].compute, dur(sec), name, "compute");
                    dag.depend(chain[c], t);
                    const sim::TaskId j = dag.join(lanes[c].compute, name);
                    dag.depend(t, j);
                    dag.depend(outs[static_cast<std::size_t>(i)], j);
                    chain[c] = j;
                  }
                  break;
                }
              }
              layer_first = false;
            }
          }
          // ZeRO-3: the unit's gradients are reduce-scattered as soon as its backward is done.
          if (zero3 && x.kind == PassKind::backward && u.reduce_s > 0) {
            for (int i = 0; i < n_inst; ++i) inputs[static_cast<std::size_t>(i)] = chain[idx(i, s)];
            name.resize(prefix);
            name += "zero3 reduce-scatter";
            collective(s, inputs, Comm::dp_reduce, u.reduce_s, u.reduce_latency_s, name, "dp", outs);
            for (int i = 0; i < n_inst; ++i) buckets[idx(i, s)].push_back(outs[static_cast<std::size_t>(i)]);
          }
          ++done;
          if (bucketed) release_buckets(done);
        }
      }
      if (first_task) {  // a pass without pieces: one empty entry
        name.assign(label);
        open_pass(false);
        for (int i = 0; i < n_inst; ++i) mark_entry(i);
      }
      if (bucketed) release_buckets(n_units);
      if (x.kind != PassKind::backward_weight) g.stash_marks.push_back({s, chain[idx(0, s)], fwd ? 1 : -1});
      // Hand-over to the neighbouring virtual stage.
      if (sends_to_neighbour(x.kind, vs, nvs)) {
        name.assign(fwd ? "send act " : "send grad ");
        name += label;
        const int to = (fwd ? vs + 1 : vs - 1) % p;
        for (int i = 0; i < n_inst; ++i) {
          const LoweredTransfer t = g.network.pp_send(dag, lanes[idx(i, s)].pp, i, s, to, name, "pp");
          dag.depend(chain[idx(i, s)], t.first);
          if (pl.framework.blocking_p2p) {  // the sender computes again once its send is done
            const sim::TaskId sent = dag.join(lanes[idx(i, s)].compute, name);
            dag.depend(t.last, sent);
            chain[idx(i, s)] = sent;
          }
          PassTasks& h = hand[pass_key(i, x.kind, x.micro_batch, vs)];
          h.send = t.last;
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
    if (!shards_weights(pl.zero) && sc.buckets > 0 && !pl.overlap_grad_reduce) {
      std::vector<sim::TaskId> prev = ends;
      for (int b = 0; b < sc.buckets; ++b) {
        prev = collective_v(s, prev, Comm::dp, sc.bucket_s, sc.bucket_latency_s,
                            fmt::format("grad bucket {}", b), "dp");
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
    // A few bytes: all latency, a busy task.
    const auto norm =
        collective_v(s, reduced, Comm::dp, sc.grad_norm_s, sc.grad_norm_s, "grad norm all-reduce", "dp");
    std::vector<sim::TaskId> opt(static_cast<std::size_t>(n_inst));
    for (int i = 0; i < n_inst; ++i) {
      opt[static_cast<std::size_t>(i)] =
          dag.busy(lanes[idx(i, s)].compute, dur(sc.optimizer_s), "optimizer", "optimizer");
      dag.depend(norm[static_cast<std::size_t>(i)], opt[static_cast<std::size_t>(i)]);
    }
    g.grad_norm[static_cast<std::size_t>(s)] = norm.front();
    g.optimizer[static_cast<std::size_t>(s)] = opt.front();
    g.final_task[static_cast<std::size_t>(s)] = opt.front();
    // The updated weights' all-gather, or (overlap_param_gather) what of it the next step's first forward
    // does not hide, as analytic_step closes it.
    const double param_gather = exposed_param_gather(in, plan, costs, s);
    if (param_gather > 0) {
      const auto gathered =
          collective_v(s, opt, Comm::dp, param_gather, std::min(param_gather, sc.param_gather_latency_s),
                       "param all-gather", "dp");
      g.final_task[static_cast<std::size_t>(s)] = gathered.front();
    }
  }
  return g;
}

StepTiming run_step_graph(const StepGraph& graph, const StepInput& in, const StepPlan& plan,
                          const StepCosts& costs, sim::TraceSink* sink, const StageMemoryTrack* memory) {
  sim::Engine engine;
  sim::FlowNetwork network(engine);
  graph.network.install(network);
  const sim::DagResult r = sim::execute(graph.dag, engine, &network, sink);
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
  out.time = stage_work(costs, plan, crit);
  TimeBreakdown& tb = out.time;
  const double last_pass_end = r.tasks[graph.last_pass[cs]].end.seconds();
  const double norm_start = r.tasks[graph.grad_norm[cs]].start.seconds();
  // What an event run cannot attribute (waiting on a hand-over vs waiting on a gather vs the schedule's
  // idle slots) comes from the analytic model of the same costs.
  const StepTiming a = analytic_step(in, plan, costs);
  // ZeRO-3: the passes' waits for their weights, in the closed form of the same costs.
  double zero3 = 0;
  if (costs.gathers_weights) {
    for (int c = 0; c < v; ++c) {
      zero3 += m * (gathered_pass(costs, c * p + crit, false, true).extra +
                    gathered_pass(costs, c * p + crit, true, in.plan.framework.reshard_after_forward).extra);
    }
  }
  tb.exposed_dp_comm =
      std::max(0.0, norm_start - last_pass_end) + zero3 + exposed_param_gather(in, plan, costs, crit);
  tb.exposed_pp_comm = a.critical_stage == crit ? a.time.exposed_pp_comm : 0.0;
  tb.bubble = out.iteration_time -
              (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm + tb.exposed_pp_comm + tb.optimizer);
  if (tb.bubble < 0) {
    // The estimates borrowed from the analytic model overshoot what this run spent: take the excess back
    // from them (pipeline hand-overs first, then the ZeRO-3 gathers), so the parts sum to the step.
    const double pp_cut = std::min(tb.exposed_pp_comm, -tb.bubble);
    tb.exposed_pp_comm -= pp_cut;
    tb.bubble += pp_cut;
    const double dp_cut = std::min(zero3, -tb.bubble);
    tb.exposed_dp_comm -= dp_cut;
    tb.bubble = std::max(0.0, out.iteration_time - (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm +
                                                    tb.exposed_pp_comm + tb.optimizer));
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  return out;
}

}  // namespace trainsim::model
