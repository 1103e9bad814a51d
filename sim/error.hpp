#pragma once
// The three error channels (DESIGN principle 8):
//  - bad input from the user throws InputError, caught only in main and in tests;
//  - an infeasible plan is a value with a reason (see models/step/step_report.hpp), never an exception;
//  - a broken invariant of ours is TRAINSIM_CHECK(cond, message), which throws InternalError.
// The library never calls exit().
#include <stdexcept>
#include <string>
#include <vector>

namespace trainsim {

/// One problem in the user's input, located as precisely as known.
struct Diagnostic {
  std::string file;      ///< "" when not from a file
  int line = 0;          ///< 1-based; 0 when unknown
  int column = 0;        ///< 1-based; 0 when unknown
  std::string key_path;  ///< dotted path into the scenario, e.g. "cluster.network.nic"; may be ""
  std::string message;   ///< what was expected, what was found

  /// "file:line:col: key.path: message" (parts that are unknown are left out).
  [[nodiscard]] std::string to_string() const;
};

/// Bad input: carries every problem found, not only the first.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(const std::string& message);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// A bug in trainsim: an invariant did not hold.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* condition, const std::string& message, const char* file, int line);

}  // namespace trainsim

#define TRAINSIM_CHECK(cond, message)                                          \
  do {                                                                         \
    if (!(cond)) ::trainsim::fail_check(#cond, (message), __FILE__, __LINE__); \
  } while (false)
