#include "sim/input_files.hpp"

#include <fstream>
#include <sstream>
#include <system_error>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace fs = std::filesystem;

std::string read_input_file(const fs::path& path, std::string_view what, std::size_t max_bytes) {
  const auto fail = [&](const std::string& message) {
    throw InputError(std::vector<Diagnostic>{{.file = path.string(), .message = message}});
  };
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("no such file");
  if (fs::is_directory(status)) fail("this is a folder; expected " + std::string(what));
  if (!fs::is_regular_file(status)) fail("this is not a regular file; expected " + std::string(what));
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) fail("cannot read the file: " + ec.message());
  if (size > max_bytes) {
    fail("the file is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
         " read for " + std::string(what));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  if (out.find('\0') != std::string::npos) fail("this is a binary file; expected " + std::string(what));
  return out;
}

}  // namespace trainsim::sim
