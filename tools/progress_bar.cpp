#include "tools/progress_bar.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace trainsim::cli {

namespace {

constexpr auto redraw_every = std::chrono::milliseconds(100);
constexpr int bar_width = 80;

std::string format_rate(double per_s) {
  char text[32];
  if (per_s >= 1e6) {
    std::snprintf(text, sizeof text, "%.2fM/s", per_s / 1e6);
  } else if (per_s >= 1e3) {
    std::snprintf(text, sizeof text, "%.2fk/s", per_s / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.1f/s", per_s);
  }
  return text;
}

std::string format_clock(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

}  // namespace

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(std::int64_t total, bool enabled, std::FILE* out)
    : total_(total),
      enabled_(enabled),
      out_(out),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(std::int64_t done) {
  done_ = done;
  if (!enabled_ || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < redraw_every) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(out_, "\r%s", render(done_, total_, elapsed, bar_width).c_str());
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(out_, "\r%s\n", render(done_, total_, elapsed, bar_width).c_str());
  std::fflush(out_);
}

std::string ProgressBar::render(std::int64_t done, std::int64_t total, double elapsed_s, int width) {
  const double fraction =
      total > 0 ? std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0) : 1.0;
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  const std::string eta = rate > 0 ? format_clock(static_cast<double>(total - done) / rate) : "--:--";
  char counts[96];
  std::snprintf(counts, sizeof counts, "  %lld/%lld  %5.1f%%  %s  ETA %s", static_cast<long long>(done),
                static_cast<long long>(total), fraction * 100, rate > 0 ? format_rate(rate).c_str() : "-/s",
                eta.c_str());
  const std::string tail = counts;
  // The bar takes what the numbers leave, between 10 and 40 cells.
  const int cells = std::clamp(width - static_cast<int>(tail.size()) - 2, 10, 40);
  const auto filled = static_cast<int>(std::floor(fraction * cells));
  std::string out = "[";
  out.append(static_cast<std::size_t>(filled), '#');
  out.append(static_cast<std::size_t>(cells - filled), '.');
  out += ']';
  out += tail;
  return out;
}

}  // namespace trainsim::cli
