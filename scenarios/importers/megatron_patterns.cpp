#include "scenarios/importers/megatron_patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "models/spec/transformer_spec.hpp"
#include "sim/error.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::scenario {

namespace {

// Bounds on what a pattern may expand to, and on the work its repeats may take: no model has more layers
// or virtual stages than this, and a repeat count beyond it would only make the importer allocate or loop
// without limit. A layout longer than kMaxLayoutText is refused before it is read.
constexpr std::size_t kMaxExpanded = 1'000'000;
constexpr std::size_t kMaxRepeatWork = 4'000'000;
constexpr std::size_t kMaxLayoutText = 65'536;

[[noreturn]] void bad(std::string_view flag, std::string_view text, const std::string& why) {
  throw InputError(fmt::format("{} {}: {}", flag, sim::escaped_excerpt(std::string(text), 60), why));
}

// --moe-layer-freq's list expression: expr := term ('+' term)*; term := atom ('*' count)*;
// atom := '[' 0|1 (',' 0|1)* ']' | '(' expr ')'. The Python Megatron-LM evaluates, restricted to what
// builds a list of 0s and 1s.
class PatternParser {
 public:
  explicit PatternParser(std::string_view text) : text_(text) {}

  std::vector<int> parse() {
    std::vector<int> v = expr();
    skip_space();
    if (at_ < text_.size()) fail("unexpected '" + std::string(1, text_[at_]) + "'");
    return v;
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
  int depth_ = 0;
  std::size_t work_ = 0;  // elements copied by repeats and sums so far (kMaxRepeatWork)

  void spend(std::size_t elements) {
    work_ += elements;
    if (work_ > kMaxRepeatWork) fail("the expression repeats past a million layers' worth of work");
  }

  [[noreturn]] void fail(const std::string& why) const {
    bad("--moe-layer-freq", text_,
        fmt::format("{} at character {} (expected an integer or a list expression such as ([0]*3+[1]*58))",
                    why, at_ + 1));
  }
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  std::size_t count() {
    skip_space();
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(text_.data() + at_, text_.data() + text_.size(), n);
    if (ec != std::errc() || end == text_.data() + at_) fail("expected a whole number");
    at_ = static_cast<std::size_t>(end - text_.data());
    return n;
  }
  std::vector<int> expr() {
    std::vector<int> v = term();
    while (take('+')) {
      const std::vector<int> more = term();
      if (v.size() + more.size() > kMaxExpanded) fail("the list grows past a million layers");
      spend(more.size());
      v.insert(v.end(), more.begin(), more.end());
    }
    return v;
  }
  std::vector<int> term() {
    std::vector<int> v = atom();
    while (take('*')) {
      const std::size_t n = count();
      if (n == 0 || v.empty()) {  // an empty list stays empty, whatever the count
        v.clear();
        continue;
      }
      if (v.size() > kMaxExpanded / n) fail("the list grows past a million layers");
      spend(v.size() * n);
      std::vector<int> repeated;
      repeated.reserve(v.size() * n);
      for (std::size_t i = 0; i < n; ++i) repeated.insert(repeated.end(), v.begin(), v.end());
      v = std::move(repeated);
    }
    return v;
  }
  std::vector<int> atom() {
    if (take('(')) {
      if (++depth_ > 32) fail("parentheses nested too deep");
      std::vector<int> v = expr();
      --depth_;
      if (!take(')')) fail("expected ')'");
      return v;
    }
    if (!take('[')) fail("expected '[' or '('");
    std::vector<int> v;
    do {
      const std::size_t x = count();
      if (x > 1) fail("a layer is 1 (experts) or 0 (dense), not " + std::to_string(x));
      v.push_back(static_cast<int>(x));
    } while (take(','));
    if (!take(']')) fail("expected ']'");
    return v;
  }
};

// Megatron-LM's two unrolling passes (parse_str_to_list: re.sub of "\\(([^)]+)\\)\\*(\\d+)", then of
// "(.)\\*(\\d+)", each body repeated n times), as linear scans bounded in length: a group is '(' up to the
// next ')' with at least one character between, followed by '*' and digits; a symbol is any character
// followed by '*' and digits. Anything else is copied as it is (and refused later if not a symbol).
class LayoutUnroller {
 public:
  explicit LayoutUnroller(std::string_view layout) : layout_(layout) {}

