#pragma once
// Peak device memory per GPU of a training layout, per pipeline stage; the worst GPU is what counts.
//
// Model states follow the ZeRO paper (Rajbhandari et al. 2020, arXiv:1910.02054, §3.1 and Fig. 1): with Ψ
// parameters on a GPU and K optimizer bytes per parameter (master weights included), weights take
// b_w·Ψ, gradients b_g·Ψ and optimizer state K·Ψ; ZeRO-1 divides K·Ψ by the sharding degree N_d, ZeRO-2 also
// the gradients, ZeRO-3 also the weights. Ψ here is what one GPU of a stage holds after tensor, pipeline
// and expert parallelism. Sharding degree: dense parameters are replicated over dp·cp·ep ranks and sharded
// over all of them; expert parameters over dp·cp (each ep rank holds different experts).
//
// Stages: layers per stage from plan.stage_layers, else spread evenly with the remainder on the middle
// stages; the input embedding (and learned positions) is on stage 0; the final norm and LM head on the
// last stage (with tied embeddings and pp > 1 the last stage keeps its own copy of the embedding matrix, as
// Megatron does). With interleaving each pipeline rank holds virtual_stages chunks; memory is per rank.
// ZeRO shards over dp_shard()·cp·ep ranks (parallelism.shard_group under HSDP).
//
// Buffers: gradient reduce buckets (2 · bucket_bytes in flight under ZeRO-2; with ZeRO 0/1 buckets are
// views of the gradient buffer), the ZeRO-3 working set as FSDP and DeepSpeed allocate it (the computing
// unit gathered plus framework prefetch_units() more, in weight precision, plus the computing unit's
// unsharded gradients before their reduce-scatter; a unit is a layer, or 1/gathers_per_layer of one, or
// the embedding or head at the ends; without reshard_after_forward every unit stays gathered;
// for an optimizer that needs whole matrices under ZeRO ≥ 1: Muon's largest matrix's momentum gathered and
// its orthogonalised update, in state precision, as in Moonlight's distributed Muon; Shampoo's and SOAP's
// busiest owner's gathered block gradients and the all-gathered fp32 directions of every block, as
// Distributed Shampoo's global buffer holds them, distributed_update.hpp), a fixed runtime
// reserve (CUDA context, cuBLAS and NCCL workspaces) and an allocator reserve for fragmentation of the
// caching allocator, a fraction of everything else (memory.reserve, default 0). Both reserves are options.
#include <string>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "models/step/fp8_memory.hpp"
#include "models/step/step_report.hpp"
#include "models/workload/optimizer.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::model {

struct MemoryOptions {
  /// Caching-allocator fragmentation reserve, as a fraction of all other memory (the scenario's
  /// memory.reserve, ParallelPlan::framework.memory_reserve). 0 by default: the published memory figures
  /// are max_memory_allocated, which excludes it; PyTorch users report 2–10 % more reserved.
  double allocator_fraction = 0;
  /// CUDA context + cuBLAS/NCCL workspaces per GPU, bytes (≈1 GB on A100/H100 with NCCL's default channels).
  double runtime_bytes = 1.0e9;
  /// Fraction of HBM that must stay free for the plan to fit (budget.memory_headroom).
  double headroom_fraction = 0;
};

/// One pipeline rank's memory; the same for every GPU of that rank (tp/dp/cp ranks are symmetric).
struct StageMemory {
  int stage = 0;
  int layers = 0;                      ///< transformer layers this rank holds (all its chunks)
  bool embedding = false;              ///< holds the input embedding
  bool lm_head = false;                ///< holds the final norm and the LM head (or its tied copy)
  double params = 0;                   ///< parameters on one GPU before ZeRO sharding (after tp, pp, ep)
  double in_flight_micro_batches = 0;  ///< micro-batches whose activations are stashed at the peak
  MemoryBreakdown memory;              ///< peak bytes by kind (master weights inside optimizer_state)
  double master_bytes = 0;             ///< the master-weight part of memory.optimizer_state
  double bucket_bytes = 0;             ///< part of memory.buffers: gradient reduce buckets
  double gathered_bytes =
      0;  ///< part of memory.buffers: ZeRO-3 gathered layers (+ their grads), Muon's gathered matrix
  double gathered_unit_params = 0;  ///< ZeRO-3: parameters of the largest unit gathered at once
  int prefetched_units = 0;         ///< ZeRO-3: units gathered ahead of the computing one
  double runtime_bytes = 0;         ///< part of memory.buffers: context and workspaces
  double allocator_bytes = 0;       ///< part of memory.buffers: fragmentation reserve
  /// fp8 training only (models/step/fp8_memory.hpp): weight copies inside memory.weights, amax histories
  /// inside memory.buffers, saved-input savings already taken off memory.activations.
  Fp8Memory fp8;
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  ///< one per pipeline rank, stage 0 first
  int worst_stage = 0;              ///< index of the largest total (the first one on ties)
  MemoryBreakdown memory;           ///< of the worst stage
  double per_gpu = 0;               ///< memory.total(), bytes
  double capacity = 0;              ///< usable HBM: gpu.hbm_bytes · (1 − headroom_fraction)
  bool fits = true;
  /// Empty when it fits; else e.g. "stage 0 needs 91.2 GiB of 80 GiB: activations 52.1 GiB, optimizer
  /// state 24.0 GiB, weights 10.3 GiB, grads 2.6 GiB, buffers 2.2 GiB" (parts largest first; GiB = 2^30
  /// bytes, the unit in which an "80 GB" A100 holds 80).
  std::string reason;
};

/// Memory per GPU of every pipeline stage. Throws InputError when the inputs are not a layout (zero
/// layers, a degree < 1, stage_layers of the wrong length or sum); a plan that does not fit is a value.
[[nodiscard]] MemoryEstimate estimate_memory(const TransformerSpec& model, const ParallelPlan& plan,
                                             const TrainingSpec& training, const topo::GpuSpec& gpu,
                                             const MemoryOptions& options = {});

/// Transformer layers per pipeline rank, as the step lays them out (split_pipeline_layers in step_plan.hpp);
/// throws InputError when the layers cannot be split so.
[[nodiscard]] std::vector<int> stage_layer_counts(const TransformerSpec& model, const ParallelPlan& plan);

/// The parameter tensors one GPU of pipeline rank `stage` holds (local tp/ep shards, before ZeRO), as
/// optimizer shapes: feed them to optimizer_cost() for the rank's update cost.
[[nodiscard]] std::vector<TensorShape> stage_parameter_tensors(const TransformerSpec& model,
                                                               const ParallelPlan& plan, int stage);
/// The same with the layers per rank given (stage_layer_counts of the same model and plan), for a caller
/// that asks for every rank: the split is then made once, not once per rank.
[[nodiscard]] std::vector<TensorShape> stage_parameter_tensors(const TransformerSpec& model,
                                                               const ParallelPlan& plan, int stage,
                                                               const std::vector<int>& stage_layers);

/// Model-state bytes per GPU (weights + grads + optimizer state with master) of `params` parameters
/// sharded over `shard_degree` ranks at ZeRO stage `zero`, at the optimizer's per-parameter asymptote
/// (optimizer_cost_per_param). The ZeRO paper's Fig. 1 arithmetic; activations and buffers are 0.
[[nodiscard]] MemoryBreakdown model_state_bytes(double params, double shard_degree, ZeroStage zero,
                                                const OptimizerSpec& spec, Precision compute);

}  // namespace trainsim::model
