// Cluster graph construction and routing. Devices and links live in flat arrays (a directed link is 24
// bytes) with a CSR index of out-links sorted by target, so a 100k-GPU fat-tree fits in tens of MB and a
// link between two devices is a binary search. Fat-trees are routed from their structure (which leaf, which
// spine) because a BFS per destination over ~1 M links is too slow for a ring over 100k GPUs; every other
// fabric uses Boost.Graph's breadth-first search from the destination, memoised per destination.
#include "topologies/cluster_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/visitors.hpp>
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {
namespace {

constexpr DeviceId kNone = std::numeric_limits<DeviceId>::max();
// Devices plus links a graph is built with at the most: 2^25 (250,000 DGX H100 nodes build in 0.8 s and
// 0.6 GB; `trainsim topology` measured).
constexpr double kMaxGraphElements = 33554432;

// Where each route lies in the route store, by its key from << 32 | to: open addressing with linear
// probing, so that finding one among the millions a large cluster's step uses costs about one cache miss
// (a node-based map's costs two). Key 0 (a device to itself) is never stored: it marks an empty slot.
class RouteMemo {
 public:
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };
  /// The entry of `key`, or nullptr.
  [[nodiscard]] const Entry* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].key == key) return &slots_[i];
      if (slots_[i].key == 0) return nullptr;
    }
  }
  /// Adds an entry whose key is not stored yet (and is not 0).
  const Entry& insert(Entry e) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    ++size_;
    return place(e);
  }

 private:
  [[nodiscard]] std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  Entry& place(Entry e) {
    std::size_t i = home(e.key);
    while (slots_[i].key != 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = e;
    return slots_[i];
  }
  void grow() {
    std::vector<Entry> old = std::move(slots_);
    const std::size_t capacity = old.empty() ? 1024 : 2 * old.size();
    slots_.assign(capacity, Entry{});
    shift_ = 64 - std::countr_zero(capacity);
    for (const Entry& e : old) {
      if (e.key != 0) place(e);
    }
  }
  std::vector<Entry> slots_;  // a power of two of them, at most half full
  std::size_t size_ = 0;
  int shift_ = 64;
};

/// Endpoint hash for ECMP (splitmix64 finaliser): well mixed, platform independent.
std::uint64_t pair_hash(DeviceId a, DeviceId b) {
  std::uint64_t x = (static_cast<std::uint64_t>(a) << 32) ^ b;
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Torus dimensions: the given ones, or as square (cube) as possible.
std::vector<std::int64_t> torus_shape(const ClusterSpec& c, int dims) {
  std::vector<std::int64_t> shape;
  if (!c.network.torus_dims.empty()) {
    std::int64_t product = 1;
    for (int d : c.network.torus_dims) {
      if (d < 1) throw InputError("cluster.network.torus_dims: every dimension must be >= 1");
      shape.push_back(d);
      product *= d;
    }
    if (product != c.nodes) {
      throw InputError("cluster.network.torus_dims: product " + std::to_string(product) +
                       " != " + std::to_string(c.nodes) + " nodes");
    }
    return shape;
  }
  std::int64_t rest = c.nodes;
  for (int d = dims; d > 1; --d) {
    auto k = static_cast<std::int64_t>(std::floor(std::pow(static_cast<double>(rest), 1.0 / d) + 1e-9));
    while (k > 1 && rest % k != 0) --k;
    shape.push_back(std::max<std::int64_t>(k, 1));
    rest /= std::max<std::int64_t>(k, 1);
  }
  shape.push_back(rest);
  return shape;
}

}  // namespace

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu:
      return "gpu";
    case DeviceKind::nvswitch:
      return "nvswitch";
    case DeviceKind::pcie_switch:
      return "pcie_switch";
    case DeviceKind::nic:
      return "nic";
    case DeviceKind::leaf:
      return "leaf";
    case DeviceKind::spine:
      return "spine";
    case DeviceKind::core:
      return "core";
    case DeviceKind::router:
      return "router";
    case DeviceKind::storage:
      return "storage";
  }
  return "gpu";
}

struct ClusterGraph::Impl {
  ClusterSpec spec;
  std::vector<Device> devices;
  std::vector<Link> links;
  std::vector<std::uint32_t> out_offset;  // CSR: out-links of device d are out_links[out_offset[d] .. d+1)
  std::vector<LinkIndex> out_links;       // sorted by target within a device

