// SPDX-License-Identifier: MIT
#pragma once
// Runs the shared-cluster study off the UI thread (latest job wins): the seeded workload with durations
// measured on simulated throughput curves (core generate_simulated_workload), then every policy (core
// run_schedule_study). Curves computed by the latest finished job are reused by the next one, so a new
// seed or job count does not re-explore the same models.
#include <memory>

#include "models/study_runner.h"
#include "vtrain/cluster_schedule.h"
#include "vtrain/cluster_schedule_workload.h"
#include "vtrain/gpu_profile.h"

namespace vtrain::ui {

struct ScheduleInputs {
    std::string gpu;
    int num_gpus = 64;
    WorkloadOptions workload; // jobs, seed, window_hours; cluster_gpus and peak come from above
    double restart_overhead_s = 60;
};

struct ScheduleRunResult {
    ScheduleInputs inputs;
    ScheduleStudy study; // study.request.jobs: the generated jobs
    double offered_load = 0;
    bool cancelled = false; // while building curves (study empty) or while simulating
    double elapsed_s = 0;   // the whole run: curves, workload and policies
};

// The inputs' diagnostics before anything runs (the core's checks; fields "gpu", "gpus", "jobs",
// "window_hours", "restart_overhead_s"). `peak_tflops` is the GPU's bf16 peak.
Diagnostics check_schedule_inputs(const ScheduleInputs& inputs, double peak_tflops);

class ScheduleRunner : public StudyRunner {
    Q_OBJECT
public:
    explicit ScheduleRunner(QObject* parent = nullptr);

    // `profile` must be the profile of inputs.gpu. Returns the job id.
    std::uint64_t start(const ScheduleInputs& inputs, std::shared_ptr<const GpuProfile> profile);
    void schedule(const ScheduleInputs& inputs, std::shared_ptr<const GpuProfile> profile, int delayMs);

    std::shared_ptr<const ScheduleRunResult> lastResult() const { return m_lastResult; }

Q_SIGNALS:
    // Also sent for a cancelled study (result->cancelled); latest job only.
    void finished(std::uint64_t job, std::shared_ptr<const vtrain::ui::ScheduleRunResult> result);

private:
    Work work(ScheduleInputs inputs, std::shared_ptr<const GpuProfile> profile);

    std::shared_ptr<const ScheduleRunResult> m_lastResult;
    std::shared_ptr<const CurveCache> m_cache; // the latest finished job's curves
};

} // namespace vtrain::ui
