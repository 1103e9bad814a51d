#include "models/step/memory.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

#include "models/step/layout_rules.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/distributed_update.hpp"
#include "models/workload/parameters.hpp"
#include "models/workload/preconditioner.hpp"
#include "models/workload/rank_tensors.hpp"
#include "models/workload/shard.hpp"
#include "sim/error.hpp"

namespace trainsim::model {
namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
std::string shortfall(int stage, const MemoryBreakdown& m, double capacity) {
  std::array<std::pair<double, const char*>, 5> parts{{{m.activations, "activations"},
                                                       {m.optimizer_state, "optimizer state"},
                                                       {m.weights, "weights"},
                                                       {m.grads, "grads"},
                                                       {m.buffers, "buffers"}}};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // One buffer for the whole text, its formats parsed at compile time (a layout search writes it for every
  // layout that does not fit).
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), FMT_COMPILE("stage {} needs {:.1f} GiB of {:.4g} GiB:"), stage,
                 m.total() / kGiB, capacity / kGiB);
  bool first = true;
  for (const auto& [bytes, name] : parts) {
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{} {} {:.1f} GiB"), first ? "" : ",", name,
                   bytes / kGiB);
    first = false;
  }
  return fmt::to_string(out);
}

// The parameters of a layer's ZeRO-3 gather: one of gathers_per_layer, or its largest tensor when gathered
// tensor by tensor.
double zero3_layer_piece(const UnitParameters& units, const Framework& fw) {
  double layer_piece = units.layer / std::max(1, fw.gathers_per_layer);
  if (fw.gather_per_tensor) {
    layer_piece = 0;
    for (const TensorShape& t : units.layer_tensors)
      layer_piece = std::max(layer_piece, as_double(t.rows) * as_double(t.cols));
  }
  return layer_piece;
}

// The fp8 memory of a stage of `layers` layers from `first_layer` on. A MoE model's dense first layers on
// this stage have the dense layer's GEMMs (under ZeRO-3 each kind keeps its own gathered copies: a slight
// over-count on the one stage that holds both).
Fp8Memory stage_fp8_memory(const TransformerSpec& model, const ParallelPlan& plan, int layers,
                           int first_layer, double micro_batches_in_flight) {
  const int dense_here =
      model.generic_layers.empty() ? static_cast<int>(model.dense_layers_in(first_layer, layers)) : 0;
  Fp8Memory fp8 = fp8_stage_memory(model, plan, layers - dense_here, micro_batches_in_flight);
  if (dense_here > 0) {
    const Fp8Memory d = fp8_stage_memory(model.as_dense_layer(), plan, dense_here, micro_batches_in_flight);
    fp8.weight_copies += d.weight_copies;
    fp8.amax_history += d.amax_history;
    fp8.saved_inputs += d.saved_inputs;
    fp8.gemm_weights += d.gemm_weights;
    fp8.fp8_gemms += d.fp8_gemms;
  }
  return fp8;
}

// Elements of the rank's largest weight matrix (rows and columns above 1), dense or expert: what an
// optimizer that needs full matrices gathers of its sharded state.
double largest_matrix_elements(const RankTensors& r) {
  double largest = 0;
  for (const auto* list : {&r.dense, &r.expert}) {
    for (const TensorShape& t : *list) {
      if (t.role == TensorRole::matrix && t.rows > 1 && t.cols > 1) {
        largest = std::max(largest, as_double(t.rows) * as_double(t.cols));
      }
    }
  }
  return largest;
}

}  // namespace

std::vector<int> stage_layer_counts(const TransformerSpec& model, const ParallelPlan& plan) {
  const std::int64_t total = stack_layer_count(model);
  if (plan.pp < 1) throw InputError("parallelism.pp: must be at least 1");
  LayerSplit split = split_pipeline_layers(total, plan, pipeline_tail_slots(model));
  if (!split.reason.empty()) throw InputError("parallelism: " + split.reason);
  return split.stage_layers;
}

std::vector<TensorShape> stage_parameter_tensors(const TransformerSpec& model, const ParallelPlan& plan,
                                                 int stage) {
  check_layout_counts(model, plan);
  return stage_parameter_tensors(model, plan, stage, stage_layer_counts(model, plan));
}

