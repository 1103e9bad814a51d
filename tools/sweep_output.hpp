#pragma once
// The output file of a sweep: one header (CSV), then one whole line per point, append-only, so that an
// interrupted sweep can be resumed.
//
// Durability contract: each row is written with a single write(2) of the whole line (so a killed process
// leaves whole rows, plus at most one torn line if the machine itself dies mid-write); the file is fsynced
// at most once a second and when closed. On resume the existing file is read, its header must equal the
// new one (same scenario columns), every row must carry this sweep's fingerprint (SweepTable::fingerprint),
// a torn last row (one without its line end; quoted multi-line cells are followed, so a row torn inside
// one is caught) is truncated away, any other record that is not a row is an error, and the point indices
// already present are reported so the runner skips them. Rows are never rewritten, so no point is lost or
// duplicated. The file is locked (flock) while a sweep writes it: a second writer is refused, and a file that
// is not a sweep output is never truncated.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/studies/sweep.hpp"

namespace trainsim::cli {

class SweepOutput {
 public:
  /// path "" or "-": standard output (resume not allowed: InputError). Otherwise the file is created
  /// (or truncated, unless `resume`) and the header is written when the file is new or was empty.
  SweepOutput(const std::string& path, const scenario::SweepTable& table, bool resume);
  ~SweepOutput();
  SweepOutput(const SweepOutput&) = delete;
  SweepOutput& operator=(const SweepOutput&) = delete;

  /// Point indices found in the file when resuming, ascending, without duplicates.
  [[nodiscard]] const std::vector<std::int64_t>& done() const { return done_; }
  /// Appends one whole line (which ends in '\n') with one write.
  void write_row(std::string_view line);
  /// Flushes to storage (fsync) — also done by the destructor.
  void sync();

 private:
  int fd_ = -1;
  bool owns_fd_ = false;
  std::vector<std::int64_t> done_;
  std::chrono::steady_clock::time_point last_sync_;
};

/// Reads a sweep output (CSV or JSON Lines): the header ("" for JSON Lines) and the complete rows, each
/// with its point index. A torn last line is ignored. Throws InputError for a file that is not one.
struct SweepFile {
  std::string header;
  std::vector<std::pair<std::int64_t, std::string>> rows;  ///< (point, whole line with '\n'), file order
  std::uint64_t complete_bytes = 0;                        ///< length of header + complete rows
  std::string torn_header;       ///< CSV: the text of a file whose one line has no '\n' yet (else empty)
  std::uint64_t torn_bytes = 0;  ///< bytes after the complete rows: a torn last row (or header)
};
[[nodiscard]] SweepFile read_sweep_file(const std::string& path, scenario::RowFormat format);
/// The format of an existing output, from its file name (".jsonl"/".json" -> JSON Lines, else CSV).
[[nodiscard]] scenario::RowFormat format_from_path(const std::string& path);

}  // namespace trainsim::cli
