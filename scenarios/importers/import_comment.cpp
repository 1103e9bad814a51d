#include "scenarios/importers/import_comment.hpp"

#include "sim/utf8_text.hpp"

namespace trainsim::scenario {

std::string comment_list(const std::string& title, const std::vector<std::string>& words) {
  if (words.empty()) return "";
  std::string out;
  std::string line = title;
  for (const std::string& word : words) {
    const std::string shown = sim::escaped_excerpt(word, 100);
    if (line.size() + shown.size() + 1 > 110) {
      out += line + "\n";
      line = "#  ";
    }
    line += " " + shown;
  }
  return out + line + "\n";
}

}  // namespace trainsim::scenario