  std::int64_t gpn = 1;       // GPUs per node
  std::int64_t nics = 0;      // NICs per node
  std::int64_t per_node = 0;  // devices per node
  bool intra_switch = false;  // NVSwitch or PCIe switch present
  bool torus = false;
  bool structural = false;  // fat-tree: routed from structure
  bool three_tier = false;
  std::int64_t down = 1, up = 0;
  std::int64_t leaf_groups = 1;  // leaves per rail (rail-optimized) or in all (otherwise)
  std::int64_t nodes_per_leaf = 1;
  bool rails = false;
  std::int64_t leaf_count = 0;
  std::int64_t pod_leaves = 1, pods = 1, cores_per_group = 0;
  DeviceId first_leaf = kNone, first_spine = kNone, first_core = kNone;
  DeviceId storage = kNone;
  double port_bytes_per_s = 0;
  double bisection = 0;
  int diameter = 0;

  mutable RouteMemo memo;
  mutable std::vector<LinkIndex> route_store;
  mutable std::unordered_map<DeviceId, std::vector<std::int32_t>> distances;  // BFS per destination
  // The reversed adjacency as Boost sees it, built on the first BFS.
  mutable std::unique_ptr<boost::compressed_sparse_row_graph<boost::directedS>> bfs_graph;

  DeviceId add_device(DeviceKind kind, std::int64_t node, std::int64_t index) {
    devices.push_back({kind, node, index});
    return static_cast<DeviceId>(devices.size() - 1);
  }
  void add_pair(DeviceId a, DeviceId b, double bw, double lat_ab, double lat_ba) {
    links.push_back({a, b, bw, lat_ab});
    links.push_back({b, a, bw, lat_ba});
  }
  [[nodiscard]] DeviceId gpu_id(std::int64_t node, std::int64_t local) const {
    return static_cast<DeviceId>(node * per_node + local);
  }
  [[nodiscard]] DeviceId intra_switch_id(std::int64_t node) const {
    return static_cast<DeviceId>(node * per_node + gpn);
  }
  [[nodiscard]] DeviceId nic_id(std::int64_t node, std::int64_t nic) const {
    return static_cast<DeviceId>(node * per_node + gpn + (intra_switch ? 1 : 0) + nic);
  }
  [[nodiscard]] DeviceId router_id(std::int64_t node) const {
    return static_cast<DeviceId>(node * per_node + per_node - 1);
  }
  [[nodiscard]] std::int64_t nic_of_gpu(std::int64_t local) const { return spec.nic_of_gpu(local); }
  /// What other jobs leave of a switch-to-switch link.
  [[nodiscard]] double free_share() const { return 1 - spec.background_fraction; }
  /// The rate of NIC `nic` of `node`'s link to its switch: the port rate, or a degraded NIC's own
  /// (cluster.degraded) with the same efficiency applied.
  [[nodiscard]] double nic_port_bytes_per_s(std::int64_t node, std::int64_t nic) const {
    for (const DegradedNic& d : spec.degraded) {
      if (d.node == node && d.nic == nic) return d.bytes_per_s * spec.node.comm.nic_bandwidth_fraction;
    }
    return port_bytes_per_s;
  }
  [[nodiscard]] std::int64_t leaf_index(std::int64_t node, std::int64_t nic) const {
    return rails ? nic * leaf_groups + node / nodes_per_leaf : node / nodes_per_leaf;
  }
  [[nodiscard]] DeviceId leaf_id(std::int64_t leaf) const { return static_cast<DeviceId>(first_leaf + leaf); }
  /// A NIC's port on its leaf, 0 ≤ port < down: its node's place under the leaf (rail-optimized), times the
  /// node's NICs plus its own index (otherwise).
  [[nodiscard]] std::int64_t leaf_port(DeviceId nic) const {
    const Device& n = devices[nic];
    const std::int64_t slot = n.node % nodes_per_leaf;
    return rails ? slot : slot * nics + n.index;
  }
  [[nodiscard]] DeviceId spine_id(std::int64_t pod, std::int64_t s) const {
    return static_cast<DeviceId>(first_spine + pod * up + s);
  }

