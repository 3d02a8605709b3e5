// SPDX-License-Identifier: MIT
#pragma once
// vTrain's multi-tenant cluster case study: a discrete-event simulation of one shared GPU cluster that
// receives training jobs over time, under three policies:
//   vtrain       simulator-informed: each job's allocation and plan come from its simulated throughput
//                at every GPU count (its curve); re-planned whenever a job arrives or finishes;
//   fixed        each job runs on its requested GPU count with its best plan there, first come first
//                served with first-fit backfilling, never resized;
//   elasticflow  ElasticFlow-style: the same elastic re-planning, but believing that throughput scales
//                linearly with GPUs (the per-GPU throughput of the job's most efficient allocation, times
//                the GPU count), and running data-parallel scaling only (the model-parallel degree of
//                its smallest allocation, dp grows).
//
// The elastic re-plan (at every arrival and finish), in deadline order (earliest first):
//   1. each job gets the smallest GPU count whose believed throughput meets its deadline (restart
//      overhead included when the allocation changes), if that many GPUs are still free;
//   2. jobs left without GPUs (their deadline cannot be met, or no room) get their smallest count if free;
//   3. the remaining GPUs go, one step at a time, to the job whose believed completion time drops most per
//      added GPU; a step that does not help (believed) is not taken.
// A changed allocation pauses the job for restart_overhead_s (checkpoint and restart). GPU counts are
// free to combine (no placement or fragmentation model).
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/optimal_model.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct ClusterJob {
    std::string name;
    ModelSpec model;
    int global_batch = 0;   // sequences per iteration
    double tokens = 0;      // training tokens
    double arrival_h = 0;   // hours from the start of the simulation
    double deadline_h = 0;  // absolute, hours from the start of the simulation
    int requested_gpus = 0; // the fixed policy's allocation; 0 = derived (see run_schedule_study)
};

// One point of a job's throughput curve: its best plan on `gpus` GPUs.
struct CurvePoint {
    int gpus = 0;
    Plan plan;
    double tokens_per_s = 0;
    double mfu = 0;
};

struct ThroughputCurve {
    std::vector<CurvePoint> best;                        // fastest plan per GPU count (counts where some plan fits), increasing
    std::vector<CurvePoint> dp_scaling;                  // fixed tp x pp (the smallest that fits at the smallest count), dp grows
    const CurvePoint* at(int gpus) const;                // best, exact count
    const CurvePoint* smallest_at_least(int gpus) const; // best, the smallest count >= gpus
};

enum class SchedulePolicy { SimulatorInformed, Fixed, ElasticFlow };
const char* to_string(SchedulePolicy policy); // "vtrain", "fixed", "elasticflow"
std::optional<SchedulePolicy> schedule_policy_from_string(const std::string& text);

struct ScheduleOptions {
    int cluster_gpus = 0;
    double restart_overhead_s = 60; // pause when a job's allocation changes (and when it starts)
    double peak_tflops_per_gpu = 0; // for cluster MFU; 0 = not reported
    const std::atomic<bool>* cancel = nullptr;
};

struct JobSegment {
    double start_h = 0;
    double ready_h = 0; // after the restart overhead
    double end_h = 0;
    int gpus = 0;
    Plan plan;
    double tokens_per_s = 0;
};

struct JobOutcome {
    bool completed = false;
    bool schedulable = true; // some plan fits on a GPU count the policy may use
    double first_start_h = -1;
    double finish_h = 0; // valid when completed
    bool met_deadline = false;
    int restarts = 0; // allocation changes after the first start
    std::vector<JobSegment> segments;
};

struct PolicyResult {
    SchedulePolicy policy = SchedulePolicy::SimulatorInformed;
    std::vector<JobOutcome> jobs;     // in job-list order
    double deadline_satisfaction = 0; // jobs finished by their deadline / all jobs
    double average_jct_h = 0;         // finish - arrival, over completed jobs
    double makespan_h = 0;            // last finish (the simulation starts at 0)
    double gpu_utilization = 0;       // allocated GPU-hours / (cluster GPUs x makespan)
    double cluster_mfu = 0;           // model FLOPs done / (cluster peak x makespan)
    int completed = 0;
    int unschedulable = 0;
    int replans = 0;  // events that re-planned the allocation
    int restarts = 0; // allocation changes of running jobs (each pays restart_overhead_s)
    bool cancelled = false;
};

// Simulates one policy. `curves[i]` is job i's curve (at least its `best` part). Jobs with an empty curve
// (for elasticflow: an empty dp_scaling part) never run and miss their deadline.
PolicyResult simulate_cluster(const std::vector<ClusterJob>& jobs, const std::vector<ThroughputCurve>& curves, SchedulePolicy policy,
                              const ScheduleOptions& options);

struct ScheduleRequest {
    std::string gpu;
    int num_gpus = 0;
    int gpus_per_node = 0; // 0 = the profile's node size
    std::vector<ClusterJob> jobs;
    std::vector<SchedulePolicy> policies{SchedulePolicy::SimulatorInformed, SchedulePolicy::Fixed, SchedulePolicy::ElasticFlow};
    double restart_overhead_s = 60;
    int threads = 0; // explore worker threads, 0 = all cores
};

// Checks the cluster and every job against it; errors name "jobs[i].field".
Diagnostics check_schedule_request(const ScheduleRequest& request);

struct ScheduleStudy {
    ScheduleRequest request;                       // requested_gpus filled in where it was 0
    std::vector<std::string> curve_keys;           // one per distinct (model, global batch)
    std::map<std::string, ThroughputCurve> curves; // by key
    std::vector<std::size_t> job_curve;            // job -> index into curve_keys
    std::vector<PolicyResult> results;             // one per requested policy
    bool cancelled = false;
    double curves_elapsed_s = 0;
    double elapsed_s = 0;
    std::uint64_t plans_enumerated = 0;
};

// Curves already computed (see cache_key in cluster_schedule_curves.h); shared by the workload generator
// and the study so that no curve is computed twice.
using CurveCache = std::map<std::string, ThroughputCurve>;

// Computes every distinct job's curve (explore, once per model and global batch; progress in steps),
// derives missing requested_gpus (the smallest count on which the job's best plan would meet its deadline
// if started at arrival, else its fastest count), then simulates each policy. `cache` (optional) supplies
// curves computed before and keeps the new ones.
Expected<ScheduleStudy> run_schedule_study(const ScheduleRequest& request, const GpuProfile& profile, StudyControl& control,
                                           CurveCache* cache = nullptr);

// Offered load: the jobs' GPU-hours on their requested allocations (at their curves' throughput there)
// over the cluster's GPU-hours in [0, window_hours]; 0 when a curve is missing or the window is empty.
double study_offered_load(const ScheduleStudy& study, double window_hours);

} // namespace vtrain
