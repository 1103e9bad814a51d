#include "sim/dag.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "sim/error.hpp"
#include "sim/resource.hpp"

namespace trainsim::sim {

LaneId Dag::lane(std::string_view name) {
  const auto it = lane_ids_.find(name);
  if (it != lane_ids_.end()) return it->second;
  TRAINSIM_CHECK(lane_names_.size() < std::numeric_limits<LaneId>::max(), "too many lanes");
  const auto id = static_cast<LaneId>(lane_names_.size());
  lane_names_.emplace_back(name);
  lane_ids_.emplace(std::string(name), id);
  return id;
}

std::uint16_t Dag::category_index(std::string_view category) {
  // Categories are few (compute, comm, ...); the last ones looked up are the likeliest, so search backward.
  for (std::size_t i = categories_.size(); i-- > 0;) {
    if (categories_[i] == category) return static_cast<std::uint16_t>(i);
  }
  if (categories_.size() > std::numeric_limits<std::uint16_t>::max()) {
    throw InputError("a task graph may have at most 65535 categories");
  }
  categories_.emplace_back(category);
  return static_cast<std::uint16_t>(categories_.size() - 1);
}

TaskId Dag::add(Task task, std::string_view name, std::string_view category) {
  if (task.lane >= lane_names_.size()) {
    throw InputError("task '" + std::string(name) + "': unknown lane id " + std::to_string(task.lane));
  }
  if (tasks_.size() >= std::numeric_limits<TaskId>::max()) throw InputError("too many tasks in one graph");
  task.category = category_index(category);
  return push(task, name);
}

TaskId Dag::push(Task task, std::string_view name) {
  // Consecutive tasks mostly share their name (the flows of one collective): it is stored once, at the end.
  if (name != std::string_view(names_).substr(last_name_offset_)) {
    if (names_.size() + name.size() > std::numeric_limits<std::uint32_t>::max()) {
      throw InputError("task names of one graph exceed 4 GiB");
    }
    last_name_offset_ = static_cast<std::uint32_t>(names_.size());
    names_.append(name);
  }
  task.name_offset = last_name_offset_;
  task.name_length = static_cast<std::uint32_t>(name.size());
  tasks_.push_back(task);
  if (task.kind == TaskKind::transfer) ++transfers_;
  return static_cast<TaskId>(tasks_.size() - 1);
}

TaskId Dag::busy(LaneId lane, Duration work, std::string_view name, std::string_view category) {
  if (work < Duration::zero()) throw InputError("task '" + std::string(name) + "': negative duration");
  return add(Task{.amount = work.ps(), .lane = lane, .kind = TaskKind::busy}, name, category);
}

std::int64_t Dag::bytes_index(double bytes, std::string_view name) {
  if (!(bytes >= 0.0) || std::isinf(bytes)) {
    throw InputError("task '" + std::string(name) + "': bytes must be finite and >= 0, got " +
                     std::to_string(bytes));
  }
  // Consecutive transfers mostly move the same bytes (the flows of one collective): stored once, as names.
  if (bytes_.empty() || std::bit_cast<std::uint64_t>(bytes_.back()) != std::bit_cast<std::uint64_t>(bytes))
    bytes_.push_back(bytes);
  return static_cast<std::int64_t>(bytes_.size() - 1);
}

TaskId Dag::transfer(LaneId lane, std::span<const LinkId> path, double bytes, std::string_view name,
                     std::string_view category) {
  const std::int64_t amount = bytes_index(bytes, name);
  if (paths_.size() + path.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError("transfer paths of one graph exceed 2^32 links");
  }
  const Task task{.amount = amount,
                  .path_offset = static_cast<std::uint32_t>(paths_.size()),
                  .path_length = static_cast<std::uint32_t>(path.size()),
                  .lane = lane,
                  .kind = TaskKind::transfer};
  const TaskId id = add(task, name, category);
  paths_.insert(paths_.end(), path.begin(), path.end());
  return id;
}

TaskId Dag::transfer_like(TaskId like, LaneId lane, double bytes, std::string_view name,
                          std::string_view category) {
  if (like >= tasks_.size() || tasks_[like].kind != TaskKind::transfer) {
    throw InputError("task '" + std::string(name) + "': transfer_like needs a transfer, got task id " +
                     std::to_string(like));
  }
  const Task& model = tasks_[like];
  const Task task{.amount = bytes_index(bytes, name),
                  .path_offset = model.path_offset,
                  .path_length = model.path_length,
                  .lane = lane,
                  .kind = TaskKind::transfer};
  return add(task, name, category);
}

TaskId Dag::repeat(TaskId first, TaskId end, std::size_t edge_first, std::size_t edge_end,
                   std::string_view from_prefix, std::string_view to_prefix) {
  if (first > end || end > tasks_.size() || edge_first > edge_end || edge_end > edges_.size()) {
    throw InputError("repeat names tasks or dependencies beyond the graph");
  }
  if (tasks_.size() + (end - first) >= std::numeric_limits<TaskId>::max()) {
    throw InputError("too many tasks in one graph");
  }
  const auto copy = static_cast<TaskId>(tasks_.size());
  const TaskId shift = copy - first;
  // What add() does, without its checks (the originals passed them) and with each run of one name renamed
  // once: a block's tasks mostly share their name (a collective's flows).
  std::uint32_t old_offset = 0;
  std::uint32_t old_length = std::numeric_limits<std::uint32_t>::max();  // no name has it
  std::string name(to_prefix);
  for (TaskId t = first; t < end; ++t) {
    Task task = tasks_[t];  // a copy: push_back may grow tasks_
    if (task.name_offset != old_offset || task.name_length != old_length) {
      old_offset = task.name_offset;
      old_length = task.name_length;
      const std::string_view old = std::string_view(names_).substr(old_offset, old_length);
      if (!old.starts_with(from_prefix)) {
        throw InputError("repeat: task '" + std::string(old) + "' does not start with '" +
                         std::string(from_prefix) + "'");
      }
      name.resize(to_prefix.size());
      name.append(old.substr(from_prefix.size()));  // a copy: names_ may grow
    }
    push(task, name);
  }
  for (std::size_t e = edge_first; e < edge_end; ++e) {
    const auto [before, after] = edges_[e];
    if (before < first || before >= end || after < first || after >= end) {
      throw InputError("repeat: a dependency leaves the repeated tasks");
    }
    edges_.emplace_back(before + shift, after + shift);
  }
  return copy;
}

TaskId Dag::join(LaneId lane, std::string_view name, std::string_view category) {
  return add(Task{.amount = 0, .lane = lane, .kind = TaskKind::join}, name, category);
}

void Dag::extend(TaskId task, Duration work) {
  if (task >= tasks_.size()) throw InputError("extend names unknown task id " + std::to_string(task));
  Task& t = tasks_[task];
  if (t.kind != TaskKind::busy) throw InputError("task '" + std::string(name(task)) + "' is not busy");
  if (work < Duration::zero()) throw InputError("task '" + std::string(name(task)) + "': negative duration");
  t.amount += work.ps();
}

void Dag::depend(TaskId before, TaskId after) {
  if (before >= tasks_.size() || after >= tasks_.size()) {
    throw InputError("a dependency names unknown task id " +
                     std::to_string(before >= tasks_.size() ? before : after));
  }
  if (before == after) throw InputError("task '" + std::string(name(before)) + "' depends on itself");
  edges_.emplace_back(before, after);
}

void Dag::reserve(std::size_t tasks, std::size_t edges) {
  tasks_.reserve(tasks);
  edges_.reserve(edges);
}

std::string_view Dag::name(TaskId task) const {
  const Task& t = tasks_.at(task);
  return std::string_view(names_).substr(t.name_offset, t.name_length);
}

std::string_view Dag::category(TaskId task) const {
  return categories_[tasks_.at(task).category];
}

Duration Dag::work(TaskId task) const {
  const Task& t = tasks_.at(task);
  return t.kind == TaskKind::busy ? Duration::from_ps(t.amount) : Duration::zero();
}

double Dag::bytes(TaskId task) const {
  const Task& t = tasks_.at(task);
  return t.kind == TaskKind::transfer ? bytes_[static_cast<std::size_t>(t.amount)] : 0.0;
}

std::span<const LinkId> Dag::path(TaskId task) const {
  const Task& t = tasks_.at(task);
  return std::span<const LinkId>(paths_).subspan(t.path_offset, t.path_length);
}

// Runs one Dag on one engine: CSR successor lists, remaining-dependency counts, a min-heap of ready ids.
class DagExecutor {
 public:
  DagExecutor(const Dag& dag, Engine& engine, FlowNetwork* network, TraceSink* sink)
      : dag_(dag), engine_(engine), network_(network), sink_(sink) {}