std::vector<TensorShape> stage_parameter_tensors(const TransformerSpec& model, const ParallelPlan& plan,
                                                 int stage, const std::vector<int>& stage_layers) {
  if (stage < 0 || stage >= plan.pp)
    throw InputError(fmt::format("stage {} is not in 0..{}", stage, plan.pp - 1));
  RankTensors r = rank_tensors(model, plan, stage, stage_layers);
  r.dense.insert(r.dense.end(), r.expert.begin(), r.expert.end());
  return r.dense;
}

MemoryBreakdown model_state_bytes(double params, double shard_degree, ZeroStage zero,
                                  const OptimizerSpec& spec, Precision compute) {
  const OptimizerCost per = optimizer_cost_per_param(spec, compute);
  const double n = std::max(1.0, shard_degree);
  MemoryBreakdown m;
  m.weights =
      params * topo::bytes_per_element(weight_storage_precision(compute)) / (shards_weights(zero) ? n : 1);
  m.grads =
      params * topo::bytes_per_element(gradient_precision(spec, compute)) / (shards_gradients(zero) ? n : 1);
  m.optimizer_state = params * (per.state_bytes + per.master_bytes) / (shards_optimizer_states(zero) ? n : 1);
  return m;
}

namespace {

// A whole-matrix optimizer under sharded states (Muon, Shampoo, SOAP): the buffers its update gathers on
// each rank of a stage holding tensors r, sharded over `degree` ranks.
double whole_matrix_update_bytes(const OptimizerSpec& opt, Precision compute, const RankTensors& r,
                                 double degree) {
  if (keeps_preconditioners(opt.kind)) {
    // Shampoo, SOAP: the owner's blocks' gathered gradients, and every rank's buffer of all the
    // all-gathered search directions (Distributed Shampoo's global buffer, padded per owner).
    std::vector<TensorShape> all = r.dense;
    all.insert(all.end(), r.expert.begin(), r.expert.end());
    const DistributedMatrixUpdate d =
        distributed_matrix_update(opt, compute, all, static_cast<std::int64_t>(degree));
    return d.owner_elements_max * topo::bytes_per_element(gradient_precision(opt, compute)) +
           d.direction_gather_bytes;
  }
  // Muon: the largest matrix gathered whole, and its update.
  return 2 * largest_matrix_elements(r) * topo::bytes_per_element(opt.state_precision);
}

}  // namespace

