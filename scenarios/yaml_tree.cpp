#include "scenarios/yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "scenarios/loader.hpp"
#include "sim/input_files.hpp"
#include "sim/json_string.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::scenario {
namespace {

// A scenario nests four levels deep; anything past this is hostile or broken input.
constexpr int kMaxDepth = 32;
// Aliases share nodes in yaml-cpp, so a "billion laughs" document is small in memory but explodes when
// walked; the walk is bounded instead, in nodes and in the bytes of the scalars it copies (a few aliases
// of one large scalar stay under the node bound and still grow without limit).
constexpr std::int64_t kMaxNodes = 200000;
constexpr std::size_t kMaxExpandedBytes = 16 * max_scenario_bytes;

/// Offset of the start of a second YAML document (a `---` line after content, or content after a `...`
/// line), if any: yaml-cpp's Load reads the first document only.
std::optional<std::size_t> second_document(std::string_view text) {
  bool content = false;
  bool ended = false;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool marker = line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
    const std::size_t first = line.find_first_not_of(" \t");
    const bool blank = first == std::string_view::npos || line[first] == '#';
    if (marker && content) return start;
    if (line == "...") {
      ended = content;
    } else if (!blank && !marker && line[0] != '%') {
      if (ended) return start;
      content = true;
    } else if (marker && line.size() > 3 && line.find_first_not_of(" \t", 3) != std::string_view::npos &&
               line[line.find_first_not_of(" \t", 3)] != '#') {
      content = true;  // "--- value": a document that starts on its marker line
    }
    start = end + 1;
  }
  return std::nullopt;
}

/// Offset of a quote that opens a scalar and is still open at the end of the text, if any. A quote opens a
/// scalar only where a value can start (after ": ", "- ", "[", "{", ",", or at the start of a line).
std::optional<std::size_t> unterminated_quote(std::string_view text) {
  char prev = '\n';  // last non-space character outside a scalar, '\n' at the start of a line
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      prev = '\n';
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) {
      while (i < text.size() && text[i] != '\n') ++i;
      prev = '\n';
      continue;
    }
    const bool after_space = i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t');
    const bool value_start = prev == '\n' || prev == '[' || prev == '{' || prev == ',' ||
                             ((prev == ':' || prev == '-' || prev == '?') && after_space);
    if ((c == '"' || c == '\'') && value_start) {
      const std::size_t open = i;
      for (++i; i < text.size(); ++i) {
        if (c == '"' && text[i] == '\\') {
          ++i;
        } else if (text[i] == c) {
          if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
            ++i;  // '' is an escaped quote inside single quotes
          } else {
            break;
          }
        }
      }
      if (i >= text.size()) return open;
      prev = c;
      continue;
    }
    // Inside a plain scalar: skip to the next indicator that can end it.
    prev = c;
  }
  return std::nullopt;
}

/// Checks that run before yaml-cpp sees the text: it is text, and indentation has no tabs.
bool precheck(std::string_view text, const std::shared_ptr<const std::string>& file, Diagnostics& d) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = sim::utf8_length(text, i);
    if (n == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7F) {
      const auto [line, column] = sim::line_and_column(text, i);
      d.add(Diagnostic{*file, line, column, "",
                       "this is not a text file (byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) +
                           std::string(1, "0123456789abcdef"[c & 15]) + " at offset " + std::to_string(i) +
                           "); a scenario is YAML text in UTF-8"});
      return false;
    }
    i += n;
  }
  if (auto second = second_document(text)) {
    const auto [line, column] = sim::line_and_column(text, *second);
    d.add(Diagnostic{*file, line, column, "",
                     "a second YAML document starts here; a scenario file holds exactly one document"});
    return false;
  }
  // yaml-cpp 0.7 reads a quoted scalar left open at the end of the input as if it were closed.
  if (auto open = unterminated_quote(text)) {
    const auto [line, column] = sim::line_and_column(text, *open);
    d.add(Diagnostic{*file, line, column, "",
                     "a quoted string is never closed (missing " + std::string(1, text[*open]) + ")"});
    return false;
  }
  bool ok = true;
  int line = 1;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (std::size_t i = start; i < end && (text[i] == ' ' || text[i] == '\t'); ++i) {
      if (text[i] == '\t') {
        d.add(Diagnostic{*file, line, static_cast<int>(i - start) + 1, "",
                         "a tab in the indentation; YAML indents with spaces only"});
        ok = false;
        break;
      }
    }
    start = end + 1;
    ++line;
  }
  return ok;
}

