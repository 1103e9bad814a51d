#pragma once
// A one-line progress bar with rate and ETA for long commands (sweep, search). It draws on stderr only
// when stderr is a terminal (SPEC: output to a pipe has no progress bar and no colours); otherwise every
// call is a no-op. Plain ASCII, no colours, redrawn with '\r' at most ten times a second.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace trainsim::cli {

/// True when stderr is a terminal (isatty).
[[nodiscard]] bool stderr_is_terminal();

class ProgressBar {
 public:
  /// `total` units of work; draws to `out` only when `enabled` (pass stderr_is_terminal()).
  ProgressBar(std::int64_t total, bool enabled, std::FILE* out = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// Reports `done` units finished so far; redraws when 100 ms passed since the last draw. Thread-compatible
  /// (callers serialise; the sweep calls it from its ordered emitter).
  void update(std::int64_t done);
  /// Draws the final state and ends the line (once; also done by the destructor).
  void finish();

  /// The text of the bar, pure: "[#####.....]  512/1024  50.0%  1.23k/s  ETA 0:00:04" in `width` columns
  /// at most. Rate = done / elapsed; ETA = (total - done) / rate, "--:--" while the rate is unknown.
  [[nodiscard]] static std::string render(std::int64_t done, std::int64_t total, double elapsed_s, int width);

 private:
  std::int64_t total_;
  bool enabled_;
  std::FILE* out_;
  std::int64_t done_ = 0;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace trainsim::cli
