#include "sim/input_files.hpp"

#include <fstream>
#include <system_error>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace fs = std::filesystem;

std::string read_input_file(const fs::path& path, const InputKind& kind) {
  const auto fail = [&](const std::string& message) {
    throw InputError(std::vector<Diagnostic>{{.file = path.string(), .message = message}});
  };
  const std::string what(kind.what);
  const std::string limit(kind.limit);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("no such file");
  if (fs::is_directory(status)) fail("this is a directory; expected " + what);
  if (!fs::is_regular_file(status)) fail("this is not a regular file; expected " + what);
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kind.max_bytes) {
    fail("the file is " + std::to_string(size) + " bytes; " + limit + " are limited to " +
         std::to_string(kind.max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot be opened for reading");
  // In chunks up to one byte past the limit: memory follows the file, not the limit.
  std::string text;
  if (!ec) text.reserve(static_cast<std::size_t>(size) + 1);
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in && text.size() <= kind.max_bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kind.max_bytes) {
    fail("the file is larger than the limit of " + std::to_string(kind.max_bytes) + " bytes for " + limit);
  }
  if (kind.refuse_nul && text.find('\0') != std::string::npos)
    fail("this is a binary file; expected " + what);
  return text;
}

}  // namespace trainsim::sim
