#include "scenarios/shipped_data.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/error.hpp"

namespace trainsim::scenario {

namespace fs = std::filesystem;

namespace {

// PREFIX/share/trainsim for a binary at PREFIX/bin/trainsim, when it holds the presets; empty otherwise.
fs::path installed_root() {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path share = exe.parent_path().parent_path() / "share" / "trainsim";
  return fs::is_directory(share / "gpus", ec) ? share : fs::path{};
}

const fs::path& installed() {
  static const fs::path kRoot = installed_root();
  return kRoot;
}

bool has_cases(const fs::path& folder) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml") return true;
  }
  return false;
}

}  // namespace

bool running_installed() {
  return !installed().empty();
}

std::string shipped_folder(ShippedData what) {
  const fs::path& share = installed();
  const fs::path source = TRAINSIM_SOURCE_DIR;
  const bool inst = !share.empty();
  switch (what) {
    case ShippedData::gpu_presets:
      return (inst ? share / "gpus" : source / "topologies" / "presets" / "gpus").string();
    case ShippedData::node_presets:
      return (inst ? share / "nodes" : source / "topologies" / "presets" / "nodes").string();
    case ShippedData::model_presets:
      return (inst ? share / "models" : source / "models" / "presets").string();
    case ShippedData::region_presets:
      return (inst ? share / "regions" : source / "models" / "regions").string();
    case ShippedData::validation:
      return (inst ? share / "validation" : source / "scenarios" / "validation").string();
    case ShippedData::examples:
      return (inst ? share / "examples" : source / "scenarios" / "examples").string();
    case ShippedData::hf_configs:
      return (inst ? share / "hf_configs" : source / "models" / "hf_configs").string();
  }
  return {};
}

std::vector<std::string> validation_suites() {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path root = shipped_folder(ShippedData::validation);
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && has_cases(it->path())) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  names.insert(names.begin(), "all");
  return names;
}

std::string validation_suite_folder(const std::string& name) {
  const std::vector<std::string> suites = validation_suites();
  if (std::find(suites.begin(), suites.end(), name) == suites.end()) {
    std::string known;
    for (const std::string& s : suites) known += (known.empty() ? "" : ", ") + s;
    throw InputError("unknown validation suite '" + name + "' (known: " + known + "; cases under " +
                     shipped_folder(ShippedData::validation) + ")");
  }
  const fs::path root = shipped_folder(ShippedData::validation);
  return (name == "all" ? root : root / name).string();
}

}  // namespace trainsim::scenario
