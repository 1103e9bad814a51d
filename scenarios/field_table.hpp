#pragma once
// Internal to the scenarios library: a YAML block's keys as one table. Each row is a key with its kind,
// unit, bounds and a one-line help, and the member of the block's struct it reads into and is dumped from.
// The block's reader takes its allowed keys and its plain values from the table, the dump writes them from
// it, and tests/scenarios/block_fields_test.cpp checks every row against SPEC.md's table of the block.
// A key whose value has a shape of its own (a mapping, a list, one of two forms) is a `structured` row:
// listed for the allowed keys and the documentation, read and written by its block's own code, or by a
// read and a text of the row's own.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "scenarios/quantity.hpp"
#include "scenarios/yaml_tree.hpp"
#include "sim/enum_names.hpp"

namespace trainsim::scenario {

enum class FieldKind : std::uint8_t { quantity, number, count, flag, choice, text, structured };

/// What a row says of its key, without the member: all that the key list and the documentation need.
struct FieldInfo {
  std::string_view key;
  FieldKind kind = FieldKind::structured;
  Dimension dim = Dimension::seconds;  ///< quantity
  Bound bound = Bound::positive;       ///< quantity
  double min = 0, max = 0;             ///< number, count
  std::vector<std::string> choices;    ///< choice: every accepted name
  std::string_view shape;              ///< structured: the value's shape in words ("mapping", "list")
  std::string_view help;
  bool required = false;  ///< the block is an error without it ("missing key")
};

/// The value's kind in words: "quantity", "number", "integer", "boolean", "name", "text", or the shape.
[[nodiscard]] std::string field_kind_text(const FieldInfo& f);
/// The unit a quantity is written in ("s", "B/s", "$/h"); "" for other kinds.
[[nodiscard]] std::string field_unit(const FieldInfo& f);
/// The help, with " (required)" after it for a required key.
[[nodiscard]] std::string field_help(const FieldInfo& f);
/// The accepted values in words: "> 0", ">= 0", "1 to 1e+06", "sync, async"; "" for text and structured.
[[nodiscard]] std::string field_bounds(const FieldInfo& f);

/// A list value as the dump writes it, "[a, b, c]", each item as `name` writes it.
template <class Item, class Name>
std::string flow_list(const std::vector<Item>& items, Name name) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::string(name(items[i]));
  return out + "]";
}

/// Whether the dump writes a plain value always, or leaves it out at zero (zero meaning "not given").
enum class Written : std::uint8_t { always, unless_zero };

/// One row: the key's description, how its value is read into `Spec` and written back from it.
template <class Spec>
struct Field {
  FieldInfo info;
  std::function<void(MapReader&, Spec&)> read;  ///< empty for structured keys
  /// The value as YAML text that `read` reads back to the same value; nullopt when it is not written (an
  /// unset optional, zero under Written::unless_zero, or a structured key).
  std::function<std::optional<std::string>(const Spec&)> text;
};

template <class Spec>
using FieldTable = std::vector<Field<Spec>>;

namespace field_detail {

// The value a member holds, or nullptr when it is an unset optional (or zero where zero means unset).
template <class T>
const T* given(const T& v, Written w) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (w == Written::unless_zero && v == T{}) return nullptr;
  }
  return &v;
}
template <class T>
const T* given(const std::optional<T>& v, Written /*w*/) {
  return v ? &*v : nullptr;
}

template <class Spec, class Member, class Format>
std::function<std::optional<std::string>(const Spec&)> writer(Member Spec::*member, Written w,
                                                              Format format) {
  return [member, w, format](const Spec& s) -> std::optional<std::string> {
    if (const auto* v = given(s.*member, w)) return format(*v);
    return std::nullopt;
  };
}

}  // namespace field_detail

/// A quantity with a unit (double or optional<double>), written as format_quantity writes it.
template <class Spec, class Member>
Field<Spec> quantity_field(std::string_view key, Member Spec::*member, Dimension dim, Bound bound,
                           std::string_view help, Written w = Written::always) {
  return {FieldInfo{.key = key, .kind = FieldKind::quantity, .dim = dim, .bound = bound, .help = help},
          [=](MapReader& r, Spec& s) { r.quantity(key, s.*member, dim, bound); },
          field_detail::writer(member, w, [dim](double x) { return yaml_quote(format_quantity(x, dim)); })};
}

