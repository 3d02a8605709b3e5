// SPDX-License-Identifier: MIT
#include "models/plan_detail_runner.h"

#include <QtConcurrent/QtConcurrentRun>

namespace vtrain::ui {

PlanDetailRunner::PlanDetailRunner(QObject* parent) : QObject(parent) {}

PlanDetailRunner::~PlanDetailRunner()
{
    for (QFuture<void>& f : m_futures) {
        f.waitForFinished();
    }
}

std::uint64_t PlanDetailRunner::request(const Scenario& scenario, const Plan& plan, const std::string& gpu, int numGpus,
                                        std::shared_ptr<const GpuProfile> profile)
{
    const std::uint64_t id = ++m_latest;
    m_busy = true;
    std::erase_if(m_futures, [](const QFuture<void>& f) { return f.isFinished(); });
    Scenario s = scenario;
    s.cluster.gpu = gpu;
    s.cluster.num_gpus = numGpus;
    s.plan = plan;
    m_futures.push_back(QtConcurrent::run([this, id, s = std::move(s), plan, profile = std::move(profile)] {
        SimulationOptions options;
        options.timeline = true;
        auto outcome = std::make_shared<Expected<SimulationResult>>(Diagnostic{});
        try {
            *outcome = simulate(s, plan, *profile, options);
        } catch (const std::exception& e) {
            *outcome = Diagnostic{"", e.what()};
        }
        // `this` outlives the worker (the destructor waits); a deleted receiver drops the queued call.
        QMetaObject::invokeMethod(
            this,
            [this, id, outcome] {
                if (id != m_latest) {
                    return; // superseded by a newer selection
                }
                m_busy = false;
                if (!outcome->ok()) {
                    Q_EMIT failed(id, QString::fromStdString(outcome->first_error()));
                    return;
                }
                m_last = std::make_shared<const SimulationResult>(std::move(*outcome).value());
                Q_EMIT resultReady(id, m_last);
            },
            Qt::QueuedConnection);
    }));
    return id;
}

} // namespace vtrain::ui
