// SPDX-License-Identifier: MIT
#pragma once
// Throughput curves for the cluster study: one explore() call per (model, global batch) over every GPU
// count a job may get, keeping the fastest plan per count (and the data-parallel-scaling variant).
//
// Plan space per curve (kept small so a 64-job study stays quick on 2 cores): tp 1/2/4/8 (inside a node),
// pp every divisor of the layers up to 16, micro-batch 1/2/4/8, 1F1B, recompute none/selective/full,
// sequence parallelism off/on (on only with tp > 1), ZeRO 0/1.
#include <map>
#include <string>
#include <vector>

#include "vtrain/cluster_schedule.h"
#include "vtrain/cluster_schedule_workload.h"
#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/optimal_model.h"
#include "vtrain/scenario.h"

namespace vtrain {

// Powers of two from 1 up to the cluster size, plus `extra` counts (requested allocations), sorted, unique.
std::vector<int> allocation_counts(int cluster_gpus, const std::vector<int>& extra = {});

SearchSpace curve_search_space(const ModelSpec& model, const std::vector<int>& counts);

// A key for caching: the model's shape and the global batch (names do not matter).
std::string curve_key(const ModelSpec& model, int global_batch);

struct CurveRequest {
    ModelSpec model;
    int global_batch = 0;
    std::string gpu;
    int gpus_per_node = 0;
    std::vector<int> counts;
    int threads = 0;
};

// The curve; `cancelled` is set when control.sweep.cancel stopped the sweep (the curve is then partial).
Expected<ThroughputCurve> throughput_curve(const CurveRequest& request, const std::map<std::string, GpuProfile>& profiles, StudyControl& control,
                                           bool& cancelled, std::uint64_t& plans_enumerated);

// The key of a curve in a CurveCache: curve_key + GPU type + node size + counts.
std::string cache_key(const CurveRequest& request);

// The cached curve, computing (and caching) it when missing; a cancelled curve is not cached (nullptr).
Expected<const ThroughputCurve*> cached_throughput_curve(const CurveRequest& request, const std::map<std::string, GpuProfile>& profiles,
                                                         StudyControl& control, CurveCache& cache, std::uint64_t& plans_enumerated);

// The seeded generator with each job's duration measured on its simulated curve (what `vtrain schedule`
// does): options.tokens_per_s is filled from `cache`, which the study then reuses. When the control is
// cancelled while curves are being built, the jobs fall back to the assumed-MFU estimate; check
// control.cancelled() afterwards.
std::vector<ClusterJob> generate_simulated_workload(WorkloadOptions options, const GpuProfile& profile, int gpus_per_node, int threads,
                                                    StudyControl& control, CurveCache& cache, std::uint64_t& plans_enumerated);

} // namespace vtrain
