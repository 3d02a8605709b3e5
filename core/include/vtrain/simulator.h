// SPDX-License-Identifier: MIT
#pragma once
// Simulate one training iteration of a plan: build the per-stage task graph from the schedule and the
// operator costs, run the event simulation, and derive time, throughput, memory and cost.
#include "vtrain/comm_model.h"
#include "vtrain/diagnostic.h"
#include "vtrain/event_simulation.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/layer_costs.h"
#include "vtrain/scenario.h"
#include "vtrain/simulation_result.h"

namespace vtrain {

// The cluster as the simulator sees it: the profile's links with the scenario's overrides applied.
struct ResolvedCluster {
    const GpuProfile* profile = nullptr;
    int num_gpus = 0;
    LinkSpec links;
    double price_per_gpu_hour = 0;
};

ResolvedCluster resolve_cluster(const ClusterSpec& cluster, const GpuProfile& profile);

struct SimulationOptions {
    bool timeline = true;                     // keep every task's start and end
    const LayerCosts* cached_costs = nullptr; // precomputed operator costs for this (tp, micro-batch, ...)
};

// Scratch buffers reused across calls (one per thread in a sweep).
struct SimulationWorkspace {
    TaskGraph graph;
    TaskTimes times;
    EventSimulationScratch scratch;
};

// Checks the plan (exit-worthy structural errors come back as diagnostics), then simulates it. Plans that
// do not fit in memory are still simulated; `fits_memory` says so.
Expected<SimulationResult> simulate(const Scenario& scenario, const Plan& plan, const GpuProfile& profile,
                                    const SimulationOptions& options = {});

// The same, for callers that already checked the plan and resolved the cluster (the explorer).
SimulationResult simulate_checked(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster,
                                  const Plan& plan, const SimulationOptions& options, SimulationWorkspace& workspace);

// Operator costs for a plan; what the explorer caches.
LayerCosts plan_layer_costs(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan);

// Memory per stage without simulating time (cheap; the explorer rejects out-of-memory plans with it).
std::vector<StageMemory> plan_memory(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

} // namespace vtrain