/// A bare number in [min, max] (double or optional<double>).
template <class Spec, class Member>
Field<Spec> number_field(std::string_view key, Member Spec::*member, double min, double max,
                         std::string_view help, Written w = Written::always) {
  return {FieldInfo{.key = key, .kind = FieldKind::number, .min = min, .max = max, .help = help},
          [=](MapReader& r, Spec& s) { r.number(key, s.*member, min, max); },
          field_detail::writer(member, w, [](double x) { return format_number(x); })};
}

/// A whole number in [min, max] (any integer type, or an optional one).
template <class Spec, class Member>
Field<Spec> count_field(std::string_view key, Member Spec::*member, double min, double max,
                        std::string_view help, Written w = Written::always) {
  return {FieldInfo{.key = key, .kind = FieldKind::count, .min = min, .max = max, .help = help},
          [=](MapReader& r, Spec& s) { r.count(key, s.*member, min, max); },
          field_detail::writer(member, w, [](auto x) { return std::to_string(x); })};
}

/// true or false.
template <class Spec>
Field<Spec> flag_field(std::string_view key, bool Spec::*member, std::string_view help) {
  return {FieldInfo{.key = key, .kind = FieldKind::flag, .help = help},
          [=](MapReader& r, Spec& s) { r.boolean(key, s.*member); },
          field_detail::writer(member, Written::always,
                               [](bool x) { return std::string(x ? "true" : "false"); })};
}

/// One of an enum's names (an Enum or an optional<Enum>, left unset when the key is absent); written by its
/// canonical name.
template <class Spec, class Member, class Enum, std::size_t N>
Field<Spec> choice_field(std::string_view key, Member Spec::*member, const EnumNames<Enum, N>& names,
                         std::string_view help) {
  static_assert(std::is_same_v<Member, Enum> || std::is_same_v<Member, std::optional<Enum>>);
  FieldInfo info{.key = key, .kind = FieldKind::choice, .choices = names_of(names), .help = help};
  const auto* table = &names;
  return {std::move(info),
          [=](MapReader& r, Spec& s) {
            if constexpr (std::is_same_v<Member, Enum>) {
              r.choice(key, s.*member, *table);
            } else if (r.has(key)) {
              Enum value = table->front().value;
              r.choice(key, value, *table);
              s.*member = value;
            }
          },
          field_detail::writer(member, Written::always,
                               [table](Enum x) { return std::string(name_in(*table, x)); })};
}

/// One of the names of a table that accepts a subset of an enum's names or adds aliases to them; written by
/// the first name the table gives the value.
template <class Spec, class Enum>
Field<Spec> choice_field(std::string_view key, Enum Spec::*member,
                         const std::vector<std::pair<std::string, Enum>>& names, std::string_view help) {
  FieldInfo info{.key = key, .kind = FieldKind::choice, .choices = names_of(names), .help = help};
  const auto* table = &names;
  return {std::move(info), [=](MapReader& r, Spec& s) { r.choice(key, s.*member, *table); },
          field_detail::writer(member, Written::always, [table](Enum x) {
            for (const auto& [name, value] : *table)
              if (value == x) return name;
            return table->front().first;
          })};
}

/// Free text, written quoted.
template <class Spec>
Field<Spec> text_field(std::string_view key, std::string Spec::*member, std::string_view help) {
  return {FieldInfo{.key = key, .kind = FieldKind::text, .help = help},
          [=](MapReader& r, Spec& s) { r.string(key, s.*member); },
          field_detail::writer(member, Written::always, [](const std::string& x) { return yaml_quote(x); })};
}

/// A row that is its description only, with neither read nor text: the key is an allowed key and
/// documented, and its block's own code reads it and writes it (or leaves it out of the dump). The one way
/// such a row is built; a caller may give it a read and a text of its own afterwards.
template <class Spec>
Field<Spec> info_only(FieldInfo info) {
  return {std::move(info), {}, {}};
}

/// A key its block's own code reads and writes; `shape` says what its value is.
template <class Spec>
Field<Spec> structured_field(std::string_view key, std::string_view shape, std::string_view help) {
  return info_only<Spec>(FieldInfo{.key = key, .kind = FieldKind::structured, .shape = shape, .help = help});
}

/// `field` as a key its block cannot do without.
template <class Spec>
Field<Spec> required(Field<Spec> field) {
  field.info.required = true;
  return field;
}

