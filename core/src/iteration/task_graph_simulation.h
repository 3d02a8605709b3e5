// SPDX-License-Identifier: MIT
#pragma once
// The task-graph model of one iteration (task_graph_simulation.cpp) for callers that already checked the plan and
// resolved the cluster: the explorer's exact path, the tests and the benchmarks. simulate() is its
// public entry.
#include "iteration/event_simulation.h"
#include "iteration/plan_costs.h"
#include "vtrain/simulator.h"

namespace vtrain {

// Scratch buffers reused across calls (one per thread in a sweep).
struct SimulationWorkspace {
    TaskGraph graph;
    TaskTimes times;
    EventSimulationScratch scratch;
};

SimulationResult simulate_checked(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan,
                                  const SimulationOptions& options, SimulationWorkspace& workspace);

} // namespace vtrain