/// yaml-cpp's nodes to the owned YamlValue tree, with locations and the size guards.
struct YamlCppConverter {
  Diagnostics& d;
  std::shared_ptr<const std::string> file;
  std::int64_t nodes = 0;
  std::size_t bytes = 0;  // scalar bytes copied so far, aliases counted each time they are walked
  bool aborted = false;

  void locate(YamlValue& out, const YAML::Mark& mark, int fallback_line, int fallback_column) const {
    out.file = file;
    if (mark.line >= 0 && !mark.is_null()) {
      out.line = mark.line + 1;
      out.column = mark.column + 1;
    } else {
      out.line = fallback_line;
      out.column = fallback_column;
    }
  }

  YamlValue convert(const YAML::Node& node, int depth, int fallback_line, int fallback_column) {
    YamlValue out;
    locate(out, node.Mark(), fallback_line, fallback_column);
    if (aborted) return out;
    if (++nodes > kMaxNodes) {
      d.add(out, "",
            "the document expands to more than " + std::to_string(kMaxNodes) +
                " nodes (an alias bomb?); a scenario is much smaller");
      aborted = true;
      return out;
    }
    if (depth > kMaxDepth) {
      d.add(out, "",
            "nesting deeper than " + std::to_string(kMaxDepth) + " levels; a scenario is much flatter");
      aborted = true;
      return out;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out.kind = YamlValue::Kind::null;
        break;
      case YAML::NodeType::Scalar:
        out.kind = YamlValue::Kind::scalar;
        bytes += node.Scalar().size();
        if (bytes > kMaxExpandedBytes) {
          d.add(out, "",
                "the document expands to more than " + std::to_string(kMaxExpandedBytes >> 20) +
                    " MiB of text (aliases of a large value?); a scenario is much smaller");
          aborted = true;
          return out;
        }
        out.scalar = node.Scalar();
        out.quoted = node.Tag() == "!";
        break;
      case YAML::NodeType::Sequence:
        out.kind = YamlValue::Kind::sequence;
        for (const auto& item : node) {
          out.items.push_back(convert(item, depth + 1, out.line, out.column));
          if (aborted) break;
        }
        break;
      case YAML::NodeType::Map: {
        out.kind = YamlValue::Kind::mapping;
        std::map<std::string, std::pair<int, int>> seen;
        for (const auto& pair : node) {
          YamlValue key = convert(pair.first, depth + 1, out.line, out.column);
          if (aborted) break;
          if (key.kind != YamlValue::Kind::scalar) {
            d.add(key, "",
                  "a mapping key must be a plain word, found a " +
                      std::string(key.kind == YamlValue::Kind::null ? "null" : "collection"));
            continue;
          }
          auto [it, inserted] = seen.emplace(key.scalar, std::pair{key.line, key.column});
          if (!inserted) {
            d.add(key, "",
                  "duplicate key " + in_quotes(key.scalar) + " (first given at line " +
                      std::to_string(it->second.first) + ":" + std::to_string(it->second.second) + ")");
            continue;
          }
          YamlEntry entry{key.scalar, key.line, key.column,
                          convert(pair.second, depth + 1, key.line, key.column)};
          // yaml-cpp marks an empty value (`dispatch:` with nothing after it) at the token that follows,
          // often the next line's key; a null has no text worth pointing at, so it stands at its key.
          if (entry.value.kind == YamlValue::Kind::null) {
            entry.value.line = key.line;
            entry.value.column = key.column;
          }
          out.entries.push_back(std::move(entry));
          if (aborted) break;
        }
        break;
      }
    }
    return out;
  }
};

