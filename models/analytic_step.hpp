#pragma once
// The costs of one step's pieces, shared by both fidelities, and the analytic (closed-form) fast path.
//
// step_costs() prices, for one GPU of each pipeline stage (one tensor-parallel rank of one data-parallel
// replica — all others are symmetric to it):
//  - each virtual stage's forward and backward pass of one micro-batch: the kernels of D1's layer op lists
//    (models/layer_ops.hpp) timed by kernel_time, and their tensor/context/expert-parallel collectives timed
//    by collective_time on the communicator group the placement gives (blocking, on the critical path,
//    as in Megatron-LM; the cp ring exchange hides under the attention kernel it overlaps);
//  - the activation hand-over between stages (send/recv of b·s/cp·h elements, ÷ tp under sequence
//    parallelism, on the pipeline group's links);
//  - data-parallel traffic: gradient all-reduce (ZeRO 0) or reduce-scatter + parameter all-gather after the
//    update (ZeRO 1–2, Megatron's distributed optimizer), in buckets of plan.bucket_bytes; ZeRO-3 gathers
//    the weights before every forward and backward pass and reduce-scatters gradients after every backward;
//  - the optimizer update, memory-bound on HBM (bytes from D2's optimizer_cost, ÷ dp under ZeRO ≥ 1), and
//    the gradient-norm all-reduces (clipping, LAMB, Muon).
//
// analytic_step() turns them into a step time: the pipeline is timed by replaying the schedule with these
// per-stage costs (time_schedule: O(passes), no event queue), data-parallel buckets are laid after each
// chunk's gradient window, ZeRO-3 gathers hide under compute when shorter (closed form), then the
// optimizer. Each stage finishes at its own time; the latest sets the step.
//
// Agreement with the event-driven path (tests/models/step_simulator_test.cpp): within 0.1% on the example
// scenarios and within 2% on every ZeRO 0–2 layout tested, since both use these costs and the same
// schedule. The one known gap: ZeRO-3 with pp > 1 when gathers outweigh a pass's compute — the closed
// form charges every pass the excess, while the event run also streams gathers through the pipeline's
// warm-up and cool-down waits, so the analytic time is higher, by at most the bubble (≈3% on the test
// layout).
#include <cstdint>
#include <vector>

#include "models/pipeline_schedule.hpp"
#include "models/step_plan.hpp"
#include "models/step_report.hpp"
#include "models/step_simulator.hpp"

namespace trainsim::model {

/// One micro-batch through one virtual stage on one GPU, seconds.
struct PassCost {
  double forward_compute = 0;   ///< kernels of the forward pass (embedding / LM head included on the ends)
  double forward_comm = 0;      ///< exposed tp/cp/ep collectives of the forward pass
  double backward_compute = 0;  ///< kernels of the backward pass, recomputation included
  double backward_comm = 0;     ///< exposed collectives of the backward pass
  double weight_compute = 0;    ///< the weight-gradient (wgrad) part of backward_compute (ZB-H1's W)

  [[nodiscard]] double forward() const { return forward_compute + forward_comm; }
  [[nodiscard]] double backward() const { return backward_compute + backward_comm; }
};

/// Per pipeline rank: data-parallel and optimizer costs, seconds and bytes, one GPU.
struct StageCost {
  double params = 0;          ///< parameters on one GPU before ZeRO sharding
  double grad_bytes = 0;      ///< its gradients, bytes
  double weight_bytes = 0;    ///< its weights in storage precision, bytes
  int buckets = 1;            ///< gradient buckets (ZeRO 0–2)
  double bucket_s = 0;        ///< time of one bucket's reduction (all-reduce or reduce-scatter)
  double param_gather_s = 0;  ///< ZeRO 1–2: all-gather of the updated weights after the optimizer
  double zero3_gather_s =
      0;  ///< ZeRO-3: gathering all this rank's weights once (per pass, summed over chunks)
  double zero3_reduce_s = 0;     ///< ZeRO-3: reduce-scatter of all this rank's gradients once
  double optimizer_s = 0;        ///< the update kernels
  double grad_norm_s = 0;        ///< all-reduces of the norm(s)
  double dp_bytes_per_step = 0;  ///< data-parallel bytes this GPU's collectives carry per step (nccl size)
};

struct StepCosts {
  std::vector<PassCost> passes;   ///< per virtual stage vs = chunk·pp + rank
  std::vector<StageCost> stages;  ///< per pipeline rank
  double p2p_s = 0;               ///< one activation (or its gradient) between consecutive stages
  double p2p_bytes = 0;
};

/// The pieces' costs. Precondition: plan.feasible. Throws InputError for inputs that are not a layout.
[[nodiscard]] StepCosts step_costs(const StepInput& input, const StepPlan& plan);

/// The time side of a step report.
struct StepTiming {
  double iteration_time = 0;
  TimeBreakdown time;          ///< of the stage that finishes last; sums to iteration_time
  double bubble_fraction = 0;  ///< time.bubble / iteration_time
  int critical_stage = 0;      ///< the pipeline rank that finishes last
};

/// Closed-form step time from the costs (see the file comment).
[[nodiscard]] StepTiming analytic_step(const StepInput& input, const StepPlan& plan, const StepCosts& costs);

/// The per-pass costs as time_schedule's input (forward/backward include exposed collectives).
[[nodiscard]] PassTimes pass_times(const StepCosts& costs);

}  // namespace trainsim::model
