#include "models/cluster/queue_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/cluster/node_placement.hpp"
#include "models/cluster/uplink_shares.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
// The engine's clock holds int64 picoseconds: about 106 days; a period stays well inside it.
constexpr double kMaxPeriod = 100.0 * 86400.0;

enum class Cause { none, failure, preemption };

class QueueSimulator {
 public:
  explicit QueueSimulator(const QueueSpec& spec)
      : s_(spec),
        state_(static_cast<std::size_t>(spec.nodes), kNodeFree),
        repair_until_(static_cast<std::size_t>(spec.nodes), 0.0),
        live_(spec.jobs.size()),
        usage_(spec.teams.size(), 0.0),
        rng_(spec.failure_seed),
        leaves_(leaf_count(spec.nodes, spec.nodes_per_leaf)) {
    if (tracks_crossings()) crossings_.assign(static_cast<std::size_t>(leaves_), 0);
    if (spec.contention) {
      links_.resize(static_cast<std::size_t>(leaves_));
      for (std::size_t l = 0; l < links_.size(); ++l) links_[l].leaf = static_cast<std::int64_t>(l);
    }
    report_.jobs.resize(spec.jobs.size());
    const auto rows = static_cast<std::size_t>(std::ceil(spec.period / spec.sample_interval));
    report_.samples.resize(std::max<std::size_t>(rows, 1));
    for (std::size_t i = 0; i < report_.samples.size(); ++i)
      report_.samples[i].start = static_cast<double>(i) * spec.sample_interval;
  }

  QueueReport run() {
    for (std::size_t j = 0; j < s_.jobs.size(); ++j) {
      if (s_.jobs[j].submit < s_.period)
        at(s_.jobs[j].submit, [this, j] { submit(static_cast<std::int32_t>(j)); });
    }
    if (s_.node_mtbf > 0) {
      for (std::int64_t k = 0; k < s_.nodes; ++k) schedule_failure(static_cast<std::int32_t>(k), 0);
    }
    engine_.run_until(time_of(s_.period));
    advance(s_.period);
    close_period();
    return std::move(report_);
  }

 private:
  struct Live {
    enum class Phase { pending, waiting, running, done } phase = Phase::pending;
    double saved = 0;         // s of the duration kept by checkpoints
    double overhead = 0;      // recovery paid at the start of the current segment
    double seg_start = 0;     // s
    double planned_end = 0;   // s; may lie after the period
    double queued_since = 0;  // s
    Cause resume_cause = Cause::none;
    sim::EventId end_event;
    std::vector<std::int32_t> nodes;
    std::size_t segment = 0;     // index into report_.segments
    std::size_t running_at = 0;  // index into running_
    // Contention (QueueSpec::contention): the current epoch's pace and the work done at it.
    std::vector<std::int64_t> crossed;  // leaves whose uplinks it crosses (uplink_shares.hpp)
    double slowdown = 1;                // its step time over the uncontended one
    std::int64_t bottleneck = -1;       // the leaf whose uplinks set its share
    double rate_since = 0;              // s; work before it is in work_done
    double work_done = 0;               // s of uncontended run done in this segment
    double trained_wall = 0;            // s of training over the period, all segments
    double trained = 0;                 // s of uncontended run those were worth
  };
  // Queue order: (key, submit, index), key = -priority under QueuePolicy::priority, else 0.
  using QueueKey = std::tuple<int, double, std::int32_t>;

  static sim::Time time_of(double seconds) {
    return sim::Time::zero() + sim::Duration::from_seconds(seconds);
  }
  [[nodiscard]] double now() const { return engine_.now().seconds(); }
  template <class F>
  sim::EventId at(double t, F&& f) {
    return engine_.at(time_of(t), std::forward<F>(f));
  }
  [[nodiscard]] double gpus(std::int64_t nodes) const {
    return static_cast<double>(nodes * s_.gpus_per_node);
  }
  [[nodiscard]] std::int64_t free_nodes() const { return s_.nodes - busy_ - down_; }
  [[nodiscard]] QueueKey key_of(std::int32_t j) const {
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    return {s_.policy == QueuePolicy::priority ? -q.priority : 0, q.submit, j};
  }

