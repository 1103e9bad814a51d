#pragma once
// The event-driven fidelity: one training step lowered to a task graph (sim::Dag) and run on the engine.
//
// Streams: every simulated GPU has four lanes — "compute", "tp comm", "pp comm", "dp comm" — each a FIFO
// serial resource, so communication on one overlaps compute on another only where the dependencies allow;
// and a fifth, "optimizer", for the update alone, so the trace shows it as its own track (it runs after
// the stage's last pass and its gradients' reduction, so no compute waits on it or beside it); under ZeRO-3
// a sixth, "dp reduce", the reduce-scatters' stream, so that their latency (and their gradients' staging
// copies) runs beside the gathers' as on FSDP's two streams, not queued behind it.
// Per GPU, in the pipeline schedule's order (pipeline_schedule.hpp), each pass of a micro-batch through a
// virtual stage walks the stage's units (embedding, its layers, head; step_costs.hpp's UnitRun) and each
// unit's pieces in order (forward order, or reversed for a backward): a compute task per run of kernels
// between collectives; each blocking tp/cp/ep collective a task on tp comm after the kernels before it, the
// next kernels after it; an overlappable one (the cp ring exchange) on tp comm beside the kernel it hides
// under, both joined before the next piece. Recomputation is inside the backward's kernels. Tasks are
// named "F mb3 c0 L12 qkv..out_proj", "F mb3 c0 L12 tp_reduce_scatter". The pass ends with a send to the
// next (or previous) stage on pp comm that the receiving pass's first task waits for.
// Data parallelism (dp comm): gradients of the last gradient-producing pass of each chunk are reduced in
// buckets as that pass's backward crosses layer boundaries — bucket j of nb when ⌈(j+1)·U/nb⌉ of the
// chunk's U units are done (overlap_grad_reduce; otherwise all after the last pass); ZeRO-3 gathers each
// unit's weights (UnitCost::gather_s) `prefetch` units ahead of its first kernel — the gather of unit k is
// issued when unit k − prefetch starts, the first ones at the pass's entry — and reduce-scatters its
// gradients after its backward; a blocking hand-over (framework.blocking_p2p) holds the sender's compute;
// then the gradient-norm all-reduce, the optimizer update, and (ZeRO 1–2) the all-gather of the
// updated weights. Data-parallel collectives and pipeline sends are each a busy task of their fixed
// latency followed by a flow over the sending and receiving GPUs' ports (step_network.hpp), so a bucket
// and a send that share a NIC share its rate; each stream still runs its transfers one at a time, in order
// (ZeRO-3's reduce-scatters on a stream apart from its gathers, as in FSDP).
//
// Symmetric collapse (default): one GPU per pipeline rank is simulated — one tensor-parallel rank of one
// data-parallel replica; collectives are costed for the real groups on the real topology
// (step_costs.hpp). With full_cluster and closed-form costs every GPU (dp·cp·ep·tp·pp) gets its own lanes
// and each collective waits for all members of its group (a join) before running on each member, and each
// member's data-parallel flow runs into the next replica's ports (step_network.hpp); on a symmetric layout
// both give the same step time, with or without contention (permanent tests). With full_cluster and costs
// priced for routes (FabricPricing::routed, what simulate_step uses) every data-parallel replica of every
// pipeline rank gets its own lanes, its model-parallel ranks one instance: each data-parallel collective is
// lowered over its whole group as its algorithm's flows (topo::lower_collective), each pipeline send one
// flow per rank, over the cluster graph's routes; a unit whose context- or expert-parallel collectives leave
// the node is lowered piece by piece, those collectives as flows between the replica's ranks
// (step_network.hpp), every other unit's pass as one task of its pieces' seconds.
#include <cstdint>
#include <map>
#include <vector>

#include "models/step/analytic_step.hpp"
#include "models/step/event_graph_limits.hpp"
#include "models/step/step_network.hpp"
#include "sim/dag.hpp"
#include "sim/trace.hpp"

