#pragma once
// One name table per enum, kept beside the enum: the spelling scenario files, CSV/JSON outputs and every
// printed table use. The first entry of a value is its canonical name (what to_string prints); a later
// entry of the same value is an alias that parsing also accepts.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainsim {

template <class Enum>
struct EnumName {
  std::string_view name;
  Enum value;
};

template <class Enum, std::size_t N>
using EnumNames = std::array<EnumName<Enum>, N>;

/// The canonical name of `value` in `table` (empty when the table lacks it).
template <class Enum, std::size_t N>
constexpr std::string_view name_in(const EnumNames<Enum, N>& table, Enum value) {
  for (const auto& entry : table)
    if (entry.value == value) return entry.name;
  return {};
}

/// The value `text` names in `table` (canonical name or alias), if any.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> parse_in(const EnumNames<Enum, N>& table, std::string_view text) {
  for (const auto& entry : table)
    if (entry.name == text) return entry.value;
  return std::nullopt;
}

/// Every name `table` accepts, canonical names and aliases, in the table's order: the list an error
/// message or --help offers.
template <class Enum, std::size_t N>
std::vector<std::string> names_of(const EnumNames<Enum, N>& table) {
  std::vector<std::string> names;
  names.reserve(N);
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

/// The same for a table that accepts a subset of an enum's names or adds aliases to them.
template <class Enum>
std::vector<std::string> names_of(const std::vector<std::pair<std::string, Enum>>& table) {
  std::vector<std::string> names;
  names.reserve(table.size());
  for (const auto& entry : table) names.push_back(entry.first);
  return names;
}

}  // namespace trainsim
