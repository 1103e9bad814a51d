#include "models/step/step_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "models/step/pipeline_schedule.hpp"
#include "models/workload/rank_tensors.hpp"

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

int chunks_per_rank(const ParallelPlan& plan) {
  if (is_v_shape(plan.schedule)) return 2;
  return plan.schedule == Schedule::interleaved ? plan.virtual_stages : 1;
}

int pipeline_tail_slots(const TransformerSpec& model) {
  return static_cast<int>(2 * model.mtp_layers);
}

std::vector<int> split_layers_with_tail(std::int64_t layers, int parts, int tail_slots) {
  std::vector<int> out = split_layers(layers + tail_slots, parts);
  int left = tail_slots;
  for (int i = parts - 1; i >= 0 && left > 0; --i) {
    int& part = out[static_cast<std::size_t>(i)];
    const int take = std::min(left, part - (i == parts - 1 ? 0 : 1));
    part -= take;
    left -= take;
  }
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

LayerSplit split_pipeline_layers(std::int64_t layers, const ParallelPlan& plan, int tail_slots) {
  LayerSplit out;
  const int v = chunks_per_rank(plan);
  // DualPipe: pp stages, each held twice (ranks r and pp−1−r); the V shapes: 2·pp virtual stages.
  const bool copies = plan.schedule == Schedule::dualpipe;
  const int parts = copies ? plan.pp : plan.pp * v;
  const auto rank_of = [&](int vs) {
    return copies ? vs : rank_of_virtual_stage(plan.schedule, vs, plan.pp);
  };
  auto refuse = [&](std::string why) {
    out.reason = std::move(why);
    out.chunk_layers.clear();
    out.stage_layers.clear();
    return out;
  };
  if (plan.pp < 1 || v < 1) return refuse("pp and virtual_stages must be at least 1");
  // A list per virtual stage may leave the first and the last empty: the embedding alone, the LM head
  // alone (Llama 3 405B's pipeline, Llama Team 2024 Sec. 3.3.2); every other virtual stage needs a layer.
  const bool per_virtual_stage = v > 1 && !copies && static_cast<int>(plan.stage_layers.size()) == parts;
  if (layers < parts - (per_virtual_stage ? 2 : 0)) {
    return refuse(fmt::format("{} layers cannot fill pp·virtual_stages = {} pipeline stages", layers, parts));
  }
  if (!plan.stage_layers.empty()) {
    const auto n = static_cast<int>(plan.stage_layers.size());
    const std::int64_t sum =
        std::accumulate(plan.stage_layers.begin(), plan.stage_layers.end(), std::int64_t{0});
    if (copies && n != plan.pp) return refuse(fmt::format("has {} entries; expected pp = {}", n, plan.pp));
    if (n != plan.pp && n != parts) {
      return refuse(v == 1 ? fmt::format("has {} entries; expected pp = {}", n, plan.pp)
                           : fmt::format("has {} entries; expected pp = {} or pp·virtual_stages = {}", n,
                                         plan.pp, parts));
    }
    if (sum != layers) return refuse(fmt::format("adds up to {} layers; the model has {}", sum, layers));
    for (int i = 0; i < n; ++i) {
      const int x = plan.stage_layers[static_cast<std::size_t>(i)];
      const bool end = per_virtual_stage && (i == 0 || i == n - 1);
      if (x < (end ? 0 : 1)) {
        return refuse(per_virtual_stage ? "every entry must be at least 1 but the first and the last (0: the "
                                          "embedding or the LM head alone)"
                                        : "every entry must be at least 1");
      }
    }
    if (n == parts) {
      out.chunk_layers = plan.stage_layers;  // DualPipe: the stages
    } else {
      // Per-rank counts with v chunks: each rank's layers spread over its chunks.
      out.chunk_layers.assign(static_cast<std::size_t>(parts), 0);
      for (int s = 0; s < plan.pp; ++s) {
        const auto split = split_layers(plan.stage_layers[static_cast<std::size_t>(s)], v);
        for (int c = 0; c < v; ++c) {
          if (split[static_cast<std::size_t>(c)] < 1)
            return refuse(fmt::format("an entry is smaller than virtual_stages ({})", v));
          const int virtual_stage = virtual_stage_of(plan.schedule, c, s, plan.pp);
          out.chunk_layers[static_cast<std::size_t>(virtual_stage)] = split[static_cast<std::size_t>(c)];
        }
      }
    }
  } else {
    out.chunk_layers = split_layers_with_tail(layers, parts, tail_slots);
  }
  out.stage_layers.assign(static_cast<std::size_t>(plan.pp), 0);
  for (int vs = 0; vs < parts; ++vs) {
    const int layers_here = out.chunk_layers[static_cast<std::size_t>(vs)];
    out.stage_layers[static_cast<std::size_t>(rank_of(vs))] += layers_here;
    if (copies) out.stage_layers[static_cast<std::size_t>(plan.pp - 1 - vs)] += layers_here;
  }
  return out;
}

StepPlan make_step_plan(const TransformerSpec& model, const topo::ClusterSpec& cluster,
                        const ParallelPlan& plan, const TrainingSpec& training) {
  if (training.global_batch < 1)
    return infeasible("training.global_batch: a step needs at least one sequence");
  if (const auto problems = layout_rules(model, plan, training, cluster.total_gpus()); !problems.empty())
    return infeasible(key_path(problems.front().key) + ": " + problems.front().message);
  StepPlan out;
  out.schedule = plan.schedule;
  out.pp = plan.pp;
  out.virtual_stages = chunks_per_rank(plan);
  out.micro_batches = micro_batches_per_step(plan, training);
  if (plan.schedule == Schedule::dualpipe) {  // folded: see StepPlan::schedule
    out.schedule = Schedule::dualpipev;
    out.pp = plan.pp / 2;
    out.micro_batches /= 2;
  }
  const std::int64_t layers = stack_layer_count(model);
  LayerSplit split = split_pipeline_layers(layers, plan, pipeline_tail_slots(model));
  if (!split.reason.empty()) return infeasible(std::move(split.reason));
  out.chunk_layers = std::move(split.chunk_layers);
  out.stage_layers = std::move(split.stage_layers);
  out.stage_layers.resize(static_cast<std::size_t>(out.pp));
  return out;
}

}  // namespace trainsim::model
