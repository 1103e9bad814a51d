#include "scenarios/region_block.hpp"

#include <cctype>

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {
namespace {

// YYYY-MM or YYYY-MM-DD: enough to say when a price was true, and sortable.
bool is_date(const std::string& s) {
  auto digits = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i) {
      if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) return false;
    }
    return true;
  };
  if (s.size() != 7 && s.size() != 10) return false;
  if (!digits(0, 4) || s[4] != '-' || !digits(5, 2)) return false;
  return s.size() == 7 || (s[7] == '-' && digits(8, 2));
}

std::optional<model::CitedNumber> read_cited(Diagnostics& d, const YamlValue& v, const std::string& path,
                                             Dimension dim) {
  MapReader r(d, v, path, {"value", "source", "date"});
  if (!r.valid()) return std::nullopt;
  const std::size_t before = d.size();
  r.require({"value", "source", "date"});
  model::CitedNumber n;
  r.quantity("value", n.value, dim, Bound::non_negative);
  r.string("source", n.source);
  r.string("date", n.date);
  if (r.has("source") && n.source.empty()) {
    d.add(*r.get("source"), r.child_path("source"),
          "name where the number comes from, or say \"assumed: <why>\"");
  }
  if (r.has("date") && !n.date.empty() && !is_date(n.date)) {
    d.add(*r.get("date"), r.child_path("date"),
          "expected a date as YYYY-MM or YYYY-MM-DD, found \"" + n.date + "\"");
  }
  if (d.size() != before) return std::nullopt;
  return n;
}

}  // namespace

model::RegionPrices read_region_file(Diagnostics& d, const YamlValue& v, const std::string& path) {
  model::RegionPrices region;
  MapReader r(d, v, path, {"name", "description", "gpu_hour", "storage", "egress", "energy", "carbon"});
  if (!r.valid()) return region;
  r.string("name", region.name);
  r.string("description", region.description);
  if (const YamlValue* g = r.get("gpu_hour")) {
    if (!g->is_mapping()) {
      d.add(*g, r.child_path("gpu_hour"),
            "expected a mapping of GPU preset names to prices, e.g. {h100-sxm: {value: \"$12.29/h\", "
            "source: \"…\", date: \"2023-07-27\"}}");
    } else {
      for (const YamlEntry& e : g->entries) {
        if (auto price =
                read_cited(d, e.value, join_path(r.child_path("gpu_hour"), e.key), Dimension::usd_per_hour)) {
          region.gpu_hour_usd.emplace_back(e.key, std::move(*price));
        }
      }
    }
  }
  auto cited = [&](const char* key, std::optional<model::CitedNumber>& out, Dimension dim) {
    if (const YamlValue* e = r.get(key)) out = read_cited(d, *e, r.child_path(key), dim);
  };
  cited("storage", region.storage_usd_per_gb_month, Dimension::usd_per_gb_month);
  cited("egress", region.egress_usd_per_gb, Dimension::usd_per_gb);
  cited("energy", region.energy_usd_per_kwh, Dimension::usd_per_kwh);
  cited("carbon", region.carbon_g_per_kwh, Dimension::grams_per_kwh);
  return region;
}

bool apply_region(const model::RegionPrices& region, const std::string& gpu, model::PricingSpec& pricing) {
  pricing.region = region.name;
  if (region.storage_usd_per_gb_month)
    pricing.storage.hot_usd_per_gb_month = region.storage_usd_per_gb_month->value;
  if (region.egress_usd_per_gb) pricing.egress_usd_per_gb = region.egress_usd_per_gb->value;
  if (region.energy_usd_per_kwh) pricing.energy.usd_per_kwh = region.energy_usd_per_kwh->value;
  if (region.carbon_g_per_kwh) pricing.energy.carbon_g_per_kwh = region.carbon_g_per_kwh->value;
  const model::CitedNumber* price = region.gpu_hour(gpu);
  if (price == nullptr) return false;
  pricing.gpu_hour_usd = price->value;
  return true;
}

std::string priced_gpus(const model::RegionPrices& region) {
  std::string out;
  for (const auto& [name, price] : region.gpu_hour_usd) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

}  // namespace trainsim::scenario
