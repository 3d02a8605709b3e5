// SPDX-License-Identifier: MIT
#pragma once
// Runs core explore() off the UI thread. Latest job wins: starting a sweep cancels the running one and
// anything the old one still delivers is dropped by job id. Feasible rows stream in: the worker's row
// sink appends to a locked buffer that a 10 Hz timer on the UI thread drains (one model insert per tick,
// never a signal per plan), and the same tick reads progress from core's atomics. The worker hands its
// result back through models/worker_thread.h.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include "vtrain/explorer.h"

namespace vtrain::ui {

struct SweepProgress {
    std::uint64_t done = 0;
    std::uint64_t total = 0;
    double elapsed_s = 0;
    double plans_per_s = 0;
    double seconds_left = -1; // -1 = unknown
};

class SweepRunner : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Cancelling, Finished, Cancelled, Failed };
    Q_ENUM(State)

    explicit SweepRunner(QObject* parent = nullptr);
    ~SweepRunner() override; // cancels and waits: workers never outlive the runner

    // Starts now; returns the new job id. A running sweep is cancelled and its results ignored.
    std::uint64_t start(const Scenario& scenario, std::map<std::string, GpuProfile> profiles, ExploreOptions options = {});
    // Starts after `delayMs` unless another schedule() or start() comes first (debounces edits).
    void schedule(const Scenario& scenario, std::map<std::string, GpuProfile> profiles, int delayMs);
    void cancel();

    State state() const { return m_state; }
    bool isRunning() const { return m_state == State::Running || m_state == State::Cancelling; }
    std::uint64_t currentJob() const { return m_jobId; }
    SweepProgress progress() const;
    // The last completed (or cancelled) sweep's summary; null before the first one.
    std::shared_ptr<const ExploreResult> lastResult() const { return m_lastResult; }
    QString lastError() const { return m_lastError; }
    // Worker threads for explore(); 0 = all cores.
    void setThreads(int threads) { m_threads = threads; }

Q_SIGNALS:
    void started(std::uint64_t job, const vtrain::Scenario& scenario);
    void rowsArrived(const std::vector<vtrain::PlanRow>& rows);
    void progressChanged(const vtrain::ui::SweepProgress& progress);
    // Also sent for a cancelled sweep (result->cancelled); only for the latest job.
    void finished(std::uint64_t job, std::shared_ptr<const vtrain::ExploreResult> result);
    void failed(std::uint64_t job, const QString& message);
    void stateChanged(vtrain::ui::SweepRunner::State state);

private Q_SLOTS:
    // Queued by a worker when its explore() returned (the current job's or a superseded one's).
    void onWorkerDone();

private:
    struct Job;
    void onTick();
    void drainRows();
    void finish(Expected<ExploreResult> outcome);
    void setState(State state);

    std::unique_ptr<Job> m_job;                     // the current job
    std::vector<std::unique_ptr<Job>> m_superseded; // cancelled, kept until their workers return
    std::uint64_t m_jobId = 0;
    State m_state = State::Idle;
    QTimer m_tick;
    QTimer m_debounce;
    std::optional<std::pair<Scenario, std::map<std::string, GpuProfile>>> m_scheduled;
    std::shared_ptr<const ExploreResult> m_lastResult;
    QString m_lastError;
    int m_threads = 0;
};

} // namespace vtrain::ui

Q_DECLARE_METATYPE(vtrain::ui::SweepProgress)