  void finish_index() {
    out_offset.assign(devices.size() + 1, 0);
    for (const Link& l : links) ++out_offset[l.from + 1];
    for (std::size_t d = 0; d < devices.size(); ++d) out_offset[d + 1] += out_offset[d];
    out_links.resize(links.size());
    std::vector<std::uint32_t> fill(out_offset.begin(), out_offset.end() - 1);
    for (std::size_t i = 0; i < links.size(); ++i)
      out_links[fill[links[i].from]++] = static_cast<LinkIndex>(i);
    for (std::size_t d = 0; d < devices.size(); ++d) {
      std::sort(out_links.begin() + out_offset[d], out_links.begin() + out_offset[d + 1],
                [&](LinkIndex x, LinkIndex y) { return links[x].to < links[y].to; });
    }
  }

  [[nodiscard]] LinkIndex link_between(DeviceId a, DeviceId b) const {
    const auto first = out_links.begin() + out_offset[a];
    const auto last = out_links.begin() + out_offset[a + 1];
    const auto it =
        std::lower_bound(first, last, b, [&](LinkIndex l, DeviceId t) { return links[l].to < t; });
    TRAINSIM_CHECK(it != last && links[*it].to == b, "no link between adjacent devices of a route");
    return *it;
  }

  // Builders, in the order build() calls them; each fabric builder fills `tops` with where storage attaches.
  void build_nodes();
  void build_torus(std::vector<DeviceId>& tops);
  void build_single_switch(std::vector<DeviceId>& tops);
  void build_leaves(DeviceKind kind);
  void build_dragonfly(std::vector<DeviceId>& tops);
  void build_fat_tree(std::vector<DeviceId>& tops);
  void attach_storage(std::vector<DeviceId>& tops);
  void measure_diameter();

  /// Device path for fat-trees and single switches, from their structure.
  void structural_path(DeviceId from, DeviceId to, std::vector<DeviceId>& path) const;
  /// Device path by BFS distances to `to` (Boost.Graph), ties by endpoint hash among increasing ids.
  void bfs_path(DeviceId from, DeviceId to, std::vector<DeviceId>& path) const;
  const std::vector<std::int32_t>& distances_to(DeviceId to) const;
};

void ClusterGraph::Impl::structural_path(DeviceId from, DeviceId to, std::vector<DeviceId>& path) const {
  // Climb from each endpoint to its leaf: GPU -> (NIC) -> leaf, or NIC -> leaf. Storage hangs off spines.
  const std::uint64_t h = pair_hash(from, to);
  auto up_to_nic = [&](DeviceId d, std::vector<DeviceId>& out) -> DeviceId {
    const Device& dev = devices[d];
    if (dev.kind == DeviceKind::gpu) {
      const DeviceId nic = nic_id(dev.node, nic_of_gpu(dev.index));
      out.push_back(nic);
      return nic;
    }
    return d;
  };
  const Device& a = devices[from];
  const Device& b = devices[to];
  if (a.kind == DeviceKind::storage) {
    // Links come in symmetric pairs: a read takes the reverse of the write path.
    std::vector<DeviceId> forward;
    structural_path(to, from, forward);
    path.insert(path.end(), forward.rbegin(), forward.rend());
    return;
  }
  path.push_back(from);
  // Same node: through the NVSwitch / PCIe switch, or the direct mesh link.
  if (a.kind == DeviceKind::gpu && b.kind == DeviceKind::gpu && a.node == b.node) {
    if (intra_switch) path.push_back(intra_switch_id(a.node));
    path.push_back(to);
    return;
  }
  std::vector<DeviceId> tail;  // devices from `to` upwards, reversed at the end
  tail.push_back(to);
  DeviceId a_top = up_to_nic(from, path);
  DeviceId b_top = b.kind == DeviceKind::storage ? to : up_to_nic(to, tail);
  auto leaf_of = [&](DeviceId nic) {
    const Device& n = devices[nic];
    return leaf_id(leaf_index(n.node, n.index));
  };
  const DeviceId la = leaf_of(a_top);
  path.push_back(la);
  if (b.kind == DeviceKind::storage) {
    if (up > 0 && first_spine != kNone) {  // fat-trees: storage hangs off the top tier
      const auto s = static_cast<std::int64_t>(h % static_cast<std::uint64_t>(up));
      path.push_back(spine_id(three_tier ? (la - first_leaf) / pod_leaves : 0, s));
      if (three_tier) {
        const auto k = static_cast<std::int64_t>((h / static_cast<std::uint64_t>(up)) %
                                                 static_cast<std::uint64_t>(cores_per_group));
        path.push_back(static_cast<DeviceId>(first_core + s * cores_per_group + k));
      }
    }
    path.push_back(to);
    return;
  }
  const DeviceId lb = leaf_of(b_top);
  if (la != lb) {
    // D-mod-K: the spine (and core) by the destination's port on its leaf.
    const std::int64_t port = leaf_port(b_top);
    const std::int64_t s = port % up;
    if (!three_tier) {
      path.push_back(spine_id(0, s));
    } else {
      const std::int64_t pa = (la - first_leaf) / pod_leaves;
      const std::int64_t pb = (lb - first_leaf) / pod_leaves;
      path.push_back(spine_id(pa, s));
      if (pa != pb) {
        const std::int64_t c = (port / up) % cores_per_group;
        path.push_back(static_cast<DeviceId>(first_core + s * cores_per_group + c));
        path.push_back(spine_id(pb, s));
      }
    }
    path.push_back(lb);
  }
  path.insert(path.end(), tail.rbegin(), tail.rend());
}

