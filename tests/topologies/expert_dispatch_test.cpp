// Token-based MoE dispatch (DeepEP, HybridEP; topologies/expert_dispatch.hpp), by hand on round numbers.
#include "topologies/expert_dispatch.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::topo;

namespace {

// A 32-way expert group over 4 nodes of 8 GPUs (every GPU of a node in the group), NICs of 12.5 GB/s
// (100 Gb/s) so that the network leg, not NVLink's 100 GB/s, sets the time.
ClusterSpec slow_nics() {
  ClusterSpec c = testing::round_number_cluster(4);
  c.node.nic_bytes_per_s = 12.5e9;
  return c;
}
const CommGroup kGroup{32, 8, 4, 1, 1};

}  // namespace

TEST_CASE("the expected distinct destinations other than the sender's, enumerated by hand") {
  // 2 copies over 2 places: the other place is missed only when both copies stay, 1/4: 3/4.
  CHECK(expected_other_destinations({2}, 2) == doctest::Approx(0.75).epsilon(1e-12));
  // 2 copies over 4 places: each of the 3 others is hit with probability 1 − (3/4)^2 = 7/16: 21/16.
  CHECK(expected_other_destinations({2}, 4) == doctest::Approx(21.0 / 16).epsilon(1e-12));
  // 3 copies over 3 places: each of the 2 others is hit with probability 1 − (2/3)^3 = 19/27: 38/27.
  CHECK(expected_other_destinations({3}, 3) == doctest::Approx(38.0 / 27).epsilon(1e-12));
  // Top-8 over the 8 GPUs of one node: 7 · (1 − (7/8)^8) = 7 · (1 − 0.343608916) = 4.594737589.
  CHECK(expected_other_destinations({8}, 8) == doctest::Approx(4.594737589).epsilon(1e-9));
  CHECK(expected_other_destinations({8}, 1) == 0);
  CHECK(expected_other_destinations({0}, 8) == 0);
}

TEST_CASE("group-limited routing: the places a token reaches, enumerated by hand") {
  // DeepSeek-V3: 256 experts in 8 groups, a token's 8 from 4 of them (TokenRouting{8, 8, 4}).
  const TokenRouting v3{8, 8, 4};
  // 8 nodes (ep 64), a group per node: another node is missed when its group is not among the 4 picked,
  // C(7, 4)/C(8, 4) = 35/70: 7 · 1/2 = 3.5 remote nodes, against 7 · (1 − (7/8)^8) = 4.59 unlimited.
  CHECK(expected_other_destinations(v3, 8) == doctest::Approx(3.5).epsilon(1e-12));
  // 4 nodes (ep 32), 2 groups a node: missed with C(6, 4)/C(8, 4) = 15/70: 3 · 55/70.
  CHECK(expected_other_destinations(v3, 4) == doctest::Approx(3.0 * 55 / 70).epsilon(1e-12));
  // 2 nodes (ep 16), 4 groups a node: missed only when the 4 picked are the sender's own, 1/70.
  CHECK(expected_other_destinations(v3, 2) == doctest::Approx(69.0 / 70).epsilon(1e-12));
  // 64 GPUs, a group over 8 of them: a GPU's group is picked with probability 4/8 and then holds 8/4 = 2
  // of the token's experts, reaching the GPU with probability 1 − (7/8)^2: 63 · 1/2 · 15/64.
  CHECK(expected_other_destinations(v3, 64) == doctest::Approx(63.0 * 0.5 * 15 / 64).epsilon(1e-12));
  // DeepSeek-V2 on one node of 8 GPUs (8 groups, 3 picked, 6 experts): a GPU per group, 7 · 3/8.
  CHECK(expected_other_destinations({6, 8, 3}, 8) == doctest::Approx(7.0 * 3 / 8).epsilon(1e-12));
  // 6 nodes: 8/6 groups a node (the gamma form of the binomial): C(20/3, 4)/C(8, 4) =
  // (20·17·14·11/3^4)/(8·7·6·5) = 52360/136080, 5 · (1 − 52360/136080) = 3.0761, below the balanced 3.837.
  CHECK(expected_other_destinations(v3, 6) == doctest::Approx(5.0 * (1 - 52360.0 / 136080)).epsilon(1e-12));
  // A group scored by its best expert alone (top_k/group_top_k = 1), or fewer copies than picked groups:
  // the picked groups hold the experts unlimited routing picks, so never more places than balanced routing:
  // 4 copies, 7 · (1 − (7/8)^4) = 2.8967 (the group count would be 3.5); 2 copies, 7 · (1 − (7/8)^2).
  CHECK(expected_other_destinations({4, 8, 4}, 8) ==
        doctest::Approx(7.0 * (1 - 2401.0 / 4096)).epsilon(1e-12));
  CHECK(expected_other_destinations({2, 8, 4}, 8) == doctest::Approx(7.0 * (1 - 49.0 / 64)).epsilon(1e-12));
  // One group, or all of them picked, limits nothing: the balanced formula.
  CHECK(expected_other_destinations({8, 1, 1}, 8) == doctest::Approx(4.594737589).epsilon(1e-9));
  CHECK(expected_other_destinations({8, 8, 8}, 8) == doctest::Approx(4.594737589).epsilon(1e-9));
  // The network bytes of the 32-way group over 4 nodes follow: B/8 · 3 · 55/70.
  CHECK(token_based_network_bytes(1e9, v3, kGroup) == doctest::Approx(1e9 / 8 * 3 * 55 / 70).epsilon(1e-12));
  // (A simulation of Megatron-Core's group_limited_topk on random logits, 4,000 tokens, gave 3.475, 2.353
  // and 0.985 remote nodes at 8, 4 and 2 nodes.)
}