  std::string groups(const std::string& text) const {
    std::string out;
    std::size_t close = 0;  // the first ')' after i, found once per ')' so the scan stays linear
    for (std::size_t i = 0; i < text.size();) {
      if (text[i] == '(') {
        if (close != std::string::npos && close <= i) close = text.find(')', i + 1);
        std::size_t after = 0, n = 0;
        if (close != std::string::npos && close > i + 1 && repeat_at(text, close + 1, after, n)) {
          append(out, std::string_view(text).substr(i + 1, close - i - 1), n);
          i = after;
          continue;
        }
      }
      append(out, std::string_view(text).substr(i, 1), 1);
      ++i;
    }
    return out;
  }

  std::string symbols(const std::string& text) const {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
      std::size_t after = 0, n = 1;
      if (repeat_at(text, i + 1, after, n)) {
        append(out, std::string_view(text).substr(i, 1), n);
        i = after;
      } else {
        append(out, std::string_view(text).substr(i, 1), 1);
        ++i;
      }
    }
    return out;
  }

 private:
  std::string_view layout_;

  // Whether "*digits" starts at `at`: the count in `n`, the index after it in `after`.
  bool repeat_at(const std::string& text, std::size_t at, std::size_t& after, std::size_t& n) const {
    if (at + 1 >= text.size() || text[at] != '*' || !std::isdigit(static_cast<unsigned char>(text[at + 1])))
      return false;
    std::size_t end = at + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    const auto [ptr, ec] = std::from_chars(text.data() + at + 1, text.data() + end, n);
    if (ec != std::errc()) too_long();
    (void)ptr;
    after = end;
    return true;
  }
  void append(std::string& out, std::string_view body, std::size_t n) const {
    if (n != 0 && body.size() > (kMaxExpanded - std::min(out.size(), kMaxExpanded)) / n) too_long();
    for (std::size_t k = 0; k < n; ++k) out.append(body);
  }
  [[noreturn]] void too_long() const {
    bad("--pipeline-model-parallel-layout", layout_, "expands past a million symbols");
  }
};

}  // namespace

std::vector<int> moe_layer_pattern(std::string_view text, std::int64_t layers) {
  std::vector<int> pattern;
  std::int64_t every = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), every);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (every < 1) bad("--moe-layer-freq", text, "an integer frequency must be 1 or more");
    if (layers > static_cast<std::int64_t>(kMaxExpanded))
      bad("--moe-layer-freq", text, "a pattern over more than a million layers is not read");
    for (std::int64_t i = 0; i < layers; ++i) pattern.push_back(i % every == 0 ? 1 : 0);
    return pattern;
  }
  pattern = PatternParser(text).parse();
  if (static_cast<std::int64_t>(pattern.size()) != layers) {
    bad("--moe-layer-freq", text,
        fmt::format("gives {} layers; --num-layers is {} (Megatron-LM requires one entry per layer)",
                    pattern.size(), layers));
  }
  return pattern;
}

