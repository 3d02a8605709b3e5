// SPDX-License-Identifier: MIT
#pragma once
// Simulates one selected plan with its full timeline, off the UI thread (a big plan has 100,000+ tasks).
// Latest request wins, like the sweep runner: an older result that arrives late is dropped. Each request's
// worker hands its result back through models/worker_thread.h.
#include <cstdint>
#include <memory>
#include <vector>

#include <QObject>

#include "vtrain/simulator.h"

namespace vtrain::ui {

class PlanDetailRunner : public QObject {
    Q_OBJECT
public:
    explicit PlanDetailRunner(QObject* parent = nullptr);
    ~PlanDetailRunner() override;

    // `scenario` gives model, training and cluster; its GPU and GPU count are replaced by the plan's row.
    std::uint64_t request(const Scenario& scenario, const Plan& plan, const std::string& gpu, int numGpus, std::shared_ptr<const GpuProfile> profile);
    bool isBusy() const { return m_busy; }
    std::shared_ptr<const SimulationResult> lastResult() const { return m_last; }

Q_SIGNALS:
    void resultReady(std::uint64_t request, std::shared_ptr<const vtrain::SimulationResult> result);
    void failed(std::uint64_t request, const QString& message);

private Q_SLOTS:
    // Queued by a worker when its simulation returned.
    void onWorkerDone();

private:
    struct Request;
    std::vector<std::unique_ptr<Request>> m_requests; // running, or returned and not yet collected
    std::uint64_t m_latest = 0;
    bool m_busy = false;
    std::shared_ptr<const SimulationResult> m_last;
};

} // namespace vtrain::ui
