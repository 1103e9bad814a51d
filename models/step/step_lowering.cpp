#include "models/step/step_lowering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "models/step/asymmetry.hpp"
#include "models/step/communicators.hpp"
#include "models/step/event_graph_limits.hpp"
#include "models/step/merged_passes.hpp"
#include "models/step/unit_pricing.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

sim::Duration dur(double seconds) {
  return sim::Duration::from_seconds(std::max(0.0, seconds));
}

struct Lanes {
  sim::LaneId compute, tp, pp, dp, optimizer;
  sim::LaneId dp_reduce;  ///< ZeRO-3's reduce-scatters, a stream apart from the gathers (dp otherwise)
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
    case CommGroup::expert_tp_ep:  // the all-gather dispatcher's expert-parallel traffic
      return "ep";
    case CommGroup::expert_tp:
      return "tp";  // an expert's own tensor-parallel ranks: a part of the tp group
  }
  return "tp";
}

void append_int(std::string& s, long long v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

std::size_t at(int i) {
  return static_cast<std::size_t>(i);
}

// `flows` with every collective's bytes times `f` (merged buckets, the part of a gather left exposed).
RoutedCollectives scaled(RoutedCollectives flows, double f) {
  for (RoutedCollective& c : flows) c.bytes *= f;
  return flows;
}

// The lowering of one step, in the order the file comment describes: lanes per simulated GPU, then per
// stage its passes (each pass its units, each unit its pieces), the cross-stage edges, and per stage the
// step's tail. Instances are the simulated copies of the pipeline (one when collapsed): instance i of
// stage s runs on lanes_[idx(i, s)] and its last task so far is chain_[idx(i, s)].
class StepLowering {
 public:
  StepLowering(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
               const LoweringOptions& options)
      : in_(in),
        pl_(in.plan),
        plan_(plan),
        costs_(costs),
        full_cluster_(options.full_cluster),
        merge_(options.merge_serial && !options.full_cluster),
        max_tasks_(options.max_tasks),
        p_(plan.pp),
        v_(plan.virtual_stages),
        m_(static_cast<int>(plan.micro_batches)),
        nvs_(p_ * v_) {
    TRAINSIM_CHECK(plan.feasible, "lower_step needs a feasible plan");
    const std::int64_t model_ranks =
        static_cast<std::int64_t>(pl_.tp) * pl_.cp * pl_.ep_axis();  // tp-like groups
    // Routed, the model-parallel ranks of one replica's stage stay one instance (their kernels are alike and
    // their blocking collectives hold them in step) and each of its transfers is one flow per rank over the
    // fabric (step_network.hpp); otherwise instance = dp_index·n_tp + tp_index.
    const bool routed = costs.fabric == FabricPricing::routed;
    TRAINSIM_CHECK(full_cluster_ || !routed, "costs priced for routed flows need the full-cluster lowering");
    whole_units_ = routed;
    merge_whole_ = options.merge_serial && routed;
    TRAINSIM_CHECK(options.replica_slowdown.empty() || whole_units_,
                   "per-replica slowdowns need the routed full-cluster lowering");
    slowdown_ = options.replica_slowdown;
    n_tp_ = full_cluster_ && !routed ? static_cast<int>(model_ranks) : 1;
    n_inst_ = full_cluster_ ? n_tp_ * static_cast<int>(pl_.dp) : 1;
    order_ = pipeline_schedule(pl_.schedule, p_, m_, v_);
    split_w_ = pl_.schedule == Schedule::zero_bubble_h1;
    TRAINSIM_CHECK(
        costs.chunk_units.size() == at(nvs_),
        "lower_step needs step_costs' per-layer pieces (hand-made costs serve analytic_step only)");
    g_.instances = n_inst_;
    FabricRoutes routes;
    if (routed) {
      routes.graph = std::make_shared<const topo::ClusterGraph>(topo::ClusterGraph::build(in.cluster));
      routes.gpus = full_cluster_gpus(pl_, in.cluster);
      routes.tp = static_cast<int>(pl_.tp);
      routes.cp = static_cast<int>(pl_.cp);
      routes.ep = static_cast<int>(pl_.ep_axis());
      routes.shard = static_cast<int>(pl_.dp_shard());
      routes.expert_tp = pl_.expert_tensor_parallel();
      routes.folded_ep = pl_.expert_folding ? pl_.ep : 1;
    }
    g_.network =
        StepNetwork(in.cluster, costs, StepLayout{n_inst_, p_, full_cluster_ ? static_cast<int>(pl_.dp) : 1},
                    options.contention, std::move(routes));
    const auto slots = at(n_inst_ * p_);
    chain_.resize(slots);
    has_chain_.assign(slots, false);
    open_.assign(slots, false);
    buckets_.resize(slots);
    hand_.resize(at(n_inst_) * 2 * at(m_) * at(nvs_));
    unit_start_.resize(at(n_inst_));
    ahead_ = static_cast<std::size_t>(std::max(0, costs.zero3_prefetch));
    inputs_.resize(at(n_inst_));
    unit_work_.resize(costs.units.size() * kPassKindCount);
  }

  StepGraph build() && {
    reserve_graph();
    make_lanes();
    for (int s = 0; s < p_; ++s) lower_stage(s);
    connect_stages();
    g_.last_pass.resize(at(n_inst_ * p_));
    g_.grad_norm.resize(at(n_inst_ * p_));
    g_.optimizer.resize(at(n_inst_ * p_));
    g_.final_task.resize(at(n_inst_ * p_));
    g_.replica_slowdown = slowdown_;
    for (int s = 0; s < p_; ++s) lower_tail(s);
    g_.network.forget_lowered();
    return std::move(g_);
  }

 private:
  // One pass of a micro-batch through a virtual stage, and the gradient buckets it releases (ZeRO 0–2,
  // overlapped: the chunk's share of the buckets, each ready when the backward of the units whose
  // gradients it holds is done — bucket j after unit ⌈(j+1)·U/nb⌉ of the U units in backward order).
  struct Pass {
    const PipelinePass& x;
    int s = 0, vs = 0;
    bool fwd = false, zero3 = false;
    bool first_task = true;  // no task of the pass emitted yet
    bool bucketed = false;
    double beside_buckets = 1.0;  // how many times as long its kernels take beside the buckets
    int nb = 0, next_bucket = 0;
    double bucket_each = 0, bucket_latency = 0;
    RoutedCollectives bucket_flows;  // routed: one (merged) bucket's flows
    std::int64_t n_units = 0;
  };
  // One unit (layer, embedding or head) inside a pass; task names start with name_[0, prefix).
  struct Unit {
    const UnitCost& u;
    std::size_t prefix = 0;
    bool gathers = false;     // ZeRO-3: this visit gathers the unit's weights
    bool layer_first = true;  // no kernel of the unit emitted yet (the one that waits for the weights)
  };

  std::size_t idx(int inst, int s) const { return at(inst * p_ + s); }
  // How much longer instance `inst`'s kernels on pipeline rank s take (a straggler's replica), 1 if not.
  double slowdown(int inst, int s) const {
    const auto it = slowdown_.find(inst);
    return it == slowdown_.end() ? 1.0 : it->second[at(s)];
  }
  // How much longer instance `inst`'s kernels of pass `ps` take: its straggler's slowdown, and the
  // gradient buckets reduced beside the pass.
  double compute_scale(const Pass& ps, int inst) const { return slowdown(inst, ps.s) * ps.beside_buckets; }
  std::size_t pass_key(int inst, PassKind k, int mb, int vs) const {
    return ((at(inst) * 2 + (k == PassKind::forward ? 0 : 1)) * at(m_) + at(mb)) * at(nvs_) + at(vs);
  }
  sim::Dag& dag() { return g_.dag; }

  // The tasks the lowering will build, counted as lower_pass and lower_tail build them: per pass its entry,
  // its hand-over (a transfer) and its units — a unit lowered whole one task (none when merged into the
  // pass's one task), one lowered piece by piece three a piece and a routed collective's flows (collapsed and
  // merged: one) — plus ZeRO-3's gather and reduce-scatter per unit; per stage its gradient buckets and tail
  // collectives, each a transfer per instance. An upper bound within a factor of two on the layouts measured
  // (tests), except that ZeRO-3's routed collectives can lower more flows than counted. Refuses a graph
  // beyond LoweringOptions::max_tasks: a full-cluster one in favour of the symmetric collapse, a collapsed
  // one (many micro-batches through many stages) in favour of the analytic fidelity.
  void reserve_graph() {
    // A transfer is a latency task and a flow, or routed a latency task, a flow per model-parallel rank
    // and a join.
    const std::size_t transfer =
        whole_units_ ? static_cast<std::size_t>(pl_.tp) * pl_.cp * pl_.ep_axis() + 2 : 2;
    const bool zero3 = costs_.gathers_weights;
    std::vector<std::size_t> fwd(at(nvs_), 3 + transfer), bwd(at(nvs_), 3 + transfer);
    for (int vs = 0; vs < nvs_; ++vs) {
      for (const UnitRun& r : costs_.chunk_units[at(vs)]) {
        const UnitCost& u = costs_.units[at(r.unit)];
        const auto n = static_cast<std::size_t>(r.count);
        const bool whole = whole_units_ && !u.routes_pieces;
        auto pieces = [&](const std::vector<CostPiece>& list) {
          if (whole) return merge_whole_ ? std::size_t{0} : std::size_t{1};
          if (merge_) return std::size_t{1};  // collapsed and merged: a unit's pieces join the pass's runs
          std::size_t tasks = 3 * list.size();
          for (const CostPiece& pc : list) tasks += pc.routed.size() * (transfer + 2) * 2;
          return tasks;
        };
        // ZeRO-3: a gather (and in the backward a reduce-scatter) per unit, each a data-parallel collective
        // whose algorithm lowers about two flows per member.
        fwd[at(vs)] += n * (pieces(u.forward) + (zero3 ? 2 * transfer : 0));
        bwd[at(vs)] += n * (pieces(u.backward) + (zero3 ? 4 * transfer + 1 : 0));
      }
    }
    std::size_t per_instance = 0;
    for (int s = 0; s < p_; ++s) {
      // The tail's joins, norm, update, exchanges and gathers, and the stage's buckets.
      per_instance += 16 + static_cast<std::size_t>(std::max(0, costs_.stages[at(s)].buckets) + 3) * transfer;
      for (const PipelinePass& x : order_[at(s)]) {
        const auto vs = plan_.virtual_stage_index(x.chunk, s);
        per_instance += x.kind == PassKind::forward ? fwd[vs] : bwd[vs];
      }
    }
    const auto n = at(n_inst_);
    g_.estimated_tasks = n * per_instance;
    if (n * per_instance > max_tasks_) refuse(n * per_instance, "the lowering's estimate");
    dag().reserve(n * per_instance, n * per_instance * (full_cluster_ ? 3 : 2));
  }

  // Refuses a graph of about `tasks` tasks, beyond the limit (`how`: how that count was found).
  [[noreturn]] void refuse(std::size_t tasks, std::string_view how) const {
    const double millions = static_cast<double>(tasks) / 1e6;
    const std::string limits = max_tasks_ == event_graph_task_limit()
                                   ? event_graph_limits()
                                   : fmt::format("{:.1f}M tasks", static_cast<double>(max_tasks_) / 1e6);
    if (full_cluster_) {
      throw InputError(fmt::format(
          "a full-cluster simulation of this layout needs about {:.0f}M tasks ({}), {}, more than the limit "
          "of {}; simulate one GPU per symmetry class instead",
          millions, how, event_graph_cost(tasks), limits));
    }
    throw InputError(fmt::format(
        "the event fidelity of this layout needs about {:.0f}M tasks ({} micro-batches through {} virtual "
        "stages), {}, more than the limit of {}; use the analytic fidelity (--fidelity analytic)",
        millions, m_, nvs_, event_graph_cost(tasks), limits));
  }

  // The estimate can run low (ZeRO-3's routed gathers): the graph being built is held to the limit too,
  // the count it would reach extrapolated from the passes lowered so far.
  void hold_to_limit() {
    ++passes_done_;
    if (dag().size() <= max_tasks_) return;
    std::size_t passes = 0;
    for (const auto& rank : order_) passes += rank.size();
    refuse(dag().size() / passes_done_ * passes,
           fmt::format("extrapolated from its first {} of {} passes", passes_done_, passes));
  }

  void make_lanes() {
    lanes_.resize(at(n_inst_ * p_));
    for (int i = 0; i < n_inst_; ++i) {
      for (int s = 0; s < p_; ++s) {
        const std::string proc = whole_units_    ? fmt::format("replica {} stage {}", i, s)
                                 : full_cluster_ ? fmt::format("gpu {}", i * p_ + s)
                                                 : fmt::format("stage {}", s);
        lanes_[idx(i, s)] = Lanes{dag().lane(proc + " / compute"), dag().lane(proc + " / tp comm"),
                                  dag().lane(proc + " / pp comm"), dag().lane(proc + " / dp comm"),
                                  dag().lane(proc + " / optimizer")};
        lanes_[idx(i, s)].dp_reduce =
            costs_.gathers_weights ? dag().lane(proc + " / dp reduce") : lanes_[idx(i, s)].dp;
      }
    }
  }

  // A collective among the instances of one group: each member's task waits for all members' inputs.
  // Collapsed, the group is the one simulated GPU and no join is needed. Writes the members' tasks to
  // `out` (not `inputs`). Data-parallel ones are a busy task of their size-independent `latency_s` and a
  // flow (step_network.hpp), in order on their stream: ZeRO-3's reduce-scatters have their own (FSDP
  // gathers and reduce-scatters on separate streams); everything else data-parallel shares one.
  // Routed, a data-parallel one with `flows` is lowered as its algorithm's flows (routed_dp_collective).
  void collective(int s, const std::vector<sim::TaskId>& inputs, Comm comm, double seconds, double latency_s,
                  std::string_view name, std::string_view category, std::vector<sim::TaskId>& out,
                  const RoutedCollectives& flows = {}) {
    TRAINSIM_CHECK(&inputs != &out, "collective: inputs and outputs must differ");
    out.resize(inputs.size());
    first_.resize(inputs.size());
    const bool dp_group = comm != Comm::tp;
    if (dp_group && whole_units_ && !flows.empty() && seconds > 0) {
      routed_dp_collective(s, inputs, comm, split_latency(seconds, latency_s).latency_s, flows, name,
                           category, out);
      return;
    }
    for (int i = 0; i < n_inst_; ++i) {
      if (!dp_group) {
        out[at(i)] = first_[at(i)] = dag().busy(lanes_[idx(i, s)].tp, dur(seconds), name, category);
        continue;
      }
      const LoweredTransfer t = g_.network.dp_collective(dag(), dp_lane(i, s, comm), i, s, seconds, latency_s,
                                                         name, category, dp_stream(comm));
      first_[at(i)] = t.first;
      out[at(i)] = t.last;
    }
    const int group = dp_group ? static_cast<int>(pl_.dp) : n_tp_;
    if (!full_cluster_ || group == 1) {
      for (int i = 0; i < n_inst_; ++i) dag().depend(inputs[at(i)], first_[at(i)]);
      return;
    }
    join_group(s, inputs, dp_group, group, name);
    if (dp_group && whole_units_) finish_ring(s, comm, out, name);
  }

  // Routed full cluster: a data-parallel collective of every replica, as its algorithm's flows. It starts
  // when every member is ready (a join); each replica's stream then pays the size-independent latency (in
  // order after its previous transfer), and once all have, each of `flows` in turn is lowered over every
  // group of its ranks (step_network.hpp); every member's stream goes on when all are done.
  void routed_dp_collective(int s, const std::vector<sim::TaskId>& inputs, Comm comm, double latency_s,
                            const RoutedCollectives& flows, std::string_view name, std::string_view category,
                            std::vector<sim::TaskId>& out) {
    const sim::LaneId lane = lanes_[idx(0, s)].dp;
    sync_name_.assign(name);
    sync_name_ += " sync";
    const sim::TaskId sync = dag().join(lane, sync_name_, category);
    for (int i = 0; i < n_inst_; ++i) dag().depend(inputs[at(i)], sync);
    sync_name_.assign(name);
    sync_name_ += " latency";
    const sim::TaskId ready = dag().join(lane, sync_name_, category);
    for (int i = 0; i < n_inst_; ++i) {
      const sim::TaskId t = dag().busy(dp_lane(i, s, comm), dur(latency_s), sync_name_, category);
      dag().depend(sync, t);
      g_.network.chain(dag(), i, s, dp_stream(comm), LoweredTransfer{t, t});
      dag().depend(t, ready);
      first_[at(i)] = t;
    }
    sync_name_.assign(name);
    sync_name_ += " done";
    sim::TaskId done = ready;
    for (const RoutedCollective& c : flows) {
      const sim::TaskId after = done;
      done = dag().join(lane, sync_name_, category);
      for (const auto& members : g_.network.data_parallel_groups(s, c.over))
        dag().depend(g_.network.routed_collective(dag(), lane, after, c, members, name), done);
    }
    for (int i = 0; i < n_inst_; ++i) {
      out[at(i)] = done;
      g_.network.after(i, s, dp_stream(comm), done);
    }
  }

  // Routed full cluster: instance i's collectives of piece `pc` after inputs[i] on its tp comm lane: what of
  // pc.comm is not routed as a busy task, then each routed collective's latency and its flows, one lowered
  // collective per group of the instance (step_network.hpp).
  void routed_model_collective(int s, const std::vector<sim::TaskId>& inputs, const CostPiece& pc,
                               std::string_view name, std::string_view category,
                               std::vector<sim::TaskId>& out) {
    out.resize(inputs.size());
    double rest = pc.comm;
    for (const RoutedComm& rc : pc.routed) rest -= rc.seconds;
    for (int i = 0; i < n_inst_; ++i) {
      const sim::LaneId lane = lanes_[idx(i, s)].tp;
      sim::TaskId last = inputs[at(i)];
      if (rest > 1e-15) {
        const sim::TaskId t = dag().busy(lane, dur(rest), name, category);
        dag().depend(last, t);
        last = t;
      }
      for (const RoutedComm& rc : pc.routed) {
        sync_name_.assign(name);
        sync_name_ += " latency";
        const sim::TaskId latency = dag().busy(lane, dur(rc.latency_s), sync_name_, category);
        dag().depend(last, latency);
        last = dag().join(lane, name, category);
        for (const auto& members : g_.network.model_groups(i, s, rc.group))
          dag().depend(g_.network.routed_collective(dag(), lane, latency, rc.flows, members, name), last);
      }
      out[at(i)] = last;
    }
  }

  // The lane of a data-parallel collective's size-independent part: its own stream's.
  sim::LaneId dp_lane(int i, int s, Comm comm) const {
    return comm == Comm::dp_reduce ? lanes_[idx(i, s)].dp_reduce : lanes_[idx(i, s)].dp;
  }
  static Stream dp_stream(Comm comm) {
    return comm == Comm::dp_reduce ? Stream::reduce_scatter : Stream::data_parallel;
  }

  // Routed full cluster: a ring is a pipeline through all its members, so it is done for each of them only
  // when every member's step of it is (its slowest link sets everyone's pace: a degraded NIC or a shared
  // spine link slows the whole ring, as the closed form says); the members' next transfers on that stream
  // wait for it too. The data-parallel group is every simulated instance (one per replica).
  void finish_ring(int s, Comm comm, std::vector<sim::TaskId>& out, std::string_view name) {
    sync_name_.assign(name);
    sync_name_ += " done";
    const sim::TaskId done = dag().join(lanes_[idx(0, s)].dp, sync_name_);
    for (int i = 0; i < n_inst_; ++i) dag().depend(out[at(i)], done);
    for (int i = 0; i < n_inst_; ++i) {
      out[at(i)] = done;
      g_.network.after(i, s, dp_stream(comm), done);
    }
  }

  // Full cluster: members of instance i's group wait for each other. dp group = same tp index, any dp
  // index; tp group = same dp index.
  void join_group(int s, const std::vector<sim::TaskId>& inputs, bool dp_group, int group,
                  std::string_view name) {
    sync_name_.assign(name);
    sync_name_ += " sync";
    const int n_groups = n_inst_ / group;
    for (int gi = 0; gi < n_groups; ++gi) {
      const sim::TaskId join =
          dag().join(dp_group ? lanes_[idx(gi, s)].dp : lanes_[idx(gi * n_tp_, s)].tp, sync_name_);
      for (int k = 0; k < group; ++k) {
        const int i = dp_group ? k * n_tp_ + gi : gi * n_tp_ + k;
        dag().depend(inputs[at(i)], join);
        dag().depend(join, first_[at(i)]);
      }
    }
  }

  std::vector<sim::TaskId> collective_v(int s, const std::vector<sim::TaskId>& inputs, Comm comm,
                                        double seconds, double latency_s, std::string_view name,
                                        std::string_view category, const RoutedCollectives& flows = {}) {
    std::vector<sim::TaskId> out;
    collective(s, inputs, comm, seconds, latency_s, name, category, out, flows);
    return out;
  }

  // inputs_ = every instance's last task on stage s.
  const std::vector<sim::TaskId>& chain_inputs(int s) {
    for (int i = 0; i < n_inst_; ++i) {
      inputs_[at(i)] = chain_[idx(i, s)];
      open_[idx(i, s)] = false;
    }
    return inputs_;
  }

  // ---- passes ----

  void lower_stage(int s) {
    const auto& passes = order_[at(s)];
    // The last gradient-producing pass of each chunk: its layer boundaries release the gradient buckets.
    std::vector<std::size_t> last_grad(at(v_), passes.size());
    const PassKind want = split_w_ ? PassKind::backward_weight : PassKind::backward;
    for (std::size_t k = 0; k < passes.size(); ++k) {
      if (passes[k].kind == want) last_grad[at(passes[k].chunk)] = k;
    }
    for (std::size_t k = 0; k < passes.size(); ++k) {
      lower_pass(s, passes[k], k == last_grad[at(passes[k].chunk)], runs_alone(order_, at(s), k));
      hold_to_limit();
    }
  }

  void lower_pass(int s, const PipelinePass& x, bool last_grad, bool alone) {
    Pass ps{.x = x, .s = s, .vs = static_cast<int>(plan_.virtual_stage_index(x.chunk, s))};
    for (int i = 0; i < n_inst_; ++i) open_[idx(i, s)] = false;  // a pass's entry waits for a hand-over
    const auto& runs = costs_.chunk_units[at(ps.vs)];
    // label_ = "F mb3 c0", built in a buffer and assigned once: a step lowers a pass per micro-batch and
    // virtual stage. An int has at most 11 characters.
    char buf[32] = {*pass_letter(x.kind), ' ', 'm', 'b'};
    char* end = std::to_chars(buf + 4, buf + 16, x.micro_batch).ptr;
    *end++ = ' ';
    *end++ = 'c';
    end = std::to_chars(end, buf + sizeof buf, x.chunk).ptr;
    label_.assign(buf, end);
    ps.fwd = x.kind == PassKind::forward;
    ps.zero3 = costs_.gathers_weights && x.kind != PassKind::backward_weight;
    plan_buckets(ps, last_grad);
    for (const UnitRun& r : runs) ps.n_units += r.count;

    if (ps.zero3) {
      // The pass's first gathers go out at its entry (after the hand-over from the neighbour).
      open_pass(ps, false);
      for (int i = 0; i < n_inst_; ++i) {
        mark_entry(ps, i);
        unit_start_[at(i)].clear();
      }
    }
    std::int64_t done = 0;
    const int n_runs = static_cast<int>(runs.size());
    for (int ri = 0; ri < n_runs; ++ri) {
      const UnitRun& r = runs[at(ps.fwd ? ri : n_runs - 1 - ri)];
      const UnitCost& u = costs_.units[at(r.unit)];
      // The run's units are alike: what one adds to a merged task is found once for the run.
      std::optional<sim::Duration> merged;
      for (int li = 0; li < r.count; ++li) {
        const int layer = r.first_layer < 0 ? -1 : r.first_layer + (ps.fwd ? li : r.count - 1 - li);
        if (!lower_merged_unit(ps, r.unit, u, layer, merged)) lower_unit(ps, u, layer);
        ++done;
        if (ps.bucketed) release_buckets(ps, done);
      }
    }
    if (alone) lower_alone_all_to_alls(ps);
    if (ps.first_task) {  // a pass without pieces: one empty entry
      name_.assign(label_);
      open_pass(ps, false);
      for (int i = 0; i < n_inst_; ++i) mark_entry(ps, i);
    }
    if (ps.bucketed) release_buckets(ps, ps.n_units);
    if (x.kind != PassKind::backward_weight)
      g_.stash_marks.push_back({s, chain_[idx(0, s)], ps.fwd ? 1 : -1});
    if (sends_to_neighbour(x.kind, ps.vs, nvs_)) hand_over(ps);
  }

  // The chunk's share of the stage's gradient buckets, when this pass releases them.
  void plan_buckets(Pass& ps, bool last_grad) const {
    const StageCost& sc = costs_.stages[at(ps.s)];
    const double stage_layers = std::max(1, plan_.stage_layers[at(ps.s)]);
    const double share = static_cast<double>(plan_.chunk_layers[at(ps.vs)]) / stage_layers;
    ps.bucketed = !shards_weights(pl_.zero) && sc.buckets > 0 && pl_.overlap_grad_reduce && last_grad;
    if (!ps.bucketed) return;
    ps.beside_buckets = last_grads_slowdown(costs_, plan_, ps.vs);
    ps.nb = std::max(1, static_cast<int>(std::lround(sc.buckets * share)));
    ps.bucket_each = sc.bucket_s * sc.buckets * share / ps.nb;
    ps.bucket_latency = sc.bucket_latency_s * sc.buckets * share / ps.nb;
    ps.bucket_flows = scaled(sc.bucket_flows, sc.buckets * share / ps.nb);
  }

  // Issues every bucket whose units are done (`done_units` of the pass's units finished so far).
  void release_buckets(Pass& ps, std::int64_t done_units) {
    while (ps.next_bucket < ps.nb &&
           (done_units >= ps.n_units ||
            static_cast<std::int64_t>(ps.next_bucket + 1) * ps.n_units <= done_units * ps.nb)) {
      name_.assign("grad bucket c");
      append_int(name_, ps.x.chunk);
      name_ += ' ';
      append_int(name_, ps.next_bucket);
      collective(ps.s, chain_inputs(ps.s), Comm::dp, ps.bucket_each, ps.bucket_latency, name_, "dp", outs_,
                 ps.bucket_flows);
      for (int i = 0; i < n_inst_; ++i) buckets_[idx(i, ps.s)].push_back(outs_[at(i)]);
      ++ps.next_bucket;
    }
  }

  // Chains `t` of instance i after the stage's previous task.
  void link(int i, int s, sim::TaskId t) {
    const auto c = idx(i, s);
    if (has_chain_[c]) dag().depend(chain_[c], t);
    chain_[c] = t;
    has_chain_[c] = true;
    open_[c] = false;
  }

  // Merged lowering: `work` after instance i's chain on stage s, added to its last task when that is open
  // (LoweringOptions::merge_serial), otherwise as a new open busy task on compute. Returns that task.
  sim::TaskId serial(int i, int s, sim::Duration work, std::string_view name) {
    const auto c = idx(i, s);
    if (open_[c]) {
      dag().extend(chain_[c], work);
      return chain_[c];
    }
    link(i, s, dag().busy(lanes_[c].compute, work, name, "compute"));
    open_[c] = true;
    return chain_[c];
  }

  // The hand-over from the neighbouring stage attaches to the pass's first task; when that is not a lone
  // kernel, a zero-time entry on the compute stream stands in for it.
  void open_pass(Pass& ps, bool entry_is_compute) {
    if (!ps.first_task) return;
    ps.first_task = false;
    if (entry_is_compute) return;
    for (int i = 0; i < n_inst_; ++i) link(i, ps.s, dag().join(lanes_[idx(i, ps.s)].compute, label_));
  }

  void mark_entry(const Pass& ps, int i) {
    if (ps.x.kind != PassKind::backward_weight)
      hand_[pass_key(i, ps.x.kind, ps.x.micro_batch, ps.vs)].entry = chain_[idx(i, ps.s)];
  }

  void mark_entries(const Pass& ps) {
    for (int i = 0; i < n_inst_; ++i) mark_entry(ps, i);
  }

  // ---- units ----

  void lower_unit(Pass& ps, const UnitCost& u, int layer) {
    Unit un{.u = u};
    un.prefix = unit_prefix(u, layer);
    un.gathers = ps.zero3 && u.gather_s > 0 && (ps.fwd || pl_.framework.reshard_after_forward);
    const std::vector<CostPiece>& pieces = ps.fwd ? u.forward : u.backward;
    if (ps.zero3) {
      for (int i = 0; i < n_inst_; ++i) {
        unit_start_[at(i)].push_back(chain_[idx(i, ps.s)]);
        open_[idx(i, ps.s)] = false;
      }
    }
    if (un.gathers) gather_weights(ps, un);
    // Routed, a unit whose collectives leave the node is lowered piece by piece, its routed ones as flows.
    const bool whole = whole_units_ && !u.routes_pieces;
    if (un.gathers && !whole && (pieces.empty() || pieces.front().kind != CostPiece::Kind::compute)) {
      wait_for_weights(ps, un);
    }
    if (whole && ps.x.kind != PassKind::backward_weight) {
      lower_whole_unit(ps, un);
    } else if (ps.x.kind == PassKind::backward_weight) {
      const bool is_first = ps.first_task;
      open_pass(ps, true);
      name_.resize(un.prefix);
      name_ += "wgrad";
      for (int i = 0; i < n_inst_; ++i) {
        const sim::Duration w = wgrad_work(ps, u, i);
        if (merge_) {
          serial(i, ps.s, w, name_);
        } else {
          link(i, ps.s, dag().busy(lanes_[idx(i, ps.s)].compute, w, name_, "compute"));
        }
        if (is_first) mark_entry(ps, i);
      }
    } else {
      for (const CostPiece& pc : pieces) lower_piece(ps, un, pc);
    }
    // ZeRO-3: the unit's gradients are reduce-scattered as soon as its backward is done.
    if (ps.zero3 && ps.x.kind == PassKind::backward && u.reduce_s > 0) {
      name_.resize(un.prefix);
      name_ += "zero3 reduce-scatter";
      collective(ps.s, chain_inputs(ps.s), Comm::dp_reduce, u.reduce_s, u.reduce_latency_s, name_, "dp",
                 outs_, u.reduce_flows);
      for (int i = 0; i < n_inst_; ++i) buckets_[idx(i, ps.s)].push_back(outs_[at(i)]);
      // Synchronous collectives: the stage goes on (the next unit's gather) only once it is done.
      if (costs_.synchronous_zero3) {
        for (int i = 0; i < n_inst_; ++i) link(i, ps.s, outs_[at(i)]);
      }
    }
  }

  // name_ = "F mb3 c0 L12 " or "B mb3 c0 head "; returns its length.
  std::size_t unit_prefix(const UnitCost& u, int layer) {
    name_.assign(label_);
    if (layer >= 0) {
      name_ += " L";
      append_int(name_, layer);
    } else {
      name_ += ' ';
      name_ += u.name;
    }
    name_ += ' ';
    return name_.size();
  }

  // ZeRO-3: the unit's weights, gathered on the dp stream after the start of the unit `ahead_` before it
  // (the pass's entry for the first ones), so they arrive `prefetch` units ahead.
  void gather_weights(const Pass& ps, const Unit& un) {
    for (int i = 0; i < n_inst_; ++i) {
      const auto& starts = unit_start_[at(i)];
      const std::size_t unit_index = starts.size() - 1;
      inputs_[at(i)] = starts[ahead_ == 0 ? unit_index : (unit_index >= ahead_ ? unit_index - ahead_ : 0)];
    }
    name_.resize(un.prefix);
    name_ += "zero3 gather";
    collective(ps.s, inputs_, Comm::dp, un.u.gather_s, un.u.gather_latency_s, name_, "dp", gathered_,
               un.u.gather_flows);
  }

  // The unit's first kernel waits for its gathered weights.
  void wait_weights(const Unit& un, int i, sim::TaskId t) {
    if (un.gathers && un.layer_first) dag().depend(gathered_[at(i)], t);
  }

  // Instance i's `work` (named name_) on stage s's compute stream after its chain, waiting for the gathered
  // weights where the unit opens a gathered layer. `merge`: added to the chain's open task (serial), except
  // that a task waiting for gathered weights starts a task of its own.
  void compute_after_chain(const Unit& un, int i, int s, sim::Duration work, bool merge) {
    if (merge) {
      if (un.gathers && un.layer_first) open_[idx(i, s)] = false;
      wait_weights(un, i, serial(i, s, work, name_));
      return;
    }
    const sim::TaskId t = dag().busy(lanes_[idx(i, s)].compute, work, name_, "compute");
    wait_weights(un, i, t);
    link(i, s, t);
  }

  // The unit opens with a collective: a zero-time task on the compute stream waits for the weights instead.
  void wait_for_weights(Pass& ps, Unit& un) {
    const bool is_first = ps.first_task;
    open_pass(ps, true);
    name_.resize(un.prefix);
    name_ += "weights";
    for (int i = 0; i < n_inst_; ++i) {
      const sim::TaskId j = dag().join(lanes_[idx(i, ps.s)].compute, name_);
      wait_weights(un, i, j);
      link(i, ps.s, j);
      if (is_first) mark_entry(ps, i);
    }
    un.layer_first = false;
  }

  // Routed full cluster: the unit's forward or backward as one task on compute, of the seconds its pieces
  // take in order (kernels, blocking collectives, an overlapped collective's excess over its kernel: the
  // UnitCost's pass sums), waiting for its gathered weights. Piece by piece gives the same times — within a
  // unit the pieces only follow each other on the instance's own lanes — with ten times the tasks.
  // A replica slowed by a straggler (LoweringOptions::replica_slowdown) takes its kernels that much longer.
  void lower_whole_unit(Pass& ps, Unit& un) {
    auto seconds = [&](const PassCost& t) {
      return ps.fwd ? t.forward() : t.backward() - (split_w_ ? t.weight_compute : 0.0);
    };
    const double sec = seconds(un.u.total);
    const bool is_first = ps.first_task;
    open_pass(ps, true);
    name_.resize(un.prefix);
    name_ += ps.fwd ? "forward" : "backward";
    for (int i = 0; i < n_inst_; ++i) {
      const double f = compute_scale(ps, i);
      const double t = f == 1.0 ? sec : seconds(pass_sums(un.u, f));
      // Consecutive units of one pass: one task, as merge_ does collapsed.
      compute_after_chain(un, i, ps.s, dur(t), merge_whole_);
      if (is_first) mark_entry(ps, i);
    }
    un.layer_first = false;
  }

  // ---- pieces ----

  // A collective piece of no time is not lowered (lower_piece skips it, the merged sums leave it out).
  static bool does_work(const CostPiece& pc) { return pc.comm > 0; }

  void lower_piece(Pass& ps, Unit& un, const CostPiece& pc) {
    name_.resize(un.prefix);
    switch (pc.kind) {
      case CostPiece::Kind::compute:
        lower_kernels(ps, un, pc);
        break;
      case CostPiece::Kind::collective:
        if (!does_work(pc)) return;  // an empty collective leaves the unit's first kernel to wait for weights
        lower_blocking_collective(ps, pc);
        break;
      case CostPiece::Kind::overlapped:
        lower_overlapped(ps, un, pc);
        break;
    }
    un.layer_first = false;
  }

  double kernel_seconds(const Pass& ps, const CostPiece& pc) const {
    return pc.compute - (split_w_ && !ps.fwd ? pc.weight : 0.0);
  }

  // Merged lowering: whether serial work on stage s now only lengthens every instance's open task, so the
  // name of a new task is not needed (built for millions of pieces a step otherwise).
  bool extends_open_tasks(int s) const {
    if (!merge_) return false;
    for (int i = 0; i < n_inst_; ++i) {
      if (!open_[idx(i, s)]) return false;
    }
    return true;
  }

  // Merged lowering, collapsed (one instance), no ZeRO-3 gathers or reduce-scatters: the unit lowered as
  // one serial work of unit_work (`work`, found once for a run of alike units), the same graph as
  // lower_unit builds piece by piece: added to the stage's open task (no names built), or a new task named
  // after the unit's first piece that does work, after the pass's entry join where that piece is a
  // collective. Returns false, having done nothing, where lower_unit must lower it.
  bool lower_merged_unit(Pass& ps, int unit, const UnitCost& u, int layer,
                         std::optional<sim::Duration>& work) {
    if (!merge_ || n_inst_ != 1 || ps.zero3) return false;
    if (!ps.first_task && open_[idx(0, ps.s)]) {
      if (!work) work = unit_work(ps, unit, u);
      dag().extend(chain_[idx(0, ps.s)], *work);
      return true;
    }
    const bool wgrad = ps.x.kind == PassKind::backward_weight;
    const CostPiece* first = nullptr;
    if (!wgrad) {
      const auto& pieces = ps.fwd ? u.forward : u.backward;
      const auto it = std::find_if(pieces.begin(), pieces.end(), [](const CostPiece& pc) {
        return pc.kind != CostPiece::Kind::collective || does_work(pc);
      });
      if (it == pieces.end()) return false;
      first = &*it;
    }
    const bool compute_first = wgrad || first->kind == CostPiece::Kind::compute;
    const bool is_first = ps.first_task;
    open_pass(ps, compute_first);
    if (is_first && !compute_first) mark_entries(ps);
    unit_prefix(u, layer);
    name_ += wgrad ? std::string_view("wgrad") : std::string_view(first->name);
    if (!work) work = unit_work(ps, unit, u);
    serial(0, ps.s, *work, name_);
    if (is_first && compute_first) mark_entry(ps, 0);
    return true;
  }

  // merged_unit_work of `u` (costs_.units[unit]), kept per unit and pass kind for the passes whose kernels
  // run at their own speed (no straggler, no gradient buckets beside them): then those two are all it depends
  // on (split_w_ is the lowering's).
  sim::Duration unit_work(const Pass& ps, int unit, const UnitCost& u) {
    if (compute_scale(ps, 0) != 1.0) return merged_unit_work(ps, u);
    std::optional<sim::Duration>& kept =
        unit_work_[at(unit) * kPassKindCount + static_cast<std::size_t>(ps.x.kind)];
    if (!kept) kept = merged_unit_work(ps, u);
    return *kept;
  }

  // Merged lowering: what a unit adds to instance 0's open task, the sum of what lower_unit's merged
  // branches extend it by piece after piece (whole picoseconds: the sum is exact).
  sim::Duration merged_unit_work(const Pass& ps, const UnitCost& u) const {
    if (ps.x.kind == PassKind::backward_weight) return wgrad_work(ps, u, 0);
    sim::Duration sum = sim::Duration::zero();
    for (const CostPiece& pc : ps.fwd ? u.forward : u.backward) {
      switch (pc.kind) {
        case CostPiece::Kind::compute:
          sum += kernel_work(ps, pc, 0);
          break;
        case CostPiece::Kind::collective:
          if (does_work(pc)) sum += dur(pc.comm);
          break;
        case CostPiece::Kind::overlapped:
          sum += overlapped_work(ps, pc, 0);
          break;
      }
    }
    return sum;
  }

  // Instance i's kernels of piece `pc`; merged, an overlapped piece's collective and kernel both start
  // after the chain, so the piece takes the longer of the two; a unit's weight gradients (split backward).
  sim::Duration kernel_work(const Pass& ps, const CostPiece& pc, int i) const {
    return dur(kernel_seconds(ps, pc) * compute_scale(ps, i));
  }
  sim::Duration overlapped_work(const Pass& ps, const CostPiece& pc, int i) const {
    return std::max(dur(pc.comm), kernel_work(ps, pc, i));
  }
  sim::Duration wgrad_work(const Pass& ps, const UnitCost& u, int i) const {
    return dur(u.total.weight_compute * compute_scale(ps, i));
  }

  void lower_kernels(Pass& ps, const Unit& un, const CostPiece& pc) {
    const bool is_first = ps.first_task;
    open_pass(ps, true);
    // A kernel waiting for gathered weights starts a task of its own (compute_after_chain).
    if ((un.gathers && un.layer_first) || !extends_open_tasks(ps.s)) name_ += pc.name;
    for (int i = 0; i < n_inst_; ++i) {
      compute_after_chain(un, i, ps.s, kernel_work(ps, pc, i), merge_);
      if (is_first) mark_entry(ps, i);
    }
  }

  // framework.ep_comm_overlap: a pass run alone (merged_passes.hpp) exposes what its all-to-alls hid
  // beside the other micro-batch (PassCost::forward_alone), as one blocking collective at its end: the
  // time the analytic replay adds to such a pass.
  void lower_alone_all_to_alls(Pass& ps) {
    const PassCost& pc = costs_.passes[at(ps.vs)];
    const double seconds = ps.x.kind == PassKind::forward    ? pc.forward_alone
                           : ps.x.kind == PassKind::backward ? pc.backward_alone
                                                             : 0.0;
    if (seconds <= 0) return;
    name_.assign(label_);
    name_ += ' ';
    lower_blocking_collective(ps, exposed_expert_piece(seconds, "ep_all_to_all.alone"));
  }

  void lower_blocking_collective(Pass& ps, const CostPiece& pc) {
    const bool is_first = ps.first_task;
    open_pass(ps, false);
    if (is_first) mark_entries(ps);
    if (merge_) {  // a busy task on tp comm after the chain, as collective() lowers it collapsed
      if (!extends_open_tasks(ps.s)) name_ += pc.name;
      for (int i = 0; i < n_inst_; ++i) serial(i, ps.s, dur(pc.comm), name_);
      return;
    }
    name_ += pc.name;
    model_collective(ps.s, pc, name_);
    for (int i = 0; i < n_inst_; ++i) {
      chain_[idx(i, ps.s)] = outs_[at(i)];
      open_[idx(i, ps.s)] = false;
    }
  }

  // A piece's tp/cp/ep collective into outs_: a busy task of its closed-form time, or (routed) its
  // collectives that leave the node as flows.
  void model_collective(int s, const CostPiece& pc, std::string_view name) {
    if (whole_units_ && !pc.routed.empty()) {
      routed_model_collective(s, chain_inputs(s), pc, name, comm_category(pc.group), outs_);
    } else {
      collective(s, chain_inputs(s), Comm::tp, pc.comm, pc.comm, name, comm_category(pc.group), outs_);
    }
  }

  // The collective streams beside the kernel it hides under; the next piece waits for both.
  void lower_overlapped(Pass& ps, const Unit& un, const CostPiece& pc) {
    const bool is_first = ps.first_task;
    open_pass(ps, false);
    if (is_first) mark_entries(ps);
    if (merge_) {  // the collective on tp comm and the kernel on compute both start after the chain
      if (!extends_open_tasks(ps.s)) name_ += pc.name;
      for (int i = 0; i < n_inst_; ++i) serial(i, ps.s, overlapped_work(ps, pc, i), name_);
      return;
    }
    name_ += pc.comm_name;
    model_collective(ps.s, pc, name_);
    name_.resize(un.prefix);
    name_ += pc.name;
    for (int i = 0; i < n_inst_; ++i) {
      const auto c = idx(i, ps.s);
      const sim::TaskId t = dag().busy(lanes_[c].compute, kernel_work(ps, pc, i), name_, "compute");
      dag().depend(chain_[c], t);
      const sim::TaskId j = dag().join(lanes_[c].compute, name_);
      dag().depend(t, j);
      dag().depend(outs_[at(i)], j);
      chain_[c] = j;
      open_[c] = false;
    }
  }

  // ---- between stages and after the passes ----

  // The pass's hand-over to the neighbouring virtual stage, on pp comm; a blocking one (blocking_p2p)
  // holds the sender's compute until it is done.
  void hand_over(Pass& ps) {
    name_.assign(ps.fwd ? "send act " : "send grad ");
    name_ += label_;
    const int to = plan_.rank_of(ps.fwd ? ps.vs + 1 : ps.vs - 1);
    for (int i = 0; i < n_inst_; ++i) {
      const auto c = idx(i, ps.s);
      const LoweredTransfer t = g_.network.pp_send(dag(), lanes_[c].pp, i, ps.s, to, name_, "pp");
      dag().depend(chain_[c], t.first);
      open_[c] = false;
      if (pl_.framework.blocking_p2p) {
        const sim::TaskId sent = dag().join(lanes_[c].compute, name_);
        dag().depend(t.last, sent);
        chain_[c] = sent;  // a join: not open
      }
      PassTasks& h = hand_[pass_key(i, ps.x.kind, ps.x.micro_batch, ps.vs)];
      h.send = t.last;
      h.has_send = true;
    }
  }

  // A forward waits for the previous virtual stage's activation, a backward for the next one's gradient.
  void connect_stages() {
    for (int i = 0; i < n_inst_; ++i) {
      for (int mb = 0; mb < m_; ++mb) {
        for (int vs = 0; vs < nvs_; ++vs) connect_pass(i, mb, vs);
      }
    }
  }

  void connect_pass(int i, int mb, int vs) {
    if (vs > 0) {
      dag().depend(hand_[pass_key(i, PassKind::forward, mb, vs - 1)].send,
                   hand_[pass_key(i, PassKind::forward, mb, vs)].entry);
    }
    if (vs < nvs_ - 1) {
      dag().depend(hand_[pass_key(i, PassKind::backward, mb, vs + 1)].send,
                   hand_[pass_key(i, PassKind::backward, mb, vs)].entry);
    }
  }

  // The step's tail on stage s: remaining (non-overlapped) buckets, gradient norm, update, gather.
  void lower_tail(int s) {
    const StageCost& sc = costs_.stages[at(s)];
    std::vector<sim::TaskId> ends = chain_inputs(s);
    for (int i = 0; i < n_inst_; ++i) g_.last_pass[idx(i, s)] = ends[at(i)];
    if (!shards_weights(pl_.zero) && sc.buckets > 0 && !pl_.overlap_grad_reduce) {
      std::vector<sim::TaskId> prev = ends;
      for (int b = 0; b < sc.buckets; ++b) {
        prev = collective_v(s, prev, Comm::dp, sc.bucket_s, sc.bucket_latency_s,
                            fmt::format("grad bucket {}", b), "dp", sc.bucket_flows);
        for (int i = 0; i < n_inst_; ++i) buckets_[idx(i, s)].push_back(prev[at(i)]);
      }
    }
    std::vector<sim::TaskId> reduced(at(n_inst_));
    for (int i = 0; i < n_inst_; ++i) {
      const sim::TaskId j = dag().join(lanes_[idx(i, s)].dp, "grads reduced");
      dag().depend(ends[at(i)], j);
      for (sim::TaskId b : buckets_[idx(i, s)]) dag().depend(b, j);
      reduced[at(i)] = j;
    }
    // A few bytes: all latency, a busy task.
    const auto norm =
        collective_v(s, reduced, Comm::dp, sc.grad_norm_s, sc.grad_norm_s, "grad norm all-reduce", "dp");
    // A whole-matrix update's exchanges (distributed_update.hpp), before the update kernels as analytic_step
    // sums them.
    const auto exchanged =
        sc.optimizer_comm_s > 0
            ? collective_v(s, norm, Comm::dp, sc.optimizer_comm_s, sc.optimizer_comm_latency_s,
                           "optimizer matrix exchange", "dp", sc.optimizer_comm_flows)
            : norm;
    std::vector<sim::TaskId> opt(at(n_inst_));
    for (int i = 0; i < n_inst_; ++i) {
      opt[at(i)] = dag().busy(lanes_[idx(i, s)].optimizer, dur(sc.optimizer_s * slowdown(i, s)), "optimizer",
                              "optimizer");
      dag().depend(exchanged[at(i)], opt[at(i)]);
    }
    for (int i = 0; i < n_inst_; ++i) {
      g_.grad_norm[idx(i, s)] = first_[at(i)];  // its start: the reduction is done then
      g_.optimizer[idx(i, s)] = opt[at(i)];
      g_.final_task[idx(i, s)] = opt[at(i)];
    }
    // The updated weights' all-gather, or (overlap_param_gather) what of it the next step's first forward
    // does not hide, as analytic_step closes it.
    const double param_gather = exposed_param_gather(in_, plan_, costs_, s);
    if (param_gather > 0) {
      // What the next step's forward hides is taken off the bandwidth term: the flows carry the rest.
      const LatencySplit exposed = split_latency(param_gather, sc.param_gather_latency_s);
      const double whole = split_latency(sc.param_gather_s, sc.param_gather_latency_s).bandwidth_s;
      const auto gathered =
          collective_v(s, opt, Comm::dp, param_gather, exposed.latency_s, "param all-gather", "dp",
                       scaled(sc.param_gather_flows, whole > 0 ? exposed.bandwidth_s / whole : 0.0));
      for (int i = 0; i < n_inst_; ++i) g_.final_task[idx(i, s)] = gathered[at(i)];
    }
  }

  const StepInput& in_;
  const ParallelPlan& pl_;
  const StepPlan& plan_;
  const StepCosts& costs_;
  const bool full_cluster_;
  const bool merge_;  // LoweringOptions::merge_serial, collapsed
  const std::size_t max_tasks_;
  const int p_, v_, m_, nvs_;
  int n_inst_ = 1, n_tp_ = 1;
  bool whole_units_ = false;  // each unit's pass one task (lower_whole_unit)
  bool merge_whole_ = false;  // LoweringOptions::merge_serial, routed: a pass's whole units one task
  std::map<std::int64_t, std::vector<double>> slowdown_;  // LoweringOptions::replica_slowdown
  PipelineOrder order_;
  bool split_w_ = false;
  std::size_t ahead_ = 0;        // ZeRO-3 prefetch depth in units
  std::size_t passes_done_ = 0;  // passes lowered (each over every instance), for hold_to_limit

  StepGraph g_;
  std::vector<Lanes> lanes_;
  std::vector<sim::TaskId> chain_;  // per instance and stage: the task the next piece chains after
  std::vector<bool> has_chain_;
  // Per instance and stage: chain_ is a busy task of the merged lowering that nothing else depends on or
  // waits for yet, so serial work after it may lengthen it instead (LoweringOptions::merge_serial).
  std::vector<bool> open_;
  std::vector<PassTasks> hand_;                    // per pass: its cross-stage attach points
  std::vector<std::vector<sim::TaskId>> buckets_;  // per instance and stage: what "grads reduced" waits for
  // ZeRO-3 prefetch: per instance, the task each unit of the current pass started after (the previous
  // unit's last task, or the pass's entry); unit k's gather is issued after unit k − prefetch's
  // (analytic_step.hpp's gathered_pass).
  std::vector<std::vector<sim::TaskId>> unit_start_;
  std::vector<std::optional<sim::Duration>> unit_work_;  // per unit and pass kind: unit_work's

  // Scratch, reused across pieces.
  std::vector<sim::TaskId> inputs_, outs_, gathered_, first_;
  std::string label_, name_, sync_name_;
};

}  // namespace

