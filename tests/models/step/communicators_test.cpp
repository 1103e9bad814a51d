// Where a layout's communicator groups sit (models/step/communicators.hpp), worked out by hand from the rank
// numbering: rank = tp + tp·cp·(ep + ep·(dp + dp·pp)) in the default order tp-cp-ep-dp-pp (Megatron-Core's),
// rank r on node r / GPUs per node.
#include "models/step/communicators.hpp"

#include <doctest/doctest.h>

#include "tests/support/fixtures.hpp"
#include "topologies/collective_cost.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// Four NVLink domains of 64 GPUs (GB200 NVL72 racks as the MoE cases use them: 64 expert ranks per domain),
// one NIC per GPU.
topo::ClusterSpec nvlink_domains_of_64() {
  topo::ClusterSpec c = testing::dgx_h100(4);
  c.node.gpus_per_node = 64;
  c.node.nics_per_node = 64;
  return c;
}

// A folded 32-way expert group over dp 32, tp 1, cp 1, at pipeline depth `pp`.
ParallelPlan folded_ep32(int pp) {
  ParallelPlan p;
  p.pp = pp;
  p.dp = 32;
  p.ep = 32;
  p.expert_folding = true;
  return p;
}

}  // namespace

TEST_CASE("a 32-way expert group at pp 8 stays in one NVLink domain and costs what it costs at pp 1") {
  const topo::ClusterSpec cluster = nvlink_domains_of_64();
  // pp 8 × dp 32 = 256 GPUs. The expert group is the first 32 dp ranks of one stage: ranks 0..31, all on
  // node 0 (a node is 64 GPUs). The pipeline group strides by 32 ranks: ranks 0, 32, …, 224 on nodes
  // 0, 0, 1, 1, 2, 2, 3, 3.
  const Communicators deep = communicators(folded_ep32(8), cluster);
  CHECK(deep.ep.size == 32);
  CHECK(deep.ep.nodes == 1);
  CHECK(deep.ep.ranks_per_node == 32);
  CHECK(deep.pp.nodes == 4);
  CHECK(deep.stage_node == std::vector<std::int64_t>{0, 0, 1, 1, 2, 2, 3, 3});
  // At pp 1 the same 32 ranks form the group, on one node.
  const Communicators flat = communicators(folded_ep32(1), cluster);
  CHECK(flat.ep.nodes == 1);
  CHECK(flat.ep.ranks_per_node == 32);
  const double bytes = 64e6;
  CHECK(topo::collective_time(topo::CollectiveOp::all_to_all, bytes, deep.ep, cluster) ==
        topo::collective_time(topo::CollectiveOp::all_to_all, bytes, flat.ep, cluster));
}

TEST_CASE("with the pipeline inside the data-parallel ranks, the same expert group spans every domain") {
  // Order tp-cp-ep-pp-dp: rank = pp + 8·dp, so the 32 dp ranks of stage 0 are ranks 0, 8, …, 248: one in
  // every 8 consecutive ranks, 8 on each of the 4 nodes. Megatron-Core never places ranks this way; it is
  // what the placement did before the pipeline went outermost.
  ParallelPlan p = folded_ep32(8);
  p.order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::pp, ParallelAxis::dp};
  const Communicators c = communicators(p, nvlink_domains_of_64());
  CHECK(c.ep.nodes == 4);
  CHECK(c.ep.ranks_per_node == 8);
  CHECK(c.stage_node == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("a stage's data-parallel group is consecutive ranks: tp 8 × dp 4 × pp 2 on DGX H100") {
  // rank = tp + 8·dp + 32·pp: the dp group of rank 0 is ranks 0, 8, 16, 24 (nodes 0..3, one rank each);
  // the pipeline pair is ranks 0 and 32 (nodes 0 and 4).
  ParallelPlan p;
  p.tp = 8;
  p.dp = 4;
  p.pp = 2;
  const Communicators c = communicators(p, testing::dgx_h100(8));
  CHECK(c.tp.nodes == 1);
  CHECK(c.grad.size == 4);
  CHECK(c.grad.nodes == 4);
  CHECK(c.grad.ranks_per_node == 1);
  CHECK(c.stage_node == std::vector<std::int64_t>{0, 4});
}
