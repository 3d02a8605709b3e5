// SPDX-License-Identifier: MIT
#pragma once
// The explorer's fast path: the same iteration as simulate_checked() (simulator.cpp builds it as a task
// graph; see there for the model), computed straight from the pipeline schedule without building the
// graph: each stage walks its schedule and stops where it waits for another stage; a finished send
// wakes the stage it feeds. The start of every task is the same max(...) of the same ends, so times
// match the event simulation to rounding. tst_explorer_fast_sim checks that on random plans; an
// explore option (ExploreOptions::exact_simulation) runs the task graph instead.
#include <cstdint>
#include <vector>

#include "vtrain/iteration_costs.h"
#include "vtrain/layer_costs.h"
#include "vtrain/pipeline_schedule.h"
#include "vtrain/scenario.h"
#include "vtrain/simulator.h"

namespace vtrain {

struct FastSimScratch {
    // The last schedule built, reused while the next plan has the same shape.
    Schedule schedule = Schedule::OneFOneB;
    int stages = 0, micro_batches = 0, chunks = 0;
    std::vector<StageOrder> orders;
    std::vector<std::vector<char>> split_here; // per stage and op: the last backward of its chunk

    std::vector<double> forward_arrival, backward_arrival; // per (stage, chunk, micro-batch); < 0 = not yet
    std::vector<std::int32_t> ready;
    std::vector<char> queued;
    struct Stage {
        std::size_t next_op = 0;
        double compute_free = 0, block_until = 0, pipe_free = 0, dp_free = 0;
        double last_work_end = 0, last_backward_end = 0;
        double compute_s = 0, comm_s = 0, pp_comm_s = 0;
        double optimizer_start = 0, optimizer_s = 0, gather_s = 0;
    };
    std::vector<Stage> stage;
    IterationCosts costs; // the plan's durations: the same figures the task graph reads
};

struct FastSimResult {
    double iteration_time_s = 0;
    double bubble_fraction = 0;
};

// False when the schedule cannot complete (a dependency cycle: a bug); the caller then falls back to the
// task graph. `costs` are the plan's layer costs (plan_layer_costs()).
bool fast_simulate(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan,
                   const LayerCosts& costs, FastSimScratch& scratch, FastSimResult& out);

} // namespace vtrain
