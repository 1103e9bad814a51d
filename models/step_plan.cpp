#include "models/step_plan.hpp"

#include <fmt/format.h>

#include <numeric>

#include "models/pipeline_schedule.hpp"

namespace trainsim::model {

std::vector<int> split_layers(std::int64_t layers, int parts) {
  std::vector<int> out(static_cast<std::size_t>(parts), static_cast<int>(layers / parts));
  auto remainder = static_cast<int>(layers % parts);
  // Middle parts first, then the first (embedding), then the last (LM head, the heavier end).
  for (int i = 1; i + 1 < parts && remainder > 0; ++i, --remainder) ++out[static_cast<std::size_t>(i)];
  if (remainder > 0) {
    ++out.front();
    --remainder;
  }
  if (remainder > 0) ++out.back();
  return out;
}

int StepPlan::first_layer_of(int virtual_stage) const {
  return std::accumulate(chunk_layers.begin(), chunk_layers.begin() + virtual_stage, 0);
}

namespace {
StepPlan infeasible(std::string reason) {
  StepPlan p;
  p.feasible = false;
  p.reason = std::move(reason);
  return p;
}
}  // namespace

StepPlan make_step_plan(const TransformerSpec& model, const topo::ClusterSpec& cluster,
                        const ParallelPlan& plan, const TrainingSpec& training) {
  if (plan.tp < 1 || plan.pp < 1 || plan.dp < 1 || plan.cp < 1 || plan.ep < 1 || plan.micro_batch < 1 ||
      plan.virtual_stages < 1) {
    return infeasible("every parallel degree, the micro-batch and virtual_stages must be at least 1");
  }
  const std::int64_t gpus = cluster.total_gpus();
  if (plan.world_size() != gpus) {
    return infeasible(fmt::format("tp·pp·cp·ep·dp = {}·{}·{}·{}·{} = {} GPUs, but the cluster has {}",
                                  plan.tp, plan.pp, plan.cp, plan.ep, plan.dp, plan.world_size(), gpus));
  }
  if (plan.shard_group > 0 && plan.dp % plan.shard_group != 0) {
    return infeasible(fmt::format("shard_group {} does not divide dp {}", plan.shard_group, plan.dp));
  }
  const bool generic = !model.generic_layers.empty();
  if (!generic) {
    if (model.heads % plan.tp != 0)
      return infeasible(fmt::format("{} heads do not divide by tp {}", model.heads, plan.tp));
    // tp may exceed kv_heads when it is a multiple of it (K/V heads copied on tp/kv ranks, as Megatron does).
    if (model.kv_heads_or_heads() % plan.tp != 0 && plan.tp % model.kv_heads_or_heads() != 0) {
      return infeasible(fmt::format("{} kv heads do not divide by tp {}, nor tp by them",
                                    model.kv_heads_or_heads(), plan.tp));
    }
    if (model.seq_len % plan.cp != 0) {
      return infeasible(fmt::format("sequence length {} does not divide by cp {}", model.seq_len, plan.cp));
    }
    if (plan.ep > 1 && (!model.is_moe() || model.experts % plan.ep != 0)) {
      return infeasible(
          fmt::format("ep {} needs a mixture-of-experts model whose experts divide by it", plan.ep));
    }
  }
  // Expert-parallel ranks are data replicas for the dense layers (dp excludes ep, SPEC `dp: auto`).
  const std::int64_t per_step = plan.dp * plan.ep * plan.micro_batch;
  if (training.global_batch < 1 || training.global_batch % per_step != 0) {
    if (plan.ep > 1) {
      return infeasible(fmt::format("global batch {} does not divide by dp·ep·micro_batch = {}·{}·{} = {}",
                                    training.global_batch, plan.dp, plan.ep, plan.micro_batch, per_step));
    }
    return infeasible(fmt::format("global batch {} does not divide by dp·micro_batch = {}·{} = {}",
                                  training.global_batch, plan.dp, plan.micro_batch, per_step));
  }
  StepPlan out;
  out.pp = plan.pp;
  out.virtual_stages = plan.schedule == Schedule::interleaved ? plan.virtual_stages : 1;
  out.micro_batches = training.global_batch / per_step;
  if (out.micro_batches > kMaxMicroBatches) {
    return infeasible(
        fmt::format("{} micro-batches per step (global batch / (dp·micro_batch)) is more than the {} "
                    "a step is simulated with; raise micro_batch or dp",
                    out.micro_batches, kMaxMicroBatches));
  }
  if (plan.schedule != Schedule::interleaved && plan.virtual_stages != 1) {
    return infeasible("virtual_stages > 1 needs the interleaved schedule");
  }
  if (const auto why = schedule_constraint_error(plan.schedule, plan.pp, static_cast<int>(out.micro_batches),
                                                 out.virtual_stages);
      !why.empty()) {
    return infeasible(std::string(why));
  }
  const std::int64_t layers = generic ? static_cast<std::int64_t>(model.generic_layers.size()) : model.layers;
  const int parts = plan.pp * out.virtual_stages;
  if (layers < parts) {
    return infeasible(
        fmt::format("{} layers cannot fill pp·virtual_stages = {} pipeline stages", layers, parts));
  }
  if (!plan.stage_layers.empty()) {
    const auto n = static_cast<int>(plan.stage_layers.size());
    const std::int64_t sum =
        std::accumulate(plan.stage_layers.begin(), plan.stage_layers.end(), std::int64_t{0});
    if ((n != plan.pp && n != parts) || sum != layers) {
      return infeasible(
          fmt::format("stage_layers has {} entries summing to {}; expected {} entries summing to {}", n, sum,
                      plan.pp, layers));
    }
    for (int x : plan.stage_layers) {
      if (x < 1) return infeasible("every entry of stage_layers must be at least 1");
    }
    if (n == parts) {
      out.chunk_layers = plan.stage_layers;
    } else {
      // Per-rank counts with v chunks: each rank's layers spread over its chunks.
      out.chunk_layers.assign(static_cast<std::size_t>(parts), 0);
      for (int s = 0; s < plan.pp; ++s) {
        const auto split = split_layers(plan.stage_layers[static_cast<std::size_t>(s)], out.virtual_stages);
        for (int c = 0; c < out.virtual_stages; ++c) {
          if (split[static_cast<std::size_t>(c)] < 1)
            return infeasible("a stage_layers entry is smaller than virtual_stages");
          out.chunk_layers[static_cast<std::size_t>(c * plan.pp + s)] = split[static_cast<std::size_t>(c)];
        }
      }
    }
  } else {
    out.chunk_layers = split_layers(layers, parts);
  }
  out.stage_layers.assign(static_cast<std::size_t>(plan.pp), 0);
  for (int vs = 0; vs < parts; ++vs)
    out.stage_layers[static_cast<std::size_t>(vs % plan.pp)] +=
        out.chunk_layers[static_cast<std::size_t>(vs)];
  return out;
}

}  // namespace trainsim::model
