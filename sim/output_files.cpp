#include "sim/output_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& path, const std::string& what, int error) {
  throw InputError("cannot " + what + " '" + path.string() + "': " + std::strerror(error));
}

/// ".NAME.tmp-PID-N" in the folder of `target`: unique per process and call, and hidden from globs.
fs::path temporary_beside(const fs::path& target) {
  static std::atomic<unsigned> counter{0};
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  return folder / ("." + target.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" +
                   std::to_string(counter.fetch_add(1)));
}

void write_durably(const fs::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "create", errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(path.c_str());
      fail(path, "write", error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(path.c_str());
    fail(path, "flush", error);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(path.c_str());
    fail(path, "close", error);
  }
}

}  // namespace

OutputFiles::~OutputFiles() {
  if (committed_) return;
  for (const Entry& e : entries_) {
    if (!e.temporary.empty()) ::unlink(e.temporary.c_str());
  }
}

void OutputFiles::stage(const fs::path& path, std::string_view text) {
  const fs::path temporary = temporary_beside(path);
  write_durably(temporary, text);
  entries_.push_back({temporary, path});
}

fs::path OutputFiles::stage_path(const fs::path& path) {
  entries_.push_back({temporary_beside(path), path});
  return entries_.back().temporary;
}

void OutputFiles::remove_on_commit(const fs::path& path) {
  entries_.push_back({fs::path(), path});
}

void OutputFiles::commit() {
  for (const Entry& e : entries_) {
    std::error_code ec;
    if (!e.temporary.empty() && fs::exists(e.temporary, ec)) {
      if (::rename(e.temporary.c_str(), e.target.c_str()) != 0) fail(e.target, "replace", errno);
    } else if (::unlink(e.target.c_str()) != 0 && errno != ENOENT) {
      fail(e.target, "remove the earlier run's", errno);
    }
  }
  committed_ = true;
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  OutputFiles one;
  one.stage(path, text);
  one.commit();
}

void ensure_output_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (fs::exists(dir, ec)) throw InputError("cannot write into '" + dir.string() + "': it is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw InputError("cannot create the folder '" + dir.string() + "': " + ec.message());
}

}  // namespace trainsim::sim
