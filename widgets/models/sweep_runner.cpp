// SPDX-License-Identifier: MIT
#include "models/sweep_runner.h"

#include <exception>
#include <system_error>

#include "models/worker_thread.h"

namespace vtrain::ui {

struct SweepRunner::Job {
    std::uint64_t id = 0;
    RunControl control;
    QElapsedTimer clock; // UI thread only
    std::mutex mutex;
    std::vector<PlanRow> pending;                 // rows the worker produced and the UI has not taken yet (under `mutex`)
    WorkerThread<Expected<ExploreResult>> worker; // last: joined before the members above go
};

SweepRunner::SweepRunner(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<SweepProgress>();
    m_tick.setInterval(100); // 10 Hz: smooth enough for a progress bar, cheap for the model
    connect(&m_tick, &QTimer::timeout, this, &SweepRunner::onTick);
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, [this] {
        if (m_scheduled) {
            auto [scenario, profiles] = std::move(*m_scheduled);
            m_scheduled.reset();
            start(scenario, std::move(profiles));
        }
    });
}

SweepRunner::~SweepRunner()
{
    if (m_job) {
        m_job->control.cancel = true;
    }
    m_job.reset(); // joins; superseded jobs are cancelled already
    m_superseded.clear();
}

std::uint64_t SweepRunner::start(const Scenario& scenario, std::map<std::string, GpuProfile> profiles, ExploreOptions options)
{
    m_debounce.stop();
    m_scheduled.reset();
    if (m_job) {
        m_job->control.cancel = true; // the old worker stops soon; whatever it still delivers is dropped
        m_superseded.push_back(std::move(m_job));
    }
    std::erase_if(m_superseded, [](const std::unique_ptr<Job>& j) { return j->worker.finished(); });

    m_job = std::make_unique<Job>();
    Job* job = m_job.get();
    job->id = ++m_jobId;
    job->clock.start();
    m_lastError.clear();
    if (options.threads == 0) {
        options.threads = m_threads;
    }
    try {
        job->worker.start(this, "onWorkerDone", [job, scenario, profiles = std::move(profiles), options]() -> Expected<ExploreResult> {
            try {
                return explore(scenario, profiles, options, job->control, [job](const PlanRow& row) {
                    const std::lock_guard lock(job->mutex);
                    job->pending.push_back(row);
                });
            } catch (const std::exception& e) {
                return Diagnostic{"", std::string("the sweep failed: ") + e.what()};
            } catch (...) {
                return Diagnostic{"", "the sweep failed: unknown error"};
            }
        });
    } catch (const std::system_error& e) {
        setState(State::Running); // so that the failure below is a state change like any other
        Q_EMIT started(job->id, scenario);
        finish(Diagnostic{"", std::string("the sweep could not start a thread: ") + e.what()});
        return job->id;
    }

    setState(State::Running);
    m_tick.start();
    Q_EMIT started(job->id, scenario);
    Q_EMIT progressChanged(progress());
    return job->id;
}

void SweepRunner::schedule(const Scenario& scenario, std::map<std::string, GpuProfile> profiles, int delayMs)
{
    m_scheduled.emplace(scenario, std::move(profiles));
    m_debounce.start(delayMs);
}

void SweepRunner::cancel()
{
    m_debounce.stop();
    m_scheduled.reset();
    if (m_job && m_state == State::Running) {
        m_job->control.cancel = true;
        setState(State::Cancelling);
    }
}

SweepProgress SweepRunner::progress() const
{
    SweepProgress p;
    if (!m_job) {
        return p;
    }
    p.done = m_job->control.done.load();
    p.total = m_job->control.total.load();
    p.elapsed_s = static_cast<double>(m_job->clock.elapsed()) / 1000.0;
    if (p.elapsed_s > 0.2 && p.done > 0) {
        p.plans_per_s = static_cast<double>(p.done) / p.elapsed_s;
        if (p.total >= p.done) {
            p.seconds_left = static_cast<double>(p.total - p.done) / p.plans_per_s;
        }
    }
    return p;
}

void SweepRunner::onTick()
{
    drainRows();
    Q_EMIT progressChanged(progress());
}

void SweepRunner::drainRows()
{
    if (!m_job) {
        return;
    }
    std::vector<PlanRow> rows;
    {
        const std::lock_guard lock(m_job->mutex);
        rows.swap(m_job->pending);
    }
    if (!rows.empty()) {
        Q_EMIT rowsArrived(rows);
    }
}

void SweepRunner::onWorkerDone()
{
    std::erase_if(m_superseded, [](const std::unique_ptr<Job>& j) { return j->worker.finished(); });
    if (!m_job) {
        return;
    }
    if (auto outcome = m_job->worker.take()) { // empty: the wake was a superseded job's
        finish(std::move(*outcome));
    }
}

void SweepRunner::finish(Expected<ExploreResult> outcome)
{
    const std::uint64_t id = m_job->id;
    const bool cancelRequested = m_job->control.cancel;
    drainRows(); // the worker pushed its last row before its outcome: all of them are here now
    m_tick.stop();
    if (!outcome.ok()) {
        m_lastError = QString::fromStdString(outcome.first_error());
        setState(State::Failed);
        Q_EMIT progressChanged(progress());
        Q_EMIT failed(id, m_lastError);
        return;
    }
    auto result = std::make_shared<const ExploreResult>(std::move(outcome).value());
    m_lastResult = result;
    setState(result->cancelled || cancelRequested ? State::Cancelled : State::Finished);
    Q_EMIT progressChanged(progress());
    Q_EMIT finished(id, result);
}

void SweepRunner::setState(State state)
{
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

} // namespace vtrain::ui
