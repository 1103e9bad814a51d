// `trainsim report` in a real browser: each kind of page (a run, two sweeps, a search, a shared cluster),
// made from the committed inputs in tests/tools/report_fixtures, is opened in headless Chromium (Debian's
// chromium, which `tools/dev test` installs). The test checks that the page raises no script error and
// logs nothing to the console, loads nothing from outside itself, draws the charts its kind must have (each
// with a size and marks), and looks like its reviewed reference screenshot in tests/tools/report_golden
// within a tolerance (tests/support/png.hpp). Every screenshot taken is left in
// build/<config>/report_screenshots for review, with a map of the blocks that differ when one does.
//
// After a deliberate change to the pages, `tools/update-golden --screenshots` retakes the references;
// review them (they are images: look at them) before committing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/png.hpp"
#include "tests/tools/binary_harness.hpp"

using namespace trainsim;
namespace fs = std::filesystem;

namespace {

/// The browser: $TRAINSIM_CHROMIUM, else Debian's /usr/bin/chromium.
std::string chromium() {
  const char* env = std::getenv("TRAINSIM_CHROMIUM");
  return env != nullptr && *env != '\0' ? env : "/usr/bin/chromium";
}

/// The viewport every screenshot is taken at. The reference images are this wide and as tall as each case
/// says: the top of the page, where its charts are.
constexpr int kWidth = 1000;
/// Fraction of 4x4 blocks allowed to differ from the reference: 0.5 % of a 1000 x 2000 screenshot is 625
/// blocks, a patch of about 100 x 100 pixels. A changed figure in a card (a few glyphs, some 30 blocks)
/// passes, as does text antialiased a little differently by another Chromium build; a missing chart, a
/// moved axis or a reflowed section does not.
constexpr double kMaxBlocksDiffering = 0.005;

/// Runs when the page has been parsed: records script errors, then writes into a <pre id="probe"> as JSON
/// (which --dump-dom prints) the page's kind, the errors, each chart's size and marks, and every element
/// that refers to another file (src or href: a self-contained page has none). Inserted first in <head> of
/// a copy of the page, so that it sees errors of any script after it.
constexpr const char* kProbe = R"(<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
document.addEventListener('DOMContentLoaded', () => {
  const charts = [...document.querySelectorAll('svg[data-chart]')].map(s => {
    const r = s.getBoundingClientRect();
    return {id: s.dataset.chart, width: r.width, height: r.height, marks: s.querySelectorAll('.mark').length};
  });
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify({kind: document.body.dataset.report, errors: window.__errors, charts,
    external: [...document.querySelectorAll('[src], [href]')].map(e => e.getAttribute('src') || e.getAttribute('href'))});
  document.body.appendChild(pre);
});
</script>)";

std::string unescape_html(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1))
      s.replace(at, std::strlen(from), to);
  }
  return s;
}

/// A path as one word of a shell command line.
std::string shell_word(const fs::path& p) {
  return "'" + p.string() + "'";
}

struct Case {
  std::string name;                 ///< screenshot file stem
  std::string input;                ///< under tests/tools/report_fixtures
  std::string kind;                 ///< the page's data-report
  int height;                       ///< screenshot height
  std::vector<std::string> charts;  ///< data-chart ids the page must draw, each with marks
  /// The command that writes the page (its -o PAGE added), with inputs under report_fixtures; empty:
  /// `trainsim report INPUT`.
  std::vector<std::string> command = {};
};

