#include "scenarios/field_table.hpp"

namespace trainsim::scenario {

std::string field_kind_text(const FieldInfo& f) {
  switch (f.kind) {
    case FieldKind::quantity:
      return "quantity";
    case FieldKind::number:
      return "number";
    case FieldKind::count:
      return "integer";
    case FieldKind::flag:
      return "boolean";
    case FieldKind::choice:
      return "name";
    case FieldKind::text:
      return "text";
    case FieldKind::structured:
      return std::string(f.shape);
  }
  return "";
}

std::string field_unit(const FieldInfo& f) {
  if (f.kind != FieldKind::quantity) return "";
  // The unit the dump writes: format_quantity's text of one unit, without the number.
  std::string text = format_quantity(1, f.dim);
  const std::size_t one = text.find('1');
  text.erase(one, 1);
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

std::string field_help(const FieldInfo& f) {
  return std::string(f.help) + (f.required ? " (required)" : "");
}

std::string field_bounds(const FieldInfo& f) {
  switch (f.kind) {
    case FieldKind::quantity:
      return f.bound == Bound::positive ? "> 0" : ">= 0";
    case FieldKind::number:
    case FieldKind::count:
      return format_number(f.min) + " to " + format_number(f.max);
    case FieldKind::flag:
      return "true, false";
    case FieldKind::choice: {
      std::string names;
      for (const std::string& c : f.choices) names += (names.empty() ? "" : ", ") + c;
      return names;
    }
    case FieldKind::text:
    case FieldKind::structured:
      return "";
  }
  return "";
}

}  // namespace trainsim::scenario