MoeLayerSplit moe_layer_split(const std::vector<int>& pattern) {
  const auto first_moe = std::find(pattern.begin(), pattern.end(), 1);
  if (first_moe == pattern.end()) {
    throw InputError("--moe-layer-freq puts experts on no layer: drop --num-experts for a dense model");
  }
  const auto dense = static_cast<std::int64_t>(first_moe - pattern.begin());
  // The step: from the first MoE layer to the next one; with one MoE layer, from it to the end, so that it
  // is its step's last layer and no step follows (dense 1, step 2 holds [0, 0, 1, 0]).
  const auto next = std::find(first_moe + 1, pattern.end(), 1);
  const std::int64_t step =
      next != pattern.end() ? static_cast<std::int64_t>(next - first_moe)
                            : std::max<std::int64_t>(1, static_cast<std::int64_t>(pattern.end() - first_moe));
  MoeLayerSplit split{.dense_layers = dense - (step - 1), .moe_layer_step = step};
  // The model's own rule of which layers are dense (TransformerSpec::is_dense_layer) must give the pattern.
  model::TransformerSpec spec;
  spec.layers = static_cast<std::int64_t>(pattern.size());
  spec.experts = 1;
  spec.dense_layers = split.dense_layers;
  spec.moe_layer_step = step;
  bool matches = split.dense_layers >= 0;
  for (std::size_t i = 0; matches && i < pattern.size(); ++i)
    matches = (pattern[i] == 1) != spec.is_dense_layer(static_cast<std::int64_t>(i));
  if (!matches) {
    throw InputError(
        "--moe-layer-freq: this pattern of MoE and dense layers is not modelled: trainsim takes dense first "
        "layers followed by every n-th layer a MoE layer, the n-th of each n (model.dense_layers, "
        "model.moe_layer_step), e.g. ([0]*3+[1]*58) or ([0,1]*24)");
  }
  return split;
}

std::vector<int> layout_stage_layers(std::string_view layout, std::int64_t layers, std::int64_t mtp_layers,
                                     std::int64_t pp) {
  if (layout.size() > kMaxLayoutText)
    bad("--pipeline-model-parallel-layout", layout, "is longer than 64 KiB");
  std::string text(layout);
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  const LayoutUnroller unroller(layout);
  text = unroller.symbols(unroller.groups(text));
  // Megatron-LM's checks (PipelineParallelLayerLayout.validate_layer_layout): the embedding is the first
  // layer symbol and the loss the last, once each; every decoder layer and MTP module placed.
  const std::size_t first = text.find_first_not_of('|');
  const std::size_t last = text.find_last_not_of('|');
  std::vector<int> counts(1, 0);
  std::size_t embeddings = 0, losses = 0;
  std::int64_t mtp = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '|') {
      counts.push_back(0);
    } else if (c == 't') {
      ++counts.back();
    } else if (c == 'm') {
      ++mtp;
    } else if (c == 'E') {
      if (i != first || ++embeddings > 1)
        bad("--pipeline-model-parallel-layout", layout, "the embedding (E) opens the first stage, once");
    } else if (c == 'L') {
      if (i != last || ++losses > 1)
        bad("--pipeline-model-parallel-layout", layout, "the loss (L) closes the last stage, once");
    } else {
      bad("--pipeline-model-parallel-layout", layout,
          fmt::format("'{}' is not a layer symbol (E, t, m, L, '|', and (...)*n or x*n repeats)",
                      sim::escaped_excerpt(std::string(1, c), 4)));
    }
  }
  if (embeddings != 1 || losses != 1)
    bad("--pipeline-model-parallel-layout", layout, "names the embedding (E) and the loss (L) once each");
  std::int64_t total = 0;
  for (const int n : counts) total += n;
  if (total != layers) {
    bad("--pipeline-model-parallel-layout", layout,
        fmt::format("holds {} decoder layers (t); --num-layers is {}", total, layers));
  }
  if (mtp != mtp_layers) {
    bad("--pipeline-model-parallel-layout", layout,
        fmt::format("places {} MTP modules (m); --mtp-num-layers is {}", mtp, mtp_layers));
  }
  if (static_cast<std::int64_t>(counts.size()) % pp != 0) {
    bad("--pipeline-model-parallel-layout", layout,
        fmt::format("has {} stages, not a multiple of the {} pipeline stages", counts.size(), pp));
  }
  return counts;
}

}  // namespace trainsim::scenario