  DagResult run() {
    const std::size_t n = dag_.tasks_.size();
    check_transfers();
    build_successors();
    reject_cycles();

    result_.started = engine_.now();
    result_.finished = result_.started;
    result_.tasks.assign(n, TaskTiming{});
    if (sink_ != nullptr) completion_order_.reserve(n);
    lanes_.reserve(dag_.lane_names_.size());
    for (const auto& name : dag_.lane_names_) lanes_.emplace_back(engine_, name);

    remaining_ = indegree_;
    for (TaskId t = 0; t < n; ++t) {
      if (remaining_[t] == 0) ready_.push_back(t);  // ascending ids: already a valid min-heap
    }
    if (!ready_.empty()) schedule_release();
    // complete() stops the engine after the last task; others' stop() calls just resume here.
    while (completed_ < n && engine_.pending() > 0) engine_.run();
    TRAINSIM_CHECK(completed_ == n, "the engine stopped before the task graph finished (" +
                                        std::to_string(completed_) + " of " + std::to_string(n) + " tasks)");
    result_.makespan = result_.finished - result_.started;
    result_.lane_busy.reserve(lanes_.size());
    for (const Resource& r : lanes_) result_.lane_busy.push_back(r.busy_time());
    for (TaskId t = 0; t < n; ++t) {
      if (indegree_[t] == 0) remaining_[t] = kNoTask;  // released by nothing
    }
    result_.released_by = std::move(remaining_);
    if (sink_ != nullptr) record_all();
    return std::move(result_);
  }