bool plain_safe(std::string_view s) {
  if (s.empty()) return false;
  // Characters that start or end flow/indicator syntax, or that would change the scalar's meaning.
  static constexpr std::string_view kSpecial = "{}[],#&*!|>'\"%@`\n\r\t";
  for (char c : s) {
    if (kSpecial.find(c) != std::string_view::npos) return false;
  }
  if (s.front() == ' ' || s.back() == ' ' || s.front() == '-' || s.front() == '?' || s.front() == ':')
    return false;
  if (s.find(": ") != std::string_view::npos || s.back() == ':') return false;
  return true;
}

}  // namespace

const YamlValue* YamlValue::find(std::string_view key) const {
  for (const YamlEntry& e : entries) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

YamlValue* YamlValue::find(std::string_view key) {
  for (YamlEntry& e : entries) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

void Diagnostics::add(const YamlValue& at, const std::string& key_path, std::string message) {
  list_.push_back(
      Diagnostic{at.file ? *at.file : std::string(), at.line, at.column, key_path, std::move(message)});
}

void Diagnostics::throw_if_any() const {
  if (list_.empty()) return;
  // Files in the order their first problem was found, then by position within each file.
  std::map<std::string, std::size_t> file_rank;
  for (const Diagnostic& d : list_) file_rank.emplace(d.file, file_rank.size());
  std::vector<Diagnostic> sorted = list_;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple{file_rank.at(a.file), a.line, a.column} <
           std::tuple{file_rank.at(b.file), b.line, b.column};
  });
  throw InputError(std::move(sorted));
}

std::optional<std::string> read_text_file(const std::string& path, Diagnostics& d) {
  // Bad bytes are reported by the parse, with their line and column (precheck), not here.
  try {
    return sim::read_input_file(path, {.what = "a YAML scenario file",
                                       .limit = "scenario and preset files",
                                       .max_bytes = max_scenario_bytes,
                                       .refuse_nul = false});
  } catch (const InputError& e) {
    for (const Diagnostic& diagnostic : e.diagnostics()) d.add(diagnostic);
    return std::nullopt;
  }
}

std::optional<YamlValue> parse_yaml_tree(std::string_view text, const std::string& file_label,
                                         Diagnostics& d) {
  auto file = std::make_shared<const std::string>(file_label);
  if (text.size() > max_scenario_bytes) {
    d.add(
        Diagnostic{file_label, 0, 0, "",
                   "the input is larger than the limit of " + std::to_string(max_scenario_bytes) + " bytes"});
    return std::nullopt;
  }
  if (!precheck(text, file, d)) return std::nullopt;
  YAML::Node root;
  try {
    // Load, never LoadAll: yaml-cpp 0.7's LoadAll does not return on some inputs.
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    d.add(Diagnostic{
        file_label, e.mark.line + 1, e.mark.column + 1, "",
        "nesting deeper than " + std::to_string(e.depth()) + " levels; a scenario is much flatter"});
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    const int column = e.mark.is_null() ? 0 : e.mark.column + 1;
    d.add(Diagnostic{file_label, line, column, "", "invalid YAML: " + e.msg});
    return std::nullopt;
  }
  if (!root.IsDefined() || root.IsNull()) {
    const bool blank = std::all_of(text.begin(), text.end(),
                                   [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; });
    d.add(Diagnostic{file_label, 1, 1, "",
                     std::string(blank ? "the file is empty"
                                       : "the document holds no value (only comments or "
                                         "punctuation)") +
                         "; a scenario needs at least model:, cluster: and training:"});
    return std::nullopt;
  }
  YamlCppConverter converter{d, file};
  YamlValue tree = converter.convert(root, 0, 1, 1);
  if (converter.aborted) return std::nullopt;
  return tree;
}