MemoryEstimate estimate_memory(const TransformerSpec& model, const ParallelPlan& plan,
                               const TrainingSpec& training, const topo::GpuSpec& gpu,
                               const MemoryOptions& options) {
  check_layout_counts(model, plan);
  const std::vector<int> layers = stage_layer_counts(model, plan);
  MemoryEstimate est;
  est.capacity = gpu.hbm_bytes * (1.0 - options.headroom_fraction);

  const Precision compute = training.precision;
  const Precision act_precision = weight_storage_precision(compute);
  if (model.generic_layers.empty()) {
    // Degrees that do not divide the model make the plan infeasible, not the input bad.
    try {
      check_shard(model, shard_of(plan, act_precision));
    } catch (const InputError& e) {
      est.fits = false;
      est.reason = e.what();
      return est;
    }
  }
  const OptimizerSpec& opt = training.optimizer;
  const double bw = topo::bytes_per_element(weight_storage_precision(compute));
  const double bg = topo::bytes_per_element(gradient_precision(opt, compute));
  const double dense_degree = plan.dense_shard_ranks();
  const double expert_degree = plan.expert_shard_ranks();
  const ZeroStage zero = plan.zero;
  auto shard = [&](double bytes, double degree, bool sharded) { return sharded ? bytes / degree : bytes; };
  const bool weights_sharded = shards_weights(zero), grads_sharded = shards_gradients(zero),
             states_sharded = shards_optimizer_states(zero);

  const std::int64_t micro_batches = micro_batches_per_step(plan, training);

  // ZeRO-3's collectives: a layer's share, or the embedding / LM head whole.
  const UnitParameters units = unit_parameters(model, plan);
  const Framework& fw = plan.framework;
  const double layer_piece = zero3_layer_piece(units, fw);

  // A rank's tensors and their optimizer costs, kept for the next rank when it holds the same ones (the
  // middle of the pipeline).
  RankTensors r;
  double dense = 0, expert = 0;
  OptimizerCost od, oe;
  int first_layer = 0;
  est.stages.reserve(static_cast<std::size_t>(plan.pp));
  for (int s = 0; s < plan.pp; ++s) {
    const auto si = static_cast<std::size_t>(s);
    StageMemory st;
    st.stage = s;
    st.layers = layers[si];
    st.embedding = s == 0 && model.generic_layers.empty();
    st.lm_head = s == plan.pp - 1 && model.generic_layers.empty();
    if (s == 0 || !same_rank_tensors(model, plan, layers, s - 1, s)) {
      r = rank_tensors(model, plan, s, layers);
      dense = elements(r.dense);
      expert = elements(r.expert);
      od = optimizer_cost(opt, compute, r.dense);
      oe = optimizer_cost(opt, compute, r.expert);
    }
    st.params = dense + expert;

    MemoryBreakdown& m = st.memory;
    m.weights =
        shard(bw * dense, dense_degree, weights_sharded) + shard(bw * expert, expert_degree, weights_sharded);
    m.grads =
        shard(bg * dense, dense_degree, grads_sharded) + shard(bg * expert, expert_degree, grads_sharded);
    st.master_bytes = shard(od.master_bytes, dense_degree, states_sharded) +
                      shard(oe.master_bytes, expert_degree, states_sharded);
    m.optimizer_state = st.master_bytes + shard(od.state_bytes, dense_degree, states_sharded) +
                        shard(oe.state_bytes, expert_degree, states_sharded);

    const StageActivation act =
        stage_activation(model, plan, act_precision, s, layers[si], micro_batches, first_layer);
    m.activations = act.total();
    st.in_flight_micro_batches = act.micro_batches_in_flight;
    if (compute == Precision::fp8) {
      st.fp8 = stage_fp8_memory(model, plan, layers[si], first_layer, act.micro_batches_in_flight);
      m.weights += st.fp8.weight_copies;
      m.activations = std::max(0.0, m.activations - st.fp8.saved_inputs);
    }

    // ZeRO-2 reduces gradients through buckets (two in flight); ZeRO-3 reduce-scatters each unit's own
    // gradients, counted with the unit below.
    const bool sharded_grads = grads_sharded && !weights_sharded && dense_degree > 1;
    st.bucket_bytes = sharded_grads ? std::min(2 * plan.bucket_bytes, bg * st.params) : 0;
    if (weights_sharded && dense_degree > 1) {
      double unit = layers[si] > 0 ? layer_piece : 0;
      if (st.embedding) unit = std::max(unit, units.embedding);
      if (st.lm_head) unit = std::max(unit, units.head);
      const int ahead = prefetch_units(fw, layer_piece);
      st.gathered_unit_params = unit;
      st.prefetched_units = ahead;
      // The computing unit and the ones prefetched gathered, plus the computing one's unsharded gradients
      // before their reduce-scatter; kept to the backward (no reshard), every unit of the rank stays whole.
      st.gathered_bytes = fw.reshard_after_forward ? unit * ((1 + ahead) * bw + bg)
                                                   : bw * st.params * (1 - 1 / dense_degree) + unit * bg;
    }
    if (optimizer_info(opt.kind).needs_full_matrices && states_sharded && dense_degree > 1)
      st.gathered_bytes += whole_matrix_update_bytes(opt, compute, r, dense_degree);
    st.runtime_bytes = options.runtime_bytes;
    const double before_reserve = m.weights + m.grads + m.optimizer_state + m.activations + st.bucket_bytes +
                                  st.gathered_bytes + st.runtime_bytes + st.fp8.amax_history;
    st.allocator_bytes = options.allocator_fraction * before_reserve;
    m.buffers =
        st.bucket_bytes + st.gathered_bytes + st.runtime_bytes + st.fp8.amax_history + st.allocator_bytes;

    if (est.stages.empty() ||
        m.total() > est.stages[static_cast<std::size_t>(est.worst_stage)].memory.total()) {
      est.worst_stage = s;
    }
    est.stages.push_back(st);
    first_layer += layers[si];
  }
  est.memory = est.stages[static_cast<std::size_t>(est.worst_stage)].memory;
  est.per_gpu = est.memory.total();
  est.fits = est.per_gpu <= est.capacity;
  if (!est.fits) est.reason = shortfall(est.worst_stage, est.memory, est.capacity);
  return est;
}

}  // namespace trainsim::model
