#include "sim/csv_field.hpp"

namespace trainsim::sim {

void append_csv_field(std::string& out, std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) {
    out += field;
    return;
  }
  out += '"';
  for (const char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string csv_field(std::string_view field) {
  std::string out;
  append_csv_field(out, field);
  return out;
}

}  // namespace trainsim::sim
