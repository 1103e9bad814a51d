#pragma once
// The frame every page of `trainsim report` shares: one HTML file with inline CSS, no scripts and no
// network (it opens from a mail attachment or a shared drive as it is), headline cards, sections and
// tables. Charts are inline SVG (report/svg.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "report/table.hpp"

namespace trainsim::report {

/// Text made safe inside HTML and SVG elements and attribute values.
[[nodiscard]] std::string escape(std::string_view text);

/// A headline figure: what it is, its value in human units, and one line of context.
struct Card {
  std::string label;
  std::string value;
  std::string detail;
};
[[nodiscard]] std::string cards(const std::vector<Card>& cards);

/// A section: a heading, an optional sentence saying how to read what follows, and its content.
[[nodiscard]] std::string section(std::string_view heading, std::string_view intro,
                                  const std::string& content);

/// A table of text cells: cells that hold a figure (a number, "45.7 d", "$1.77M") are right-aligned; at most
/// `max_rows` rows, then a line saying how many were left out. Cells are escaped here; `raw_html_columns` are
/// inserted as they are.
[[nodiscard]] std::string html_table(const Table& table, std::size_t max_rows,
                                     const std::vector<int>& raw_html_columns = {});

/// The whole document: `kind` names the page ("run", "sweep", "search", "cluster"; the body's data-report
/// attribute, which the browser test reads), `subtitle` says what it was made from.
[[nodiscard]] std::string page(std::string_view kind, std::string_view title, std::string_view subtitle,
                               const std::string& body);

}  // namespace trainsim::report
