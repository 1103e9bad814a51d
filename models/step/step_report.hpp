#pragma once
// What simulating one training iteration reports (SPEC "Outputs", per iteration). Produced by both
// fidelities (analytic and event-driven); consumed by the run model, the CLI, sweeps and validation.
// Units: seconds, bytes, FLOPs; rates per second; fractions in [0, 1].
#include <cstdint>
#include <string>

namespace trainsim::model {

/// Peak device memory of one GPU by what occupies it, bytes.
struct MemoryBreakdown {
  double weights = 0;          ///< model parameters resident (after tp/pp/ep/ZeRO-3 sharding)
  double grads = 0;            ///< gradients (after ZeRO-2 sharding)
  double optimizer_state = 0;  ///< optimizer states and fp32 master weights (after ZeRO-1 sharding)
  double activations = 0;      ///< stashed activations at the peak of the schedule
  double buffers = 0;  ///< communication buckets, gathered ZeRO-3 layers, workspace, allocator reserve

  [[nodiscard]] double total() const { return weights + grads + optimizer_state + activations + buffers; }
};

/// Where one iteration's wall-clock time goes on the critical (slowest) rank; sums to iteration_time.
struct TimeBreakdown {
  double compute = 0;          ///< forward + backward (+ recompute) kernels
  double exposed_tp_comm = 0;  ///< tensor/sequence/context-parallel communication not hidden
  /// MoE token dispatch and combine not hidden: the all-to-alls (or the all-gather dispatcher's
  /// collectives) over the expert groups and the expert's own tensor-parallel slot gathers
  double exposed_ep_comm = 0;
  double exposed_dp_comm = 0;  ///< gradient reduction and ZeRO gathers not hidden under compute
  double exposed_pp_comm = 0;  ///< pipeline send/recv not hidden
  double optimizer = 0;        ///< the optimizer update (and its gradient-norm reductions)
  double bubble = 0;           ///< pipeline idle time

  /// Every part but the bubble: what the rank spends working or waiting on a transfer.
  [[nodiscard]] double busy() const {
    return compute + exposed_tp_comm + exposed_ep_comm + exposed_dp_comm + exposed_pp_comm + optimizer;
  }
  [[nodiscard]] double total() const { return busy() + bubble; }
};

struct StepReport {
  bool feasible = true;  ///< false: the plan cannot run; `reason` says why (fields may be 0)
  std::string reason;    ///< why it is infeasible (does not divide, does not fit, …)
  std::int64_t gpus = 0;
  double parameters = 0;               ///< total trainable parameters of the model
  double parameters_active = 0;        ///< those one token passes through (a MoE model's top_k experts)
  double parameters_mtp = 0;           ///< those of the multi-token-prediction modules (in `parameters`)
  double model_flops_per_step = 0;     ///< forward + backward matmul FLOPs, no recompute
  double hardware_flops_per_step = 0;  ///< adds recomputed FLOPs
  std::int64_t micro_batches = 0;      ///< per pipeline per step (gradient accumulation)
  double iteration_time = 0;           ///< seconds per optimizer step
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  /// Model (hardware) FLOP/s per GPU over the dense 16-bit peak, the convention published MFU figures use
  /// whatever the training precision (fp8 runs included); fp32/tf32 training: over that precision's peak.
  double mfu = 0;
  double hfu = 0;
  double mfu_fp8 = 0;  ///< an fp8 run's model FLOP/s over the dense fp8 peak; 0 otherwise
  double bubble_fraction = 0;
  double fleet_compute_fraction = 0;  ///< StepTiming::fleet_compute_fraction
  double fleet_idle_fraction = 0;     ///< StepTiming::fleet_idle_fraction
  TimeBreakdown time;
  MemoryBreakdown memory;      ///< of the worst GPU
  double memory_per_gpu = 0;   ///< peak bytes of the worst GPU (= memory.total())
  double memory_capacity = 0;  ///< HBM of one GPU, bytes
  bool fits = true;            ///< memory_per_gpu <= memory_capacity (minus any budget headroom)
  std::string framework;       ///< the framework's flags in force (framework_flags)
  /// How the step was simulated: "closed-form" (the analytic fidelity), "collapsed" (events, one GPU per
  /// pipeline rank standing for its symmetric peers, the fabric in closed form) or "full-cluster" (events,
  /// every data-parallel replica and pipeline rank, each GPU's transfers routed over the fabric).
  std::string step_mode;
};

}  // namespace trainsim::model
