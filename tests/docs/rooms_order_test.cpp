// The include rule CONTRIBUTING.md states: the floors sim/ ← topologies/ ← models/ ← scenarios/ ← report/ ←
// tools/ each include only the floors below them, and inside models/ a room includes only the rooms listed
// before it in models/README.md's table of rooms. The rooms' order is read from that table, so the README and
// the code cannot drift apart.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path root = TRAINSIM_SOURCE_DIR;

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The rooms of models/README.md's first table, in its order: rows that start "| `name/` |".
std::vector<std::string> rooms_in_readme() {
  std::vector<std::string> rooms;
  std::istringstream lines(read_text(root / "models" / "README.md"));
  const std::regex row(R"(^\| `([a-z_]+)/` \|)");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, row)) {
      rooms.push_back(m[1]);
    } else if (!rooms.empty() && line.empty()) {
      break;  // the table ended
    }
  }
  return rooms;
}

// The `"folder/…"` paths a source file includes, as their first and second folder names.
struct Include {
  std::string floor;
  std::string room;
  std::string text;
};
std::vector<Include> project_includes(const fs::path& file) {
  std::vector<Include> out;
  std::istringstream lines(read_text(file));
  const std::regex include(R"re(^#include "(([a-z_]+)/([a-z_]+)[^"]*)")re");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_search(line, m, include)) out.push_back({m[2], m[3], m[1]});
  return out;
}

std::vector<fs::path> sources_under(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp")) out.push_back(entry.path());
  }
  return out;
}

std::ptrdiff_t index_of(const std::vector<std::string>& list, const std::string& name) {
  const auto it = std::find(list.begin(), list.end(), name);
  return it == list.end() ? -1 : it - list.begin();
}

}  // namespace

TEST_CASE("models/README.md lists the rooms in their order") {
  const std::vector<std::string> rooms = rooms_in_readme();
  REQUIRE(rooms.size() >= 6);
  CHECK(index_of(rooms, "spec") == 0);
  CHECK(index_of(rooms, "workload") < index_of(rooms, "step"));
  CHECK(index_of(rooms, "step") < index_of(rooms, "run"));
  CHECK(index_of(rooms, "run") < index_of(rooms, "report"));
}

TEST_CASE("a room of models/ includes only the rooms before it") {
  const std::vector<std::string> rooms = rooms_in_readme();
  int checked = 0;
  for (const fs::path& file : sources_under(root / "models")) {
    const std::string own = fs::relative(file, root / "models").begin()->string();
    const std::ptrdiff_t own_index = index_of(rooms, own);
    const std::string unlisted = "models/" + own + "/ is not a room of models/README.md";
    CHECK_MESSAGE(own_index >= 0, unlisted);
    for (const Include& inc : project_includes(file)) {
      if (inc.floor != "models") continue;
      ++checked;
      const std::ptrdiff_t index = index_of(rooms, inc.room);
      const std::string upward =
          fs::relative(file, root).string() + " includes " + inc.text + ", a room after its own";
      CHECK_MESSAGE(index <= own_index, upward);
    }
  }
  CHECK(checked > 100);  // the walk did read the includes
}

TEST_CASE("a floor includes only the floors below it") {
  const std::vector<std::string> floors{"sim", "topologies", "models", "scenarios", "report", "tools"};
  int checked = 0;
  for (std::size_t f = 0; f < floors.size(); ++f) {
    for (const fs::path& file : sources_under(root / floors[f])) {
      for (const Include& inc : project_includes(file)) {
        const std::ptrdiff_t index = index_of(floors, inc.floor);
        if (index < 0) continue;  // not a floor's path
        ++checked;
        const std::string upward =
            fs::relative(file, root).string() + " includes " + inc.text + ", a floor above its own";
        CHECK_MESSAGE(index <= static_cast<std::ptrdiff_t>(f), upward);
      }
    }
  }
  CHECK(checked > 300);
}
