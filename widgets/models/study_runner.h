// SPDX-License-Identifier: MIT
#pragma once
// Runs one case study (many explore calls) off the UI thread, like SweepRunner: latest job wins -- a new
// start cancels the running job, and whatever an older job still delivers is dropped by job id. Progress
// is read from the core's StudyControl atomics by a 10 Hz timer on the UI thread (no signal per plan).
// The typed runners (OptimalModelRunner, ScheduleRunner) supply the work and emit the typed result. The
// worker hands its outcome back through models/worker_thread.h.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include "vtrain/diagnostic.h"
#include "vtrain/optimal_model.h"

namespace vtrain::ui {

struct StudyProgress {
    std::uint64_t steps_done = 0; // explore calls (models, curves) finished
    std::uint64_t steps_total = 0;
    std::uint64_t plans_done = 0; // of the current explore call
    std::uint64_t plans_total = 0;
    double elapsed_s = 0;
    // 0..1: finished steps plus the current step's share (for a progress bar).
    double fraction() const;
};

class StudyRunner : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Cancelling, Finished, Cancelled, Failed };
    Q_ENUM(State)

    explicit StudyRunner(QObject* parent = nullptr);
    ~StudyRunner() override; // cancels and waits: workers never outlive the runner

    void cancel();
    // Drops a scheduled start (the inputs it was for are no longer valid); a running job goes on.
    void cancelScheduled();
    State state() const { return m_state; }
    bool isRunning() const { return m_state == State::Running || m_state == State::Cancelling; }
    std::uint64_t currentJob() const { return m_jobId; }
    StudyProgress progress() const;
    // Explore worker threads per job; 0 = all cores.
    void setThreads(int threads) { m_threads = threads; }
    int threads() const { return m_threads; }

Q_SIGNALS:
    void started(std::uint64_t job);
    void progressChanged(const vtrain::ui::StudyProgress& progress);
    // Refused input or a failure in the worker; each diagnostic names the request field.
    void failed(std::uint64_t job, const vtrain::Diagnostics& errors);
    void stateChanged(vtrain::ui::StudyRunner::State state);

protected:
    // What a worker hands back: errors, or a delivery run on the runner's thread (it emits the typed
    // result) when the job is still the latest.
    struct Outcome {
        Diagnostics errors;
        bool cancelled = false;
        std::function<void(std::uint64_t job)> deliver;
    };
    using Work = std::function<Outcome(StudyControl& control)>;

    // Starts `work` now on a worker thread; returns the job id.
    std::uint64_t launch(Work work);
    // Starts `work` after `delayMs` unless another launch or schedule comes first (debounces edits).
    void schedule(Work work, int delayMs);

private Q_SLOTS:
    // Queued by a worker when its work returned (the current job's or a superseded one's).
    void onWorkerDone();

private:
    struct Job;
    void finish(Outcome outcome);
    void setState(State state);

    std::unique_ptr<Job> m_job;                     // the current job
    std::vector<std::unique_ptr<Job>> m_superseded; // cancelled, kept until their workers return
    std::uint64_t m_jobId = 0;
    State m_state = State::Idle;
    QTimer m_tick;
    QTimer m_debounce;
    Work m_scheduled;
    int m_threads = 0;
};

} // namespace vtrain::ui

Q_DECLARE_METATYPE(vtrain::ui::StudyProgress)
