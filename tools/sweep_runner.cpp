#include "tools/sweep_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <stop_token>
#include <vector>

#include "sim/error.hpp"
#include "tools/progress_bar.hpp"
#include "tools/sweep_output.hpp"

#ifdef TRAINSIM_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only: the deprecated C++ bindings do not compile warning-free
#include <mpi.h>
#endif

namespace trainsim::cli {

namespace {

// Set by SIGINT/SIGTERM; polled by the workers, which turn it into a stop request (a signal handler may
// only touch lock-free atomics).
std::atomic<bool> interrupted{false};
extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

class InterruptGuard {
 public:
  InterruptGuard() {
    interrupted = false;
    previous_int_ = std::signal(SIGINT, on_interrupt);
    previous_term_ = std::signal(SIGTERM, on_interrupt);
  }
  ~InterruptGuard() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

/// The points this run must compute: this shard's, minus those the output already holds. Ascending.
std::vector<std::int64_t> points_to_run(std::int64_t size, const scenario::Shard& shard,
                                        const std::vector<std::int64_t>& done) {
  std::vector<std::int64_t> points;
  auto d = done.begin();
  for (std::int64_t i = shard.index; i < size; i += shard.count) {
    while (d != done.end() && *d < i) ++d;
    if (d != done.end() && *d == i) continue;
    points.push_back(i);
  }
  return points;
}

void print_notes(const scenario::SweepTable& table) {
  for (const std::string& note : table.notes()) std::fprintf(stderr, "note: %s\n", note.c_str());
}

void report_interruption(std::int64_t written, std::size_t planned) {
  std::fprintf(stderr,
               "trainsim sweep: interrupted after %lld of %zu points; rerun with --resume to finish\n",
               static_cast<long long>(written), planned);
}

/// A sweep past large_sweep_points is refused without --large, with what it would cost: its core-hours at
/// the analytic fidelity's ~1,000 points/s per core (the event fidelity is slower) and its output at the
/// size of point 0's row.
void check_sweep_size(const SweepJob& job, const scenario::SweepTable& table) {
  const std::int64_t points = table.size();
  if (points <= large_sweep_points || job.large) return;
  const double core_hours = static_cast<double>(points) / 1000.0 / 3600.0;
  const std::size_t row_bytes = table.row(0).size();
  const double bytes = static_cast<double>(points) * static_cast<double>(row_bytes);
  throw InputError(fmt::format(
      "{}: the sweep has {} points, more than {} without --large: about {:.1f} core-hours at the analytic "
      "fidelity's ~1,000 points/s per core, and about {:.1f} GB of output ({} bytes a row); narrow the sweep "
      "block, or pass --large to run it",
      job.scenario_path, points, large_sweep_points, core_hours, bytes / 1e9, row_bytes));
}

}  // namespace

SweepOutcome run_sweep(const SweepJob& job) {
  const scenario::SweepTable table(job.scenario_path, job.fidelity, job.format, job.overrides);
  check_sweep_size(job, table);
  print_notes(table);
  SweepOutput output(job.output, table, job.resume);
  const std::vector<std::int64_t> points = points_to_run(table.size(), job.shard, output.done());

  ProgressBar progress(static_cast<std::int64_t>(points.size()), job.progress && stderr_is_terminal());
  const InterruptGuard guard;
  std::stop_source stop;
  std::int64_t written = 0;
  const auto start = std::chrono::steady_clock::now();
  // The tally does not depend on which thread computed a point, so the closing line is the same at any -j.
  std::mutex tally_mutex;
  SweepOutcome tally;
  const std::int64_t emitted = scenario::run_in_order(
      points, job.threads,
      [&](std::int64_t index) {
        if (interrupted.load(std::memory_order_relaxed)) stop.request_stop();
        scenario::SweepTable::RowFacts facts;
        std::string row = table.row(index, &facts);
        const std::lock_guard lock(tally_mutex);
        tally.feasible += facts.feasible;
        tally.fits += facts.fits;
        if (facts.feasible &&
            (tally.fastest_point < 0 || facts.iteration_time < tally.fastest_iteration ||
             (facts.iteration_time == tally.fastest_iteration && index < tally.fastest_point))) {
          tally.fastest_point = index;
          tally.fastest_iteration = facts.iteration_time;
        }
        return row;
      },
      [&](std::int64_t, std::string&& row) {
        output.write_row(row);
        progress.update(++written);
      },
      stop.get_token());
  progress.finish();
  output.sync();
  SweepOutcome outcome = tally;
  outcome.planned = static_cast<std::int64_t>(points.size());
  outcome.written = emitted;
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outcome.complete()) report_interruption(emitted, points.size());
  return outcome;
}

#ifdef TRAINSIM_HAVE_MPI

namespace {

enum Tag : int { tag_rows = 1, tag_work = 2 };

/// Finalizes MPI on every path out, so an InputError on all ranks still ends the job cleanly.
class MpiSession {
 public:
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
      MPI_Init(nullptr, nullptr);
      owns_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    if (owns_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

 private:
  bool owns_ = false;
  int rank_ = 0;
  int size_ = 1;
};

// Rows travel as one byte buffer: for each row, its point index (8 bytes), its length (8 bytes), its bytes.
void append_row(std::string& buffer, std::int64_t index, const std::string& row) {
  const auto length = static_cast<std::int64_t>(row.size());
  buffer.append(reinterpret_cast<const char*>(&index), sizeof index);
  buffer.append(reinterpret_cast<const char*>(&length), sizeof length);
  buffer += row;
}

std::vector<std::pair<std::int64_t, std::string>> parse_rows(const std::string& buffer) {
  std::vector<std::pair<std::int64_t, std::string>> rows;
  std::size_t pos = 0;
  while (pos < buffer.size()) {
    std::int64_t index = 0;
    std::int64_t length = 0;
    std::memcpy(&index, buffer.data() + pos, sizeof index);
    std::memcpy(&length, buffer.data() + pos + sizeof index, sizeof length);
    pos += sizeof index + sizeof length;
    rows.emplace_back(index, buffer.substr(pos, static_cast<std::size_t>(length)));
    pos += static_cast<std::size_t>(length);
  }
  return rows;
}

std::string receive_bytes(int source, int tag, int* from) {
  MPI_Status status;
  MPI_Probe(source, tag, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string buffer(static_cast<std::size_t>(count), '\0');
  MPI_Recv(buffer.data(), count, MPI_BYTE, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (from != nullptr) *from = status.MPI_SOURCE;
  return buffer;
}

/// Rank 0: hands out chunks of point indices to whichever worker asks (each request carries the rows of
/// its previous chunk), and writes the rows in the order of `points`.
SweepOutcome coordinate(const SweepJob& job, const scenario::SweepTable& table, int workers) {
  SweepOutput output(job.output, table, job.resume);
  const std::vector<std::int64_t> points = points_to_run(table.size(), job.shard, output.done());
  std::map<std::int64_t, std::size_t> position;  // point index -> position in `points`
  for (std::size_t k = 0; k < points.size(); ++k) position.emplace(points[k], k);

  // Chunks shrink towards the end so the last workers finish together (guided self-scheduling).
  std::size_t next = 0;
  const auto next_chunk = [&] {
    const std::size_t left = points.size() - next;
    const std::size_t size = std::clamp<std::size_t>(left / (4 * static_cast<std::size_t>(workers)), 1, 256);
    const std::size_t take = std::min(size, left);
    std::vector<std::int64_t> chunk(points.begin() + static_cast<std::ptrdiff_t>(next),
                                    points.begin() + static_cast<std::ptrdiff_t>(next + take));
    next += take;
    return chunk;
  };

  ProgressBar progress(static_cast<std::int64_t>(points.size()), job.progress && stderr_is_terminal());
  std::map<std::size_t, std::string> pending;
  std::size_t written = 0;
  int active = workers;
  while (active > 0) {
    int worker = 0;
    for (auto& [index, row] : parse_rows(receive_bytes(MPI_ANY_SOURCE, tag_rows, &worker))) {
      pending.emplace(position.at(index), std::move(row));
    }
    for (auto it = pending.begin(); it != pending.end() && it->first == written; it = pending.erase(it)) {
      output.write_row(it->second);
      progress.update(static_cast<std::int64_t>(++written));
    }
    const std::vector<std::int64_t> chunk = next_chunk();  // empty: no work left, the worker stops
    MPI_Send(chunk.data(), static_cast<int>(chunk.size()), MPI_INT64_T, worker, tag_work, MPI_COMM_WORLD);
    if (chunk.empty()) --active;
  }
  progress.finish();
  output.sync();
  TRAINSIM_CHECK(written == points.size() && pending.empty(), "every point's row reached rank 0");
  return SweepOutcome{static_cast<std::int64_t>(points.size()), static_cast<std::int64_t>(written)};
}

/// Other ranks: ask for work with the rows of the previous chunk until an empty chunk comes back.
void work(const SweepJob& job, const scenario::SweepTable& table) {
  std::string rows;
  while (true) {
    MPI_Send(rows.data(), static_cast<int>(rows.size()), MPI_BYTE, 0, tag_rows, MPI_COMM_WORLD);
    rows.clear();
    MPI_Status status;
    MPI_Probe(0, tag_work, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_INT64_T, &count);
    std::vector<std::int64_t> chunk(static_cast<std::size_t>(count));
    MPI_Recv(chunk.data(), count, MPI_INT64_T, 0, tag_work, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (chunk.empty()) return;
    scenario::run_in_order(
        chunk, job.threads, [&](std::int64_t index) { return table.row(index); },
        [&](std::int64_t index, std::string&& row) { append_row(rows, index, row); });
  }
}

}  // namespace

bool mpi_available() {
  return true;
}

SweepOutcome run_sweep_mpi(const SweepJob& job) {
  const MpiSession mpi;
  if (mpi.size() == 1) return run_sweep(job);
  // Every rank reads the scenario itself (a page of text) so only indices and rows cross the network.
  // An error on every rank alike (a bad scenario) is thrown here, before any message is exchanged.
  const scenario::SweepTable table(job.scenario_path, job.fidelity, job.format, job.overrides);
  check_sweep_size(job, table);
  // Past this point an error on one rank would leave the others waiting for it forever: abort the job.
  try {
    if (mpi.rank() == 0) {
      print_notes(table);
      return coordinate(job, table, mpi.size() - 1);
    }
    SweepJob worker_job = job;
    if (worker_job.threads <= 0) worker_job.threads = 1;  // one rank per core is the MPI convention
    work(worker_job, table);
    return {};
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return {};
}

#else

bool mpi_available() {
  return false;
}

SweepOutcome run_sweep_mpi(const SweepJob&) {
  throw InputError("--mpi: this trainsim was built without MPI (install libopenmpi-dev and rebuild)");
}

#endif

}  // namespace trainsim::cli
