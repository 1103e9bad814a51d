#include "scenarios/campaign_block.hpp"

#include <cstdlib>
#include <vector>

#include "scenarios/block_fields.hpp"
#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

std::optional<model::ConvergenceSpec> read_convergence_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "convergence", field_keys(convergence_fields()));
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  require_fields(r, convergence_fields());
  model::ConvergenceSpec c;
  read_fields(r, convergence_fields(), c);
  if (c.next_target_loss && r.has("target_loss") && !(*c.next_target_loss < c.target_loss)) {
    d.add(*r.get("next_target_loss"), r.child_path("next_target_loss"),
          "must be a lower loss than target_loss (the target the campaign moves on to)");
  }
  if (const YamlValue* law = r.get("law")) {
    if (law->is_scalar()) {
      r.choice("law", c.law, model::kLossLawNames);
    } else {
      MapReader lr(d, *law, "convergence.law", field_keys(convergence_law_fields()));
      if (require_fields(lr, convergence_law_fields())) {
        c.law = model::LossLawName::custom;
        read_fields(lr, convergence_law_fields(), c);
        // The table's bounds for the scales include 0; the law refuses a 0 scale, a term that says nothing
        // (models/run/convergence.cpp), so it is refused here at its key.
        for (const auto& [key, value] : {std::pair{"A", c.a}, std::pair{"B", c.b}}) {
          if (const YamlValue* at = lr.get(key); at != nullptr && value <= 0)
            d.add(*at, lr.child_path(key), "must be above 0 (a term of the loss law)");
        }
      }
    }
  }
  if (const YamlValue* batch = r.get("batch")) {
    MapReader br(d, *batch, "convergence.batch", field_keys(convergence_batch_fields()));
    if (const YamlValue* critical = br.get("critical"); critical != nullptr) {
      if (!(critical->is_scalar() && critical->scalar == "auto")) {
        br.number("critical", c.critical_batch_tokens, 1, 1e15);
      }
    }
  }
  if (const YamlValue* eff = r.get("optimizer_efficiency")) {
    const bool named = eff->is_scalar() && (eff->scalar == "optimistic" || eff->scalar == "fair-tuned");
    char* end = nullptr;
    const bool numeric = eff->is_scalar() && !eff->scalar.empty() &&
                         (static_cast<void>(std::strtod(eff->scalar.c_str(), &end)), *end == '\0');
    if (named) {
      r.choice("optimizer_efficiency", c.optimizer_efficiency.basis, model::kEfficiencyBasisNames);
    } else if (!numeric) {
      d.add(
          *eff, r.child_path("optimizer_efficiency"),
          "expected optimistic, fair-tuned or a number (the optimizer's speedup over AdamW in tokens to the "
          "target)");
    } else {
      c.optimizer_efficiency.basis = model::EfficiencyBasis::given;
      r.number("optimizer_efficiency", c.optimizer_efficiency.speedup, 1e-3, 1e3);
    }
  }
  if (d.size() != before) return std::nullopt;
  return c;
}

std::optional<model::TuningSpec> read_tuning_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "tuning", field_keys(tuning_fields()));
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  model::TuningSpec t;  // trials 0: from the optimizer's search space (scenario_reader.cpp)
  read_fields(r, tuning_fields(), t);
  if (const YamlValue* trial = r.get("trial")) {
    MapReader tr(d, *trial, "tuning.trial", field_keys(tuning_trial_fields()));
    read_fields(tr, tuning_trial_fields(), t);
  }
  if (const YamlValue* stop = r.get("early_stopping")) {
    MapReader sr(d, *stop, "tuning.early_stopping", field_keys(tuning_early_stopping_fields()));
    if (sr.valid()) {
      require_fields(sr, tuning_early_stopping_fields());
      read_fields(sr, tuning_early_stopping_fields(), t);
    }
  }
  if (d.size() != before) return std::nullopt;
  return t;
}