namespace trainsim::model {

/// A lowered step and the tasks needed to read its result.
struct StepGraph {
  sim::Dag dag;
  int instances = 1;  ///< simulated copies of the pipeline (1 when collapsed)
  /// The lowering's count of the tasks before it built them (what LoweringOptions::max_tasks is held to).
  std::size_t estimated_tasks = 0;
  /// Per instance i and pipeline rank s (entry i·pp + s): the last task of its last pass, the grad-norm
  /// task, the optimizer task and the final task of the step.
  std::vector<sim::TaskId> last_pass, grad_norm, optimizer, final_task;
  /// The kernels' slowdown of each straggler's replica (LoweringOptions::replica_slowdown).
  std::map<std::int64_t, std::vector<double>> replica_slowdown;
  /// Instance 0's passes that change the activations a stage holds: the compute task whose end stashes
  /// (forward, +1) or frees (backward, −1) one micro-batch's activations of one chunk.
  struct StashMark {
    int stage = 0;
    sim::TaskId task = 0;
    int delta = 0;
  };
  std::vector<StashMark> stash_marks;
  /// The ports the data-parallel and pipeline transfers run over (step_network.hpp).
  StepNetwork network;
};

/// Memory of each simulated stage for the trace's "memory_bytes" counter track: what is resident all step
/// (weights, gradients, optimizer state, buffers) and what one micro-batch of one chunk stashes.
struct StageMemoryTrack {
  std::vector<double> resident;         ///< per pipeline rank, bytes
  std::vector<double> per_micro_batch;  ///< per pipeline rank, bytes of one micro-batch through one chunk
};

/// How lower_step builds the graph.
struct LoweringOptions {
  /// Every data-parallel replica its own lanes instead of one per symmetry class (see the file comment);
  /// with closed-form costs every model-parallel rank too. Refused, with InputError, beyond max_tasks.
  bool full_cluster = false;
  /// false: data-parallel and pipeline traffic as busy tasks of their closed-form time, each as if alone
  /// (to measure what contention adds; see step_network.hpp).
  bool contention = true;
  /// Routed full cluster only: the kernels of replica d's pipeline rank s take replica_slowdown[d][s] times
  /// as long (step_costs.hpp's replica_slowdowns: the stragglers), its collectives keep their time.
  std::map<std::int64_t, std::vector<double>> replica_slowdown;
  /// Collapsed: a stage's kernels and tensor-parallel collectives that follow one another with nothing
  /// else waiting on or for them in between are one busy task of their summed picoseconds (an overlapped
  /// collective and its kernel: the longer of the two). Routed full cluster: so are a replica's consecutive
  /// whole units of one pass. Each would start as the one before it ends (a simulated stage's compute and
  /// tp comm lanes carry its chain alone), so the times are the same with fewer tasks; a trace would show
  /// one slice per run, so it is for runs without one. Closed-form full cluster: no effect.
  bool merge_serial = false;
  /// The most tasks the graph may hold: by default what the memory and CPU limits allow at the measured cost
  /// of a task (event_graph_limits.hpp). Refused with InputError, before building when the lowering's
  /// estimate is over it, else as soon as the graph grows past it (the estimate can run low with ZeRO-3's
  /// routed gathers); the error says the count and its cost.
  std::size_t max_tasks = event_graph_task_limit();
};

/// Builds the graph. Precondition: plan.feasible.
[[nodiscard]] StepGraph lower_step(const StepInput& input, const StepPlan& plan, const StepCosts& costs,
                                   const LoweringOptions& options = {});

/// Runs the graph on a fresh engine and flow network (the graph's ports); `sink` (optional) receives every
/// task (Chrome trace: a process per stage or GPU, a thread per stream). The breakdown's
/// pipeline-communication and ZeRO-3 parts, which an event run cannot tell apart from waiting (contention
/// included), are taken from the analytic model of the same costs. With `sink` and `memory`, each stage's
/// memory in use is sampled at every stash and release.
[[nodiscard]] StepTiming run_step_graph(const StepGraph& graph, const StepInput& input, const StepPlan& plan,
                                        const StepCosts& costs, sim::TraceSink* sink = nullptr,
                                        const StageMemoryTrack* memory = nullptr);

}  // namespace trainsim::model