  // Adds [last_, t) at the current node counts to the totals and the time series.
  void advance(double t) {
    if (t <= last_) return;
    const double dt = t - last_;
    const auto free = static_cast<double>(free_nodes());
    busy_s_ += static_cast<double>(busy_) * dt;
    down_s_ += static_cast<double>(down_) * dt;
    idle_s_ += free * dt;
    if (fragmented_) fragmented_s_ += free * dt;
    if (slowed_ > 0) contended_s_ += dt;
    for (const std::int64_t l : shared_links_) links_[static_cast<std::size_t>(l)].shared_s += dt;
    auto b = static_cast<std::size_t>(last_ / s_.sample_interval);
    double from = last_;
    while (from < t && b < report_.samples.size()) {
      const double to = std::min(t, static_cast<double>(b + 1) * s_.sample_interval);
      QueueSample& row = report_.samples[b];
      const double w = to - from;
      row.busy += static_cast<double>(busy_) * w;
      row.down += static_cast<double>(down_) * w;
      row.idle += free * w;
      row.waiting += static_cast<double>(queue_.size()) * w;
      from = to;
      ++b;
    }
    last_ = t;
  }

  void request_pass() {
    if (pass_pending_) return;
    pass_pending_ = true;
    engine_.after(sim::Duration::zero(), [this] {
      pass_pending_ = false;
      pass();
    });
  }

  void submit(std::int32_t j) {
    advance(now());
    Live& l = live_[static_cast<std::size_t>(j)];
    l.phase = Live::Phase::waiting;
    l.queued_since = now();
    queue_.insert(key_of(j));
    request_pass();
  }

  // The remaining run from a start now: the recovery when resuming, then the unsaved part.
  [[nodiscard]] double remaining(std::int32_t j) const {
    const Live& l = live_[static_cast<std::size_t>(j)];
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    return (l.resume_cause != Cause::none ? q.recovery : 0.0) + (q.duration - l.saved);
  }

  void start(std::int32_t j, std::vector<std::int32_t> nodes) {
    const double t = now();
    Live& l = live_[static_cast<std::size_t>(j)];
    QueueJobResult& r = report_.jobs[static_cast<std::size_t>(j)];
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    TRAINSIM_CHECK(static_cast<std::int64_t>(nodes.size()) == q.nodes, "a job starts on its node count");
    queue_.erase(key_of(j));
    r.wait += t - l.queued_since;
    if (!r.started) {
      r.started = true;
      r.first_start = t;
    }
    l.phase = Live::Phase::running;
    l.overhead = l.resume_cause != Cause::none ? q.recovery : 0.0;
    l.seg_start = t;
    l.planned_end = t + remaining(j);
    for (const std::int32_t n : nodes) state_[static_cast<std::size_t>(n)] = j;
    busy_ += q.nodes;
    l.segment = report_.segments.size();
    report_.segments.push_back({j, t, t, nodes});
    l.nodes = std::move(nodes);
    l.running_at = running_.size();
    running_.push_back(j);
    l.end_event = {};
    if (l.planned_end <= s_.period) l.end_event = at(l.planned_end, [this, j] { finish(j); });
    if (tracks_crossings()) {
      l.crossed = leaves_crossed(l.nodes, s_.nodes_per_leaf);
      for (const std::int64_t leaf : l.crossed) ++crossings_[static_cast<std::size_t>(leaf)];
    }
    l.slowdown = 1;
    l.bottleneck = -1;
    l.rate_since = t;
    l.work_done = 0;
    fabric_changed_ = true;
  }

  [[nodiscard]] bool tracks_crossings() const {
    return s_.contention || s_.placement == PlacementRule::topology_aware;
  }

  // Contention: books the training of `j` since rate_since at its current pace (recoveries excepted).
  void rebase(std::int32_t j, double t) {
    Live& l = live_[static_cast<std::size_t>(j)];
    const double from = std::max(l.rate_since, l.seg_start + l.overhead);
    l.rate_since = std::max(l.rate_since, t);
    if (t <= from) return;
    const double wall = t - from;
    const double work = wall / l.slowdown;
    l.work_done += work;
    l.trained_wall += wall;
    l.trained += work;
    if (l.slowdown <= 1) return;
    const double lost_gpus = gpus(s_.jobs[static_cast<std::size_t>(j)].nodes) * (1 - 1 / l.slowdown);
    if (l.bottleneck >= 0)
      links_[static_cast<std::size_t>(l.bottleneck)].contention_gpu_hours += lost_gpus * wall / 3600;
    add_to_samples(from, t,
                   [lost_gpus](QueueSample& row, double w) { row.contention_gpus += lost_gpus * w; });
  }

