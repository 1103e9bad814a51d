// Every folder of the source tree is described where a reader looks for it: the README of the folder that
// holds it names it as `name/` (the top-level README's "Where things are" table for the top level). Build
// output and hidden folders are not part of the tree.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path root = TRAINSIM_SOURCE_DIR;

bool part_of_tree(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (name.empty() || name[0] == '.') return false;
  return !(dir.parent_path() == root && name.rfind("build", 0) == 0);
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> subfolders(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && part_of_tree(entry.path())) out.push_back(entry.path());
  return out;
}

bool holds_sources(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp")) return true;
  }
  return false;
}

// `name/` as the README writes a folder it describes.
bool names_folder(const std::string& readme, const fs::path& folder) {
  return readme.find("`" + folder.filename().string() + "/") != std::string::npos;
}

}  // namespace

TEST_CASE("the top-level README names every top-level folder") {
  const std::string readme = read_text(root / "README.md");
  for (const auto& dir : subfolders(root)) CHECK_MESSAGE(names_folder(readme, dir), dir.filename().string());
}

TEST_CASE("a folder's README names every folder inside it") {
  std::vector<fs::path> pending{root};
  int readmes = 0;
  while (!pending.empty()) {
    const fs::path dir = pending.back();
    pending.pop_back();
    const auto children = subfolders(dir);
    pending.insert(pending.end(), children.begin(), children.end());
    if (dir == root || !fs::exists(dir / "README.md")) continue;
    ++readmes;
    const std::string readme = read_text(dir / "README.md");
    for (const auto& child : children) {
      const std::string where = fs::relative(child, root).string() + " is not named in " +
                                fs::relative(dir / "README.md", root).string();
      CHECK_MESSAGE(names_folder(readme, child), where);
    }
  }
  CHECK(readmes >= 5);  // sim, topologies, models, scenarios, studies at least: the walk did run
}

TEST_CASE("every folder of sources outside tests/ has a README or is named by its parent's") {
  std::vector<fs::path> pending{root};
  int source_folders = 0;
  while (!pending.empty()) {
    const fs::path dir = pending.back();
    pending.pop_back();
    for (const auto& child : subfolders(dir))
      if (child != root / "tests") pending.push_back(child);
    if (dir == root || !holds_sources(dir)) continue;
    ++source_folders;
    const fs::path parent_readme =
        dir.parent_path() == root ? root / "README.md" : dir.parent_path() / "README.md";
    const bool described = fs::exists(dir / "README.md") ||
                           (fs::exists(parent_readme) && names_folder(read_text(parent_readme), dir));
    CHECK_MESSAGE(described, fs::relative(dir, root).string());
  }
  CHECK(source_folders >= 10);
}