TEST_CASE("the destination GPUs of a token count its own GPU as any other") {
  // 2 copies over 2 GPUs: 2 · (1 − 1/4) = 1.5, the others' 3/4 times 2/1.
  CHECK(expected_destination_gpus({2}, 2) == doctest::Approx(1.5).epsilon(1e-12));
  // DeepSeek-V3's node-limited routing over 8 GPUs, a group a GPU: 4 of the 8 groups picked, so 4 GPUs.
  CHECK(expected_destination_gpus({8, 8, 4}, 8) == doctest::Approx(4.0).epsilon(1e-12));
  // One GPU, or nothing routed: the token stays where it is.
  CHECK(expected_destination_gpus({8}, 1) == 1);
  CHECK(expected_destination_gpus({0}, 8) == 1);
}

TEST_CASE("a token bound for top_k experts crosses the network once per distinct remote node") {
  // 8 copies over 4 nodes: 3 · (1 − (3/4)^8) = 3 · (1 − 0.100112915) = 2.699661255 remote nodes.
  CHECK(expected_other_destinations({8}, 4) == doctest::Approx(2.699661255).epsilon(1e-9));
  CHECK(expected_other_destinations({1}, 4) == doctest::Approx(0.75).epsilon(1e-12));  // one copy: 3/4 leave
  CHECK(expected_other_destinations({8}, 1) == 0);
  // Per rank, of B bytes of slots (8 copies a token): B/8 · 2.6997 on the network, where the plain
  // all-to-all sends the 24/32 of its copies that live on other nodes, 0.75 · B: 0.4499 of it.
  const double bytes = 1e9;
  const double plain_network = bytes * (32.0 - 8.0) / 32.0;
  CHECK(token_based_network_bytes(bytes, {8}, kGroup) ==
        doctest::Approx(bytes / 8 * 2.699661255).epsilon(1e-9));
  CHECK(token_based_network_bytes(bytes, {8}, kGroup) / plain_network ==
        doctest::Approx(2.699661255 / 8 / 0.75).epsilon(1e-9));
}

TEST_CASE("token-based dispatch time: the network leg at the NIC's rate, latency apart") {
  // Size-dependent time per byte of slots (the difference of two sizes cancels every latency): the plain
  // all-to-all moves 0.75 of each byte over a 12.5 GB/s NIC; the token-based one 2.699661255/8 of it,
  // still slower than its NVLink leg (7/8 of each byte at 100 GB/s: 8.75e-12 s against 2.7e-11 s a byte).
  const ClusterSpec c = slow_nics();
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const double plain =
      slope([&](double x) { return collective_time(CollectiveOp::all_to_all, x, kGroup, c); });
  const double token = slope([&](double x) { return token_based_all_to_all(x, {8}, kGroup, c).time_s; });
  CHECK(plain == doctest::Approx(0.75 / 12.5e9).epsilon(1e-9));
  CHECK(token == doctest::Approx(2.699661255 / 8 / 12.5e9).epsilon(1e-9));
}

TEST_CASE(
    "inside one node a token reaches each destination GPU once: 1 − (7/8)^8 of the all-to-all's bytes") {
  // EP 8 on one node, top-8 of 256 experts (32 a GPU). Per token the all-to-all sends its 8 copies, of
  // which 8 · 7/8 = 7 leave the GPU; the token-based dispatch sends one row to each distinct other GPU,
  // 7 · (1 − (7/8)^8) = 4.594737589 of them. Per byte of slots, 7/8 against 4.594737589/8 = 0.574342199:
  // the ratio 4.594737589/7 = 1 − (7/8)^8 = 0.656391084.
  const CommGroup node{8, 8, 1, 1, 1};
  const double tokens = 4096, row = 7168 * 2.0;  // DeepSeek-V3's rows in BF16
  const double slots = tokens * 8 * row;         // 469,762,048 bytes a rank
  CHECK(token_based_nvlink_size(slots, {8}, node) * 7 / 8 ==
        doctest::Approx(tokens * row * 4.594737589).epsilon(1e-9));
  // Its time, size-dependent part (two sizes' difference cancels the latency): the same ratio over NVLink's
  // 100 GB/s, 0.574342199 / 1e11 s a byte of slots against 0.875 / 1e11.
  const ClusterSpec c = slow_nics();
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const double plain = slope([&](double x) { return collective_time(CollectiveOp::all_to_all, x, node, c); });
  const double token = slope([&](double x) { return token_based_all_to_all(x, {8}, node, c).time_s; });
  CHECK(plain == doctest::Approx(0.875 / 100e9).epsilon(1e-9));
  CHECK(token == doctest::Approx(0.574342199 / 100e9).epsilon(1e-8));
  CHECK(token / plain == doctest::Approx(0.656391084).epsilon(1e-8));
}

