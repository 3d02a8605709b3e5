// SPDX-License-Identifier: MIT
#pragma once
// Simulate one training iteration of a plan: build the per-stage task graph from the schedule and the
// operator costs, run the event simulation, and derive time, throughput, memory and cost. The graph is
// built in core/src/iteration/task_graph_simulation.cpp and run by core/src/iteration/event_simulation.cpp.
#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/layer_costs.h"
#include "vtrain/scenario.h"
#include "vtrain/simulation_result.h"

namespace vtrain {

struct SimulationOptions {
    bool timeline = true;                     // keep every task's start and end (not above kMaxTaskGraphPasses
                                              // passes, plan_check.h: the timeline then stays empty)
    const LayerCosts* cached_costs = nullptr; // precomputed operator costs for this (tp, micro-batch, ...)
};

// Checks the plan (exit-worthy structural errors come back as diagnostics, and so does an iteration of more
// than kMaxSimulatedPasses passes), then simulates it. Plans that do not fit in memory are still simulated;
// `fits_memory` says so. An iteration of more than kMaxTaskGraphPasses passes is computed in closed form,
// without a task graph (task_count 0, no timeline).
Expected<SimulationResult> simulate(const Scenario& scenario, const Plan& plan, const GpuProfile& profile, const SimulationOptions& options = {});

// How much a prediction rests on the framework's CPU time per operator, which no datasheet gives: the
// iteration time with the profile's host CPU terms at both ends of their documented prior (÷ and x
// kHostTermPriorWidth, uncertainty.h). Errors as simulate().
struct HostTermRange {
    double light_s = 0; // host terms ÷ kHostTermPriorWidth
    double heavy_s = 0; // host terms x kHostTermPriorWidth
};
Expected<HostTermRange> host_term_range(const Scenario& scenario, const Plan& plan, const GpuProfile& profile);
// The same written into result.host_light_s / host_heavy_s (left 0 when either simulation fails), for the
// callers that show it with the result (the CLI's simulate, the GUI's plan detail).
void attach_host_term_range(SimulationResult& result, const Scenario& scenario, const Plan& plan, const GpuProfile& profile);
// Whether the host terms' range moves the iteration by more than 5% of it: the prediction then rests on the
// framework's CPU time per operator (reports say "host-bound").
bool host_bound(const SimulationResult& result);

} // namespace vtrain
