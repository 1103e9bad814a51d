#pragma once
// Pipeline-parallel schedules as pure data: for each pipeline rank (stage), the ordered list of passes it
// runs in one training step. No costs here; the analytic path and the event-driven lowering both consume it.
//
// Numbering: p pipeline ranks ("stages") 0..p-1, m micro-batches 0..m-1, v model chunks per rank
// 0..v-1 (v > 1 for the interleaved schedule, v = 2 for DualPipeV). The forward pass of a micro-batch
// visits virtual stages 0, 1, …, p·v−1 in order; which rank holds which is virtual_stage_of, the one rule:
// looped (chunk c of rank s is virtual stage c·p + s, wrapping around the ranks v times: Narayanan et al.
// 2021, "Efficient Large-Scale Language Model Training on GPU Clusters"), or V-shaped for DualPipeV
// (chunk 0 of rank s is virtual stage s, chunk 1 is 2p−1−s: down the ranks and back, so the last rank
// hands its chunk 0's output to its own chunk 1).
//
// Dependencies a valid schedule respects (checked by schedule_is_valid):
//   forward(mb, vs)         after forward(mb, vs−1)
//   backward(mb, vs)        after forward(mb, vs) and backward(mb, vs+1) (the last virtual stage: its
//                           forward)
//   backward_weight(mb, vs) after backward(mb, vs)   (ZB-H1 and DualPipeV: B split into input-grad B and W)
//
// DualPipeV (deepseek-ai/DualPipe, dualpipev.py) is more than an order: each rank posts its sends and
// receives in batches (torch.distributed.batch_isend_irecv) and waits for a batch to complete before it
// computes, so a sender waits for its receiver to post the matching receive. Its order carries that
// program (PipelineOrder::program), and time_schedule runs it: a message completes when both ends have
// posted it (plus the hand-over), and a batch when all its messages have. Its F&B steps run one
// micro-batch's forward and another's backward as one step (the F&B of DeepSeek-V3's Table 2), each priced
// as the step costs price them (framework.ep_comm_overlap prices each all-to-all beside a chunk of the paired
// pass: pair_expert_all_to_alls). DualPipe (bidirectional, two copies of the parameters) on P ranks runs,
// rank r and rank P−1−r alike, as DualPipeV on P/2 ranks with half the micro-batches (the "cut-in-half" of
// the DualPipe README): the step folds it so (step_plan.hpp), and this file sees DualPipeV.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "models/spec/parallel_plan.hpp"

namespace trainsim::model {

enum class PassKind : std::uint8_t {
  forward,
  backward,         ///< backward pass; under ZB-H1 and DualPipeV only the input-gradient half ("B")
  backward_weight,  ///< the weight-gradient half ("W") of ZB-H1 and DualPipeV
};
/// How many kinds of pass there are, for tables indexed by PassKind.
inline constexpr std::size_t kPassKindCount = 3;

/// The pass's letter in schedule diagrams and trace labels: "F", "B" or "W".
[[nodiscard]] const char* pass_letter(PassKind kind);
/// Whether a pass of virtual stage vs (of nvs) hands its output to a neighbour: a forward its activations to
/// vs + 1, a backward its input gradients to vs − 1; ZB-H1's weight pass sends nothing.
[[nodiscard]] constexpr bool sends_to_neighbour(PassKind kind, int vs, int nvs) {
  return (kind == PassKind::forward && vs < nvs - 1) || (kind == PassKind::backward && vs > 0);
}

struct PipelinePass {
  PassKind kind = PassKind::forward;
  int micro_batch = 0;
  int chunk = 0;  ///< model chunk on this rank, 0..v−1

