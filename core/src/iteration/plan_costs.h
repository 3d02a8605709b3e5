// SPDX-License-Identifier: MIT
#pragma once
// What a plan costs before a schedule runs: the cluster as the simulator sees it, the operator costs of
// one micro-batch, and the memory of each stage. Both iteration models (task_graph_simulation.cpp's task graph and
// fast_simulation.cpp's schedule walk) and the explorer read them.
#include <vector>

#include "vtrain/gpu_profile.h"
#include "vtrain/layer_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/scenario.h"

namespace vtrain {

// The cluster as the simulator sees it: the profile's links with the scenario's overrides applied.
struct ResolvedCluster {
    const GpuProfile* profile = nullptr;
    int num_gpus = 0;
    LinkSpec links;
    double price_per_gpu_hour = 0;
};

ResolvedCluster resolve_cluster(const ClusterSpec& cluster, const GpuProfile& profile);

// Operator costs for a plan; what the explorer caches.
LayerCosts plan_layer_costs(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan);

// Memory per stage without simulating time (cheap; the explorer rejects out-of-memory plans with it).
std::vector<StageMemory> plan_memory(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

} // namespace vtrain
