// `cmake --install` into a temporary prefix, then the installed binary run from a folder outside the
// checkout: it must find its presets, examples and validation suites under PREFIX/share/trainsim
// (scenarios/shipped_data.hpp), not in the source tree it was built from.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/tools/binary_harness.hpp"

namespace fs = std::filesystem;
using trainsim::e2e::read_file;
using trainsim::e2e::shell;
using trainsim::e2e::TempDir;

namespace {

// Runs `command` in `cwd`; its standard output and error go to `log`.
int run_in(const fs::path& cwd, const std::string& command, const fs::path& log) {
  return shell("cd '" + cwd.string() + "' && " + command + " >'" + log.string() + "' 2>&1");
}

}  // namespace

TEST_CASE("an installed trainsim runs from outside the checkout on its installed presets and suites") {
  const TempDir prefix;
  const TempDir elsewhere;  // the working folder: no scenarios/ or presets here
  const fs::path log = elsewhere.path() / "log.txt";
  REQUIRE(run_in(elsewhere.path(),
                 "cmake --install '" + std::string(TRAINSIM_BUILD_DIR) + "' --prefix '" +
                     prefix.path().string() + "'",
                 log) == 0);
  const fs::path bin = prefix.path() / "bin" / "trainsim";
  const fs::path share = prefix.path() / "share" / "trainsim";
  REQUIRE(fs::exists(bin));
  for (const char* folder : {"gpus", "nodes", "models", "regions", "examples", "validation", "hf_configs"})
    CHECK_MESSAGE(fs::is_directory(share / folder), folder);

  // A GPU preset that exists only in the installed folder: listing it proves where presets are read.
  {
    std::string h100 = read_file(share / "gpus" / "h100-sxm.yaml");
    const std::string from = "name: h100-sxm";
    REQUIRE(h100.find(from) != std::string::npos);
    h100.replace(h100.find(from), from.size(), "name: installed-only-gpu");
    std::ofstream(share / "gpus" / "installed-only-gpu.yaml") << h100;
  }
  const std::string exe = "'" + bin.string() + "'";
  REQUIRE(run_in(elsewhere.path(), "TRAINSIM_PATH= " + exe + " list gpus", log) == 0);
  CHECK(read_file(log).find("installed-only-gpu") != std::string::npos);
  // Region price tables are read from the installed folder too.
  REQUIRE(run_in(elsewhere.path(), "TRAINSIM_PATH= " + exe + " list regions", log) == 0);
  CHECK(read_file(log).find((share / "regions" / "us-east.yaml").string()) != std::string::npos);

  // A shipped example, by its installed path.
  CHECK(run_in(elsewhere.path(),
               "TRAINSIM_PATH= " + exe + " run '" + (share / "examples" / "llama3-8b-64-h100.yaml").string() +
                   "' --fidelity analytic",
               log) == 0);
  CHECK(read_file(log).find("iteration_time") != std::string::npos);

  // A suite by name; an unknown one is bad input that names the known suites.
  CHECK(run_in(elsewhere.path(), "TRAINSIM_PATH= " + exe + " validate --suite korthikanti", log) == 0);
  CHECK(read_file(log).find("kor22-t5-175b-selective") != std::string::npos);
  CHECK(run_in(elsewhere.path(), "TRAINSIM_PATH= " + exe + " validate --suite nonesuch", log) == 2);
  const std::string unknown = read_file(log);
  CHECK(unknown.find("unknown validation suite 'nonesuch'") != std::string::npos);
  CHECK(unknown.find("korthikanti") != std::string::npos);
  CHECK(unknown.find((share / "validation").string()) != std::string::npos);
}