// GCC 12 reports -Warray-bounds false positives inside Boost's inlined BFS queue (a known GCC 12 issue
// with std::deque/vector growth at -O3); the code below indexes nothing itself.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
const std::vector<std::int32_t>& ClusterGraph::Impl::distances_to(DeviceId to) const {
  auto it = distances.find(to);
  if (it != distances.end()) return it->second;
  // Bounded memory: BFS results are 4 bytes per device each; routes stay memoised anyway.
  if (distances.size() >= 256) distances.clear();
  using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
  if (!bfs_graph) {
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    edges.reserve(links.size());
    // Links come in symmetric pairs, so distances from `to` over the reversed graph equal the forward ones.
    for (const Link& l : links) edges.emplace_back(l.to, l.from);
    std::sort(edges.begin(), edges.end());
    bfs_graph = std::make_unique<Graph>(boost::edges_are_sorted, edges.begin(), edges.end(), devices.size());
  }
  const Graph& g = *bfs_graph;
  std::vector<std::int32_t> dist(devices.size(), -1);
  dist[to] = 0;
  boost::breadth_first_search(
      g, boost::vertex(to, g),
      boost::visitor(boost::make_bfs_visitor(boost::record_distances(dist.data(), boost::on_tree_edge()))));
  return distances.emplace(to, std::move(dist)).first->second;
}
#pragma GCC diagnostic pop

void ClusterGraph::Impl::bfs_path(DeviceId from, DeviceId to, std::vector<DeviceId>& path) const {
  const std::vector<std::int32_t>& dist = distances_to(to);
  if (dist[from] < 0) throw InputError("cluster graph: no route between two devices");
  const std::uint64_t h = pair_hash(from, to);
  path.push_back(from);
  DeviceId cur = from;
  std::vector<DeviceId> candidates;
  while (cur != to) {
    candidates.clear();
    for (std::uint32_t i = out_offset[cur]; i < out_offset[cur + 1]; ++i) {
      const DeviceId next = links[out_links[i]].to;
      if (dist[next] == dist[cur] - 1) candidates.push_back(next);  // sorted by id already
    }
    TRAINSIM_CHECK(!candidates.empty(), "BFS distances without a next hop");
    cur = candidates[h % candidates.size()];
    path.push_back(cur);
  }
}

ClusterGraph::ClusterGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterGraph::ClusterGraph(ClusterGraph&&) noexcept = default;
ClusterGraph& ClusterGraph::operator=(ClusterGraph&&) noexcept = default;
ClusterGraph::~ClusterGraph() = default;

