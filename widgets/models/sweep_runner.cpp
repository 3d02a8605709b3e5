// SPDX-License-Identifier: MIT
#include "models/sweep_runner.h"

#include <QtConcurrent/QtConcurrentRun>

namespace vtrain::ui {

struct SweepRunner::Job {
    std::uint64_t id = 0;
    RunControl control;
    QElapsedTimer clock;
    std::mutex mutex;
    std::vector<PlanRow> pending; // rows the worker produced and the UI has not taken yet
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
    for (QFuture<void>& f : m_futures) {
        f.waitForFinished();
    }
}

std::uint64_t SweepRunner::start(const Scenario& scenario, std::map<std::string, GpuProfile> profiles, ExploreOptions options)
{
    m_debounce.stop();
    m_scheduled.reset();
    if (m_job) {
        m_job->control.cancel = true; // the old worker stops soon; whatever it still sends is stale
    }
    std::erase_if(m_futures, [](const QFuture<void>& f) { return f.isFinished(); });

    auto job = std::make_shared<Job>();
    job->id = ++m_jobId;
    job->clock.start();
    m_job = job;
    m_lastError.clear();
    if (options.threads == 0) {
        options.threads = m_threads;
    }

    m_futures.push_back(QtConcurrent::run([this, job, scenario, profiles = std::move(profiles), options] {
        auto outcome = std::make_shared<Expected<ExploreResult>>(Diagnostic{});
        try {
            *outcome = explore(scenario, profiles, options, job->control, [&job](const PlanRow& row) {
                const std::lock_guard lock(job->mutex);
                job->pending.push_back(row);
            });
        } catch (const std::exception& e) {
            *outcome = Diagnostic{"", std::string("the sweep failed: ") + e.what()};
        }
        // Queued to the runner's thread; the runner waits for this worker in its destructor, so `this`
        // is alive here, and Qt drops the event if the runner is gone by delivery time.
        QMetaObject::invokeMethod(
            this, [this, job, outcome] { onJobDone(job, outcome); }, Qt::QueuedConnection);
    }));

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

void SweepRunner::onJobDone(const std::shared_ptr<Job>& job, const std::shared_ptr<Expected<ExploreResult>>& outcome)
{
    std::erase_if(m_futures, [](const QFuture<void>& f) { return f.isFinished(); });
    if (job != m_job) {
        return; // a newer sweep started since: this one's results are stale
    }
    drainRows();
    m_tick.stop();
    if (!outcome->ok()) {
        m_lastError = QString::fromStdString(outcome->first_error());
        setState(State::Failed);
        Q_EMIT progressChanged(progress());
        Q_EMIT failed(job->id, m_lastError);
        return;
    }
    auto result = std::make_shared<const ExploreResult>(std::move(*outcome).value());
    m_lastResult = result;
    setState(result->cancelled || job->control.cancel ? State::Cancelled : State::Finished);
    Q_EMIT progressChanged(progress());
    Q_EMIT finished(job->id, result);
}

void SweepRunner::setState(State state)
{
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

} // namespace vtrain::ui