std::string yaml_quote(std::string_view text) {
  std::string out;
  sim::append_json_string(out, text);  // a JSON string is a YAML double-quoted scalar
  return out;
}

std::string to_yaml_text(const YamlValue& value) {
  switch (value.kind) {
    case YamlValue::Kind::null:
      return "null";
    case YamlValue::Kind::scalar:
      return (!value.quoted && plain_safe(value.scalar)) ? value.scalar : yaml_quote(value.scalar);
    case YamlValue::Kind::sequence: {
      std::string out = "[";
      for (std::size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_yaml_text(value.items[i]);
      }
      return out + "]";
    }
    case YamlValue::Kind::mapping: {
      std::string out = "{";
      for (std::size_t i = 0; i < value.entries.size(); ++i) {
        if (i > 0) out += ", ";
        out += (plain_safe(value.entries[i].key) ? value.entries[i].key : yaml_quote(value.entries[i].key)) +
               ": " + to_yaml_text(value.entries[i].value);
      }
      return out + "}";
    }
  }
  return "null";
}

std::string join_path(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

namespace {

std::string describe(const YamlValue& v) {
  switch (v.kind) {
    case YamlValue::Kind::null:
      return "nothing";
    case YamlValue::Kind::scalar:
      return in_quotes(v.scalar);
    case YamlValue::Kind::sequence:
      return "a list";
    case YamlValue::Kind::mapping:
      return "a mapping";
  }
  return "nothing";
}

bool expect_scalar(Diagnostics& d, const YamlValue& v, const std::string& path, std::string_view what) {
  if (v.kind == YamlValue::Kind::scalar) return true;
  d.add(v, path, "expected " + std::string(what) + ", found " + describe(v));
  return false;
}

}  // namespace

std::optional<std::int64_t> read_count(Diagnostics& d, const YamlValue& v, const std::string& path,
                                       double min, double max) {
  if (!expect_scalar(d, v, path, "a whole number")) return std::nullopt;
  const QuantityResult r = try_parse_count(v.scalar, min, max);
  if (!r.ok()) {
    d.add(v, path, r.error);
    return std::nullopt;
  }
  return static_cast<std::int64_t>(r.value);
}

std::optional<double> read_number(Diagnostics& d, const YamlValue& v, const std::string& path, double min,
                                  double max) {
  if (!expect_scalar(d, v, path, "a number")) return std::nullopt;
  const QuantityResult r = try_parse_number(v.scalar, min, max);
  if (!r.ok()) {
    d.add(v, path, r.error);
    return std::nullopt;
  }
  return r.value;
}

std::optional<double> read_quantity(Diagnostics& d, const YamlValue& v, const std::string& path,
                                    Dimension dim, Bound bound) {
  if (!expect_scalar(d, v, path, expected_unit(dim))) return std::nullopt;
  const QuantityResult r = try_parse_quantity(v.scalar, dim, bound);
  if (!r.ok()) {
    d.add(v, path, r.error);
    return std::nullopt;
  }
  return r.value;
}

std::optional<bool> read_bool(Diagnostics& d, const YamlValue& v, const std::string& path) {
  if (!expect_scalar(d, v, path, "true or false")) return std::nullopt;
  if (v.scalar == "true") return true;
  if (v.scalar == "false") return false;
  d.add(v, path, "expected true or false, found " + in_quotes(v.scalar));
  return std::nullopt;
}

std::optional<std::string> read_string(Diagnostics& d, const YamlValue& v, const std::string& path) {
  if (!expect_scalar(d, v, path, "a string")) return std::nullopt;
  return v.scalar;
}

std::optional<std::size_t> read_choice(Diagnostics& d, const YamlValue& v, const std::string& path,
                                       const std::vector<std::string>& choices) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  if (!expect_scalar(d, v, path, "one of " + list)) return std::nullopt;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == v.scalar) return i;
  }
  std::string message = "unknown value " + in_quotes(v.scalar);
  const std::string suggestion = closest_match(v.scalar, choices);
  if (!suggestion.empty()) message += " (did you mean " + in_quotes(suggestion) + "?)";
  d.add(v, path, message + "; expected one of " + list);
  return std::nullopt;
}

