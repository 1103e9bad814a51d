#include "report/page.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trainsim::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

/// Cells longer than this wrap (a reason, a "why"), so one long sentence does not widen the whole table.
constexpr std::size_t kLongCell = 48;

/// A cell that holds a figure ("64", "45.7 d", "$1.77M", "-3"): right-aligned, so digits line up.
bool reads_as_figure(const std::string& cell) {
  if (cell.empty()) return false;
  const char c = cell[0];
  return (c >= '0' && c <= '9') || ((c == '$' || c == '-' || c == '.') && cell.size() > 1);
}

}  // namespace

std::string cards(const std::vector<Card>& cards) {
  std::string out = R"(<div class="cards">)";
  for (const Card& c : cards) {
    out += fmt::format(
        R"(<div class="card"><div class="k">{}</div><div class="v">{}</div><div class="d">{}</div></div>)",
        escape(c.label), escape(c.value), escape(c.detail));
  }
  return out + "</div>";
}

std::string section(std::string_view heading, std::string_view intro, const std::string& content) {
  std::string out = fmt::format("<section><h2>{}</h2>", escape(heading));
  if (!intro.empty()) out += fmt::format(R"(<p class="intro">{}</p>)", escape(intro));
  return out + content + "</section>";
}

std::string html_table(const Table& table, std::size_t max_rows, const std::vector<int>& raw_html_columns) {
  std::string out = R"(<div class="scroll"><table><tr>)";
  for (const auto& c : table.columns) out += "<th>" + escape(c) + "</th>";
  out += "</tr>";
  const std::size_t shown = std::min(max_rows, table.rows.size());
  for (std::size_t r = 0; r < shown; ++r) {
    out += "<tr>";
    for (std::size_t c = 0; c < table.rows[r].size(); ++c) {
      const std::string& cell = table.rows[r][c];
      const bool raw = std::find(raw_html_columns.begin(), raw_html_columns.end(), static_cast<int>(c)) !=
                       raw_html_columns.end();
      out += reads_as_figure(cell)     ? "<td class=\"n\">"
             : cell.size() > kLongCell ? "<td class=\"wrap\">"
                                       : "<td>";
      out += raw ? cell : escape(cell);
      out += "</td>";
    }
    out += "</tr>";
  }
  out += "</table></div>";
  if (table.rows.size() > shown)
    out += fmt::format("<p>… {} more rows not shown.</p>", table.rows.size() - shown);
  return out;
}

std::string page(std::string_view kind, std::string_view title, std::string_view subtitle,
                 const std::string& body) {
  // DejaVu Sans first: the font the browser test's reference screenshots were taken with (Debian's
  // fonts-dejavu-core); elsewhere the system's own sans-serif.
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{1}</title>
<style>
body {{ font-family: "DejaVu Sans", system-ui, sans-serif; font-size: 14px; margin: 1.5em auto; max-width: 1000px;
  padding: 0 1em; color: #222; }}
h1 {{ font-size: 1.45em; margin-bottom: 0.1em; }} .sub {{ color: #666; margin-top: 0; }}
h2 {{ font-size: 1.12em; margin: 1.8em 0 0.3em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }}
h3 {{ font-size: 0.95em; margin: 0.8em 0 0.2em; }}
.intro {{ color: #555; margin: 0.2em 0 0.6em; font-size: 0.92em; }}
.cards {{ display: flex; flex-wrap: wrap; gap: 10px; margin: 1em 0; }}
.card {{ box-sizing: border-box; flex: 1 1 130px; border: 1px solid #ddd; border-radius: 6px; padding: 8px 10px; background: #fafafa; }}
.card .k {{ font-size: 0.8em; color: #666; text-transform: uppercase; letter-spacing: 0.03em; }}
.card .v {{ font-size: 1.5em; font-weight: bold; margin: 0.15em 0; }}
.card .d {{ font-size: 0.8em; color: #555; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border-bottom: 1px solid #e4e4e4; padding: 3px 8px; text-align: left; white-space: nowrap; }}
th {{ background: #f4f4f4; }} td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr.why td {{ color: #555; font-size: 0.92em; white-space: normal; padding: 0 8px 5px 22px; border-bottom: 1px solid #e4e4e4; }}
table.layouts tr:not(.why) td {{ border-bottom: none; padding-top: 5px; }}
td.wrap {{ white-space: normal; min-width: 16em; max-width: 34em; }}
.scroll {{ overflow-x: auto; }}
.legend {{ font-size: 0.85em; margin: 0.2em 0 0.4em; }} .legend span {{ margin-right: 1.2em; white-space: nowrap; }}
.sw {{ display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; vertical-align: -0.05em; }}
.grid {{ display: flex; flex-wrap: wrap; gap: 6px 14px; }}
.panel h3 {{ font-weight: normal; color: #444; }}
svg {{ display: block; max-width: 100%; height: auto; }}
svg text {{ font-family: inherit; }}
</style></head><body data-report="{0}">
<h1>{1}</h1>
<p class="sub">{2}</p>
{3}
<p style="color:#888;font-size:0.8em;margin-top:2em">Generated by trainsim report. Hover over a chart's marks for their values.</p>
</body></html>
)",
                     escape(kind), escape(title), escape(subtitle), body);
}

}  // namespace trainsim::report
