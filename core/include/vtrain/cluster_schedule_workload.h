// SPDX-License-Identifier: MIT
#pragma once
// A seeded synthetic workload for the cluster study (the paper used a Microsoft production trace, which
// is not public in this form), and the catalog of preset models job lists can name.
//
// Per job: a model from the catalog (smaller models more often), a requested GPU count (one of the two
// the catalog gives the model), a duration on that allocation drawn log-uniformly from
// [min_hours, max_hours], the tokens that duration trains (at the simulated throughput of the job's
// best plan on its requested GPUs when `tokens_per_s` is given, else at assumed_mfu of peak), an arrival
// drawn uniformly over [0, window_hours], and a deadline of arrival + slack x duration with slack uniform
// in [slack_min, slack_max]. The random numbers come from splitmix64, so a seed gives the same jobs on
// every platform.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/cluster_schedule.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct CatalogModel {
    std::string id; // e.g. "gpt-6.7b"
    ModelSpec model;
    int global_batch = 0;
    int requested_gpus[2] = {0, 0};
    double weight = 0; // relative frequency in generated workloads
};

const std::vector<CatalogModel>& workload_catalog();
const CatalogModel* find_catalog_model(const std::string& id);

struct WorkloadOptions {
    int jobs = 64;
    std::uint64_t seed = 1;
    double window_hours = 80;
    double min_hours = 4;
    double max_hours = 48;
    double slack_min = 0.8;
    double slack_max = 2.0;
    double assumed_mfu = 0.45;
    double peak_tflops_per_gpu = 312; // the GPU's bf16 peak (A100: 312)
    int cluster_gpus = 1024;          // requested counts above it are capped
    // Throughput of a model (with its global batch) on a GPU count; unset or <= 0 = the assumed-MFU estimate.
    std::function<double(const ModelSpec& model, int global_batch, int gpus)> tokens_per_s;
};

Diagnostics check_workload_options(const WorkloadOptions& options);

// Jobs sorted by arrival, named "job-000", "job-001", ...
std::vector<ClusterJob> generate_workload(const WorkloadOptions& options);

// Offered load: the jobs' GPU-hours on their requested allocations (at `tokens_per_s`, else the
// assumed-MFU estimate) over the cluster's GPU-hours in the arrival window.
double offered_load(const std::vector<ClusterJob>& jobs, const WorkloadOptions& options);

} // namespace vtrain
