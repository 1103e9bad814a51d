// Predicted all-reduce bus bandwidth against published nccl-tests measurements (NCCL-* rows of
// ../shared/validation/published-measurements.csv). Set TRAINSIM_VALIDATION_TABLE=1 to print every point.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "topologies/collective_cost.hpp"
#include "topologies/comm_calibration.hpp"

using namespace trainsim::topo;

namespace {

struct Point {
  std::string id;
  std::int64_t gpus = 0;
  double busbw_gbps = 0;
  double bytes = 0;
  std::string notes;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += ch;
    }
  }
  return cells;
}

/// "payload 32KiB" / "all-reduce 8GiB" in the notes -> bytes; 0 when the notes give no size.
double size_from_notes(const std::string& notes) {
  for (const char* key : {"payload ", "all-reduce ", "NVLS, ", "(NVLS off), "}) {
    const auto at = notes.find(key);
    if (at == std::string::npos) continue;
    const char* start = notes.c_str() + at + std::char_traits<char>::length(key);
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    if (end == start) continue;
    const std::string unit(end, end + 3);
    if (unit == "KiB") return v * 1024.0;
    if (unit == "MiB") return v * 1048576.0;
    if (unit == "GiB") return v * 1073741824.0;
  }
  return 0;
}

std::vector<Point> read_points(const std::string& path) {
  std::ifstream in(path);
  std::vector<Point> points;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("NCCL-", 0) != 0) continue;
    const std::vector<std::string> c = split_csv(line);
    if (c.size() < 24 || c[21] != "busbw_gbps") continue;
    Point p{c[0], c[10].empty() ? 0 : std::stoll(c[10]), std::stod(c[22]), size_from_notes(c[23]), c[23]};
    points.push_back(p);
  }
  return points;
}

NodeSpec node(const char* name, double nvlink, bool nvls, int nics, double nic, double intra_latency) {
  NodeSpec n;
  n.name = name;
  n.gpu.name = name;
  n.intra_bytes_per_s = nvlink;
  n.intra_latency_s = intra_latency;
  n.in_switch_reduction = nvls;
  n.nics_per_node = nics;
  n.nic_bytes_per_s = nic;
  REQUIRE(apply_comm_calibration(n));
  return n;
}

struct Case {
  ClusterSpec cluster;
  CommGroup group;
  CollectiveAlgo algo = CollectiveAlgo::auto_select;
  std::string system;
};

