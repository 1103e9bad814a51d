#include "tools/sweep_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/error.hpp"
#include "sim/input_files.hpp"

namespace trainsim::cli {

namespace {

constexpr auto kSyncEvery = std::chrono::seconds(1);

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  throw InputError(std::vector<Diagnostic>{Diagnostic{.file = path, .message = message}});
}

void write_all(int fd, std::string_view bytes, const std::string& what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot write " + what + ": " + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

scenario::RowFormat format_from_path(const std::string& path) {
  const auto ends_with = [&](std::string_view suffix) { return std::string_view(path).ends_with(suffix); };
  return ends_with(".jsonl") || ends_with(".json") || ends_with(".ndjson") ? scenario::RowFormat::jsonl
                                                                           : scenario::RowFormat::csv;
}

// A sweep output is read whole (merge, --resume): a million rows of a wide summary are well under this.
constexpr std::size_t kMaxSweepFileBytes = std::size_t{2} << 30;

/// Where the record that starts at `pos` ends: its '\n', or npos when it has none yet. A CSV cell may hold
/// a newline inside double quotes (RFC 4180; a tag's value can), so only a '\n' outside quotes ends a CSV
/// record; JSON Lines escape their newlines.
std::size_t record_end(std::string_view text, std::size_t pos, scenario::RowFormat format) {
  if (format != scenario::RowFormat::csv) return text.find('\n', pos);
  bool quoted = false;
  for (std::size_t i = pos; i < text.size(); ++i) {
    if (text[i] == '"') quoted = !quoted;  // a doubled quote inside a cell flips twice
    if (text[i] == '\n' && !quoted) return i;
  }
  return std::string_view::npos;
}

SweepFile read_sweep_file(const std::string& path, scenario::RowFormat format) {
  const std::string text = sim::read_input_file(path, {.what = "a sweep output (CSV or JSON Lines)",
                                                       .limit = "sweep outputs",
                                                       .max_bytes = kMaxSweepFileBytes});

  SweepFile file;
  std::size_t pos = 0;
  if (format == scenario::RowFormat::csv && !text.empty()) {
    const std::size_t end = record_end(text, 0, format);
    if (end == std::string::npos) {  // a torn header: nothing complete yet
      file.torn_header = text;
      file.torn_bytes = text.size();
      return file;
    }
    file.header = text.substr(0, end + 1);
    if (!file.header.starts_with("point,")) fail(path, "not a sweep output: the first column is not 'point'");
    pos = end + 1;
  }
  file.complete_bytes = pos;
  while (pos < text.size()) {
    const std::size_t end = record_end(text, pos, format);
    const bool last = end == std::string::npos || end + 1 == text.size();
    const std::string_view line(text.data() + pos, (end == std::string::npos ? text.size() : end + 1) - pos);
    const std::int64_t index = scenario::row_point_index(line, format);
    if (index < 0) {
      // Only the last line can be torn (rows are appended whole); anything else is not our file.
      if (last) break;
      fail(path, "line " + std::to_string(file.rows.size() + (file.header.empty() ? 1 : 2)) +
                     " is not a sweep row");
    }
    file.rows.emplace_back(index, std::string(line));
    pos += line.size();
    file.complete_bytes = pos;
  }
  file.torn_bytes = text.size() - file.complete_bytes;
  return file;
}

SweepOutput::SweepOutput(const std::string& path, const scenario::SweepTable& table, bool resume)
    : last_sync_(std::chrono::steady_clock::now()) {
  const std::string header = table.header();
  const scenario::RowFormat format = table.format();
  if (path.empty() || path == "-") {
    if (resume) throw InputError("--resume needs an output file (-o FILE)");
    fd_ = STDOUT_FILENO;
    write_all(fd_, header, "standard output");
    return;
  }
  owns_fd_ = true;
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  // Opened without truncating, then locked: a second sweep on the same file is refused before it can
  // touch a byte of the first one's rows. The lock goes with the descriptor, so a killed sweep frees it.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path, std::string("cannot create: ") + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    fail(path, error == EWOULDBLOCK ? "another trainsim sweep is writing this file; wait for it to finish or "
                                      "choose another -o"
                                    : std::string("cannot lock: ") + std::strerror(error));
  }
  if (resume && exists) {
    const SweepFile file = read_sweep_file(path, format);
    if (!file.header.empty() && file.header != header) {
      fail(path, "was written by a different sweep (its header differs); remove it or choose another -o");
    }
    for (const auto& [point, line] : file.rows) {
      const std::string_view found = scenario::row_fingerprint(line, format);
      if (found == table.fingerprint()) continue;
      fail(path,
           fmt::format("holds rows of a different sweep (point {} has fingerprint \"{}\", this sweep's is "
                       "{}): the scenario, a preset it uses, the fidelity or the sweep block changed; "
                       "remove it or choose another -o",
                       point, found, table.fingerprint()));
    }
    if (!file.torn_header.empty() && !header.starts_with(file.torn_header)) {
      fail(path,
           "is not a sweep output (its one line is not the start of this sweep's header); it is left "
           "as it is");
    }
    if (::ftruncate(fd_, static_cast<off_t>(file.complete_bytes)) != 0) {
      fail(path, std::string("cannot truncate the torn last row: ") + std::strerror(errno));
    }
    for (const auto& row : file.rows) done_.push_back(row.first);
    std::sort(done_.begin(), done_.end());
    done_.erase(std::unique(done_.begin(), done_.end()), done_.end());
    if (file.header.empty()) write_all(fd_, header, path);
    return;
  }
  if (::ftruncate(fd_, 0) != 0) fail(path, std::string("cannot truncate: ") + std::strerror(errno));
  write_all(fd_, header, path);
}

SweepOutput::~SweepOutput() {
  if (!owns_fd_ || fd_ < 0) return;
  ::fsync(fd_);
  ::close(fd_);
}

void SweepOutput::write_row(std::string_view line) {
  TRAINSIM_CHECK(!line.empty() && line.back() == '\n', "a sweep row is one whole line");
  write_all(fd_, line, "the sweep output");
  const auto now = std::chrono::steady_clock::now();
  if (owns_fd_ && now - last_sync_ >= kSyncEvery) {
    last_sync_ = now;
    ::fdatasync(fd_);
  }
}

void SweepOutput::sync() {
  if (owns_fd_) ::fsync(fd_);
}

}  // namespace trainsim::cli