  // Contention: the end of `j` at its current pace, rescheduled from now.
  void reschedule(std::int32_t j) {
    Live& l = live_[static_cast<std::size_t>(j)];
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    engine_.cancel(l.end_event);
    l.end_event = {};
    const double work_start = std::max(now(), l.seg_start + l.overhead);
    l.planned_end = work_start + std::max(0.0, q.duration - l.saved - l.work_done) * l.slowdown;
    if (l.planned_end <= s_.period) l.end_event = at(l.planned_end, [this, j] { finish(j); });
  }

  // Contention, once the running set has changed: every running job's share of the uplinks it crosses,
  // its pace at that share, and its end at that pace.
  void reshare() {
    if (!s_.contention || !fabric_changed_) return;
    fabric_changed_ = false;
    const double t = now();
    std::vector<std::int32_t> jobs = running_;
    std::sort(jobs.begin(), jobs.end());
    std::vector<FabricJob> fabric;
    fabric.reserve(jobs.size());
    for (const std::int32_t j : jobs)
      fabric.push_back({live_[static_cast<std::size_t>(j)].crossed,
                        s_.jobs[static_cast<std::size_t>(j)].traffic_per_step});
    const UplinkShares shares = uplink_shares(fabric, leaves_);
    shared_links_.clear();
    for (std::size_t l = 0; l < crossings_.size(); ++l) {
      if (crossings_[l] < 2) continue;
      shared_links_.push_back(static_cast<std::int64_t>(l));
      links_[l].most_jobs = std::max(links_[l].most_jobs, crossings_[l]);
    }
    slowed_ = 0;
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const std::int32_t j = jobs[k];
      Live& l = live_[static_cast<std::size_t>(j)];
      const double bucket = share_bucket(shares.share[k]);
      double pace = 1;
      if (bucket < 1) {
        pace = s_.slowdown(static_cast<std::size_t>(j), bucket);
        TRAINSIM_CHECK(pace >= 1 && std::isfinite(pace), "a share of the fabric never speeds a job up");
      }
      rebase(j, t);
      l.bottleneck = pace > 1 ? shares.bottleneck[k] : -1;
      if (pace != l.slowdown) {
        l.slowdown = pace;
        reschedule(j);
      }
      if (pace > 1) ++slowed_;
    }
  }

  // Adds `add(row, seconds)` for the part of [from, to) in each row of the time series.
  template <class Add>
  void add_to_samples(double from, double to, Add&& add) {
    auto b = static_cast<std::size_t>(from / s_.sample_interval);
    while (from < to && b < report_.samples.size()) {
      const double end = std::min(to, static_cast<double>(b + 1) * s_.sample_interval);
      add(report_.samples[b], end - from);
      from = end;
      ++b;
    }
  }

  // Ends the current segment at now(): run time, team usage, the segment's end; frees the nodes.
  // Returns the seconds the segment lasted.
  double close_segment(std::int32_t j) {
    const double t = now();
    Live& l = live_[static_cast<std::size_t>(j)];
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    if (s_.contention) rebase(j, t);
    if (tracks_crossings()) {
      for (const std::int64_t leaf : l.crossed) --crossings_[static_cast<std::size_t>(leaf)];
      l.crossed.clear();
    }
    fabric_changed_ = true;
    const double elapsed = t - l.seg_start;
    report_.jobs[static_cast<std::size_t>(j)].run_time += elapsed;
    usage_[q.team] += gpus(q.nodes) * elapsed;
    report_.segments[l.segment].end = t;
    for (const std::int32_t n : l.nodes) state_[static_cast<std::size_t>(n)] = kNodeFree;
    busy_ -= q.nodes;
    l.nodes.clear();
    const std::int32_t last = running_.back();
    running_[l.running_at] = last;
    live_[static_cast<std::size_t>(last)].running_at = l.running_at;
    running_.pop_back();
    return elapsed;
  }

  // The recovery a resumed segment paid, charged to what interrupted the job.
  void charge_recovery(std::int32_t j, double elapsed) {
    const Live& l = live_[static_cast<std::size_t>(j)];
    const double paid = std::min(elapsed, l.overhead) * gpus(s_.jobs[static_cast<std::size_t>(j)].nodes);
    if (l.resume_cause == Cause::failure) lost_failure_s_ += paid;
    if (l.resume_cause == Cause::preemption) lost_preemption_s_ += paid;
  }

  void finish(std::int32_t j) {
    advance(now());
    const double elapsed = close_segment(j);
    charge_recovery(j, elapsed);
    live_[static_cast<std::size_t>(j)].phase = Live::Phase::done;
    QueueJobResult& r = report_.jobs[static_cast<std::size_t>(j)];
    r.finished = true;
    r.end = now();
    request_pass();
  }

  // Stops a running job: its progress goes back to the last checkpoint and it waits again.
  void interrupt(std::int32_t j, Cause cause) {
    Live& l = live_[static_cast<std::size_t>(j)];
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    QueueJobResult& r = report_.jobs[static_cast<std::size_t>(j)];
    engine_.cancel(l.end_event);
    const double elapsed = close_segment(j);
    const double trained_wall = std::max(0.0, elapsed - l.overhead);
    // Under contention the segment's work went at its epochs' paces: l.work_done of uncontended run.
    const double work = s_.contention ? l.work_done : trained_wall;
    const double reached = std::min(q.duration, l.saved + work);
    const double saved =
        q.checkpoint_interval > 0 ? std::floor(reached / q.checkpoint_interval) * q.checkpoint_interval : 0.0;
    const double kept = std::max(0.0, saved - l.saved);
    // The wall time that kept work took: at the segment's mean pace under contention.
    const double kept_wall = s_.contention && work > 0 ? kept * trained_wall / work : kept;
    const double lost = elapsed - kept_wall;
    l.saved = std::max(l.saved, saved);
    r.lost_work += lost;
    (cause == Cause::failure ? lost_failure_s_ : lost_preemption_s_) += lost * gpus(q.nodes);
    (cause == Cause::failure ? r.restarts : r.preemptions) += 1;
    l.resume_cause = cause;
    l.phase = Live::Phase::waiting;
    l.queued_since = now();
    queue_.insert(key_of(j));
  }

  void schedule_failure(std::int32_t node, double from) {
    // Exponential time to failure from the seeded generator (53-bit uniform in [0, 1)).
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    const double t = from - s_.node_mtbf * std::log1p(-u);
    if (t < s_.period) at(t, [this, node] { fail(node); });
  }

  void fail(std::int32_t node) {
    advance(now());
    ++report_.cluster.node_failures;
    const std::int32_t holder = state_[static_cast<std::size_t>(node)];
    if (holder >= 0) interrupt(holder, Cause::failure);
    state_[static_cast<std::size_t>(node)] = kNodeDown;
    ++down_;
    repair_until_[static_cast<std::size_t>(node)] = now() + s_.repair;
    const double back = now() + s_.repair;
    if (back <= s_.period) {
      at(back, [this, node] {
        advance(now());
        state_[static_cast<std::size_t>(node)] = kNodeFree;
        --down_;
        schedule_failure(node, now());
        request_pass();
      });
    }
    request_pass();
  }

  [[nodiscard]] std::vector<std::int32_t> place(std::span<const std::int32_t> state, std::int64_t count,
                                                std::span<const char> excluded = {}) const {
    return place_nodes(state, count, s_.placement, s_.nodes_per_leaf, excluded,
                       s_.placement == PlacementRule::topology_aware ? std::span<const int>(crossings_)
                                                                     : std::span<const int>());
  }

  bool try_start_now(std::int32_t j) {
    const std::int64_t need = s_.jobs[static_cast<std::size_t>(j)].nodes;
    if (need > free_nodes()) return false;
    std::vector<std::int32_t> nodes = place(state_, need);
    if (nodes.empty()) return false;
    start(j, std::move(nodes));
    return true;
  }

  // EASY's reservation for the blocked head `j`: the earliest projected time it can be placed (running
  // jobs end, failed nodes come back) and the nodes it would get then.
  void reserve(std::int32_t j, double& shadow, std::vector<char>& reserved) const {
    shadow = kNever;
    reserved.assign(state_.size(), 0);
    std::vector<std::pair<double, std::int32_t>> releases;  // (time, job) or (time, -1 - node)
    for (const std::int32_t r : running_)
      releases.emplace_back(live_[static_cast<std::size_t>(r)].planned_end, r);
    for (std::size_t k = 0; k < state_.size(); ++k)
      if (state_[k] == kNodeDown) releases.emplace_back(repair_until_[k], -1 - static_cast<std::int32_t>(k));
    std::sort(releases.begin(), releases.end());
    std::vector<std::int32_t> projected = state_;
    std::int64_t free = free_nodes();
    const std::int64_t need = s_.jobs[static_cast<std::size_t>(j)].nodes;
    for (std::size_t i = 0; i < releases.size();) {
      const double t = releases[i].first;
      for (; i < releases.size() && releases[i].first == t; ++i) {
        const std::int32_t who = releases[i].second;
        if (who < 0) {
          projected[static_cast<std::size_t>(-1 - who)] = kNodeFree;
          ++free;
        } else {
          for (const std::int32_t n : live_[static_cast<std::size_t>(who)].nodes)
            projected[static_cast<std::size_t>(n)] = kNodeFree;
          free += s_.jobs[static_cast<std::size_t>(who)].nodes;
        }
      }
      if (free < need) continue;
      const std::vector<std::int32_t> nodes = place(projected, need);
      if (nodes.empty()) continue;
      shadow = t;
      for (const std::int32_t n : nodes) reserved[static_cast<std::size_t>(n)] = 1;
      return;
    }
  }

  // Preempts running jobs of strictly lower priority (lowest first, then the latest started) until `j`
  // can be placed; preempts none when even all of them would not make room.
  bool try_preempt(std::int32_t j) {
    const QueueJob& q = s_.jobs[static_cast<std::size_t>(j)];
    std::vector<std::int32_t> victims;
    for (const std::int32_t r : running_)
      if (s_.jobs[static_cast<std::size_t>(r)].priority < q.priority) victims.push_back(r);
    std::sort(victims.begin(), victims.end(), [&](std::int32_t a, std::int32_t b) {
      const int pa = s_.jobs[static_cast<std::size_t>(a)].priority;
      const int pb = s_.jobs[static_cast<std::size_t>(b)].priority;
      const double sa = live_[static_cast<std::size_t>(a)].seg_start;
      const double sb = live_[static_cast<std::size_t>(b)].seg_start;
      return std::tie(pa, sb, b) < std::tie(pb, sa, a);
    });
    std::vector<std::int32_t> projected = state_;
    std::int64_t free = free_nodes();
    for (std::size_t i = 0; i < victims.size(); ++i) {
      for (const std::int32_t n : live_[static_cast<std::size_t>(victims[i])].nodes)
        projected[static_cast<std::size_t>(n)] = kNodeFree;
      free += s_.jobs[static_cast<std::size_t>(victims[i])].nodes;
      if (free < q.nodes) continue;
      std::vector<std::int32_t> nodes = place(projected, q.nodes);
      if (nodes.empty()) continue;
      for (std::size_t k = 0; k <= i; ++k) interrupt(victims[k], Cause::preemption);
      start(j, std::move(nodes));
      return true;
    }
    return false;
  }

  // The waiting jobs in the order this pass considers them: queue order, teams over their quota last.
  [[nodiscard]] std::vector<std::int32_t> pass_order() const {
    std::vector<std::int32_t> order;
    order.reserve(queue_.size());
    for (const auto& k : queue_) order.push_back(std::get<2>(k));
    if (s_.quotas.empty()) return order;
    std::vector<double> used = usage_;
    for (const std::int32_t r : running_) {
      const QueueJob& q = s_.jobs[static_cast<std::size_t>(r)];
      used[q.team] += gpus(q.nodes) * (now() - live_[static_cast<std::size_t>(r)].seg_start);
    }
    double total = 0;
    for (const double u : used) total += u;
    std::stable_partition(order.begin(), order.end(), [&](std::int32_t j) {
      const std::size_t team = s_.jobs[static_cast<std::size_t>(j)].team;
      return total <= 0 || used[team] <= s_.quotas[team] * total;
    });
    return order;
  }

  void pass() {
    advance(now());
    const std::vector<std::int32_t> order = pass_order();
    bool reserved_head = false;
    double shadow = kNever;
    std::vector<char> reserved;
    for (const std::int32_t j : order) {
      if (live_[static_cast<std::size_t>(j)].phase != Live::Phase::waiting) continue;
      if (s_.policy != QueuePolicy::backfill) {
        if (try_start_now(j)) continue;
        if (s_.policy == QueuePolicy::priority && s_.preemption && try_preempt(j)) {
          request_pass();  // the preempted jobs wait again: order them in a fresh pass
          break;
        }
        break;
      }
      if (!reserved_head) {
        if (try_start_now(j)) continue;
        reserve(j, shadow, reserved);
        reserved_head = true;
        continue;
      }
      const std::int64_t need = s_.jobs[static_cast<std::size_t>(j)].nodes;
      if (need > free_nodes()) continue;
      if (now() + remaining(j) <= shadow) {
        try_start_now(j);
      } else {
        std::vector<std::int32_t> nodes = place(state_, need, reserved);
        if (!nodes.empty()) start(j, std::move(nodes));
      }
    }
    reshare();
    fragmented_ = false;
    if (s_.placement != PlacementRule::first_fit) {
      std::set<std::int64_t> tried;
      for (const auto& k : queue_) {
        const std::int64_t need = s_.jobs[static_cast<std::size_t>(std::get<2>(k))].nodes;
        if (need > free_nodes() || !tried.insert(need).second) continue;
        if (place(state_, need).empty()) {
          fragmented_ = true;
          break;
        }
      }
    }
  }

  void close_period() {
    const double end = s_.period;
    for (const std::int32_t j : std::vector<std::int32_t>(running_)) charge_recovery(j, close_segment(j));
    for (const auto& k : queue_) {
      const std::int32_t j = std::get<2>(k);
      report_.jobs[static_cast<std::size_t>(j)].wait += end - live_[static_cast<std::size_t>(j)].queued_since;
    }
    const double g = static_cast<double>(s_.gpus_per_node) / 3600.0;
    QueueClusterResult& c = report_.cluster;
    c.period = end;
    c.nodes = s_.nodes;
    c.gpus_per_node = s_.gpus_per_node;
    c.busy_gpu_hours = busy_s_ * g;
    c.idle_gpu_hours = idle_s_ * g;
    c.down_gpu_hours = down_s_ * g;
    c.utilisation = end > 0 ? busy_s_ / (static_cast<double>(s_.nodes) * end) : 0;
    c.busy_cost = c.busy_gpu_hours * s_.gpu_hour_usd;
    c.idle_cost = c.idle_gpu_hours * s_.gpu_hour_usd;
    c.fragmentation_gpu_hours = fragmented_s_ * g;
    c.lost_gpu_hours_failures = lost_failure_s_ / 3600.0;
    c.lost_gpu_hours_preemption = lost_preemption_s_ / 3600.0;
    c.events = static_cast<std::int64_t>(engine_.executed());
    for (QueueSample& row : report_.samples) {
      const double width = std::min(s_.sample_interval, end - row.start);
      if (width <= 0) continue;
      row.busy /= width;
      row.idle /= width;
      row.down /= width;
      row.waiting /= width;
      row.contention_gpus /= width;
    }
    std::vector<std::vector<double>> waits(s_.teams.size());
    report_.teams.resize(s_.teams.size());
    double all_gpu_hours = 0;
    for (std::size_t j = 0; j < s_.jobs.size(); ++j) {
      const QueueJob& q = s_.jobs[j];
      QueueJobResult& r = report_.jobs[j];
      r.gpu_hours = r.run_time * gpus(q.nodes) / 3600.0;
      r.cost = r.gpu_hours * s_.gpu_hour_usd;
      const Live& l = live_[j];
      r.contention_slowdown = l.trained > 0 ? l.trained_wall / l.trained : 1.0;
      r.contention_s = l.trained_wall - l.trained;
      r.contention_gpu_hours = r.contention_s * gpus(q.nodes) / 3600.0;
      r.contention_cost = r.contention_gpu_hours * s_.gpu_hour_usd;
      c.contention_gpu_hours += r.contention_gpu_hours;
      if (q.submit >= end) continue;
      QueueTeamResult& t = report_.teams[q.team];
      ++t.jobs;
      t.finished += r.finished ? 1 : 0;
      t.gpu_hours += r.gpu_hours;
      t.cost += r.cost;
      t.contention_gpu_hours += r.contention_gpu_hours;
      t.contention_cost += r.contention_cost;
      all_gpu_hours += r.gpu_hours;
      waits[q.team].push_back(r.wait);
    }
    c.contention_cost = c.contention_gpu_hours * s_.gpu_hour_usd;
    c.contention_hours = contended_s_ / 3600.0;
    for (const QueueLinkResult& link : links_)
      if (link.shared_s > 0) report_.links.push_back(link);
    std::stable_sort(
        report_.links.begin(), report_.links.end(), [](const QueueLinkResult& a, const QueueLinkResult& b) {
          return std::tie(b.contention_gpu_hours, b.shared_s) < std::tie(a.contention_gpu_hours, a.shared_s);
        });
    for (std::size_t t = 0; t < s_.teams.size(); ++t) {
      QueueTeamResult& team = report_.teams[t];
      team.team = s_.teams[t];
      team.share = all_gpu_hours > 0 ? team.gpu_hours / all_gpu_hours : 0;
      team.quota = s_.quotas.empty() ? 0 : s_.quotas[t];
      std::vector<double>& w = waits[t];
      if (w.empty()) continue;
      double sum = 0;
      for (const double x : w) sum += x;
      team.mean_wait = sum / static_cast<double>(w.size());
      std::sort(w.begin(), w.end());
      const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(w.size())));
      team.p95_wait = w[std::max<std::size_t>(rank, 1) - 1];
    }
  }

  const QueueSpec& s_;
  sim::Engine engine_;
  std::vector<std::int32_t> state_;
  std::vector<double> repair_until_;
  std::vector<Live> live_;
  std::vector<double> usage_;  // GPU-seconds per team, closed segments
  std::mt19937_64 rng_;
  std::set<QueueKey> queue_;
  std::vector<std::int32_t> running_;
  QueueReport report_;
  std::int64_t busy_ = 0;
  std::int64_t down_ = 0;
  double last_ = 0;
  double busy_s_ = 0;
  double idle_s_ = 0;
  double down_s_ = 0;
  double fragmented_s_ = 0;
  double lost_failure_s_ = 0;
  double lost_preemption_s_ = 0;
  bool fragmented_ = false;
  bool pass_pending_ = false;
  // Contention and topology-aware placement.
  std::int64_t leaves_ = 1;
  std::vector<int> crossings_;              // per leaf: running jobs crossing its uplinks
  std::vector<QueueLinkResult> links_;      // per leaf, over the period
  std::vector<std::int64_t> shared_links_;  // leaves crossed by two or more running jobs now
  int slowed_ = 0;                          // running jobs slowed by contention now
  double contended_s_ = 0;
  bool fabric_changed_ = false;
};

}  // namespace

