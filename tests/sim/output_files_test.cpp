// Output files appear whole or not at all: staged beside their names, renamed together at commit.
#include "sim/output_files.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/error.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

struct Folder {
  fs::path path;
  Folder() {
    std::string name = (fs::temp_directory_path() / "trainsim-output-XXXXXX").string();
    REQUIRE(mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  [[nodiscard]] int entries() const {
    int n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path)) ++n;
    return n;
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_plain(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("staged files replace their names only at commit, all together") {
  Folder f;
  write_plain(f.path / "a.json", "old a");
  sim::OutputFiles set;
  set.stage(f.path / "a.json", "new a");
  set.stage(f.path / "b.csv", "new b");
  CHECK(read(f.path / "a.json") == "old a");  // untouched until commit
  CHECK_FALSE(fs::exists(f.path / "b.csv"));
  set.commit();
  CHECK(read(f.path / "a.json") == "new a");
  CHECK(read(f.path / "b.csv") == "new b");
  CHECK(f.entries() == 2);  // no temporaries left
}

TEST_CASE("a set that is not committed leaves the folder as it was") {
  Folder f;
  write_plain(f.path / "a.json", "old a");
  {
    sim::OutputFiles set;
    set.stage(f.path / "a.json", "new a");
    const fs::path trace = set.stage_path(f.path / "trace.json");
    sim::write_file_atomically(trace, "a trace");
  }
  CHECK(read(f.path / "a.json") == "old a");
  CHECK(f.entries() == 1);
}

TEST_CASE("files an earlier run left and this one does not produce are removed at commit") {
  Folder f;
  write_plain(f.path / "trace.json", "earlier trace");
  write_plain(f.path / "run.csv", "earlier timeline");
  sim::OutputFiles set;
  (void)set.stage_path(f.path / "trace.json");  // the writer wrote nothing (an infeasible step)
  set.remove_on_commit(f.path / "run.csv");
  set.stage(f.path / "summary.json", "{}");
  set.commit();
  CHECK_FALSE(fs::exists(f.path / "trace.json"));
  CHECK_FALSE(fs::exists(f.path / "run.csv"));
  CHECK(read(f.path / "summary.json") == "{}");
}

TEST_CASE("an output folder that cannot be one is an input error naming it") {
  Folder f;
  write_plain(f.path / "file", "x");
  CHECK_THROWS_WITH_AS(sim::ensure_output_folder(f.path / "file"), doctest::Contains("is not a folder"),
                       InputError);
  CHECK_THROWS_WITH_AS(sim::ensure_output_folder(f.path / "file" / "sub"),
                       doctest::Contains("cannot create the folder"), InputError);
  CHECK_THROWS_WITH_AS(sim::write_file_atomically(f.path / "missing" / "x.json", "{}"),
                       doctest::Contains("cannot create"), InputError);
  sim::ensure_output_folder(f.path / "new" / "nested");
  CHECK(fs::is_directory(f.path / "new" / "nested"));
}
