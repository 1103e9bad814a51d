#pragma once
// Token-based MoE dispatch: DeepEP's normal (training) kernels and Megatron-Core's HybridEP backend (its flex
// dispatcher, --moe-token-dispatcher-type flex). Where the all-to-all dispatcher permutes every token into
// top_k copies and sends each copy to its expert's GPU, these send a token to each destination GPU once and
// let the receiver expand it to its local experts; the combine returns one row per token and destination
// GPU, already reduced over that GPU's experts:
//  - DeepEP (deep_ep/buffers/legacy.py, csrc/kernels/legacy/layout.cu, intranode.cu): get_dispatch_layout
//    marks is_token_in_rank[token, rank] when any of the token's top_k experts lives on the rank and counts
//    num_tokens_per_rank as those marks; the dispatch kernel's sender skips a token whose mark is false and
//    copies its hidden row once per marked rank, with its top_k indices rewritten to the receiver's local
//    experts (-1 for the others). Megatron-Core's _DeepepManager (megatron/core/transformer/moe/
//    token_dispatcher.py, fused_a2a.py) permutes the received tokens to the local experts only after the
//    dispatch (get_permuted_hidden_states_by_experts) and unpermutes them back to one row per received token
//    before the combine (get_restored_hidden_states_by_experts).
//  - HybridEP (DeepEP's hybrid-ep branch, csrc/hybrid_ep/backend/hybrid_ep_backend.cuh): the expert buffer
//    of a rank holds each token once "if there are multiple expert on this rank"; attn_to_rdma_map marks a
//    token for each other node once.
//  - Megatron-Core's MoE report (arXiv:2603.07685, Sec. 4.2.2): token-based dispatch "eliminates the
//    permutation step and avoids sending redundant tokens"; inter-node, HybridEP sends to the GPU of the same
//    local index on each node, which forwards within its node.
// Across nodes a token bound for several GPUs of one remote node crosses the network once, to the GPU of the
// same local index there, and is fanned out over NVLink (DeepEP README, "normal kernels": NVLink-to-RDMA
// forwarding; DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.2). The RDMA and NVLink legs run
// pipelined in chunks, so the slower sets the time. A node here is an NVLink domain (gb200-nvl72's node is
// its rack).
#include <cstdint>

#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// Where a token's slots go. `copies` slots a token (top_k · the busiest rank's expert load), each on an
/// expert of the balanced router's choosing. With `groups` > 1 the routing is group-limited (DeepSeek-V2's
/// device-limited and DeepSeek-V3's node-limited routing; HF n_group and topk_group, Megatron-Core
/// --moe-router-num-groups and --moe-router-group-topk): the experts fall into `groups` equal groups of
/// consecutive experts, and a token's come from the `group_top_k` groups whose top top_k/group_top_k experts
/// score highest (megatron/core/transformer/moe/moe_utils.py, group_limited_topk). Megatron-Core places
/// consecutive experts on consecutive expert-parallel ranks, so a place (a GPU, or a node of them) holds
/// consecutive experts too.
struct TokenRouting {
  double copies = 1;
  std::int64_t groups = 0;       ///< 0 or 1: every expert may be picked
  std::int64_t group_top_k = 0;  ///< groups a token's experts come from (group-limited only)
  [[nodiscard]] bool group_limited() const { return groups > 1 && group_top_k > 0 && group_top_k < groups; }
};

/// The expected number of distinct places other than the sender's own among a token's destinations, each
/// place (a node, or a GPU) holding an even share of the experts; 0 with one place or no copies.
///  - Balanced routing, each copy's expert picked independently: (places − 1)·(1 − (1 − 1/places)^copies).
///    (Top-k picks distinct experts, which makes the places slightly less likely to repeat: for 8 of 256
///    experts on 8 GPUs, a GPU is missed with probability C(224, 8)/C(256, 8) = 0.338 against (7/8)^8 =
///    0.344.)
///  - Group-limited, G groups of which t are picked at random (balanced logits), m places: every picked
///    group holds some of the token's experts (it was picked for the sum of its top copies/t). With m ≤ G a
///    place holds g = G/m groups and is missed when none of them is picked: (m − 1)·(1 − C(G − g, t)/C(G,
///    t)). With m > G a group spans m/G places and holds copies/t of the token's experts, picked in it at
///    random: (m − 1)·(t/G)·(1 − (1 − G/m)^(copies/t)). The two agree at m = G (t/G per place); with G = 1
///    the second is the balanced formula. Never more than the balanced count: with copies/t = 1 (or fewer
///    copies than top_k) a group scores by its best expert alone, and the picked groups then hold the same
///    experts unlimited routing picks, not one each.
[[nodiscard]] double expected_other_destinations(const TokenRouting& routing, std::int64_t places);

/// The expected number of distinct GPUs among a token's destinations, its own GPU included, on a group of
/// `gpus` GPUs holding an even share of the experts each: expected_other_destinations(routing, gpus) ·
/// gpus/(gpus − 1) (the other places are gpus − 1 of the gpus; the own one counts as any other); 1 with one
/// GPU or no copies. The rows a rank receives in a token-based dispatch, per token it sends.
[[nodiscard]] double expected_destination_gpus(const TokenRouting& routing, std::int64_t gpus);

/// Bytes one rank sends over the network in a token-based dispatch: `bytes` (what the plain all-to-all
/// sends per rank, every copy of every token) / copies × expected_other_destinations(routing, group.nodes).
[[nodiscard]] double token_based_network_bytes(double bytes, const TokenRouting& routing,
                                               const CommGroup& group);

/// The NVLink leg of a token-based dispatch as an all-to-all size over a node's ranks of the group
/// (estimate_collective's convention: a rank's bytes for every rank of the node, its own share included):
/// each token once to each of its distinct destination GPUs among the group's n, expected
/// expected_other_destinations(routing, n) · n/(n − 1) of them with its own GPU: `bytes` / copies × that.
/// A destination is reached from the GPU of the token's local index on its node (the sender on its own
/// node, the network leg's receiver on another), so the node's all-to-all moves (k − 1)/k of it, k the
/// group's ranks on a node; on one node that is bytes / copies × expected_other_destinations(routing, k).
[[nodiscard]] double token_based_nvlink_size(double bytes, const TokenRouting& routing,
                                             const CommGroup& group);

/// The dispatch (or combine: the same bytes back) over `group`. On one node (an NVLink domain), the
/// all-to-all of token_based_nvlink_size. Across nodes, the network leg, each rank sending
/// token_based_network_bytes to one GPU on each other node (every GPU of the node at once, sharing its
/// NICs), and the NVLink leg, the node's all-to-all of token_based_nvlink_size; the slower of the two, with
/// the network leg's latency. With one copy a token, the plain all-to-all. The dispatchers' own kernels
/// move the NVLink bytes (AllToAllKernel::device_initiated). `copy_bytes_per_s` > 0: the most the
/// dispatcher's kernels copy a second on a GPU, every row it receives counted (its own among them, as
/// token_based_nvlink_size counts them), as measured per call (its fixed cost inside the rate); the NVLink
/// leg then takes at least token_based_nvlink_size over it. With one copy a token across nodes there is no
/// separate NVLink leg, and no bound.
[[nodiscard]] CollectiveEstimate token_based_all_to_all(double bytes, const TokenRouting& routing,
                                                        const CommGroup& group, const ClusterSpec& cluster,
                                                        double copy_bytes_per_s = 0);

}  // namespace trainsim::topo
