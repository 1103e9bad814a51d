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

#include "sim/csv_record.hpp"
#include "sim/error.hpp"
#include "sim/input_files.hpp"
#include "sim/utf8_text.hpp"

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

namespace {

/// Why `cell` is not a point index ("" when it is one, then in `index`).
std::string point_problem(std::string_view cell, std::int64_t& index) {
  index = scenario::point_index(cell);
  if (index >= 0) return "";
  return "point \"" + sim::escaped_excerpt(cell, 24) + "\" is not a point index (a whole number from 0 to " +
         std::to_string(scenario::max_sweep_points - 1) + ", the most points a sweep has)";
}

/// Why a whole CSV record of a sweep output is not a row of it ("" when it is one): CSV it is not, its
/// cells are not the header's, or its point is not a point index.
std::string csv_row_problem(const sim::CsvRecord& r, std::size_t columns, std::int64_t& index) {
  if (!r.error.empty()) return r.error;
  if (r.cells.size() != columns) {
    return fmt::format("has {} cells, the header {}", r.cells.size(), columns);
  }
  return point_problem(r.cells.front(), index);
}

/// The same for a JSON Lines record (its line end included): written as SweepTable::row writes it, point
/// first.
std::string jsonl_row_problem(std::string_view line, std::int64_t& index) {
  constexpr std::string_view kPrefix = "{\"point\":";
  if (!line.starts_with(kPrefix) || !line.ends_with("}\n")) {
    return "is not a sweep row (one JSON object a line, \"point\" first)";
  }
  line.remove_prefix(kPrefix.size());
  return point_problem(line.substr(0, line.find_first_of(",}")), index);
}

}  // namespace

SweepFile read_sweep_file(const std::string& path, scenario::RowFormat format) {
  const std::string text = sim::read_input_file(path, {.what = "a sweep output (CSV or JSON Lines)",
                                                       .limit = "sweep outputs",
                                                       .max_bytes = kMaxSweepFileBytes});
  const bool csv = format == scenario::RowFormat::csv;
  const auto fail_at = [&](std::size_t offset, const std::string& why) {
    throw InputError(std::vector<Diagnostic>{
        Diagnostic{.file = path, .line = sim::line_and_column(text, offset).first, .message = why}});
  };
  const auto refuse_crlf = [&](std::size_t offset) {
    fail_at(offset,
            "ends its lines in CRLF (\\r\\n), which trainsim never writes: an editor or a Windows "
            "tool converted it; convert it back (dos2unix) to resume or merge it");
  };

  SweepFile file;
  std::size_t pos = 0;
  std::size_t columns = 0;
  if (csv && !text.empty()) {
    const sim::CsvRecord header = sim::read_csv_record(text, 0);
    if (!header.ended) {  // a torn header: nothing complete yet
      file.torn_header = text;
      file.torn_bytes = text.size();
      return file;
    }
    if (header.cells.front() != "point") fail(path, "not a sweep output: the first column is not 'point'");
    if (header.next >= 2 && text[header.next - 2] == '\r') refuse_crlf(0);
    file.header = text.substr(0, header.next);
    columns = header.cells.size();
    pos = header.next;
  }
  file.complete_bytes = pos;
  // Rows are appended whole, each with one write: only the last can be torn, and a torn one has no line
  // end yet (outside quotes: a tag's value can make a multi-line quoted cell). Every record that has one is
  // a whole row or not this file's.
  while (pos < text.size()) {
    std::size_t next = 0;
    std::int64_t index = -1;
    std::string problem;
    if (csv) {
      const sim::CsvRecord r = sim::read_csv_record(text, pos);
      if (!r.ended) break;
      next = r.next;
      problem = csv_row_problem(r, columns, index);
    } else {
      const std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) break;
      next = end + 1;
      problem = jsonl_row_problem(std::string_view(text).substr(pos, next - pos), index);
    }
    if (next >= 2 && text[next - 2] == '\r') refuse_crlf(pos);
    if (!problem.empty()) fail_at(pos, "this row " + problem);
    file.rows.emplace_back(index, text.substr(pos, next - pos));
    pos = next;
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
