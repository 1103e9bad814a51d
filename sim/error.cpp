#include "sim/error.hpp"

namespace trainsim {

std::string Diagnostic::to_string() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ":" + std::to_string(line);
      if (column > 0) out += ":" + std::to_string(column);
    }
    out += ": ";
  }
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

namespace {
std::string join_diagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}
}  // namespace

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_diagnostics(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(const std::string& message)
    : std::runtime_error(message), diagnostics_{Diagnostic{.message = message}} {}

void fail_check(const char* condition, const std::string& message, const char* file, int line) {
  throw InternalError(std::string("internal error: ") + message + " (check `" + condition + "` failed at " +
                      file + ":" + std::to_string(line) + ")");
}

}  // namespace trainsim
