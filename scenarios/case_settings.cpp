#include "scenarios/case_settings.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

namespace {

namespace fs = std::filesystem;

std::string stem_of(const std::string& file) {
  return fs::path(file).stem().string();
}

void read_case(Diagnostics& d, const YamlEntry& entry, const std::string& path, const std::string& file,
               CaseSettings& out) {
  MapReader r(d, entry.value, path, {"source", "set"});
  if (!r.valid()) return;
  r.require({"source", "set"});
  CaseSetting c{.case_name = entry.key, .line = entry.key_line, .column = entry.key_column};
  r.string("source", c.source);
  if (const YamlValue* set = r.get("set")) {
    const std::string set_path = r.child_path("set");
    if (!set->is_mapping() || set->entries.empty()) {
      d.add(*set, set_path,
            "expected a mapping of key.path: value, e.g. {framework.moe_dispatcher: hybridep}");
    } else {
      for (const YamlEntry& e : set->entries) {
        c.overrides.push_back(Override{.key_path = e.key,
                                       .yaml_value = to_yaml_text(e.value),
                                       .origin_file = file,
                                       .origin_line = e.value.line > 0 ? e.value.line : e.key_line,
                                       .origin_column = e.value.line > 0 ? e.value.column : e.key_column});
      }
    }
  }
  out.cases.push_back(std::move(c));
}

}  // namespace

std::string set_text(const Override& o) {
  return o.key_path + "=" + o.yaml_value;
}

const CaseSetting* CaseSettings::find(const std::string& case_file) const {
  const std::string name = stem_of(case_file);
  const auto it =
      std::find_if(cases.begin(), cases.end(), [&](const CaseSetting& c) { return c.case_name == name; });
  return it == cases.end() ? nullptr : &*it;
}

CaseSettings load_case_settings_text(std::string_view yaml, const std::string& file_label) {
  if (yaml.size() > max_case_settings_bytes) {
    throw InputError(file_label + ": a settings file is at most " + std::to_string(max_case_settings_bytes) +
                     " bytes");
  }
  Diagnostics d;
  CaseSettings out{.file = file_label};
  if (std::optional<YamlValue> tree = parse_yaml_tree(yaml, file_label, d)) {
    MapReader r(d, *tree, "", {"cases"});
    if (r.valid() && r.require({"cases"})) {
      const YamlValue& cases = *r.get("cases");
      if (!cases.is_mapping() || cases.entries.empty()) {
        d.add(cases, "cases", "expected a mapping of case names (case file stems) to {source, set}");
      } else {
        // Duplicate keys are refused by the parser, so each case is named once.
        for (const YamlEntry& e : cases.entries) read_case(d, e, join_path("cases", e.key), file_label, out);
      }
    }
  }
  d.throw_if_any();
  return out;
}

CaseSettings load_case_settings_file(const std::string& path) {
  Diagnostics d;
  std::optional<std::string> text = read_text_file(path, d);
  d.throw_if_any();
  return load_case_settings_text(*text, path);
}

void check_settings_match(const CaseSettings& settings, const std::vector<std::string>& case_files) {
  std::set<std::string> stems;
  for (const std::string& f : case_files) stems.insert(stem_of(f));
  std::vector<Diagnostic> missing;
  for (const CaseSetting& c : settings.cases) {
    if (stems.count(c.case_name) == 0) {
      missing.push_back(Diagnostic{settings.file, c.line, c.column, "cases." + c.case_name,
                                   "no such case among the " + std::to_string(case_files.size()) +
                                       " cases given (a case is named by its file's stem)"});
    }
  }
  if (!missing.empty()) throw InputError(std::move(missing));
}

CaseSettings load_case_settings_for(const std::string& path, const std::vector<std::string>& case_files) {
  CaseSettings settings = load_case_settings_file(path);
  check_settings_match(settings, case_files);
  return settings;
}

}  // namespace trainsim::scenario
