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
  double p95_wait = 0;  ///< nearest rank
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
  double waiting = 0;  ///< jobs in the queue
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
  std::int64_t node_failures = 0;
  std::int64_t events = 0;  ///< engine events executed
};

struct QueueReport {
  std::vector<QueueJobResult> jobs;  ///< in QueueSpec::jobs order
  std::vector<QueueTeamResult> teams;
  QueueClusterResult cluster;
  std::vector<QueueSegment> segments;  ///< in start order
  std::vector<QueueSample> samples;
};

}  // namespace trainsim::model