std::optional<model::DataSpec> read_data_block(Diagnostics& d, const YamlValue& v) {
  MapReader r(d, v, "data", field_keys(data_fields()));
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  model::DataSpec data;
  read_fields(r, data_fields(), data);
  // Each mapping of the block: its path, its table.
  // Each prices an amount by a rate, so both are given: a rate without its amount would price 0 without a
  // word. Preprocessing and storage price the raw corpus, which they need too.
  const auto read_mapping = [&](std::string_view key, const FieldTable<model::DataSpec>& table) {
    if (const YamlValue* m = r.get(key)) {
      MapReader mr(d, *m, r.child_path(key), field_keys(table));
      require_fields(mr, table);
      read_fields(mr, table, data);
    }
  };
  read_mapping("preprocessing", data_preprocessing_fields());
  read_mapping("storage", data_storage_fields());
  read_mapping("transfer", data_transfer_fields());
  for (const char* key : {"preprocessing", "storage"}) {
    if (const YamlValue* m = r.get(key); m != nullptr && !r.has("raw"))
      d.add(*m, r.child_path(key), "prices the raw corpus: give data.raw, its size");
  }
  if (d.size() != before) return std::nullopt;
  return data;
}

std::vector<model::PersonSpec> read_people_block(Diagnostics& d, const YamlValue& v) {
  std::vector<model::PersonSpec> people;
  read_list(d, v, "people", "a list of roles, e.g. [{role: engineer, count: 4, rate: \"$110/h\"}]",
            [&](const YamlValue& item, const std::string& path) {
              MapReader r(d, item, path, field_keys(person_fields()));
              if (!r.valid()) return;
              require_fields(r, person_fields());
              model::PersonSpec p;
              read_fields(r, person_fields(), p);
              people.push_back(std::move(p));
            });
  return people;
}

std::string convergence_to_yaml(const std::optional<model::ConvergenceSpec>& c) {
  if (!c) return "";
  const FieldTable<model::ConvergenceSpec>& table = convergence_fields();
  std::string out = "convergence:\n  target_loss: " + field_value(table, "target_loss", *c) + "\n  law: ";
  if (c->law == model::LossLawName::custom) {
    out += "{" + flow_fields(convergence_law_fields(), *c) + "}\n";
  } else {
    out += std::string(name_in(model::kLossLawNames, c->law)) + "\n";
  }
  out += "  batch: {critical: " +
         (c->critical_batch_tokens ? format_number(*c->critical_batch_tokens) : std::string("auto")) + "}\n";
  const model::OptimizerEfficiencySpec& e = c->optimizer_efficiency;
  out += "  optimizer_efficiency: " +
         (e.basis == model::EfficiencyBasis::given
              ? format_number(e.speedup)
              : std::string(name_in(model::kEfficiencyBasisNames, e.basis))) +
         "\n";
  if (c->next_target_loss) out += "  next_target_loss: " + field_value(table, "next_target_loss", *c) + "\n";
  return out;
}

std::string tuning_to_yaml(const std::optional<model::TuningSpec>& t) {
  if (!t) return "";
  return "tuning:\n  trials: " + field_value(tuning_fields(), "trials", *t) + "\n  trial: {" +
         flow_fields(tuning_trial_fields(), *t) +
         "}\n  concurrent: " + field_value(tuning_fields(), "concurrent", *t) + "\n  early_stopping: {" +
         flow_fields(tuning_early_stopping_fields(), *t) + "}\n";
}

std::string data_to_yaml(const std::optional<model::DataSpec>& data) {
  if (!data) return "";
  return "data:\n" + block_fields(data_fields(), *data, "  ") + "  preprocessing: {" +
         flow_fields(data_preprocessing_fields(), *data) + "}\n  storage: {" +
         flow_fields(data_storage_fields(), *data) + "}\n  transfer: {" +
         flow_fields(data_transfer_fields(), *data) + "}\n";
}

std::string people_to_yaml(const std::vector<model::PersonSpec>& people) {
  if (people.empty()) return "";
  std::string out = "people:\n";
  for (const model::PersonSpec& p : people) out += "  - {" + flow_fields(person_fields(), p) + "}\n";
  return out;
}

}  // namespace trainsim::scenario
