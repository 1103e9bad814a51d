#include "models/run/checkpoint_io.hpp"

#include <doctest/doctest.h>

#include "tests/support/fixtures.hpp"

using namespace trainsim;

namespace {
// DGX A100 nodes (8 GPUs, 8 NICs of 200 Gb/s = 25 GB/s), with a round 20 GB/s host link in place of PCIe
// Gen4's 32 GB/s so that the copy-out times below divide evenly, on storage of round bandwidths.
topo::ClusterSpec cluster_of(std::int64_t nodes) {
  topo::ClusterSpec c = testing::dgx_a100(nodes);
  c.node.pcie_bytes_per_s = 20e9;
  c.storage.write_bytes_per_s = 100e9;
  c.storage.read_bytes_per_s = 200e9;
  c.storage.per_node_bytes_per_s = 12e9;
  c.storage.latency_s = 0;
  return c;
}
}  // namespace

TEST_CASE("a checkpoint write is limited by the storage's aggregate bandwidth when many nodes write") {
  // 128 nodes x 12 GB/s = 1.5 TB/s of links, storage takes 100 GB/s: 2.45e12 B / 100e9 = 24.5 s.
  const auto io = model::checkpoint_io(2.45e12, cluster_of(128), model::CheckpointMode::sync);
  CHECK(io.write_time == doctest::Approx(24.5).scale(0));
  CHECK(io.restore_time == doctest::Approx(12.25).scale(0));  // read at 200 GB/s
}

TEST_CASE("a checkpoint write is limited by each node's storage link when few nodes write") {
  // 4 nodes: each writes 1e12/4 B at 12 GB/s = 20.83 s; aggregate 100 GB/s would allow 10 s.
  const auto io = model::checkpoint_io(1e12, cluster_of(4), model::CheckpointMode::sync);
  CHECK(io.write_time == doctest::Approx(1e12 / 4 / 12e9).scale(0));
}

TEST_CASE("sync checkpoints stall for the copy-out and the write, async only for the copy-out") {
  const auto c = cluster_of(128);
  const auto sync = model::checkpoint_io(2.45e12, c, model::CheckpointMode::sync);
  const auto async = model::checkpoint_io(2.45e12, c, model::CheckpointMode::async);
  const double copy_out = 2.45e12 / 1024 / 20e9;  // each of 1,024 GPUs copies its shard over PCIe
  CHECK(async.stall == doctest::Approx(copy_out).scale(0));
  CHECK(sync.stall == doctest::Approx(copy_out + 24.5).scale(0));
  CHECK(async.write_time == doctest::Approx(sync.write_time).scale(0));
}

TEST_CASE("without a storage link the nodes' NICs carry the checkpoint") {
  auto c = cluster_of(2);
  c.storage.per_node_bytes_per_s = 0;
  c.storage.write_bytes_per_s = 0;
  CHECK(model::storage_bytes_per_s_per_node(c) == doctest::Approx(8 * 25e9).scale(0));
  CHECK(model::checkpoint_io(400e9, c, model::CheckpointMode::sync).write_time ==
        doctest::Approx(1.0).scale(0));
}

TEST_CASE("when one data-parallel replica writes, its nodes and its busiest rank set the pace") {
  // 16 writer ranks (2 nodes of 8) write 1e12 B: each of those nodes carries 5e11 B at 12 GB/s = 41.7 s,
  // although the other 126 nodes idle; the busiest rank copies 1e11 B out over PCIe at 20 GB/s = 5 s.
  const auto io = model::checkpoint_io(1e12, cluster_of(128), model::CheckpointMode::async,
                                       {.ranks = 16, .bytes_per_rank_max = 1e11});
  CHECK(io.write_time == doctest::Approx(5e11 / 12e9).scale(0));
  CHECK(io.copy_out_time == doctest::Approx(5.0).scale(0));
  CHECK(io.stall == doctest::Approx(5.0).scale(0));
}
