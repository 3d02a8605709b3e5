// SPDX-License-Identifier: MIT
#include "models/schedule_runner.h"

#include <algorithm>
#include <chrono>

#include "vtrain/cluster_schedule_curves.h"

namespace vtrain::ui {
namespace {

WorkloadOptions workloadFor(const ScheduleInputs& inputs, double peak_tflops)
{
    WorkloadOptions w = inputs.workload;
    w.cluster_gpus = inputs.num_gpus;
    w.peak_tflops_per_gpu = peak_tflops;
    return w;
}

ScheduleRequest requestFor(const ScheduleInputs& inputs, int threads)
{
    ScheduleRequest r;
    r.gpu = inputs.gpu;
    r.num_gpus = inputs.num_gpus;
    r.restart_overhead_s = inputs.restart_overhead_s;
    r.threads = threads;
    return r;
}

} // namespace

Diagnostics check_schedule_inputs(const ScheduleInputs& inputs, double peak_tflops)
{
    Diagnostics d = check_workload_options(workloadFor(inputs, peak_tflops));
    // The request's own checks; its jobs are generated later, so "the job list is empty" does not apply yet.
    for (Diagnostic& e : check_schedule_request(requestFor(inputs, 0))) {
        const bool duplicate = std::any_of(d.begin(), d.end(), [&](const Diagnostic& x) { return x.field == e.field; });
        if (e.field != "jobs" && !duplicate) {
            d.push_back(std::move(e));
        }
    }
    return d;
}

ScheduleRunner::ScheduleRunner(QObject* parent) : StudyRunner(parent) {}

StudyRunner::Work ScheduleRunner::work(ScheduleInputs inputs, std::shared_ptr<const GpuProfile> profile)
{
    const int threads = this->threads();
    auto cache = m_cache; // a snapshot: the worker extends its own copy, never one another job uses
    return [this, inputs, profile, cache, threads](StudyControl& control) -> Outcome {
        if (!profile) {
            return {{Diagnostic{"gpu", "no profile was given"}}, false, nullptr};
        }
        const double peak = profile->peak_flops("bf16") / 1e12;
        if (Diagnostics bad = check_schedule_inputs(inputs, peak); !bad.empty()) {
            return {bad, false, nullptr};
        }
        const auto begin = std::chrono::steady_clock::now();
        auto curves = std::make_shared<CurveCache>(cache ? *cache : CurveCache{});
        auto result = std::make_shared<ScheduleRunResult>();
        result->inputs = inputs;
        std::uint64_t plans = 0;
        ScheduleRequest request = requestFor(inputs, threads);
        request.jobs = generate_simulated_workload(workloadFor(inputs, peak), *profile, request.gpus_per_node, threads, control, *curves, plans);
        if (control.cancelled()) {
            result->cancelled = true; // stopped while measuring the workload's curves: nothing to simulate
        } else {
            auto study = run_schedule_study(request, *profile, control, curves.get());
            if (!study.ok()) {
                return {study.errors(), false, nullptr};
            }
            result->study = std::move(study).value();
            result->study.plans_enumerated += plans;
            result->cancelled = result->study.cancelled;
            result->offered_load = study_offered_load(result->study, inputs.workload.window_hours);
        }
        result->elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
        std::shared_ptr<const ScheduleRunResult> shared = result;
        return {{}, shared->cancelled, [this, shared, curves](std::uint64_t job) {
                    m_lastResult = shared;
                    m_cache = curves;
                    Q_EMIT finished(job, shared);
                }};
    };
}

std::uint64_t ScheduleRunner::start(const ScheduleInputs& inputs, std::shared_ptr<const GpuProfile> profile)
{
    return launch(work(inputs, std::move(profile)));
}

void ScheduleRunner::schedule(const ScheduleInputs& inputs, std::shared_ptr<const GpuProfile> profile, int delayMs)
{
    StudyRunner::schedule(work(inputs, std::move(profile)), delayMs);
}

} // namespace vtrain::ui