 private:
  void check_transfers() const {
    if (dag_.transfers_ == 0) return;
    if (network_ == nullptr) throw InputError("the task graph has transfers but no flow network was given");
    // Every stored path is a transfer's (transfer() stores it once the task is added) and every transfer's
    // path is a stored one, so one pass over them checks them all; the transfers are walked only to name the
    // first that uses an unknown link.
    const std::size_t links = network_->link_count();
    if (std::ranges::all_of(dag_.paths_, [links](LinkId l) { return l < links; })) return;
    for (const Dag::Task& t : dag_.tasks_) {
      if (t.kind != TaskKind::transfer) continue;
      for (std::uint32_t i = 0; i < t.path_length; ++i) {
        if (dag_.paths_[t.path_offset + i] >= network_->link_count()) {
          throw InputError("transfer '" +
                           std::string(std::string_view(dag_.names_).substr(t.name_offset, t.name_length)) +
                           "' uses unknown link id " + std::to_string(dag_.paths_[t.path_offset + i]));
        }
      }
    }
  }

  void build_successors() {
    const std::size_t n = dag_.tasks_.size();
    TRAINSIM_CHECK(dag_.edges_.size() < std::numeric_limits<std::uint32_t>::max(), "too many dependencies");
    offsets_.assign(n + 1, 0);
    indegree_.assign(n, 0);
    for (const auto& [before, after] : dag_.edges_) {
      ++offsets_[before + 1];
      ++indegree_[after];
    }
    for (std::size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
    const auto edges = static_cast<std::uint32_t>(dag_.edges_.size());
    targets_.resize(edges);
    // Edges in insertion order, so successors are visited in the order the dependencies were declared:
    // filled from the back, each task's list from its end (offsets_[t + 1]), which then holds its start...
    for (std::size_t e = edges; e-- > 0;) {
      const auto [before, after] = dag_.edges_[e];
      targets_[--offsets_[before + 1]] = after;
    }
    // ...so the offsets move down by one (without a second array of n counters).
    std::copy(offsets_.begin() + 1, offsets_.end(), offsets_.begin());
    offsets_[n] = edges;
  }

  // Kahn's algorithm without running anything; on failure, walks back through unfinished predecessors
  // (each has one, or it would have been processed) until a task repeats: that loop is a cycle.
  void reject_cycles() const {
    const std::size_t n = dag_.tasks_.size();
    std::vector<std::uint32_t> left = indegree_;
    // In id order, with a stack for the tasks behind the sweep that become free: builders mostly add a
    // task after what it waits for, so this reads the graph nearly in order. Which tasks are processed
    // does not depend on the order (those no cycle holds back), so neither does the answer.
    std::vector<TaskId> stack;
    std::size_t processed = 0;
    const auto process = [&](TaskId t, TaskId sweep) {
      ++processed;
      for (std::uint32_t e = offsets_[t]; e < offsets_[t + 1]; ++e) {
        const TaskId next = targets_[e];
        if (--left[next] == 0 && next < sweep) stack.push_back(next);  // the sweep has passed it
      }
    };
    for (TaskId t = 0; t < n; ++t) {
      if (left[t] != 0) continue;  // waits for a task not processed yet; taken from the stack once free
      process(t, t);
      while (!stack.empty()) {
        const TaskId u = stack.back();
        stack.pop_back();
        process(u, t);
      }
    }
    if (processed == n) return;

    std::vector<TaskId> predecessor(n, std::numeric_limits<TaskId>::max());
    for (const auto& [before, after] : dag_.edges_) {
      if (left[before] > 0 && left[after] > 0) predecessor[after] = before;
    }
    TaskId t = 0;
    while (left[t] == 0) ++t;
    std::vector<std::uint32_t> seen_at(n, std::numeric_limits<std::uint32_t>::max());
    std::vector<TaskId> walk;
    while (seen_at[t] == std::numeric_limits<std::uint32_t>::max()) {
      seen_at[t] = static_cast<std::uint32_t>(walk.size());
      walk.push_back(t);
      t = predecessor[t];
    }
    // walk[seen_at[t]..] is the cycle backward; print it forward, closing on its first task.
    std::vector<TaskId> cycle(walk.begin() + seen_at[t], walk.end());
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // stable text
    constexpr std::size_t kShown = 8;
    std::string text;
    for (std::size_t i = 0; i < cycle.size() && i < kShown; ++i)
      text += "'" + std::string(dag_.name(cycle[i])) + "' -> ";
    if (cycle.size() > kShown) text += "... (" + std::to_string(cycle.size() - kShown) + " more) -> ";
    text += "'" + std::string(dag_.name(cycle.front())) + "'";
    throw InputError("the task graph has a cycle: " + text);
  }

  void schedule_release() {
    release_scheduled_ = true;
    engine_.at(engine_.now(), [this] { release(); });
  }

  // Starts every ready task, lowest id first. Joins finish inline and may make more tasks ready at this
  // same instant; they are taken in id order too.
  void release() {
    release_scheduled_ = false;
    releasing_ = true;
    while (!ready_.empty()) {
      std::pop_heap(ready_.begin(), ready_.end(), std::greater<>());
      const TaskId t = ready_.back();
      ready_.pop_back();
      start(t);
    }
    releasing_ = false;
  }

  void start(TaskId t) {
    const Dag::Task& task = dag_.tasks_[t];
    TaskTiming& timing = result_.tasks[t];
    switch (task.kind) {
      case TaskKind::busy: {
        const Slice s = lanes_[task.lane].submit(Duration::from_ps(task.amount), [this, t] { complete(t); });
        timing = TaskTiming{s.start, s.end};
        break;
      }
      case TaskKind::transfer:
        timing.start = engine_.now();
        network_->start_borrowing(
            std::span<const LinkId>(dag_.paths_).subspan(task.path_offset, task.path_length),
            dag_.bytes_[static_cast<std::size_t>(task.amount)], [this, t] { complete(t); });
        break;
      case TaskKind::join:
        timing.start = engine_.now();
        complete(t);
        break;
    }
  }

  void complete(TaskId t) {
    const Time now = engine_.now();
    result_.tasks[t].end = now;
    result_.finished = max(result_.finished, now);
    if (++completed_ == dag_.tasks_.size()) engine_.stop();
    if (sink_ != nullptr) completion_order_.push_back(t);
    for (std::uint32_t e = offsets_[t]; e < offsets_[t + 1]; ++e) {
      const TaskId next = targets_[e];
      if (--remaining_[next] == 0) {
        remaining_[next] = t;  // the count is done with: keep what released it, in the line just read
        ready_.push_back(next);
        std::push_heap(ready_.begin(), ready_.end(), std::greater<>());
      }
    }
    if (!ready_.empty() && !releasing_ && !release_scheduled_) schedule_release();
  }

  // Records every task in the order they completed, once the path through them is known.
  void record_all() {
    const std::vector<TaskId> path = critical_path(dag_, result_);
    std::vector<std::uint32_t> place(dag_.tasks_.size(), 0);
    for (std::size_t i = 0; i < path.size(); ++i) place[path[i]] = static_cast<std::uint32_t>(i + 1);
    for (const TaskId t : completion_order_) record(t, place[t]);
  }

  // `place`: the task's place on the critical path, 1 for its first task; 0 when it is not on it.
  void record(TaskId t, std::uint32_t place) {
    const Dag::Task& task = dag_.tasks_[t];
    std::array<TraceArg, 2> arg_list;
    std::size_t arg_count = 0;
    if (task.kind == TaskKind::transfer)
      arg_list[arg_count++] =
          TraceArg{.key = "bytes", .number = dag_.bytes_[static_cast<std::size_t>(task.amount)]};
    if (place != 0)
      arg_list[arg_count++] = TraceArg{.key = kCriticalPathArg, .number = static_cast<double>(place)};
    const std::span<const TraceArg> args(arg_list.data(), arg_count);
    sink_->record(
        TraceRecord{.lane = dag_.lane_names_[task.lane],
                    .name = std::string_view(dag_.names_).substr(task.name_offset, task.name_length),
                    .category = dag_.categories_[task.category],
                    .start = result_.tasks[t].start,
                    .end = result_.tasks[t].end,
                    .args = args});
  }

  const Dag& dag_;
  Engine& engine_;
  FlowNetwork* network_;
  TraceSink* sink_;
  std::vector<std::uint32_t> offsets_;  // CSR: successors of t are targets_[offsets_[t] .. offsets_[t+1])
  std::vector<TaskId> targets_;
  std::vector<std::uint32_t> indegree_;
  // Per task, its dependencies not yet done; once they are, the one that released it (complete()).
  std::vector<std::uint32_t> remaining_;
  std::vector<TaskId> ready_;             // min-heap
  std::vector<TaskId> completion_order_;  // filled only when there is a sink
  std::vector<Resource> lanes_;
  DagResult result_;
  std::size_t completed_ = 0;
  bool release_scheduled_ = false;
  bool releasing_ = false;
};

DagResult execute(const Dag& dag, Engine& engine, FlowNetwork* network, TraceSink* sink) {
  return DagExecutor(dag, engine, network, sink).run();
}

std::vector<TaskId> critical_path(const Dag& dag, const DagResult& result) {
  const std::size_t n = dag.size();
  TRAINSIM_CHECK(result.tasks.size() == n && result.released_by.size() == n,
                 "critical_path: the result is not that of this graph");
  if (n == 0) return {};
  const auto& timing = result.tasks;
  // Busy tasks of positive length by (lane, end): a lane runs one at a time, so no two share a key, and the
  // one ahead of a task that waited for its lane is the one that ended on that lane as the task started.
  const auto key = [&](TaskId t) { return std::pair{dag.lane_of(t), timing[t].end}; };
  std::vector<TaskId> by_lane_end;
  for (TaskId t = 0; t < n; ++t) {
    if (dag.kind(t) == TaskKind::busy && timing[t].end > timing[t].start) by_lane_end.push_back(t);
  }
  std::sort(by_lane_end.begin(), by_lane_end.end(), [&](TaskId a, TaskId b) { return key(a) < key(b); });
  const auto ahead_of = [&](TaskId t) {
    const std::pair wanted{dag.lane_of(t), timing[t].start};
    const auto it = std::lower_bound(by_lane_end.begin(), by_lane_end.end(), wanted,
                                     [&](TaskId a, const auto& k) { return key(a) < k; });
    TRAINSIM_CHECK(
        it != by_lane_end.end() && key(*it) == wanted,
        "critical_path: nothing ended on the lane of '" + std::string(dag.name(t)) + "' as it started");
    return *it;
  };

  TaskId last = 0;
  for (TaskId t = 1; t < n; ++t) {
    if (timing[t].end > timing[last].end) last = t;
  }
  std::vector<TaskId> path{last};
  while (true) {
    const TaskId t = path.back();
    const TaskId released_by = result.released_by[t];
    const Time ready = released_by == kNoTask ? result.started : timing[released_by].end;
    if (dag.kind(t) == TaskKind::busy && timing[t].start > ready) {
      path.push_back(ahead_of(t));
    } else if (released_by != kNoTask) {
      path.push_back(released_by);
    } else {
      break;
    }
    // Each step goes to a task that completed earlier, so the walk ends within n steps.
    TRAINSIM_CHECK(path.size() <= n, "critical_path: the walk through the result does not end");
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace trainsim::sim