MapReader::MapReader(Diagnostics& d, const YamlValue& node, std::string path,
                     std::vector<std::string> allowed)
    : d_(d), node_(node), path_(std::move(path)) {
  // An empty block (`parallelism:` with every line commented out) reads as an empty mapping.
  if (node.kind != YamlValue::Kind::mapping && node.kind != YamlValue::Kind::null) {
    d.add(node, path_, "expected a mapping of keys, found " + describe(node));
    return;
  }
  valid_ = true;
  for (const YamlEntry& e : node.entries) {
    if (std::find(allowed.begin(), allowed.end(), e.key) != allowed.end()) continue;
    std::string message = "unknown key " + in_quotes(e.key);
    std::string suggestion = closest_match(e.key, allowed);
    // A key of a block written at the top (`--set tp=8`): the block of this file that has it.
    for (const YamlEntry& block : node.entries) {
      if (!suggestion.empty() || !path_.empty()) break;
      if (block.value.is_mapping() && block.value.find(e.key) != nullptr)
        suggestion = block.key + "." + e.key;
    }
    if (!suggestion.empty()) {
      message += " (did you mean " + in_quotes(suggestion) + "?)";
    } else {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      message += "; known keys here: " + list;
    }
    // The value's file, not the mapping's: an override's key comes from the override, not the scenario.
    const auto& file = e.value.file ? e.value.file : node.file;
    d.add(Diagnostic{file ? *file : "", e.key_line, e.key_column, join_path(path_, e.key), message});
  }
}

const YamlValue* MapReader::get(std::string_view key) const {
  if (!valid_) return nullptr;
  const YamlValue* v = node_.find(key);
  return v;
}

std::string MapReader::child_path(std::string_view key) const {
  return join_path(path_, key);
}

bool MapReader::require(std::initializer_list<std::string_view> keys) {
  if (!valid_) return false;
  bool all = true;
  for (std::string_view key : keys) {
    if (!has(key)) {
      d_.add(node_, child_path(key), "missing key " + in_quotes(key));
      all = false;
    }
  }
  return all;
}

void MapReader::number(std::string_view key, double& out, double min, double max) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_number(d_, *v, child_path(key), min, max)) out = *r;
  }
}

void MapReader::number(std::string_view key, std::optional<double>& out, double min, double max) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_number(d_, *v, child_path(key), min, max)) out = *r;
  }
}

void MapReader::quantity(std::string_view key, double& out, Dimension dim, Bound bound) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_quantity(d_, *v, child_path(key), dim, bound)) out = *r;
  }
}

void MapReader::quantity(std::string_view key, std::optional<double>& out, Dimension dim, Bound bound) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_quantity(d_, *v, child_path(key), dim, bound)) out = *r;
  }
}

void MapReader::boolean(std::string_view key, bool& out) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_bool(d_, *v, child_path(key))) out = *r;
  }
}

void MapReader::string(std::string_view key, std::string& out) {
  if (const YamlValue* v = get(key)) {
    if (auto r = read_string(d_, *v, child_path(key))) out = *r;
  }
}

void add_at_first_key(Diagnostics& d, const MapReader& r, std::initializer_list<const char*> keys,
                      const std::string& message) {
  for (const char* key : keys) {
    if (const YamlValue* at = r.get(key)) {
      d.add(*at, r.child_path(key), message);
      return;
    }
  }
  d.add(r.node(), r.child_path(*keys.begin()), message);
}

}  // namespace trainsim::scenario
