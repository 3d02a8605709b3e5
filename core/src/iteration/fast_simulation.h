// SPDX-License-Identifier: MIT
#pragma once
// The explorer's fast path: the same iteration as simulate_checked() (task_graph_simulation.cpp builds it as a task
// graph; see there for the model), computed straight from the pipeline schedule without building the
// graph: each stage walks its schedule and stops where it waits for another stage; a finished send
// wakes the stage it feeds. The start of every task is the same max(...) of the same ends, so times
// match the event simulation to rounding. tst_explorer_fast_sim checks that on random plans; an
// explore option (ExploreOptions::exact_simulation) runs the task graph instead.
//
// Steady state in closed form: with 1F1B and interleaved schedules the middle of an iteration repeats
// (schedule_period()). The walk runs a schedule with fewer micro-batches, stopping every stage at each
// period's cut; once the state at a cut (every stage's clocks and the messages in flight) equals the
// state c periods before plus one common shift, the remaining periods would repeat it, because the walk
// is a max-plus system (every time a max of other times plus durations): shifting all inputs by a
// constant shifts all outputs by it, and a difference between two states never grows. So the missing
// periods are added in closed form (clocks by the shift, busy sums by their per-period growth) and the
// walk goes on to the cool-down. The cost is that of the warm-up, the settling and the cool-down, not of
// the micro-batch count. The match tolerance bounds the error of every extended time to 1e-12 of it.
// A state that has not settled by the end of the shorter schedule's middle walks on in a longer one
// (the same ops up to there), up to every micro-batch.
#include <cstdint>
#include <optional>
#include <vector>

#include "iteration/event_simulation.h"
#include "iteration/iteration_costs.h"
#include "iteration/pipeline_schedule.h"
#include "iteration/plan_costs.h"
#include "vtrain/layer_costs.h"
#include "vtrain/scenario.h"
#include "vtrain/simulation_result.h"

namespace vtrain {

struct FastSimScratch {
    bool extend_steady_state = true; // false: walk every micro-batch (the reference the tests compare with)
    int settle_periods = 1;          // periods the shorter schedule leaves the state to settle in (tests lower it)

    // The last schedule built, reused while the next plan has the same shape.
    Schedule schedule = Schedule::OneFOneB;
    PipelineRuntime runtime = PipelineRuntime::Megatron;
    int stages = 0, micro_batches = 0, chunks = 0;
    std::vector<StageOrder> orders;
    std::vector<std::vector<char>> split_here;   // per stage and op: the last backward of its chunk
    std::vector<std::vector<int>> splits_before; // per stage: split ops before each op index
    std::optional<SchedulePeriod> period;

    std::vector<double> forward_arrival, backward_arrival; // per (stage, chunk, micro-batch); < 0 = not yet
    std::vector<std::int32_t> ready;
    std::vector<char> queued;
    long pending = 0; // messages sent and not yet received
    struct Stage {
        std::size_t next_op = 0, limit = 0;
        double compute_free = 0, block_until = 0, pipe_free = 0, dp_free = 0, last_backward_end = 0;
        double optimizer_start = 0;
    };
    // Per (stage, chunk): the durations the walk adds, and which messages the chunk's passes take and give.
    struct ChunkStep {
        double forward_s = 0, first_forward_s = 0, recompute_s = 0, backward_s = 0;
        int bucket_parts = 0; // bucket overlap: the chunk's last backward runs in this many parts
        double bucket_part_s = 0, bucket_s = 0;
        bool receives_forward = true, sends_forward = true, receives_backward = true, sends_backward = true;
    };
    std::vector<ChunkStep> steps;
    std::vector<Stage> stage;
    std::vector<std::vector<double>> snapshots; // the state at the last few cuts (a ring)
    IterationCosts costs;                       // the plan's durations: the same figures the task graph reads
};

struct FastSimResult {
    double iteration_time_s = 0;
    std::int64_t extended_micro_batches = 0; // micro-batches added in closed form (0: every one walked)
    int walks = 1;                           // schedules walked: > 1 when a shorter one was lengthened on the way
    int settled_at_cut = -1;                 // the period cut where the state repeated (-1: not extended)
    int cycle = 0;                           // periods between the repeating states
};

// False when the schedule cannot complete (a dependency cycle: a bug); the caller then falls back to the
// task graph. `costs` are the plan's layer costs (plan_layer_costs()). `stages` gets each stage's busy
// parts as account_stages() (task_graph_simulation.cpp) reports them; iteration_metrics() turns them and the
// time into the reported figures, bubble included.
bool fast_simulate(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan, const LayerCosts& costs,
                   FastSimScratch& scratch, FastSimResult& out, std::vector<StageBreakdown>& stages);

} // namespace vtrain
