// SPDX-License-Identifier: MIT
#pragma once
// Runs the compute-optimal model study (core find_optimal_model) off the UI thread; latest job wins.
#include <memory>

#include "models/study_runner.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/optimal_model.h"

namespace vtrain::ui {

class OptimalModelRunner : public StudyRunner {
    Q_OBJECT
public:
    explicit OptimalModelRunner(QObject* parent = nullptr);

    // `profile` must be the profile of request.gpu. Returns the job id.
    std::uint64_t start(const OptimalModelRequest& request, std::shared_ptr<const GpuProfile> profile);
    // Starts after `delayMs` unless another start or schedule comes first.
    void schedule(const OptimalModelRequest& request, std::shared_ptr<const GpuProfile> profile, int delayMs);

    // The last finished (or cancelled) study; null before the first one.
    std::shared_ptr<const OptimalModelResult> lastResult() const { return m_lastResult; }

Q_SIGNALS:
    // Also sent for a cancelled study (result->cancelled: the models done so far); latest job only.
    void finished(std::uint64_t job, std::shared_ptr<const vtrain::OptimalModelResult> result);

private:
    Work work(OptimalModelRequest request, std::shared_ptr<const GpuProfile> profile);

    std::shared_ptr<const OptimalModelResult> m_lastResult;
};

} // namespace vtrain::ui