QueueReport simulate_queue(const QueueSpec& spec) {
  if (!(spec.period > 0) || spec.period > kMaxPeriod)
    throw InputError("the period must be more than 0 and at most 100 d (the event clock's range)");
  if (spec.nodes < 1 || spec.gpus_per_node < 1 || !(spec.sample_interval > 0))
    throw InputError("the cluster needs at least one node of at least one GPU");
  for (const QueueJob& q : spec.jobs) {
    if (q.nodes < 1 || q.nodes > spec.nodes)
      throw InputError("job " + q.name + " asks for " + std::to_string(q.nodes) + " nodes; the cluster has " +
                       std::to_string(spec.nodes));
    if (!(q.duration > 0) || !std::isfinite(q.duration))
      throw InputError("job " + q.name + " has no positive, finite run time");
    if (q.team >= spec.teams.size()) throw InputError("job " + q.name + " names no team");
    if (!(q.traffic_per_step >= 0) || !std::isfinite(q.traffic_per_step))
      throw InputError("job " + q.name + " has no finite traffic per step >= 0");
  }
  if (spec.contention && !spec.slowdown)
    throw InputError("contention needs each job's step time at a share of the fabric (QueueSpec::slowdown)");
  QueueSimulator simulator(spec);
  return simulator.run();
}

}  // namespace trainsim::model
