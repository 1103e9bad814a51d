#pragma once
// Task DAG + executor. A task is one of:
//  - busy:     occupies its lane for a fixed Duration. Each lane is a FIFO serial resource (a GPU stream):
//              busy tasks of one lane run one at a time, in the order they become ready;
//  - transfer: moves bytes over a path of links on a FlowNetwork (max-min fair with other transfers);
//              its lane only places it in the trace, it does not occupy the lane;
//  - join:     zero time; a synchronisation point.
// A task starts when all tasks it depends on are done. Tasks that become ready at the same instant are
// released in increasing id order, so a run is deterministic. The run records, for each task, the dependency
// that released it (one index per task), from which critical_path() follows the chain that set the makespan.
// Every executed task is recorded once to the TraceSink (when given), in completion order once the graph is
// done, those on the critical path with their place on it (TraceArg "critical_path": 1, 2, ...).
//
// Storage is compact (32 bytes per task plus its name and a transfer's bytes, each stored once for a run of
// tasks that share it, and its path, stored once for the transfers that share one: transfer_like, repeat;
// 8 per edge; edges become CSR when run), so a 1M-task graph is tens of MB.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine.hpp"
#include "sim/flow_network.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace trainsim::sim {

using TaskId = std::uint32_t;
using LaneId = std::uint32_t;

/// Names no task: what released a task that depends on nothing.
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();

enum class TaskKind : std::uint8_t { busy, transfer, join };

class Dag {
 public:
  /// Interns a lane name ("gpu 3 / compute"); the same name always gives the same id.
  LaneId lane(std::string_view name);

  /// Adds a task occupying `lane` for `work` (>= 0). Ids are 0, 1, 2, ... in order of addition.
  TaskId busy(LaneId lane, Duration work, std::string_view name, std::string_view category = {});
  /// Adds a task moving `bytes` (finite, >= 0) over `path` (link ids of the network given to execute).
  TaskId transfer(LaneId lane, std::span<const LinkId> path, double bytes, std::string_view name,
                  std::string_view category = {});
  /// Adds a transfer of `bytes` over the path of transfer task `like`, stored once for both (a builder that
  /// sends over one route many times). Throws InputError if `like` is not a transfer.
  TaskId transfer_like(TaskId like, LaneId lane, double bytes, std::string_view name,
                       std::string_view category = {});
  /// Adds a zero-time task.
  TaskId join(LaneId lane, std::string_view name, std::string_view category = {});
  /// Appends a copy of tasks [first, end) and of dependencies [edge_first, edge_end) (by edge_count() before
  /// and after they were added), which must all join tasks of that range, the copies' ids shifted by
  /// size() − first: each task's kind, lane, work or bytes and path (stored once for both), category, and
  /// its name with the prefix `from_prefix`, which it must have, replaced by `to_prefix`. For a builder that
  /// lowers the same sub-graph again (a collective repeated on the same members): the same tasks and
  /// dependencies, in the same order, without building them again. Returns the id of the first copy.
  /// Throws InputError for a range or an edge out of bounds, or a name without the prefix.
  TaskId repeat(TaskId first, TaskId end, std::size_t edge_first, std::size_t edge_end,
                std::string_view from_prefix, std::string_view to_prefix);
  /// Lengthens busy task `task` by `work` (>= 0): for a builder that folds work which would run right after
  /// it, on a lane nothing else uses meanwhile, into it (one task instead of a chain). Throws InputError for
  /// an unknown id, a task that is not busy or a negative duration.
  void extend(TaskId task, Duration work);

  /// `after` starts only once `before` is done. Throws InputError for unknown ids or before == after.
  void depend(TaskId before, TaskId after);
  /// Pre-allocates for `tasks` tasks and `edges` dependencies (optional; avoids regrowth).
  void reserve(std::size_t tasks, std::size_t edges);

  [[nodiscard]] std::size_t size() const { return tasks_.size(); }
  [[nodiscard]] std::size_t edge_count() const { return edges_.size(); }
  [[nodiscard]] std::size_t lane_count() const { return lane_names_.size(); }

