#pragma once
// What simulate_queue (queue_simulator.hpp) reports: per job, per team and for the whole cluster, plus
// the segments each job ran (for the trace) and a utilisation time series. Units: seconds, GPU-hours,
// US dollars; fractions in [0, 1].
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::model {

struct QueueJobResult {
  bool started = false;
  bool finished = false;
  double first_start = 0;  ///< s (when started)
  double end = 0;          ///< s (when finished)
  /// s in the queue within the period: before its first start and after each interruption; a job still
  /// waiting when the period ends counts its wait so far.
  double wait = 0;
  double run_time = 0;  ///< s holding nodes within the period, lost work and recoveries included
  double gpu_hours = 0;
  double cost = 0;
  double lost_work = 0;  ///< s of run thrown away by interruptions (back to the last checkpoint)
  int preemptions = 0;
  int restarts = 0;  ///< interruptions by node failures
  // Contention (QueueSpec::contention; else 1 and 0): the run time its neighbours added.
  /// Wall time of its training over the uncontended time that training is worth (1: never slowed).
  double contention_slowdown = 1;
  double contention_s = 0;  ///< s of run added by neighbours (recoveries are not slowed)
  double contention_gpu_hours = 0;
  double contention_cost = 0;
};

struct QueueTeamResult {
  std::string team;
  int jobs = 0;
  int finished = 0;
  double gpu_hours = 0;
  double cost = 0;
  double share = 0;  ///< of all jobs' GPU-hours
  double quota = 0;  ///< 0 when none was given
  double mean_wait = 0;
  double p95_wait = 0;              ///< nearest rank
  double contention_gpu_hours = 0;  ///< its jobs' contention_gpu_hours summed
  double contention_cost = 0;
};

/// One leaf's uplinks (uplink_shares.hpp) over the period, under QueueSpec::contention.
struct QueueLinkResult {
  std::int64_t leaf = 0;
  double shared_s = 0;  ///< s during which two or more running jobs crossed it
  int most_jobs = 0;    ///< the most jobs crossing it at once
  /// The contention GPU-hours of the jobs whose share this link set (their bottleneck).
  double contention_gpu_hours = 0;
};

/// One stretch of a job on its nodes, for the trace.
struct QueueSegment {
  std::int32_t job = 0;
  double start = 0;
  double end = 0;
  std::vector<std::int32_t> nodes;
};

/// Mean node counts over [start, start + interval) (the last row may be shorter).
struct QueueSample {
  double start = 0;
  double busy = 0;
  double idle = 0;
  double down = 0;
  double waiting = 0;          ///< jobs in the queue
  double contention_gpus = 0;  ///< GPUs' worth of run lost to contention (contention GPU-hours per hour)
};

struct QueueClusterResult {
  double period = 0;
  std::int64_t nodes = 0;
  int gpus_per_node = 0;
  // busy + idle + down = nodes x gpus_per_node x period / 3600 (the accounting identity)
  double busy_gpu_hours = 0;  ///< held by a job (lost work and recoveries included)
  double idle_gpu_hours = 0;  ///< up and free
  double down_gpu_hours = 0;  ///< failed, under repair
  double utilisation = 0;     ///< busy / (nodes x period)
  double idle_cost = 0;
  double busy_cost = 0;
  /// Free GPU-hours while some waiting job asked for no more nodes than were free but the placement rule
  /// could not place it (always 0 under first fit).
  double fragmentation_gpu_hours = 0;
  double lost_gpu_hours_failures = 0;    ///< lost work + recoveries of jobs interrupted by failures
  double lost_gpu_hours_preemption = 0;  ///< lost work + recoveries of preempted jobs
  double contention_gpu_hours = 0;       ///< the jobs' contention_gpu_hours summed
  double contention_cost = 0;
  double contention_hours = 0;  ///< wall hours during which at least one job was slowed
  std::int64_t node_failures = 0;
  std::int64_t events = 0;  ///< engine events executed
};

struct QueueReport {
  std::vector<QueueJobResult> jobs;  ///< in QueueSpec::jobs order
  std::vector<QueueTeamResult> teams;
  QueueClusterResult cluster;
  std::vector<QueueSegment> segments;  ///< in start order
  std::vector<QueueSample> samples;
  /// Under contention: every leaf whose uplinks two jobs ever shared, the busiest first (contention
  /// GPU-hours, then shared time, then leaf index).
  std::vector<QueueLinkResult> links;
};

}  // namespace trainsim::model