/// Adds "missing key" for each required key absent from `r`, in table order; whether all were present
/// (false for a block that is not a mapping, as MapReader::require).
template <class Spec>
bool require_fields(MapReader& r, const FieldTable<Spec>& table) {
  bool all = r.valid();
  for (const Field<Spec>& f : table)
    if (f.info.required) all = r.require({f.info.key}) && all;
  return all;
}

/// The table's keys in table order: the block's allowed keys.
template <class Spec>
std::vector<std::string> field_keys(const FieldTable<Spec>& table) {
  std::vector<std::string> keys;
  for (const Field<Spec>& f : table) keys.emplace_back(f.info.key);
  return keys;
}

/// The rows' descriptions in table order.
template <class Spec>
std::vector<FieldInfo> field_infos(const FieldTable<Spec>& table) {
  std::vector<FieldInfo> infos;
  for (const Field<Spec>& f : table) infos.push_back(f.info);
  return infos;
}

/// Reads every plain key present in `r` into `spec`; absent keys leave their member as it is.
template <class Spec>
void read_fields(MapReader& r, const FieldTable<Spec>& table, Spec& spec) {
  for (const Field<Spec>& f : table)
    if (f.read) f.read(r, spec);
}

namespace field_detail {

// The text `key`'s plain row writes for `spec`, nullopt when it writes none; a key the table has no plain
// row for is a programming error.
template <class Spec>
std::optional<std::string> written(const FieldTable<Spec>& table, std::string_view key, const Spec& spec) {
  for (const Field<Spec>& f : table)
    if (f.info.key == key && f.text) return f.text(spec);
  throw std::logic_error("no plain row for the key " + std::string(key));
}

// Each plain key that is written, as `prefix` "key: value" `end`: the keys `named` in the order it gives,
// the table's others in table order, before them (`named_last`) or after them.
template <class Spec>
std::string written_keys(const FieldTable<Spec>& table, const Spec& spec,
                         std::initializer_list<std::string_view> named, bool named_last,
                         std::string_view prefix, std::string_view end) {
  const auto entry = [&](std::string_view key, const std::string& value) {
    return std::string(prefix) + std::string(key) + ": " + value + std::string(end);
  };
  std::string in_order;
  for (const std::string_view key : named)
    if (const auto value = written(table, key, spec)) in_order += entry(key, *value);
  std::string others;
  for (const Field<Spec>& f : table) {
    if (!f.text || std::find(named.begin(), named.end(), f.info.key) != named.end()) continue;
    if (const auto value = f.text(spec)) others += entry(f.info.key, *value);
  }
  return named_last ? others + in_order : in_order + others;
}

}  // namespace field_detail

/// The text `key`'s row writes for `spec` (for a dump whose order is not the table's); a key the table has
/// no plain row for, or one not written, is a programming error.
template <class Spec>
std::string field_value(const FieldTable<Spec>& table, std::string_view key, const Spec& spec) {
  if (auto value = field_detail::written(table, key, spec)) return *std::move(value);
  throw std::logic_error("field_value: no value written for the key " + std::string(key));
}

// A dump's key order is frozen: dump_scenario's bytes are what a sweep's fingerprint hashes (sweep.hpp), and
// `--resume` and `merge` refuse rows of another fingerprint. Where a block's dump kept an order older than
// its table (the table groups a key with the keys it belongs to, and its order is the allowed keys' in
// messages), the dump names the keys it writes out of table order, in the order it writes them: `first`
// before the table's others, `last` after them.

/// The plain keys that are written, as "key: value" joined by ", " in table order (a flow mapping's body),
/// the keys in `first` before the others, in the order given.
template <class Spec>
std::string flow_fields(const FieldTable<Spec>& table, const Spec& spec,
                        std::initializer_list<std::string_view> first = {}) {
  const std::string out = field_detail::written_keys(table, spec, first, false, "", ", ");
  return out.empty() ? out : out.substr(0, out.size() - 2);
}

/// The plain keys that are written, one "<indent>key: value" line each, in table order (a block mapping),
/// the keys in `last` after all the others, in the order given.
template <class Spec>
std::string block_fields(const FieldTable<Spec>& table, const Spec& spec, std::string_view indent,
                         std::initializer_list<std::string_view> last = {}) {
  return field_detail::written_keys(table, spec, last, true, indent, "\n");
}

}  // namespace trainsim::scenario