/// The system a row measured and how it was run, or false for rows this test does not model.
bool case_for(const Point& p, Case& out) {
  // Link rates per direction (HW-* rows): NVLink4 450 GB/s, NVLink5 900 GB/s, NVLink3 300 GB/s;
  // per-step NVLink latencies as fitted with the efficiencies (comm_calibration.cpp).
  static const NodeSpec h200 = node("h200-sxm", 450e9, true, 8, 50e9, 2.0e-6);
  static const NodeSpec b200 = node("p6-b200", 900e9, true, 8, 50e9, 3.3e-6);
  static const NodeSpec a100 = node("dgx-a100", 300e9, false, 8, 25e9, 2.0e-6);
  static const NodeSpec h100 = node("dgx-h100", 450e9, true, 8, 50e9, 2.0e-6);
  const bool ring_forced = p.notes.find("NVLS_ENABLE=0") != std::string::npos ||
                           p.notes.find("Same, NCCL_NVLS") != std::string::npos ||
                           p.notes.find("Ring (NVLS off)") != std::string::npos;
  out.algo = ring_forced ? CollectiveAlgo::ring : CollectiveAlgo::auto_select;
  auto one_node = [&](const NodeSpec& n, std::int64_t gpus, const char* system) {
    out.cluster = ClusterSpec{};
    out.cluster.node = n;
    out.group = {.size = gpus, .ranks_per_node = gpus, .nodes = 1};
    out.system = system;
  };
  if (p.id.rfind("NCCL-H200-1N", 0) == 0 || p.id.rfind("NCCL-H200-NVLS", 0) == 0) {
    one_node(h200, p.gpus, "8xH200 1 node");
  } else if (p.id.rfind("NCCL-H200-COLL-1", 0) == 0 || p.id.rfind("NCCL-H200-COLL-2", 0) == 0) {
    one_node(h200, 8, "8xH200 1 node");
  } else if (p.id.rfind("NCCL-B200-1N", 0) == 0 || p.id.rfind("NCCL-B200-NVLS", 0) == 0) {
    one_node(b200, p.gpus, "8xB200 1 node");
  } else if (p.id.rfind("NCCL-B200-4N", 0) == 0) {
    out.cluster = ClusterSpec{};
    out.cluster.node = b200;
    out.cluster.nodes = 4;
    out.group = {.size = 32, .ranks_per_node = 8, .nodes = 4};
    out.system = "8xB200 4 nodes";
  } else if (p.id == "NCCL-GTC24-04" || p.id == "NCCL-GTC24-05" || p.id == "NCCL-GTC24-06") {
    // Intra-node plateaus: 8 GPUs, a large message (the slide gives none; 8 GiB is on the plateau).
    one_node(p.id == "NCCL-GTC24-04" ? a100 : h100, 8, "DGX plateaus");
    out.algo = p.id == "NCCL-GTC24-06" ? CollectiveAlgo::in_switch : CollectiveAlgo::ring;
  } else if (p.id == "NCCL-GTC24-10" || p.id == "NCCL-GTC24-11") {
    out.cluster = ClusterSpec{};
    out.cluster.node = p.id == "NCCL-GTC24-10" ? a100 : h100;
    out.cluster.nodes = 4;
    out.group = {.size = 32, .ranks_per_node = 8, .nodes = 4};
    out.system = "DGX plateaus";
    out.algo = CollectiveAlgo::ring;
  } else {
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("predicted all-reduce bus bandwidth matches the published NCCL measurements within the goal") {
  const std::string csv =
      std::string(TRAINSIM_SOURCE_DIR) + "/../shared/validation/published-measurements.csv";
  const std::vector<Point> points = read_points(csv);
  if (points.empty()) {
    MESSAGE("no published measurements at " << csv << "; skipped");
    return;
  }
  const bool print = std::getenv("TRAINSIM_VALIDATION_TABLE") != nullptr;
  struct Stats {
    double large = 0, small = 0;
    int n_large = 0, n_small = 0;
  };
  std::map<std::string, Stats> stats;
  constexpr double kLarge = 64.0 * 1048576.0;
  int modelled = 0;
  for (const Point& p : points) {
    Case k;
    if (!case_for(p, k)) continue;
    // Rows 01 and 02 of the 4-node B200 sweep (32 and 64 KiB taking 6.3 and 3.2 ms, 20x the 256 KiB
    // time) are first-call warm-up in the torch harness, not the network: reported, not scored.
    const bool warm_up = p.id == "NCCL-B200-4N-01" || p.id == "NCCL-B200-4N-02";
    const double bytes = p.bytes > 0 ? p.bytes : 8.0 * 1073741824.0;
    const CollectiveEstimate e =
        estimate_collective(CollectiveOp::all_reduce, bytes, k.group, k.cluster, k.algo);
    const double predicted = bus_bandwidth(CollectiveOp::all_reduce, bytes, k.group.size, e.time_s) / 1e9;
    const double error = (predicted - p.busbw_gbps) / p.busbw_gbps;
    if (print) {
      std::printf("| %-18s | %-14s | %11.0f | %8.2f | %8.2f | %+7.1f%% | %s/%s%s |\n", p.id.c_str(),
                  k.system.c_str(), bytes, p.busbw_gbps, predicted, 100 * error,
                  std::string(to_string(e.algo)).c_str(), std::string(to_string(e.protocol)).c_str(),
                  warm_up ? " (warm-up, not scored)" : "");
    }
    ++modelled;
    if (warm_up) continue;
    Stats& s = stats[k.system];
    if (bytes >= kLarge) {
      s.large += std::fabs(error), ++s.n_large;
    } else {
      s.small += std::fabs(error), ++s.n_small;
    }
    // The goal is on averages; a single point may be noisy (NCCL-B200-4N-03, 128 KiB, is +52%), but not
    // wildly off.
    CHECK_MESSAGE(std::fabs(error) < 0.60,
                  p.id << " predicted " << predicted << " GB/s, measured " << p.busbw_gbps);
  }
  CHECK(modelled >= 80);
  for (const auto& [system, s] : stats) {
    const double mape_large = s.n_large ? s.large / s.n_large : 0.0;
    const double mape_small = s.n_small ? s.small / s.n_small : 0.0;
    if (print) {
      std::printf("%s: MAPE %.1f%% over %d points >= 64 MiB, %.1f%% over %d points < 64 MiB\n",
                  system.c_str(), 100 * mape_large, s.n_large, 100 * mape_small, s.n_small);
    }
    CHECK_MESSAGE(mape_large <= 0.10, system << " MAPE at >= 64 MiB " << mape_large);
    CHECK_MESSAGE(mape_small <= 0.25, system << " MAPE below 64 MiB " << mape_small);
  }
}