void check_in_browser(const Case& c) {
  REQUIRE_MESSAGE(fs::exists(chromium()), "no browser at " << chromium()
                                                           << ": `tools/dev test` installs Debian's chromium "
                                                              "(or set TRAINSIM_CHROMIUM)");
  const e2e::TempDir tmp;
  const fs::path fixtures = fs::path(TRAINSIM_SOURCE_DIR) / "tests/tools/report_fixtures";
  const fs::path html = tmp.path() / (c.name + ".html");
  std::vector<std::string> command = {"report", (fixtures / c.input).string()};
  if (!c.command.empty()) {
    command = {c.command.front()};
    for (std::size_t i = 1; i < c.command.size(); ++i)
      command.push_back(c.command[i].ends_with(".yaml") ? (fixtures / c.command[i]).string() : c.command[i]);
  }
  command.insert(command.end(), {"-o", html.string()});
  const auto made = e2e::run_trainsim(command, 120);
  REQUIRE_MESSAGE(made.exit_code == 0, e2e::describe(made));

  // Chromium's own flags: no sandbox (CI runs as root in a container), no GPU, a private profile, no
  // scrollbars; --disable-dev-shm-usage because containers give /dev/shm little room.
  const std::string browser =
      "timeout 120 " + shell_word(chromium()) +
      " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars"
      " --force-device-scale-factor=1 --no-first-run --user-data-dir=" +
      shell_word(tmp.path() / "profile") + " --window-size=" + std::to_string(kWidth) + "," +
      std::to_string(c.height);

  // 1. What the page does in the browser: the probe's report and the console.
  std::string page = e2e::read_file(html);
  const std::size_t head = page.find("<head>");
  REQUIRE(head != std::string::npos);
  page.insert(head + 6, kProbe);
  const fs::path probed = tmp.path() / "probed.html";
  std::ofstream(probed) << page;
  const fs::path dom = tmp.path() / "dom.html", log = tmp.path() / "console.log";
  REQUIRE(e2e::shell(browser + " --enable-logging=stderr --v=0 --dump-dom " +
                     shell_word("file://" + probed.string()) + " > " + shell_word(dom) + " 2> " +
                     shell_word(log)) == 0);
  const std::string dumped = e2e::read_file(dom);
  const std::size_t open = dumped.find("<pre id=\"probe\">"), close = dumped.find("</pre>", open);
  REQUIRE_MESSAGE(open != std::string::npos,
                  "the probe did not run; the browser said: " << e2e::read_file(log).substr(0, 2000));
  const auto probe = nlohmann::json::parse(unescape_html(dumped.substr(open + 16, close - open - 16)));
  CHECK(probe["kind"] == c.kind);
  CHECK_MESSAGE(probe["errors"].empty(), "script errors: " << probe["errors"].dump());
  CHECK_MESSAGE(probe["external"].empty(), "the page loaded other files: " << probe["external"].dump());
  // Every message a page logs, an uncaught error included, shows in Chromium's log as "INFO:CONSOLE:<line>]";
  // this page has no reason to log.
  std::ifstream console(log);
  for (std::string line; std::getline(console, line);) {
    if (line.find(":CONSOLE") != std::string::npos) FAIL_CHECK("the page logged: " << line);
  }
  for (const std::string& id : c.charts) {
    const auto it = std::find_if(probe["charts"].begin(), probe["charts"].end(),
                                 [&](const auto& ch) { return ch["id"] == id; });
    REQUIRE_MESSAGE(it != probe["charts"].end(), "no chart " << id << " among " << probe["charts"].dump());
    CHECK_MESSAGE((*it)["width"].get<double>() > 100, id);
    CHECK_MESSAGE((*it)["height"].get<double>() > 30, id);
    CHECK_MESSAGE((*it)["marks"].get<int>() > 0, id << " draws no marks");
  }

  // 2. How it looks: a screenshot against the reviewed reference.
  const fs::path shots = fs::path(TRAINSIM_BUILD_DIR) / "report_screenshots";
  fs::create_directories(shots);
  const fs::path shot = shots / (c.name + ".png"), diff = shots / (c.name + ".diff.png");
  fs::remove(shot);
  fs::remove(diff);  // a map left by an earlier failure would mislead
  REQUIRE(e2e::shell(browser + " --screenshot=" + shell_word(shot) + " " +
                     shell_word("file://" + html.string()) + " > /dev/null 2>&1") == 0);
  const fs::path golden = fs::path(TRAINSIM_SOURCE_DIR) / "tests/tools/report_golden" / (c.name + ".png");
  const char* update = std::getenv("TRAINSIM_UPDATE_SCREENSHOTS");
  if (update != nullptr && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    fs::copy_file(shot, golden, fs::copy_options::overwrite_existing);
    MESSAGE("wrote " << golden.string());
    return;
  }
  std::string error;
  const auto actual = png::read(shot.string(), error);
  REQUIRE_MESSAGE(actual, error);
  const auto expected = png::read(golden.string(), error);
  REQUIRE_MESSAGE(expected, error << " (tools/update-golden --screenshots takes the reference screenshots)");
  const png::Difference d = png::compare(*expected, *actual);
  MESSAGE(c.name << ": " << 100 * d.blocks_differing << " % of 4x4 blocks differ from the reference");
  if (d.blocks_differing > kMaxBlocksDiffering && !d.map.rgb.empty()) png::write(diff.string(), d.map);
  CHECK_MESSAGE(d.blocks_differing <= kMaxBlocksDiffering,
                c.name << ": " << 100 * d.blocks_differing << " % of blocks differ from " << golden.string()
                       << "; see " << shot.string() << " and " << diff.string());
}

}  // namespace

TEST_CASE(
    "browser: a run's page shows headline cards, the step, the pipeline timeline, memory, bill and cost") {
  check_in_browser({"run",
                    "run",
                    "run",
                    2000,
                    {"step-time", "pipeline-timeline", "memory-per-stage", "memory-breakdown", "bill",
                     "cumulative-cost"}});
}

TEST_CASE("browser: a sweep over nodes and pipeline depth puts both keys on axes, with its Pareto front") {
  check_in_browser({"sweep-nodes",
                    "nodes-sweep.csv",
                    "sweep",
                    2000,
                    {"pareto", "sweep-cluster.nodes-run_time", "sweep-cluster.nodes-cost_total",
                     "sweep-cluster.nodes-memory_per_gpu", "sweep-parallelism.pp-run_time"}});
}

TEST_CASE("browser: a sweep of checkpoint interval and optimizer uses a duration axis and categories") {
  check_in_browser(
      {"sweep-checkpoint",
       "checkpoint-sweep.csv",
       "sweep",
       1500,
       {"pareto", "sweep-checkpoint.interval-run_time", "sweep-training.optimizer-memory_per_gpu"}});
}

TEST_CASE("browser: a search's page shows the Pareto front and the top layouts with what bounds each") {
  check_in_browser({"search", "search.csv", "search", 1300, {"pareto", "layout-steps"}});
}

TEST_CASE("browser: a shared cluster's page shows nodes, waiting jobs and teams") {
  check_in_browser(
      {"cluster", "cluster", "cluster", 1300, {"cluster-nodes", "cluster-waiting", "cluster-teams"}});
}

TEST_CASE(
    "browser: compare puts an H100 and a B200 option side by side with their bands and what bounds each") {
  check_in_browser({"compare",
                    "compare",
                    "compare",
                    1300,
                    {"compare-time-cost", "compare-steps"},
                    {"compare", "compare/h100.yaml", "compare/b200.yaml", "--fidelity", "analytic"}});
}