  friend bool operator==(const PipelinePass&, const PipelinePass&) = default;
};

/// The virtual stage of `chunk` on pipeline rank `rank` of p (see the file comment): the one rule.
[[nodiscard]] constexpr int virtual_stage_of(Schedule kind, int chunk, int rank, int p) {
  if (is_v_shape(kind)) return chunk == 0 ? rank : 2 * p - 1 - rank;
  return chunk * p + rank;
}
/// The rank that holds virtual stage vs: virtual_stage_of's inverse.
[[nodiscard]] constexpr int rank_of_virtual_stage(Schedule kind, int vs, int p) {
  if (is_v_shape(kind)) return vs < p ? vs : 2 * p - 1 - vs;
  return vs % p;
}

/// The forwards rank s of p runs before its first 1F1B step in the 1F1B order (and ZB-H1's), of m.
[[nodiscard]] constexpr int one_f_one_b_warm_up(int p, int m, int s) {
  return p - s - 1 < m ? p - s - 1 : m;
}

/// One step of a rank's DualPipeV program: post a receive or a send of one message (a micro-batch's
/// activations into, or its gradients back into, virtual stage `to_virtual_stage`), wait for the posted
/// batch to complete (commit), or compute the next `passes` passes of the rank's list as one step.
struct ProgramAction {
  enum class Kind : std::uint8_t { post_recv, post_send, commit, compute };
  Kind kind = Kind::commit;
  bool gradient = false;
  int micro_batch = 0;
  int to_virtual_stage = 0;
  int passes = 0;
};

/// Per rank, its passes in execution order: result[s] is rank s's list. Sizes: p lists; each holds
/// m·v forwards and m·v backwards (and m·v backward_weight under ZB-H1 and DualPipeV). `kind` says which
/// rank holds which virtual stage (virtual_stage_of); `program`, per rank, how DualPipeV runs the list
/// (empty for the other schedules: each pass runs when its rank is free and its inputs have arrived).
struct PipelineOrder : std::vector<std::vector<PipelinePass>> {
  using std::vector<std::vector<PipelinePass>>::vector;
  Schedule kind = Schedule::one_f_one_b;
  std::vector<std::vector<ProgramAction>> program;
  /// Per rank, per pass of its list: whether it runs merged with another micro-batch's pass, the pairs
  /// framework.ep_comm_overlap hides each one's all-to-alls beside the other (merged_passes.hpp). Empty
  /// (a hand-built order): every pass merged.
  std::vector<std::vector<bool>> merged;
  /// Per rank, per chunk: the forwards and the backwards it runs alone (alone_passes), set with `merged`.
  std::vector<std::vector<std::array<int, 2>>> alone_counts;
};

/// The pass order of one step.
///  - gpipe: all forwards, then all backwards in reverse micro-batch order.
///  - one_f_one_b: PipeDream-flush: p−s−1 warm-up forwards on rank s, then alternate 1F1B, then cool-down.
///  - interleaved: Megatron's interleaved 1F1B over v chunks; needs m to be a multiple of p.
///  - zero_bubble_h1: Qi et al. 2023 ZB-H1: 1F1B whose W passes are deferred to fill the cool-down bubble
///    (same peak activation memory as 1F1B).
///  - dualpipev (and dualpipe, folded by the caller into dualpipev over p = P/2 ranks): DeepSeek's program
///    (deepseek-ai/DualPipe dualpipev.py, step()) over two V-shaped chunks; needs m >= 2p.
/// For schedules other than interleaved, v must be 1 (2 for the DualPipe family, whose chunks are fixed).
/// Throws InputError when p < 1, m < 1, v < 1, or the schedule's constraints do not hold (callers that want a
/// reason instead use schedule_constraint_error).
[[nodiscard]] PipelineOrder pipeline_schedule(Schedule kind, int p, int m, int v = 1);

/// The schedule's bubble (a rank's idle time in one step) as its paper states it, F, B and W the
/// forward, whole backward and weight-gradient times of one chunk (F&B: an overlapped forward and
/// backward), for explain: 1F1B and GPipe (pp−1)(F+B); interleaved (pp−1)(F+B)/v (Narayanan et al.
/// 2021); ZB-H1 (pp−1)(F+B−2W) (Qi et al. 2023; ZB1P in DeepSeek-V3's Table 2); DualPipe and DualPipeV
/// (PP/2−1)(F&B+B−3W) over PP stages (DeepSeek-V3 Table 2; the DualPipe README).
[[nodiscard]] std::string_view bubble_formula(Schedule kind);

/// pipeline_schedule's order, shared: the calling thread keeps the last orders it built (a few), since a
/// search times many layouts of one (kind, p, m, v) — every ZeRO stage and recompute choice of a layout.
/// Throws as pipeline_schedule does.
[[nodiscard]] std::shared_ptr<const PipelineOrder> shared_pipeline_schedule(Schedule kind, int p, int m,
                                                                            int v = 1);

/// "" when (kind, p, m, v) can be scheduled, else a sentence saying why not.
[[nodiscard]] std::string_view schedule_constraint_error(Schedule kind, int p, int m, int v);

/// True when every rank's list holds each pass exactly once and a global execution respecting all the
/// dependencies above exists (no deadlock when every rank runs its list in order).
[[nodiscard]] bool schedule_is_valid(const PipelineOrder& order, int p, int m, int v);

/// The largest number of micro-batch·chunk activations a rank holds at once: forwards run minus
/// backwards run (ZB-H1's W pass also releases part, ignored here: B releases the stash), maximised over
/// the rank's list. 1F1B: min(p − s, m) on rank s; GPipe: m.
[[nodiscard]] int peak_in_flight(const std::vector<PipelinePass>& rank_passes);

/// Per-pass costs for timing a schedule, seconds, indexed by virtual stage (virtual_stage_of).
/// `backward` is the whole backward pass; under ZB-H1 its `weight` part runs as the separate W pass.
/// `p2p_s` delays every hand-over between consecutive virtual stages (activation or gradient send).
struct PassTimes {
  std::vector<double> forward;
  std::vector<double> backward;
  std::vector<double> weight;  ///< may be empty: no weight part
  double p2p_s = 0;
  /// May be empty. Added to the gradient-producing pass (backward, or W under ZB-H1) of the last
  /// micro-batch of each virtual stage: its kernels slowed by the gradient buckets reduced beside them.
  std::vector<double> last_grads_extra;
  /// May be empty. Added to a forward or backward that runs alone (PipelineOrder::merged): under
  /// framework.ep_comm_overlap what its all-to-alls hid beside the other micro-batch, less what that
  /// slowed its kernels by (UnitCost::forward_alone_s).
  std::vector<double> forward_alone;
  std::vector<double> backward_alone;
};

/// When things happen when every rank runs its list in order, each pass as soon as its rank is free and
/// its inputs have arrived (the list-scheduling semantics of the event-driven simulation, without it).
struct ScheduleTimeline {
  double makespan = 0;            ///< end of the last pass, s
  std::vector<double> rank_end;   ///< per rank: end of its last pass
  std::vector<double> rank_busy;  ///< per rank: total pass time
  /// Per virtual stage: start and end of its last gradient-producing pass (the last micro-batch's
  /// backward, or its W pass under ZB-H1): the window in which that chunk's gradients become final.
  std::vector<double> grads_from;
  std::vector<double> grads_ready;
};

/// When one pass of a rank's list runs, s from the start of the step: it starts when its rank is free
/// and its inputs have arrived, and ends `start` + its cost.
struct PassSpan {
  double start = 0;
  double end = 0;
};
/// Per rank, one span per entry of that rank's list, in the list's order: spans[s][k] times order[s][k].
using PassSpans = std::vector<std::vector<PassSpan>>;

struct RecordedSchedule;

/// Times `order`; TRAINSIM_CHECK fails if it deadlocks. O(passes + p · rounds). With `spans` (optional;
/// nothing is recorded or allocated without it), also reports when every pass runs (e.g. for the analytic
/// trace); the timeline is the same either way.
[[nodiscard]] ScheduleTimeline time_schedule(const PipelineOrder& order, int p, int m, int v,
                                             const PassTimes& times, PassSpans* spans = nullptr);

/// time_schedule of `times`, and when each rank ends with `other` instead (e.g. without the hand-overs):
/// one replay of the order for both, since they share its dependencies. Each is what time_schedule gives.
struct ScheduleTimelines {
  ScheduleTimeline timeline;           ///< with `times` (spans, when asked, are its)
  std::vector<double> other_rank_end;  ///< with `other`: per rank, the end of its last pass
};
[[nodiscard]] ScheduleTimelines time_schedule_twice(const PipelineOrder& order, int p, int m, int v,
                                                    const PassTimes& times, const PassTimes& other,
                                                    PassSpans* spans = nullptr);

/// A replay of one order reduced to its arithmetic, for timing the same order again with other costs:
/// every pass in the order the replay timed it, each with the positions of the passes it waits for. Each
/// pass ends where the replay ends it (its rank's previous pass, its inputs, its cost: the same operations
/// in the same order), so time_recorded gives time_schedule's timeline to the bit, without looking for
/// which pass can run next. Made by record_schedule (below); left empty for DualPipeV's programs
/// (PipelineOrder::program), which run otherwise.
struct RecordedSchedule {
  /// Positions into the replay's finish times: the two below, then pass k at k + kFirstPass.
  static constexpr std::uint32_t kRankStart = 0;  ///< no pass before on the rank: free at 0
  static constexpr std::uint32_t kNoInput = 1;    ///< no such input
  static constexpr std::uint32_t kFirstPass = 2;
  /// The pass's cost in `code`'s low bits: ((kind · 2 + last micro-batch's gradients) · 2 + run alone) · p·v
  /// + virtual stage;
  /// its input from a neighbour arrives p2p_s after it ends (not at a V's tip); it produces its stage's
  /// gradients.
  static constexpr std::uint32_t kCostBits = 0x3fffffffU;
  static constexpr std::uint32_t kHandOver = 1U << 30;
  static constexpr std::uint32_t kProducesGrads = 1U << 31;
  struct Pass {
    std::uint32_t previous = kRankStart;  ///< the rank's pass before this one
    std::uint32_t local = kNoInput;       ///< the input on its own rank (a backward's forward, a W's B)
    std::uint32_t sent = kNoInput;        ///< the input from the neighbouring virtual stage
    std::uint32_t code = 0;
  };
  int p = 0, m = 0, v = 0;
  bool split = false;  ///< W passes run apart from their backwards (ZB-H1)
  std::vector<Pass> passes;
  std::vector<std::uint32_t> rank_of_stage;  ///< per virtual stage: its rank
  std::vector<std::uint32_t> last_of_rank;   ///< per rank: the position of its last pass
  [[nodiscard]] bool empty() const { return passes.empty(); }
};

/// The recording of `order` that time_schedule would make, without timing it: the replay's walk alone, a
/// fraction of a timed replay's work (a recording is timed with time_recorded). Empty for DualPipeV's
/// programs, and for an order that deadlocks or is malformed (time_schedule says which).
[[nodiscard]] RecordedSchedule record_schedule(const PipelineOrder& order, int p, int m, int v);

/// time_schedule and time_schedule_twice from a recording of the same order (see RecordedSchedule).
[[nodiscard]] ScheduleTimeline time_recorded(const RecordedSchedule& recorded, const PassTimes& times);
[[nodiscard]] ScheduleTimelines time_recorded_twice(const RecordedSchedule& recorded, const PassTimes& times,
                                                    const PassTimes& other);

/// Makespan with uniform costs per chunk and no communication (forward_s, backward_s per pass; under
/// ZB-H1 B takes backward_s − weight_s and W weight_s). Used by tests.
[[nodiscard]] double schedule_makespan(const PipelineOrder& order, int p, int m, int v, double forward_s,
                                       double backward_s, double weight_s = 0);

}  // namespace trainsim::model