  [[nodiscard]] TaskKind kind(TaskId task) const { return tasks_.at(task).kind; }
  [[nodiscard]] std::string_view name(TaskId task) const;
  [[nodiscard]] std::string_view category(TaskId task) const;
  [[nodiscard]] LaneId lane_of(TaskId task) const { return tasks_.at(task).lane; }
  [[nodiscard]] const std::string& lane_name(LaneId lane) const { return lane_names_.at(lane); }
  /// The work of a busy task; zero for others.
  [[nodiscard]] Duration work(TaskId task) const;
  /// The bytes of a transfer task; zero for others.
  [[nodiscard]] double bytes(TaskId task) const;
  /// The path of a transfer task; empty for others.
  [[nodiscard]] std::span<const LinkId> path(TaskId task) const;

 private:
  friend class DagExecutor;
  struct Task {
    std::int64_t amount;        // busy: work in ps; transfer: index into bytes_; join: 0
    std::uint32_t name_offset;  // into names_
    std::uint32_t name_length;
    std::uint32_t path_offset;  // into paths_ (transfer)
    std::uint32_t path_length;
    LaneId lane;
    std::uint16_t category;  // index into categories_
    TaskKind kind;
  };
  static_assert(sizeof(Task) == 32, "the header comment counts 32 bytes a task");

  TaskId add(Task task, std::string_view name, std::string_view category);
  // Appends a checked task (its category set) under `name`, and counts it.
  TaskId push(Task task, std::string_view name);
  // Where `bytes` is stored for the new transfer `name` (Task::amount); InputError unless finite and >= 0.
  std::int64_t bytes_index(double bytes, std::string_view name);
  std::uint16_t category_index(std::string_view category);

  std::vector<Task> tasks_;
  std::string names_;
  std::uint32_t last_name_offset_ = 0;  // where the last name stored in names_ begins
  std::vector<LinkId> paths_;           // stored by transfer() alone, each a transfer's (shared by others)
  std::size_t transfers_ = 0;
  std::vector<double> bytes_;
  std::vector<std::pair<TaskId, TaskId>> edges_;  // (before, after)
  std::vector<std::string> lane_names_;
  std::map<std::string, LaneId, std::less<>> lane_ids_;
  std::vector<std::string> categories_{std::string()};  // 0 = none
};

struct TaskTiming {
  Time start;
  Time end;
};

struct DagResult {
  Time started;                     ///< engine.now() when execute was called
  Time finished;                    ///< end of the last task (== started for an empty graph)
  Duration makespan;                ///< finished - started
  std::vector<TaskTiming> tasks;    ///< indexed by TaskId
  std::vector<Duration> lane_busy;  ///< indexed by LaneId: total work of the lane's busy tasks
  /// Indexed by TaskId: the dependency that released the task, the last of its predecessors to finish
  /// (of those finishing at one instant, the last the engine completed); kNoTask for a task without any.
  std::vector<TaskId> released_by;
};

/// Runs every task of `dag` on `engine`, starting at engine.now(), and returns as soon as its last task
/// is done: events scheduled by others on the same engine run meanwhile, later ones stay queued. `network` is
/// needed when the graph has transfer tasks; `sink` (optional) receives one record per task. Throws
/// InputError if the graph has a cycle ("the task graph has a cycle: a -> b -> a", naming its tasks), or if
/// it has transfers and no network.
DagResult execute(const Dag& dag, Engine& engine, FlowNetwork* network = nullptr, TraceSink* sink = nullptr);

/// The chain of tasks that set `result.finished`, in time order, each starting when the one before it
/// ends. It is walked back from the task that ended last (the lowest id of those): a task waited for the
/// dependency that released it or, a busy task that started after its release (its lane was occupied),
/// for the busy task ahead of it on its lane, which ended as it started. It ends at a task that waited for
/// nothing. Empty for an empty graph. `result` must be what executing `dag` returned. O(n log n).
[[nodiscard]] std::vector<TaskId> critical_path(const Dag& dag, const DagResult& result);

}  // namespace trainsim::sim