/// GPUs, the intra-node switch (or NVLink mesh), NICs and torus routers of every node, and their links.
void ClusterGraph::Impl::build_nodes() {
  const ClusterSpec& c = spec;
  const NodeSpec& node = c.node;
  const double intra = intra_node_tier(c).bytes_per_s;
  const double alpha_i = node.intra_latency_s;
  const double nic_half = node.comm.nic_latency_s / 2;
  const double gpu_nic_bw = node.pcie_bytes_per_s > 0
                                ? node.pcie_bytes_per_s
                                : port_bytes_per_s * static_cast<double>(std::max<std::int64_t>(1, nics));
  for (std::int64_t n = 0; n < c.nodes; ++n) {
    for (std::int64_t i = 0; i < gpn; ++i) add_device(DeviceKind::gpu, n, i);
    if (intra_switch) {
      add_device(node.fabric == IntraNodeFabric::pcie ? DeviceKind::pcie_switch : DeviceKind::nvswitch, n, 0);
    }
    for (std::int64_t k = 0; k < nics; ++k) add_device(DeviceKind::nic, n, k);
    if (torus) add_device(DeviceKind::router, n, 0);
    for (std::int64_t i = 0; i < gpn; ++i) {
      if (intra_switch) {
        add_pair(gpu_id(n, i), intra_switch_id(n), intra, alpha_i / 2, alpha_i / 2);
      } else {
        for (std::int64_t j = i + 1; j < gpn; ++j) {
          add_pair(gpu_id(n, i), gpu_id(n, j), intra / static_cast<double>(gpn - 1), alpha_i, alpha_i);
        }
      }
      if (nics > 0) add_pair(gpu_id(n, i), nic_id(n, nic_of_gpu(i)), gpu_nic_bw, nic_half, nic_half);
    }
  }
}

/// 2D/3D torus: a router per node joined to its NICs, one link pair per neighbour with wrap-around.
void ClusterGraph::Impl::build_torus(std::vector<DeviceId>& tops) {
  const ClusterSpec& c = spec;
  const double port = port_bytes_per_s;
  const double sw = c.network.switch_latency_s;
  const std::vector<std::int64_t> shape =
      torus_shape(c, c.network.topology == FabricTopology::torus_3d ? 3 : 2);
  const auto dims = static_cast<double>(shape.size());
  const double link_bw = port * static_cast<double>(nics) / (2 * dims);
  for (std::int64_t n = 0; n < c.nodes; ++n) {
    for (std::int64_t k = 0; k < nics; ++k)
      add_pair(nic_id(n, k), router_id(n), nic_port_bytes_per_s(n, k), 0, sw);
    std::int64_t stride = 1;
    for (std::int64_t extent : shape) {
      const std::int64_t coord = (n / stride) % extent;
      const std::int64_t next = n + (((coord + 1) % extent) - coord) * stride;
      // One link pair per neighbour; a dimension of 2 has a single neighbour, of 1 none.
      if (extent > 2 || (extent == 2 && coord == 0))
        add_pair(router_id(n), router_id(next), link_bw * free_share(), sw, sw);
      stride *= extent;
    }
    tops.push_back(router_id(n));
  }
  std::int64_t k_max = 1;
  for (std::int64_t extent : shape) k_max = std::max(k_max, extent);
  const std::int64_t cross_section = c.nodes / k_max;  // nodes in a plane across the longest dimension
  bisection = (k_max > 2 ? 2.0 : 1.0) * static_cast<double>(cross_section) * link_bw;
}

/// Every NIC on one switch.
void ClusterGraph::Impl::build_single_switch(std::vector<DeviceId>& tops) {
  const ClusterSpec& c = spec;
  first_leaf = add_device(DeviceKind::leaf, -1, 0);
  leaf_count = 1;
  nodes_per_leaf = c.nodes;
  for (std::int64_t n = 0; n < c.nodes; ++n) {
    for (std::int64_t k = 0; k < nics; ++k)
      add_pair(nic_id(n, k), first_leaf, nic_port_bytes_per_s(n, k), 0, c.network.switch_latency_s);
  }
  tops.push_back(first_leaf);
  structural = true;
  bisection = static_cast<double>(c.nodes * nics) * port_bytes_per_s / 2;
}