TEST_CASE("across nodes the NVLink leg carries each token once per destination GPU, not every copy") {
  // kGroup (32 GPUs, 8 a node) with NICs fast enough that NVLink sets the time. A token's distinct
  // destination GPUs, its own included: 32 · (1 − (31/32)^8) = 32 · (1 − 0.775699880) = 7.177603848; each is
  // reached from the GPU of the token's local index on its node, so 7/8 of them cross that node's NVLink:
  // per byte of slots 7.177603848/8 · 7/8 = 0.785050421 bytes, at 100 GB/s. (Every copy, before: 7/8.)
  ClusterSpec c = slow_nics();
  c.node.nic_bytes_per_s = 10e12;
  CHECK(token_based_nvlink_size(1e9, {8}, kGroup) == doctest::Approx(1e9 / 8 * 7.177603848).epsilon(1e-9));
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const double token = slope([&](double x) { return token_based_all_to_all(x, {8}, kGroup, c).time_s; });
  CHECK(token == doctest::Approx(0.785050421 / 100e9).epsilon(1e-8));
}

TEST_CASE(
    "without a share of their own the dispatchers' kernels keep the ring's NVLink rate where NCCL's is "
    "slower") {
  // The one-node case above with NCCL's all-to-all at half the ring's 100 GB/s: the plain all-to-all
  // slows to 0.875 / 50e9 s a byte, the token-based dispatch stays at 0.574342199 / 100e9.
  ClusterSpec c = slow_nics();
  c.node.comm.all_to_all_bandwidth_fraction = 0.5;
  const CommGroup node{8, 8, 1, 1, 1};
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const double plain = slope([&](double x) { return collective_time(CollectiveOp::all_to_all, x, node, c); });
  const double token = slope([&](double x) { return token_based_all_to_all(x, {8}, node, c).time_s; });
  CHECK(plain == doctest::Approx(0.875 / 50e9).epsilon(1e-9));
  CHECK(token == doctest::Approx(0.574342199 / 100e9).epsilon(1e-8));
}

TEST_CASE("a dispatcher whose kernels copy slower than NVLink sets the NVLink leg: every received row") {
  // One node, top-8 of 8 GPUs: a rank receives 8 · (1 − (7/8)^8) = 5.251128671 rows a token, its own among
  // them, 0.656391084 bytes a byte of slots. Copied at 30 GB/s that is 0.656391084 / 30e9 s a byte, slower
  // than the link's 0.574342199 / 100e9; at 1 TB/s the link sets it as without a bound.
  const ClusterSpec c = slow_nics();
  const CommGroup node{8, 8, 1, 1, 1};
  const double b = 1e9;
  const auto slope = [&](auto time) { return (time(2 * b) - time(b)) / b; };
  const auto copied_at = [&](double rate, const CommGroup& g) {
    return slope([&](double x) { return token_based_all_to_all(x, {8}, g, c, rate).time_s; });
  };
  CHECK(copied_at(30e9, node) == doctest::Approx(0.656391084 / 30e9).epsilon(1e-8));
  CHECK(copied_at(1e12, node) == doctest::Approx(0.574342199 / 100e9).epsilon(1e-8));
  CHECK(copied_at(0, node) == doctest::Approx(0.574342199 / 100e9).epsilon(1e-8));
  // Across nodes the slower leg sets the time: kGroup's NVLink leg carries 7.177603848/8 bytes a byte of
  // slots, at 60 GB/s 1.50e-11 s, under the network leg's 2.699661255/8 / 12.5e9 = 2.70e-11; at 20 GB/s
  // 4.49e-11 s, over it.
  CHECK(copied_at(60e9, kGroup) == doctest::Approx(2.699661255 / 8 / 12.5e9).epsilon(1e-9));
  CHECK(copied_at(20e9, kGroup) == doctest::Approx(7.177603848 / 8 / 20e9).epsilon(1e-8));
}

TEST_CASE("with one copy a token it is the plain all-to-all") {
  const ClusterSpec c = slow_nics();
  const CommGroup node{8, 8, 1, 1, 1};
  CHECK(token_based_all_to_all(1e8, {1}, node, c).time_s ==
        collective_time(CollectiveOp::all_to_all, 1e8, node, c));
  CHECK(token_based_all_to_all(1e8, {1}, kGroup, c).time_s ==
        collective_time(CollectiveOp::all_to_all, 1e8, kGroup, c));
}
