#pragma once
// A fresh folder per test case under the system temporary directory. mkdtemp picks a unique name, so test
// cases that ctest runs in parallel (each a process of its own) never share or remove each other's files,
// which a fixed name such as temp_directory_path()/"trainsim-x" would.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace trainsim::testing {

/// A fresh folder under the system temporary directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "trainsim-test-XXXXXX").string();
    REQUIRE(mkdtemp(name.data()) != nullptr);
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `text` to the file `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = file(name);
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace trainsim::testing