/// Leaves (fat-trees) or leaf routers (dragonfly) with radix·o/(o+1) ports down, NICs wired to them per
/// rail (rail_optimized) or per node.
void ClusterGraph::Impl::build_leaves(DeviceKind kind) {
  const ClusterSpec& c = spec;
  const LeafPorts ports = leaf_ports(c.network);
  down = ports.down;
  up = ports.up;
  rails = c.network.rail_optimized && nics > 1;
  nodes_per_leaf = rails ? down : std::max<std::int64_t>(1, down / nics);
  leaf_groups = (c.nodes + nodes_per_leaf - 1) / nodes_per_leaf;
  leaf_count = rails ? leaf_groups * nics : leaf_groups;
  first_leaf = static_cast<DeviceId>(devices.size());
  for (std::int64_t l = 0; l < leaf_count; ++l) add_device(kind, -1, l);
  for (std::int64_t n = 0; n < c.nodes; ++n) {
    for (std::int64_t k = 0; k < nics; ++k)
      add_pair(nic_id(n, k), leaf_id(leaf_index(n, k)), nic_port_bytes_per_s(n, k), 0,
               c.network.switch_latency_s);
  }
}

/// Dragonfly: groups of ⌈√leaves⌉ routers, all-to-all inside; one global link between every pair of groups.
void ClusterGraph::Impl::build_dragonfly(std::vector<DeviceId>& tops) {
  const ClusterSpec& c = spec;
  build_leaves(DeviceKind::router);
  const double sw = c.network.switch_latency_s;
  const double link_bw = port_bytes_per_s * static_cast<double>(up);
  const double free_bw = link_bw * free_share();
  const auto a = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(leaf_count)))));
  const std::int64_t groups = (leaf_count + a - 1) / a;
  for (std::int64_t l = 0; l < leaf_count; ++l) {
    for (std::int64_t r = l + 1; r < leaf_count && r / a == l / a; ++r)
      add_pair(leaf_id(l), leaf_id(r), free_bw, sw, sw);
  }
  for (std::int64_t g1 = 0; g1 < groups; ++g1) {
    for (std::int64_t g2 = g1 + 1; g2 < groups; ++g2) {
      const std::int64_t r1 = std::min(g1 * a + g2 % a, leaf_count - 1);
      const std::int64_t r2 = std::min(g2 * a + g1 % a, leaf_count - 1);
      add_pair(leaf_id(r1), leaf_id(r2), free_bw, sw, sw);
    }
    tops.push_back(leaf_id(g1 * a));
  }
  const double nic_capacity = static_cast<double>(c.nodes * nics) * port_bytes_per_s;
  const std::int64_t half_groups = groups / 2;  // the smaller half when the count is odd
  const auto half = static_cast<double>(half_groups);
  bisection = std::min(nic_capacity / 2, half * (static_cast<double>(groups) - half) * link_bw);
}

/// 2-tier fat-tree (`up` spines, each linked once to every leaf) or 3-tier (pods of radix/2 leaves,
/// aggregation switch a of each pod joined to core group a).
void ClusterGraph::Impl::build_fat_tree(std::vector<DeviceId>& tops) {
  const ClusterSpec& c = spec;
  build_leaves(DeviceKind::leaf);
  const double port = port_bytes_per_s;
  const double sw = c.network.switch_latency_s;
  const auto radix = static_cast<std::int64_t>(std::max(c.network.switch_radix, 2));
  structural = true;
  three_tier = c.network.topology == FabricTopology::fat_tree_3;
  pod_leaves = three_tier ? std::max<std::int64_t>(1, radix / 2) : leaf_count;
  pods = (leaf_count + pod_leaves - 1) / pod_leaves;
  first_spine = static_cast<DeviceId>(devices.size());
  for (std::int64_t p = 0; p < pods; ++p) {
    for (std::int64_t s = 0; s < up; ++s) add_device(DeviceKind::spine, -1, p * up + s);
  }
  for (std::int64_t l = 0; l < leaf_count; ++l) {
    for (std::int64_t s = 0; s < up; ++s)
      add_pair(leaf_id(l), spine_id(l / pod_leaves, s), port * free_share(), sw, sw);
  }
  double cut = static_cast<double>(leaf_count * up) * port;
  if (three_tier) {
    cores_per_group = std::max<std::int64_t>(1, radix / 2);
    first_core = static_cast<DeviceId>(devices.size());
    for (std::int64_t s = 0; s < up; ++s) {
      for (std::int64_t k = 0; k < cores_per_group; ++k) {
        const DeviceId core = add_device(DeviceKind::core, -1, s * cores_per_group + k);
        for (std::int64_t p = 0; p < pods; ++p) add_pair(spine_id(p, s), core, port * free_share(), sw, sw);
        tops.push_back(core);
      }
    }
    cut = std::min(cut, static_cast<double>(pods * up * cores_per_group) * port);
  } else {
    for (std::int64_t s = 0; s < up; ++s) tops.push_back(spine_id(0, s));
  }
  const double nic_capacity = static_cast<double>(c.nodes * nics) * port;
  bisection = std::min(nic_capacity, cut) / 2;
}

