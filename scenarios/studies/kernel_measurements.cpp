#include "scenarios/studies/kernel_measurements.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "scenarios/studies/measurement_csv.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
  throw InputError(std::vector<Diagnostic>{{.file = file, .line = line, .message = message}});
}

double positive(const std::string& text, const std::string& file, int line, const std::string& column) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v > 0)) {
    fail(file, line, "column '" + column + "': expected a positive number, found '" + text + "'");
  }
  return v;
}

std::vector<AttentionKernelPoint> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path, 0, "cannot read the file");
  const std::vector<std::string> needed = {"gpu",     "implementation", "pass",  "causal", "head_dim",
                                           "seq_len", "batch",          "heads", "tflops", "source"};
  std::map<std::string, std::size_t> column;
  std::vector<AttentionKernelPoint> points;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split_csv_record(line, path, static_cast<std::size_t>(number));
    if (column.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) column[f[i]] = i;
      for (const std::string& c : needed) {
        if (column.count(c) == 0) fail(path, number, "the header has no column '" + c + "'");
      }
      continue;
    }
    if (f.size() != column.size()) {
      fail(path, number,
           "expected " + std::to_string(column.size()) + " fields, found " + std::to_string(f.size()));
    }
    const auto at = [&](const std::string& c) { return f[column.at(c)]; };
    AttentionKernelPoint p;
    p.where = path + ":" + std::to_string(number);
    p.gpu = at("gpu");
    const std::string impl = at("implementation");
    if (impl == "flash2")
      p.kernel = Attention::flash2;
    else if (impl == "flash3")
      p.kernel = Attention::flash3;
    else if (impl == "cudnn")
      p.kernel = Attention::cudnn;
    else if (impl == "standard")
      p.kernel = Attention::standard;
    else
      fail(path, number,
           "column 'implementation': expected flash2, flash3, cudnn or standard, found '" + impl + "'");
    const std::string pass = at("pass");
    if (pass != "forward" && pass != "backward") {
      fail(path, number, "column 'pass': expected forward or backward, found '" + pass + "'");
    }
    p.backward = pass == "backward";
    const std::string causal = at("causal");
    if (causal != "true" && causal != "false") {
      fail(path, number, "column 'causal': expected true or false, found '" + causal + "'");
    }
    p.causal = causal == "true";
    p.head_dim = positive(at("head_dim"), path, number, "head_dim");
    p.seq_len = positive(at("seq_len"), path, number, "seq_len");
    p.batch = positive(at("batch"), path, number, "batch");
    p.heads = positive(at("heads"), path, number, "heads");
    p.tflops = positive(at("tflops"), path, number, "tflops");
    p.source = at("source");
    if (p.source.empty()) fail(path, number, "column 'source': every point needs its citation");
    points.push_back(p);
  }
  return points;
}

}  // namespace

double AttentionKernelPoint::executed_flops() const {
  const double forward = 4.0 * batch * heads * seq_len * seq_len * head_dim * (causal ? 0.5 : 1.0);
  return backward ? 2.5 * forward : forward;
}

std::vector<AttentionKernelPoint> read_attention_kernel_points(const std::string& path) {
  if (!fs::is_directory(path)) return read_file(path);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("attention-", 0) == 0 && entry.path().extension() == ".csv")
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<AttentionKernelPoint> points;
  for (const std::string& f : files) {
    std::vector<AttentionKernelPoint> more = read_file(f);
    points.insert(points.end(), more.begin(), more.end());
  }
  return points;
}

}  // namespace trainsim::model
