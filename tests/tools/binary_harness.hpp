// Shared by the end-to-end tests of tests/tools (examples, golden, determinism, extreme inputs, long
// sequences): run the real trainsim binary (TRAINSIM_BINARY) as a child process with a wall-clock limit and
// an address-space limit, capture its output, and read what it wrote. Header-only: each test file is its own
// executable, and these helpers are small.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace trainsim::e2e {

namespace fs = std::filesystem;

using testing::TempDir;

/// Runs a shell command line (sweeps killed mid-way, pipes, working folders); returns its exit status, or
/// -1 when it did not exit normally.
inline int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The binary's path quoted for a shell command line.
inline std::string trainsim_command() {
  return std::string("'") + TRAINSIM_BINARY + "'";
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// What one run of the binary did. exit_code is -1 when it did not exit normally (killed by a signal,
/// including the kill at the time limit); signal then names the signal.
struct Outcome {
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;
  double seconds = 0.0;  // wall clock
  std::string out;       // standard output
  std::string err;       // standard error
};

/// Runs TRAINSIM_BINARY with `args`, killing it after `limit_s` seconds of wall clock; its address space is
/// capped at `memory_limit` bytes (RLIMIT_AS), so runaway allocation fails inside the child instead of
/// exhausting the machine (not in an AddressSanitizer build, see below). `file_size_limit` (RLIMIT_FSIZE,
/// with SIGXFSZ ignored) makes every write past that size fail as a full disk does (the captured standard
/// output and error count too: keep them under it). Output is captured through files in a private
/// temporary folder.
inline Outcome run_trainsim(const std::vector<std::string>& args, double limit_s = 30.0,
                            rlim_t memory_limit = rlim_t{8} << 30, rlim_t file_size_limit = RLIM_INFINITY) {
  const TempDir capture;
  const std::string out_path = capture.file("stdout");
  const std::string err_path = capture.file("stderr");
  std::vector<std::string> argv_text{TRAINSIM_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0 || err_fd < 0) _exit(120);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
#ifndef __SANITIZE_ADDRESS__
    // Not under AddressSanitizer: it reserves terabytes of address space for its shadow memory, so an
    // address-space cap would stop the sanitized binary from starting; there only the time limit applies.
    const rlimit memory{memory_limit, memory_limit};
    setrlimit(RLIMIT_AS, &memory);
#else
    (void)memory_limit;
#endif
    if (file_size_limit != RLIM_INFINITY) {
      signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG instead of killing the child
      const rlimit size{file_size_limit, file_size_limit};
      setrlimit(RLIMIT_FSIZE, &size);
    }
    execv(argv[0], argv.data());
    _exit(121);
  }

  Outcome outcome;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    REQUIRE(done >= 0);
    if (done == child) break;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed.count() > limit_s) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      outcome.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.out = read_file(out_path);
  outcome.err = read_file(err_path);
  return outcome;
}

/// A one-line description of an outcome for failure messages.
inline std::string describe(const Outcome& o) {
  std::ostringstream s;
  s << "exit " << o.exit_code << (o.signal != 0 ? ", signal " + std::to_string(o.signal) : std::string{})
    << (o.timed_out ? ", killed at the time limit" : "") << ", " << o.seconds
    << " s; stderr: " << o.err.substr(0, 400);
  return s.str();
}

/// Whether `file` is a cluster file (`trainsim cluster`) rather than a scenario: it has a top-level
/// `period:` key, which no scenario accepts.
inline bool is_cluster_file(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("period:", 0) == 0) return true;
  return false;
}

/// The shipped examples (scenarios/examples/*.yaml) that are scenarios (`cluster_files` false) or cluster
/// files (true), found when the test runs so that a new example is covered without editing a test; sorted
/// for a stable order.
inline std::vector<fs::path> example_files(bool cluster_files) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TRAINSIM_SOURCE_DIR) / "scenarios" / "examples"))
    if (entry.path().extension() == ".yaml" && is_cluster_file(entry.path()) == cluster_files)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::vector<fs::path> example_scenarios() {
  return example_files(false);
}

inline std::vector<fs::path> example_cluster_files() {
  return example_files(true);
}

}  // namespace trainsim::e2e