/// Storage through the fabric's top tier, its aggregate bandwidth split evenly over the attachment links.
void ClusterGraph::Impl::attach_storage(std::vector<DeviceId>& tops) {
  const StorageSpec& st = spec.storage;
  if (!(st.write_bytes_per_s > 0)) return;
  if (tops.empty()) tops.push_back(intra_switch ? intra_switch_id(0) : gpu_id(0, 0));
  storage = add_device(DeviceKind::storage, -1, 0);
  const double read_bw = st.read_bytes_per_s > 0 ? st.read_bytes_per_s : st.write_bytes_per_s;
  const auto share = static_cast<double>(tops.size());
  for (DeviceId t : tops) {
    links.push_back({t, storage, st.write_bytes_per_s / share, st.latency_s});
    links.push_back({storage, t, read_bw / share, spec.network.switch_latency_s});
  }
}

/// Diameter between GPUs: from the structure for fat-trees, by BFS from GPU 0 otherwise (exact for the
/// vertex-transitive torus; a lower bound for dragonfly).
void ClusterGraph::Impl::measure_diameter() {
  if (spec.nodes == 1) {
    diameter = gpn > 1 ? (intra_switch ? 2 : 1) : 0;
  } else if (structural) {
    const bool one_leaf = leaf_count == 1;
    diameter = one_leaf ? 4 : (three_tier && pods > 1 ? 8 : 6);
  } else {
    const std::vector<std::int32_t>& dist = distances_to(gpu_id(0, 0));
    for (std::int64_t n = 0; n < spec.nodes; ++n)
      diameter = std::max(diameter, static_cast<int>(dist[gpu_id(n, 0)]));
  }
}

ClusterGraph ClusterGraph::build(const ClusterSpec& c) {
  auto g = std::make_unique<Impl>();
  Impl& m = *g;
  m.spec = c;
  if (c.nodes < 1) throw InputError("cluster.nodes must be >= 1");
  m.gpn = c.gpus_in_use_per_node();
  if (m.gpn < 1) throw InputError("cluster: a node needs at least one GPU");
  m.nics = c.nodes > 1 ? c.nics_per_node() : std::max(c.nics_per_node(), 0);
  if (c.nodes > 1 && (m.nics < 1 || c.nic_bytes_per_s() <= 0)) {
    throw InputError("cluster: several nodes need NICs (nics_per_node and nic bandwidth)");
  }
  const FabricTopology topo = c.network.topology;
  m.torus = c.nodes > 1 && (topo == FabricTopology::torus_2d || topo == FabricTopology::torus_3d);
  m.intra_switch = m.gpn > 1 && c.node.fabric != IntraNodeFabric::nvlink_mesh;
  m.per_node = m.gpn + (m.intra_switch ? 1 : 0) + m.nics + (m.torus ? 1 : 0);
  m.port_bytes_per_s = c.nic_bytes_per_s() * c.node.comm.nic_bandwidth_fraction;
  const double devices = static_cast<double>(c.nodes) * static_cast<double>(m.per_node);
  const double links =
      static_cast<double>(c.nodes) * static_cast<double>(4 * m.gpn + 2 * m.nics + m.gpn * m.gpn);
  if (devices + links > kMaxGraphElements) {
    throw InputError(
        fmt::format("cluster: a graph of {} nodes needs about {:.3g} devices and links, more than the "
                    "{:.3g} a cluster graph holds; the closed form prices any size",
                    c.nodes, devices + links, kMaxGraphElements));
  }
  m.devices.reserve(static_cast<std::size_t>(devices) + 1024);
  m.links.reserve(static_cast<std::size_t>(links));
  m.build_nodes();
  std::vector<DeviceId> tops;  // where storage attaches
  if (c.nodes == 1 || m.nics == 0) {
    // A single node needs no fabric; storage (if any) attaches to its intra-node switch or GPU 0.
  } else if (m.torus) {
    m.build_torus(tops);
  } else if (topo == FabricTopology::single_switch) {
    m.build_single_switch(tops);
  } else if (topo == FabricTopology::dragonfly) {
    m.build_dragonfly(tops);
  } else {
    m.build_fat_tree(tops);
  }
  if (c.nodes == 1) {
    const std::int64_t half_gpus = m.gpn / 2;  // GPUs on one side of the cut
    m.bisection = static_cast<double>(half_gpus) * intra_node_tier(c).bytes_per_s;
  }
  m.attach_storage(tops);
  m.finish_index();
  m.measure_diameter();
  return ClusterGraph(std::move(g));
}

