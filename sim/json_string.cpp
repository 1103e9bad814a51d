#include "sim/json_string.hpp"

#include <algorithm>

namespace trainsim::sim {

namespace {

bool needs_escape(char c) {
  return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  // Task names rarely hold a character JSON escapes: copy them whole (a trace has millions of names).
  if (std::none_of(text.begin(), text.end(), needs_escape)) {
    out += text;
    out += '"';
    return;
  }
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          constexpr std::string_view kHex = "0123456789abcdef";
          out += "\\u00";
          out += kHex[static_cast<unsigned char>(c) >> 4];
          out += kHex[static_cast<unsigned char>(c) & 0xf];
        } else {
          out += c;  // UTF-8 passes through unchanged
        }
    }
  }
  out += '"';
}

}  // namespace trainsim::sim
