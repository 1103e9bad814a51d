// Rank placement: mixed-radix rank numbering, innermost axis fastest, rank r on GPU r.
#include "topologies/placement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "sim/error.hpp"

namespace trainsim::topo {

std::int64_t nodes_per_leaf(const ClusterSpec& cluster) {
  const NetworkSpec& net = cluster.network;
  if (net.topology == FabricTopology::single_switch) return std::max<std::int64_t>(cluster.nodes, 1);
  if (net.topology == FabricTopology::torus_2d || net.topology == FabricTopology::torus_3d) return 1;
  const std::int64_t down = leaf_ports(net).down;
  if (net.rail_optimized) return down;
  return std::max<std::int64_t>(1, down / std::max(cluster.nics_per_node(), 1));
}

Placement::Placement(std::vector<std::int64_t> axis_sizes, std::int64_t gpus_per_node,
                     std::int64_t nodes_per_leaf_count)
    : sizes_(std::move(axis_sizes)), gpus_per_node_(gpus_per_node), nodes_per_leaf_(nodes_per_leaf_count) {
  if (sizes_.empty()) throw InputError("placement: no axes");
  if (gpus_per_node_ < 1 || nodes_per_leaf_ < 1) {
    throw InputError("placement: GPUs per node and nodes per leaf must be >= 1");
  }
  strides_.reserve(sizes_.size());
  for (std::int64_t s : sizes_) {
    if (s < 1) throw InputError("placement: every axis size must be >= 1, got " + std::to_string(s));
    strides_.push_back(world_size_);
    world_size_ *= s;
  }
  if (world_size_ > gpus_per_node_ && world_size_ % gpus_per_node_ != 0) {
    throw InputError("placement: " + std::to_string(world_size_) + " ranks do not fill nodes of " +
                     std::to_string(gpus_per_node_) + " GPUs");
  }
}

Placement::Placement(std::vector<std::int64_t> axis_sizes, const ClusterSpec& cluster)
    : Placement(std::move(axis_sizes), cluster.gpus_in_use_per_node(), nodes_per_leaf(cluster)) {}

std::vector<std::int64_t> Placement::coordinates(std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  std::vector<std::int64_t> c(sizes_.size());
  for (std::size_t a = 0; a < sizes_.size(); ++a) c[a] = (rank / strides_[a]) % sizes_[a];
  return c;
}

std::vector<std::int64_t> Placement::group_members(std::size_t axis, std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  const std::int64_t stride = strides_.at(axis);
  const std::int64_t first = rank - ((rank / stride) % sizes_[axis]) * stride;
  std::vector<std::int64_t> members(static_cast<std::size_t>(sizes_[axis]));
  for (std::int64_t i = 0; i < sizes_[axis]; ++i) members[static_cast<std::size_t>(i)] = first + i * stride;
  return members;
}

CommGroup Placement::group(std::size_t axis, std::int64_t rank) const {
  const std::size_t axes[] = {axis};
  return group(axes, rank);
}

CommGroup Placement::group(std::span<const std::size_t> axes, std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  std::vector<std::size_t> sorted(axes.begin(), axes.end());
  std::sort(sorted.begin(), sorted.end());
  // The member whose coordinates along `axes` are all 0.
  std::int64_t first = rank;
  std::int64_t size = 1;
  for (std::size_t a : sorted) {
    first -= ((rank / strides_.at(a)) % sizes_.at(a)) * strides_.at(a);
    size *= sizes_[a];
  }
  CommGroup g;
  g.size = size;
  g.nodes = blocks_spanned(sorted, first, gpus_per_node_);
  g.ranks_per_node = (g.size + g.nodes - 1) / g.nodes;  // uneven groups: the most members on one node
  g.leaves = blocks_spanned(sorted, first, gpus_per_node_ * nodes_per_leaf_);
  g.groups_sharing_nics = g.nodes > 1 ? std::max<std::int64_t>(1, gpus_per_node_ / g.ranks_per_node) : 1;
  return g;
}

namespace {

// Members first + i·stride, i < count: an arithmetic progression of ranks.
struct Progression {
  std::int64_t stride = 1;
  std::int64_t count = 1;
};

// Members listed at the most (32 MiB) to count the blocks of a group.
constexpr std::int64_t kMaxListedMembers = std::int64_t{1} << 22;

std::int64_t distinct_blocks(const std::vector<std::int64_t>& sorted_members, std::int64_t block) {
  // Sorted members change block monotonically: count the transitions.
  std::int64_t blocks = 0;
  std::int64_t last = -1;
  for (std::int64_t r : sorted_members) {
    if (r / block != last) ++blocks, last = r / block;
  }
  return blocks;
}

// Blocks touched by every member first + Σ i_k·stride_k, listed.
std::int64_t listed_blocks(std::int64_t first, std::span<const Progression> axes, std::int64_t block) {
  std::int64_t total = 1;
  for (const Progression& p : axes) total *= p.count;
  if (total > kMaxListedMembers) {
    throw InputError("placement: a communicator group laid over " + std::to_string(total) +
                     " ranks this irregularly is not placed; choose tp·cp·ep·pp that divides or is a "
                     "multiple of the GPUs per node");
  }
  std::vector<std::int64_t> members{first};
  members.reserve(static_cast<std::size_t>(total));
  for (const Progression& p : axes) {
    const std::size_t n = members.size();
    for (std::int64_t i = 1; i < p.count; ++i) {
      for (std::size_t k = 0; k < n; ++k) members.push_back(members[k] + i * p.stride);
    }
  }
  std::sort(members.begin(), members.end());
  return distinct_blocks(members, block);
}

}  // namespace

std::int64_t Placement::blocks_spanned(std::span<const std::size_t> sorted_axes, std::int64_t first,
                                       std::int64_t block) const {
  // Adjacent axes of the group are one progression (the outer one's stride is the inner one's stride
  // times its size; one-rank axes between them add nothing).
  std::vector<Progression> axes;
  for (const std::size_t a : sorted_axes) {
    if (sizes_[a] == 1) continue;
    if (!axes.empty() && strides_[a] == axes.back().stride * axes.back().count) {
      axes.back().count *= sizes_[a];
    } else {
      axes.push_back({strides_[a], sizes_[a]});
    }
  }
  if (axes.empty()) return 1;
  if (axes.size() == 1) {
    // One progression: members a stride apart. A stride of a block or more puts each in a block of its
    // own; a shorter one skips no block between the first member's and the last's.
    const Progression only = axes.front();
    if (only.stride >= block) return only.count;
    return (first + (only.count - 1) * only.stride) / block - first / block + 1;
  }
  // The members are copies of the inner members R (every progression but the outermost, of stride S)
  // shifted by i·S, i < count. S exceeds R's span (strides grow and each divides the next), so copy i's
  // blocks meet only those of the `depth` copies before it, and the blocks copy i adds depend on i only
  // through (first + i·S) mod block, which repeats every `period` copies. So past `depth` copies each
  // period adds the same number of blocks: count a few periods by listing, then extrapolate exactly.
  // A data-parallel group of 10^7 ranks costs a few dozen listed members.
  const Progression outer = axes.back();
  axes.pop_back();
  std::int64_t inner_span = 0;
  for (const Progression& p : axes) inner_span += (p.count - 1) * p.stride;
  const std::int64_t depth = (inner_span + block) / outer.stride + 2;
  const std::int64_t period = block / std::gcd(outer.stride, block);
  const auto blocks_of_copies = [&](std::int64_t copies) {
    std::vector<Progression> all = axes;
    all.push_back({outer.stride, copies});
    return listed_blocks(first, all, block);
  };
  if (outer.count <= depth + 2 * period) return blocks_of_copies(outer.count);
  const std::int64_t periods = (outer.count - depth) / period;
  const std::int64_t rest = (outer.count - depth) % period;
  const std::int64_t per_period = blocks_of_copies(depth + period) - blocks_of_copies(depth);
  return blocks_of_copies(depth + rest) + periods * per_period;
}

}  // namespace trainsim::topo