std::size_t ClusterGraph::device_count() const {
  return impl_->devices.size();
}
std::size_t ClusterGraph::link_count() const {
  return impl_->links.size();
}

std::int64_t ClusterGraph::count(DeviceKind kind) const {
  return std::count_if(impl_->devices.begin(), impl_->devices.end(),
                       [&](const Device& d) { return d.kind == kind; });
}

const Device& ClusterGraph::device(DeviceId id) const {
  return impl_->devices.at(id);
}
const Link& ClusterGraph::link(LinkIndex index) const {
  return impl_->links.at(index);
}

DeviceId ClusterGraph::gpu(std::int64_t g) const {
  if (g < 0 || g >= gpu_count()) throw InputError("GPU " + std::to_string(g) + " is not in the cluster");
  return impl_->gpu_id(g / impl_->gpn, g % impl_->gpn);
}

std::int64_t ClusterGraph::gpu_count() const {
  return impl_->spec.nodes * impl_->gpn;
}

DeviceId ClusterGraph::storage() const {
  if (impl_->storage == kNone) throw InputError("the cluster has no storage (cluster.storage.write)");
  return impl_->storage;
}

std::span<const LinkIndex> ClusterGraph::route(DeviceId from, DeviceId to) const {
  Impl& m = *impl_;
  if (from >= m.devices.size() || to >= m.devices.size()) throw InputError("route: unknown device");
  if (from == to) return {};
  const std::uint64_t key = (static_cast<std::uint64_t>(from) << 32) | to;
  const RouteMemo::Entry* found = m.memo.find(key);
  if (found == nullptr) {
    std::vector<DeviceId> path;
    if (m.structural) {
      m.structural_path(from, to, path);
    } else {
      m.bfs_path(from, to, path);
    }
    const auto offset = static_cast<std::uint32_t>(m.route_store.size());
    for (std::size_t i = 0; i + 1 < path.size(); ++i)
      m.route_store.push_back(m.link_between(path[i], path[i + 1]));
    found = &m.memo.insert({key, offset, static_cast<std::uint32_t>(path.size() - 1)});
  }
  return {m.route_store.data() + found->offset, found->length};
}

double ClusterGraph::route_latency_s(DeviceId from, DeviceId to) const {
  double total = 0;
  for (LinkIndex l : route(from, to)) total += impl_->links[l].latency_s;
  return total;
}

double ClusterGraph::route_bottleneck_bytes_per_s(DeviceId from, DeviceId to) const {
  double bw = std::numeric_limits<double>::infinity();
  for (LinkIndex l : route(from, to)) bw = std::min(bw, impl_->links[l].bytes_per_s);
  return bw;
}

double ClusterGraph::bisection_bytes_per_s() const {
  return impl_->bisection;
}
int ClusterGraph::diameter() const {
  return impl_->diameter;
}

void ClusterGraph::write_dot(std::ostream& out) const {
  const Impl& m = *impl_;
  out << "graph cluster {\n  node [shape=box, fontsize=10];\n";
  for (std::size_t d = 0; d < m.devices.size(); ++d) {
    const Device& dev = m.devices[d];
    out << "  d" << d << " [label=\"" << to_string(dev.kind);
    if (dev.node >= 0) out << " n" << dev.node;
    out << " #" << dev.index << "\"];\n";
  }
  for (const Link& l : m.links) {
    if (l.from < l.to)
      out << "  d" << l.from << " -- d" << l.to << " [label=\"" << l.bytes_per_s / 1e9 << " GB/s\"];\n";
  }
  out << "}\n";
}

}  // namespace trainsim::topo
