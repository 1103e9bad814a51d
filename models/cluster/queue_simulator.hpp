#pragma once
// The shared cluster's queue on the discrete-event engine (sim/engine.hpp): jobs arrive, wait, are
// placed on nodes (node_placement.hpp), run for their given duration, and are interrupted by node failures
// or preemption, resuming from their last checkpoint. Without QueueSpec::contention jobs do not slow each
// other down; with it they share the leaf uplinks they cross (SPEC "Shared clusters").
//
// Contract:
//  - Events at one time run in the order they were scheduled; one scheduling pass follows every batch
//    of events at a time, so the result is a function of the spec alone (byte-identical outputs).
//  - EASY backfill: when the first waiting job cannot start, it gets a reservation at the earliest time
//    it can be placed, projected from the running jobs' ends and the repairs (durations are known exactly,
//    not user estimates); a later job may start now only if it can be placed now and either ends by then
//    or is placed on nodes the reservation does not use.
//  - Contention: after every scheduling pass that changed the running set (a placement epoch), each running
//    job's share comes from uplink_shares and its pace from QueueSpec::slowdown at share_bucket(share); the
//    work done so far is booked at the old pace and the end rescheduled at the new one. Recoveries are not
//    slowed. An interruption keeps the checkpointed work; its wall time is taken at the segment's mean pace.
//    Backfill's projections use the ends at the current paces.
//  - Accounting: busy + idle + down node-seconds = nodes x period, exactly up to rounding. Contention only
//    stretches busy time: a job's contention GPU-hours are its training wall time minus the uncontended
//    time that training was worth, x its GPUs.
//  - Periods are bounded by the engine's picosecond clock (about 106 days); a job whose end falls after
//    the period simply has not finished.
#include "models/cluster/queue_report.hpp"
#include "models/cluster/queue_spec.hpp"

namespace trainsim::model {

/// Simulates `spec` over its period. Throws InputError when a job cannot ever run (more nodes than the
/// cluster, a non-positive duration) or the period does not fit the clock.
[[nodiscard]] QueueReport simulate_queue(const QueueSpec& spec);

}  // namespace trainsim::model
