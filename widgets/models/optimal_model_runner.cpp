// SPDX-License-Identifier: MIT
#include "models/optimal_model_runner.h"

namespace vtrain::ui {

OptimalModelRunner::OptimalModelRunner(QObject* parent) : StudyRunner(parent) {}

StudyRunner::Work OptimalModelRunner::work(OptimalModelRequest request, std::shared_ptr<const GpuProfile> profile)
{
    if (request.threads == 0) {
        request.threads = threads();
    }
    return [this, request, profile](StudyControl& control) -> Outcome {
        if (!profile) {
            return {{Diagnostic{"gpu", "no profile was given"}}, false, nullptr};
        }
        auto result = find_optimal_model(request, *profile, control);
        if (!result.ok()) {
            return {result.errors(), false, nullptr};
        }
        auto shared = std::make_shared<const OptimalModelResult>(std::move(result).value());
        // Runs on the runner's thread, only for the latest job.
        return {{}, shared->cancelled, [this, shared](std::uint64_t job) {
                    m_lastResult = shared;
                    Q_EMIT finished(job, shared);
                }};
    };
}

std::uint64_t OptimalModelRunner::start(const OptimalModelRequest& request, std::shared_ptr<const GpuProfile> profile)
{
    return launch(work(request, std::move(profile)));
}

void OptimalModelRunner::schedule(const OptimalModelRequest& request, std::shared_ptr<const GpuProfile> profile, int delayMs)
{
    StudyRunner::schedule(work(request, std::move(profile)), delayMs);
}

} // namespace vtrain::ui
