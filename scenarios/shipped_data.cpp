#include "scenarios/shipped_data.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "sim/error.hpp"

namespace trainsim::scenario {

namespace fs = std::filesystem;

namespace {

// Any object whose address dladdr can name: it lies in the code that holds this file, the binary or the
// Python module.
const char kThisCode = 0;

// The installation prefix of the code running this file, from where that code lies: PREFIX/bin/trainsim (the
// binary, /proc/self/exe), or PREFIX/lib/python3/dist-packages/trainsim/_core*.so (the Python module,
// tools/python, loaded by a python3 that lives anywhere); empty when the code lies elsewhere.
fs::path installed_prefix() {
  std::error_code ec;
  Dl_info info{};
  if (dladdr(&kThisCode, &info) != 0 && info.dli_fname != nullptr) {
    const fs::path object = fs::weakly_canonical(info.dli_fname, ec);
    if (!ec && object.extension() == ".so") {
      const fs::path package = object.parent_path();
      const fs::path site = package.parent_path();
      if (package.filename() != "trainsim" || site.filename() != "dist-packages") return {};
      return site.parent_path().parent_path().parent_path();  // dist-packages, python3, lib: PREFIX
    }
  }
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path();
}

// PREFIX/share/trainsim when it holds the presets; empty otherwise.
fs::path installed_root() {
  const fs::path prefix = installed_prefix();
  if (prefix.empty()) return {};
  std::error_code ec;
  const fs::path share = prefix / "share" / "trainsim";
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
