// SPDX-License-Identifier: MIT
// The cluster study end to end: check the request, build each distinct job's throughput curve once,
// size the fixed policy's missing allocations, and simulate every policy.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "studies/cluster_request_checks.h"
#include "vtrain/cluster_schedule.h"
#include "vtrain/cluster_schedule_curves.h"
#include "vtrain/json_fields.h"

namespace vtrain {
namespace {

std::string job_field(std::size_t i, const char* field)
{
    return "jobs[" + std::to_string(i) + "]." + field;
}

// The smallest count whose best plan meets the deadline when started at arrival, else the fastest one.
int derived_request(const ClusterJob& job, const ThroughputCurve& curve)
{
    const CurvePoint* fastest = nullptr;
    for (const CurvePoint& p : curve.best) {
        if (job.arrival_h + job.tokens / p.tokens_per_s / 3600 <= job.deadline_h) {
            return p.gpus;
        }
        if (fastest == nullptr || p.tokens_per_s > fastest->tokens_per_s) {
            fastest = &p;
        }
    }
    return fastest != nullptr ? fastest->gpus : 0;
}

} // namespace

Diagnostics check_schedule_request(const ScheduleRequest& r)
{
    Diagnostics d;
    check_cluster_fields(r.gpu, r.num_gpus, r.gpus_per_node, d);
    if (!(r.restart_overhead_s >= 0 && std::isfinite(r.restart_overhead_s))) {
        d.push_back({"restart_overhead_s", "must be a number of seconds >= 0"});
    }
    if (r.policies.empty()) {
        d.push_back({"policy", "at least one policy is required"});
    }
    if (r.jobs.empty()) {
        d.push_back({"jobs", "the job list is empty"});
    }
    for (std::size_t i = 0; i < r.jobs.size(); ++i) {
        const ClusterJob& j = r.jobs[i];
        if (j.model.layers < 1 || j.model.hidden < 1 || j.model.heads < 1 || j.model.seq_len < 1 || j.model.vocab < 1) {
            d.push_back({job_field(i, "model"), "needs layers, hidden, heads, seq_len and vocab >= 1"});
        }
        if (j.global_batch < 1) {
            d.push_back({job_field(i, "global_batch"), "must be >= 1 sequence"});
        }
        if (!(j.tokens > 0 && std::isfinite(j.tokens))) {
            d.push_back({job_field(i, "tokens"), "must be a positive number of tokens"});
        }
        if (!(j.arrival_h >= 0 && std::isfinite(j.arrival_h))) {
            d.push_back({job_field(i, "arrival_h"), "must be a number of hours >= 0"});
        }
        if (!(j.deadline_h > j.arrival_h && std::isfinite(j.deadline_h))) {
            d.push_back({job_field(i, "deadline_h"), "must be later than arrival_h (" + std::to_string(j.arrival_h) + ")"});
        }
        if (j.requested_gpus < 0 || (r.num_gpus > 0 && j.requested_gpus > r.num_gpus)) {
            d.push_back({job_field(i, "requested_gpus"),
                         std::to_string(j.requested_gpus) + " is not between 1 and the cluster's " + std::to_string(r.num_gpus) + " GPUs"});
        }
    }
    return d;
}

Expected<ScheduleStudy> run_schedule_study(const ScheduleRequest& request, const GpuProfile& profile, StudyControl& control, CurveCache* cache)
{
    CurveCache local;
    CurveCache& curves = cache != nullptr ? *cache : local;
    Diagnostics errors = check_schedule_request(request);
    if (!errors.empty()) {
        return errors;
    }
    if (profile.id != request.gpu) {
        return Diagnostic{"gpu",
                          "the profile given is \"" + json_fields::bounded(profile.id) + "\", not \"" + json_fields::bounded(request.gpu) + "\""};
    }
    const auto start = std::chrono::steady_clock::now();
    const std::map<std::string, GpuProfile> profiles{{request.gpu, profile}};
    ScheduleStudy study;
    study.request = request;

    // Distinct (model, global batch) pairs, each with the counts its jobs request.
    std::map<std::string, std::size_t> index;
    std::vector<std::vector<int>> requested;
    for (const ClusterJob& job : request.jobs) {
        const std::string key = curve_key(job.model, job.global_batch);
        auto [it, added] = index.emplace(key, study.curve_keys.size());
        if (added) {
            study.curve_keys.push_back(key);
            requested.emplace_back();
        }
        study.job_curve.push_back(it->second);
        requested[it->second].push_back(job.requested_gpus);
    }
    control.steps_total.store(study.curve_keys.size());
    control.steps_done.store(0);
    for (std::size_t k = 0; k < study.curve_keys.size(); ++k) {
        const std::size_t first_job =
            static_cast<std::size_t>(std::find(study.job_curve.begin(), study.job_curve.end(), k) - study.job_curve.begin());
        CurveRequest cr;
        cr.model = request.jobs[first_job].model;
        cr.global_batch = request.jobs[first_job].global_batch;
        cr.gpu = request.gpu;
        cr.gpus_per_node = request.gpus_per_node;
        cr.counts = allocation_counts(request.num_gpus, requested[k]);
        cr.threads = request.threads;
        auto curve = cached_throughput_curve(cr, profiles, control, curves, study.plans_enumerated);
        if (!curve.ok()) {
            Diagnostics prefixed;
            for (const auto& e : curve.errors()) {
                prefixed.push_back({job_field(first_job, "model") + (e.field.empty() ? "" : " (" + e.field + ")"), e.message});
            }
            return prefixed;
        }
        if (curve.value() == nullptr) {
            study.cancelled = true;
            break;
        }
        study.curves.emplace(study.curve_keys[k], *curve.value());
        control.steps_done.fetch_add(1);
    }
    study.curves_elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (study.cancelled) {
        study.elapsed_s = study.curves_elapsed_s;
        return study;
    }

    std::vector<ThroughputCurve> job_curves;
    for (std::size_t i = 0; i < study.request.jobs.size(); ++i) {
        const ThroughputCurve& curve = study.curves.at(study.curve_keys[study.job_curve[i]]);
        ClusterJob& job = study.request.jobs[i];
        if (job.requested_gpus == 0) {
            job.requested_gpus = derived_request(job, curve);
        }
        job_curves.push_back(curve);
    }
    ScheduleOptions options;
    options.cluster_gpus = request.num_gpus;
    options.restart_overhead_s = request.restart_overhead_s;
    options.peak_tflops_per_gpu = profile.peak_flops("bf16") / 1e12;
    options.cancel = &control.sweep.cancel;
    for (const SchedulePolicy policy : request.policies) {
        study.results.push_back(simulate_cluster(study.request.jobs, job_curves, policy, options));
        if (study.results.back().cancelled) {
            study.cancelled = true;
            break;
        }
    }
    study.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return study;
}

double study_offered_load(const ScheduleStudy& study, double window_hours)
{
    double gpu_hours = 0;
    for (std::size_t i = 0; i < study.request.jobs.size() && i < study.job_curve.size(); ++i) {
        const ClusterJob& job = study.request.jobs[i];
        const auto it = study.curves.find(study.curve_keys[study.job_curve[i]]);
        const CurvePoint* point = it == study.curves.end() ? nullptr : it->second.smallest_at_least(job.requested_gpus);
        if (point == nullptr) {
            return 0;
        }
        gpu_hours += point->gpus * job.tokens / point->tokens_per_s / 3600;
    }
    const double capacity = static_cast<double>(study.request.num_gpus) * window_hours;
    return capacity > 0 ? gpu_hours / capacity : 0;
}

} // namespace vtrain
