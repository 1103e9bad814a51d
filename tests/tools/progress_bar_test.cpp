// tools/ is the trainsim executable, not a library, so the progress bar's one source file is compiled
// into this test directly.
#include "tools/progress_bar.cpp"

#include <doctest/doctest.h>

#include <cstdio>

using trainsim::cli::ProgressBar;

TEST_CASE("the bar shows count, percent, rate and the time left at that rate") {
  // 250 of 1000 in 2 s: 125/s, 750 left -> 6 s.
  const std::string text = ProgressBar::render(250, 1000, 2.0, 80);
  CHECK(text.find("250/1000") != std::string::npos);
  CHECK(text.find(" 25.0%") != std::string::npos);
  CHECK(text.find("125.0/s") != std::string::npos);
  CHECK(text.find("ETA 0:00:06") != std::string::npos);
  CHECK(text.size() <= 80);
}

TEST_CASE("a quarter done fills a quarter of the cells") {
  const std::string text = ProgressBar::render(250, 1000, 2.0, 80);
  const auto cells = text.find(']') - 1;
  const auto filled = static_cast<std::size_t>(std::count(text.begin(), text.end(), '#'));
  CHECK(filled == cells / 4);
}

TEST_CASE("large rates use k and M and an unknown rate shows no ETA") {
  CHECK(ProgressBar::render(4500, 9000, 1.5, 80).find("3.00k/s") != std::string::npos);
  CHECK(ProgressBar::render(4500, 9000, 1.5, 80).find("ETA 0:00:02") != std::string::npos);
  CHECK(ProgressBar::render(0, 10, 0.0, 80).find("ETA --:--") != std::string::npos);
  CHECK(ProgressBar::render(3'000'000, 6'000'000, 1.0, 80).find("3.00M/s") != std::string::npos);
}

TEST_CASE("a disabled bar writes nothing, as when stderr is a pipe") {
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink != nullptr);
  {
    ProgressBar bar(100, false, sink);
    bar.update(50);
    bar.finish();
  }
  CHECK(std::ftell(sink) == 0);
  std::fclose(sink);
}

TEST_CASE("an enabled bar ends with the final count on its own line, with no colour codes") {
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink != nullptr);
  {
    ProgressBar bar(10, true, sink);
    bar.update(10);
  }
  std::rewind(sink);
  char buffer[256] = {};
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, sink);
  const std::string text(buffer, n);
  CHECK(text.find("10/10") != std::string::npos);
  CHECK(text.back() == '\n');
  CHECK(text.find('\x1b') == std::string::npos);
  std::fclose(sink);
}
