#include "sim/json_input.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {

namespace {

using Json = nlohmann::ordered_json;

/// A pointer into the text that records how far the parser has read, so that the SAX events below know
/// where in the file they are (nlohmann's lexer reads one character at a time and keeps its position to
/// itself).
class TrackedChar {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedChar(const char* at, const char** furthest) : at_(at), furthest_(furthest) {}
  reference operator*() const { return *at_; }
  TrackedChar& operator++() {
    ++at_;
    if (at_ > *furthest_) *furthest_ = at_;
    return *this;
  }
  TrackedChar operator++(int) {
    TrackedChar before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedChar& other) const { return at_ == other.at_; }
  bool operator!=(const TrackedChar& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  const char** furthest_;
};

/// Builds the document (nlohmann's own DOM builder) and stops at the first nesting past the cap or key
/// repeated in its object, remembering where.
class CheckedBuilder {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

  CheckedBuilder(Json& result, std::string_view text, const char** furthest, int max_depth)
      : dom_(result, false), text_(text), furthest_(furthest), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }

  bool start_object(std::size_t n) {
    if (!enter()) return false;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool end_object() {
    --depth_;
    keys_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool key(Json::string_t& k) {
    // The lexer has just read the key's closing quote; its opening quote is the first unescaped one
    // before (inside a JSON string every '"' is escaped).
    const std::size_t close = offset() - 1;
    std::size_t open = close;
    while (open > 0) {
      --open;
      if (text_[open] != '"') continue;
      std::size_t slashes = 0;
      while (open > slashes && text_[open - slashes - 1] == '\\') ++slashes;
      if (slashes % 2 == 0) break;
    }
    const auto [first, inserted] = keys_.back().emplace(k, open);
    if (!inserted) {
      error_offset = open;
      error = "the key \"" + escaped_excerpt(k) + "\" is given twice in one object (first at " +
              where(first->second) + "); a JSON file trainsim reads gives each key once";
      return false;
    }
    return dom_.key(k);
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    error_offset = position > 0 ? position - 1 : 0;
    // nlohmann's message repeats the token it last read ("; last read: '...'"), raw and unbounded: it is
    // left out here and replaced by an escaped excerpt of the text.
    std::string what = e.what();
    if (what.starts_with("[json.exception.")) what.erase(0, std::min(what.size(), what.find("] ") + 2));
    if (what.starts_with("parse error")) what.erase(0, std::min(what.size(), what.find(": ") + 2));
    const std::size_t read = what.find("; last read: '");
    if (read != std::string::npos) {
      const std::size_t expected = what.rfind("; expected ");
      what = what.substr(0, read) +
             (expected != std::string::npos && expected > read ? what.substr(expected) : "");
    }
    error = escaped_excerpt(what, 120);
    const std::size_t from = error_offset > 20 ? error_offset - 20 : 0;
    if (from < text_.size()) error += ", near \"" + escaped_excerpt(text_.substr(from, 40), 40) + "\"";
    return false;
  }

  /// Line and column of byte `at` of the text.
  [[nodiscard]] std::pair<int, int> line_column(std::size_t at) const { return line_and_column(text_, at); }

  std::string error;
  std::size_t error_offset = 0;

 private:
  [[nodiscard]] std::size_t offset() const { return static_cast<std::size_t>(*furthest_ - text_.data()); }
  [[nodiscard]] std::string where(std::size_t at) const {
    const auto [line, column] = line_column(at);
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }
  bool enter() {
    if (++depth_ <= max_depth_) return true;
    error_offset = offset() - 1;
    error = "nested deeper than " + std::to_string(max_depth_) +
            " levels of arrays and objects; no JSON file trainsim reads nests that deep";
    return false;
  }

  Dom dom_;
  std::string_view text_;
  const char** furthest_;
  int max_depth_;
  int depth_ = 0;
  std::vector<std::map<std::string, std::size_t>> keys_;  // per open object: key -> offset of its quote
};

}  // namespace

Json parse_json_input(std::string_view text, const std::string& file_label, int first_line, int max_depth) {
  Json result;
  const char* furthest = text.data();
  CheckedBuilder builder(result, text, &furthest, max_depth);
  const bool ok = Json::sax_parse(TrackedChar(text.data(), &furthest),
                                  TrackedChar(text.data() + text.size(), &furthest), &builder);
  if (ok) return result;
  const auto [line, column] = builder.line_column(builder.error_offset);
  throw InputError({Diagnostic{.file = file_label,
                               .line = line + first_line - 1,
                               .column = column,
                               .message = "not JSON trainsim reads: " + builder.error}});
}

std::string json_excerpt(const nlohmann::ordered_json& value, std::size_t max_bytes) {
  return escaped_excerpt(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                         max_bytes);
}

}  // namespace trainsim::sim