StepGraph lower_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                     const LoweringOptions& options) {
  return StepLowering(in, plan, costs, options).build();
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
  // The critical GPU: the first pipeline rank whose step ends last; of its instances (the replicas end
  // together after their last data-parallel collective), the one whose passes end last: the one the others
  // wait for.
  auto ends = [&](std::size_t k) {
    return std::pair{r.tasks[graph.final_task[k]].end, r.tasks[graph.last_pass[k]].end};
  };
  const std::size_t instances = graph.final_task.size() / static_cast<std::size_t>(p);
  auto critical_instance = [&](int s) {
    std::size_t best = static_cast<std::size_t>(s);
    for (std::size_t i = 1; i < instances; ++i) {
      const std::size_t k = i * static_cast<std::size_t>(p) + static_cast<std::size_t>(s);
      if (ends(k) > ends(best)) best = k;
    }
    return best;
  };
  std::size_t cs = critical_instance(0);
  for (int s = 1; s < p; ++s) {
    const std::size_t k = critical_instance(s);
    if (ends(k).first > ends(cs).first) cs = k;
  }
  // A straggler's replica: its breakdown is that of its slowed kernels.
  const auto slowed = graph.replica_slowdown.find(static_cast<std::int64_t>(cs) / p);
  StepCosts slowed_costs;
  if (slowed != graph.replica_slowdown.end()) {
    slowed_costs = costs;
    slow_stages(slowed_costs, plan, slowed->second);
  }
  const StepCosts& critical_costs = slowed != graph.replica_slowdown.end() ? slowed_costs : costs;
  // What an event run cannot attribute (waiting on a hand-over vs waiting on a gather vs the schedule's
  // idle slots) comes from the analytic model of the same costs, and so does the rank shown: the busiest
  // (StepTiming::critical_stage) of the replica that ends last.
  const StepTiming a = analytic_step(in, plan, critical_costs);
  const int crit = a.critical_stage;
  const std::size_t shown = cs - cs % static_cast<std::size_t>(p) + static_cast<std::size_t>(crit);
  out.critical_stage = crit;
  out.time = stage_work(critical_costs, plan, crit);
  TimeBreakdown& tb = out.time;
  const double last_pass_end = r.tasks[graph.last_pass[shown]].end.seconds();
  const double norm_start = r.tasks[graph.grad_norm[shown]].start.seconds();
  // ZeRO-3: the passes' waits for their weights, in the closed form of the same costs.
  double zero3 = 0;
  if (critical_costs.gathers_weights) {
    for (int c = 0; c < v; ++c) {
      zero3 +=
          m * (gathered_pass(critical_costs, static_cast<int>(plan.virtual_stage_index(c, crit)), false, true)
                   .extra +
               gathered_pass(critical_costs, static_cast<int>(plan.virtual_stage_index(c, crit)), true,
                             in.plan.framework.reshard_after_forward)
                   .extra);
    }
  }
  tb.exposed_dp_comm = std::max(0.0, norm_start - last_pass_end) + zero3 +
                       exposed_param_gather(in, plan, critical_costs, crit);
  tb.exposed_pp_comm = a.time.exposed_pp_comm;
  tb.bubble = out.iteration_time - tb.busy();
  if (tb.bubble < 0) {
    // The estimates borrowed from the analytic model overshoot what this run spent: take the excess back
    // from them (pipeline hand-overs first, then the ZeRO-3 gathers), so the parts sum to the step.
    const double pp_cut = std::min(tb.exposed_pp_comm, -tb.bubble);
    tb.exposed_pp_comm -= pp_cut;
    tb.bubble += pp_cut;
    const double dp_cut = std::min(zero3, -tb.bubble);
    tb.exposed_dp_comm -= dp_cut;
    tb.bubble = std::max(0.0, out.iteration_time - tb.busy());
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  set_fleet_fractions(out, stage_works(critical_costs, plan));
  return out;
}

}  // namespace trainsim::model
