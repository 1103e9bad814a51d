#pragma once
// Internal to the scenarios library: a YAML document as a small owned tree with 1-based locations, built
// from yaml-cpp behind guards (size, binary data, tabs, depth, alias expansion, duplicate keys), and the
// typed readers every block converter uses. No yaml-cpp type appears here.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/quantity.hpp"
#include "sim/enum_names.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

struct YamlEntry;

/// One node. Keys of a mapping are scalars; their order is the file's.
struct YamlValue {
  enum class Kind { null, scalar, sequence, mapping };
  Kind kind = Kind::null;
  std::string scalar;              ///< the text as written (no YAML 1.1 conversion)
  bool quoted = false;             ///< the scalar was quoted: "…" or '…'
  std::vector<YamlValue> items;    ///< sequence
  std::vector<YamlEntry> entries;  ///< mapping
  std::shared_ptr<const std::string> file;
  int line = 0;    ///< 1-based; a mapping's null value (`key:` with nothing after it) stands at its key
  int column = 0;  ///< 1-based

  [[nodiscard]] const YamlValue* find(std::string_view key) const;
  [[nodiscard]] YamlValue* find(std::string_view key);
  [[nodiscard]] bool is_scalar() const { return kind == Kind::scalar; }
  [[nodiscard]] bool is_mapping() const { return kind == Kind::mapping; }
  [[nodiscard]] bool is_sequence() const { return kind == Kind::sequence; }
};

struct YamlEntry {
  std::string key;
  int key_line = 0;
  int key_column = 0;
  YamlValue value;
};

/// Collects every problem found; thrown together at the end.
class Diagnostics {
 public:
  void add(const YamlValue& at, const std::string& key_path, std::string message);
  void add(Diagnostic d) { list_.push_back(std::move(d)); }
  [[nodiscard]] bool empty() const { return list_.empty(); }
  [[nodiscard]] std::size_t size() const { return list_.size(); }
  /// Throws InputError with every diagnostic, in file order, when there is any.
  void throw_if_any() const;
  [[nodiscard]] const std::vector<Diagnostic>& list() const { return list_; }

 private:
  std::vector<Diagnostic> list_;
};

/// Parses one YAML document with every guard. Returns nullopt (and adds diagnostics) when it cannot;
/// an empty document is a diagnostic too ("the file is empty").
[[nodiscard]] std::optional<YamlValue> parse_yaml_tree(std::string_view text, const std::string& file_label,
                                                       Diagnostics& diagnostics);

/// Reads a whole file with the size cap and the file-type checks; nullopt plus a diagnostic on failure.
[[nodiscard]] std::optional<std::string> read_text_file(const std::string& path, Diagnostics& diagnostics);

/// YAML text of a node (flow style), which parse_yaml_tree reads back to an equal tree.
[[nodiscard]] std::string to_yaml_text(const YamlValue& value);
/// A string as a double-quoted YAML scalar.
[[nodiscard]] std::string yaml_quote(std::string_view text);

// Typed conversions of one node; on a problem they add a diagnostic naming `path` and return nullopt.
std::optional<std::int64_t> read_count(Diagnostics& d, const YamlValue& v, const std::string& path,
                                       double min, double max);
std::optional<double> read_number(Diagnostics& d, const YamlValue& v, const std::string& path, double min,
                                  double max);
std::optional<double> read_quantity(Diagnostics& d, const YamlValue& v, const std::string& path,
                                    Dimension dim, Bound bound = Bound::positive);
std::optional<bool> read_bool(Diagnostics& d, const YamlValue& v, const std::string& path);
std::optional<std::string> read_string(Diagnostics& d, const YamlValue& v, const std::string& path);
/// One of `choices` (case-sensitive), with a "did you mean" on a near miss; returns the index.
std::optional<std::size_t> read_choice(Diagnostics& d, const YamlValue& v, const std::string& path,
                                       const std::vector<std::string>& choices);

/// A list of mapping blocks: `read_item(item, item_path)` for each item with item_path "path[i]"; a value
/// that is not a list is one diagnostic, "expected <what>".
template <class ReadItem>
void read_list(Diagnostics& d, const YamlValue& v, const std::string& path, std::string_view what,
               ReadItem&& read_item) {
  if (!v.is_sequence()) {
    d.add(v, path, "expected " + std::string(what));
    return;
  }
  for (std::size_t i = 0; i < v.items.size(); ++i)
    read_item(v.items[i], path + "[" + std::to_string(i) + "]");
}

/// A mapping block with an exact key set (null, an empty block, reads as an empty mapping): construction
/// reports a non-mapping and every unknown key
/// (with a suggestion); the getters read optional keys and leave the target untouched when absent.
class MapReader {
 public:
  MapReader(Diagnostics& d, const YamlValue& node, std::string path, std::vector<std::string> allowed);

  [[nodiscard]] bool valid() const { return valid_; }
  [[nodiscard]] const YamlValue* get(std::string_view key) const;
  [[nodiscard]] bool has(std::string_view key) const { return get(key) != nullptr; }
  [[nodiscard]] std::string child_path(std::string_view key) const;
  /// Adds "missing key" for each absent key; returns whether all were present.
  bool require(std::initializer_list<std::string_view> keys);

  template <class Int>
  void count(std::string_view key, Int& out, double min, double max) {
    if (const YamlValue* v = get(key)) {
      if (auto r = read_count(d_, *v, child_path(key), min, max)) out = static_cast<Int>(*r);
    }
  }
  void number(std::string_view key, double& out, double min, double max);
  void number(std::string_view key, std::optional<double>& out, double min, double max);
  void quantity(std::string_view key, double& out, Dimension dim, Bound bound = Bound::positive);
  void quantity(std::string_view key, std::optional<double>& out, Dimension dim,
                Bound bound = Bound::positive);
  void boolean(std::string_view key, bool& out);
  void string(std::string_view key, std::string& out);
  template <class Enum, std::size_t N>
  void choice(std::string_view key, Enum& out, const EnumNames<Enum, N>& table) {
    if (const YamlValue* v = get(key)) {
      if (auto i = read_choice(d_, *v, child_path(key), names_of(table))) out = table[*i].value;
    }
  }

  template <class Enum>
  void choice(std::string_view key, Enum& out, const std::vector<std::pair<std::string, Enum>>& table) {
    if (const YamlValue* v = get(key)) {
      if (auto i = read_choice(d_, *v, child_path(key), names_of(table))) out = table[*i].second;
    }
  }

  [[nodiscard]] const YamlValue& node() const { return node_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] Diagnostics& diagnostics() const { return d_; }

 private:
  Diagnostics& d_;
  const YamlValue& node_;
  std::string path_;
  bool valid_ = false;
};

/// Places a rule's problem at the first of `keys` block `r` sets. A rule between keys may see a preset's
/// values and the block's overrides together, so the key at fault may be set only in the preset's file:
/// then the problem is placed at the block, under the first key's path, never dropped.
void add_at_first_key(Diagnostics& d, const MapReader& r, std::initializer_list<const char*> keys,
                      const std::string& message);

/// "a.b" joined, or "b" when `parent` is empty.
[[nodiscard]] std::string join_path(std::string_view parent, std::string_view key);

}  // namespace trainsim::scenario
