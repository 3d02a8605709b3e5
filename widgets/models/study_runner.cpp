// SPDX-License-Identifier: MIT
#include "models/study_runner.h"

#include <algorithm>
#include <exception>

#include <QtConcurrent/QtConcurrentRun>

namespace vtrain::ui {

double StudyProgress::fraction() const
{
    if (steps_total == 0) {
        return 0;
    }
    const double step = plans_total > 0 ? std::clamp(static_cast<double>(plans_done) / static_cast<double>(plans_total), 0.0, 1.0) : 0.0;
    return std::clamp((static_cast<double>(steps_done) + (steps_done < steps_total ? step : 0.0)) / static_cast<double>(steps_total), 0.0, 1.0);
}

struct StudyRunner::Job {
    std::uint64_t id = 0;
    StudyControl control;
    QElapsedTimer clock;
};

StudyRunner::StudyRunner(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<StudyProgress>();
    m_tick.setInterval(100);
    connect(&m_tick, &QTimer::timeout, this, [this] { Q_EMIT progressChanged(progress()); });
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, [this] {
        if (m_scheduled) {
            Work work = std::move(m_scheduled);
            m_scheduled = nullptr;
            launch(std::move(work));
        }
    });
}

StudyRunner::~StudyRunner()
{
    if (m_job) {
        m_job->control.sweep.cancel = true;
    }
    for (QFuture<void>& f : m_futures) {
        f.waitForFinished();
    }
}

std::uint64_t StudyRunner::launch(Work work)
{
    m_debounce.stop();
    m_scheduled = nullptr;
    if (m_job) {
        m_job->control.sweep.cancel = true; // the old worker stops soon; what it still sends is stale
    }
    std::erase_if(m_futures, [](const QFuture<void>& f) { return f.isFinished(); });

    auto job = std::make_shared<Job>();
    job->id = ++m_jobId;
    job->clock.start();
    m_job = job;
    m_futures.push_back(QtConcurrent::run([this, job, work = std::move(work)] {
        auto outcome = std::make_shared<Outcome>();
        try {
            *outcome = work(job->control);
        } catch (const std::exception& e) {
            *outcome = Outcome{{Diagnostic{"", std::string("the study failed: ") + e.what()}}, false, nullptr};
        }
        // Queued to the runner's thread; the destructor waits for this worker, so `this` is alive here.
        QMetaObject::invokeMethod(
            this, [this, job, outcome] { onJobDone(job, outcome); }, Qt::QueuedConnection);
    }));
    setState(State::Running);
    m_tick.start();
    Q_EMIT started(job->id);
    Q_EMIT progressChanged(progress());
    return job->id;
}

void StudyRunner::schedule(Work work, int delayMs)
{
    m_scheduled = std::move(work);
    m_debounce.start(delayMs);
}

void StudyRunner::cancel()
{
    m_debounce.stop();
    m_scheduled = nullptr;
    if (m_job && m_state == State::Running) {
        m_job->control.sweep.cancel = true;
        setState(State::Cancelling);
    }
}

void StudyRunner::cancelScheduled()
{
    m_debounce.stop();
    m_scheduled = nullptr;
}

StudyProgress StudyRunner::progress() const
{
    StudyProgress p;
    if (!m_job) {
        return p;
    }
    const StudyControl& c = m_job->control;
    p.steps_done = c.steps_done.load();
    p.steps_total = c.steps_total.load();
    p.plans_done = c.sweep.done.load();
    p.plans_total = c.sweep.total.load();
    p.elapsed_s = static_cast<double>(m_job->clock.elapsed()) / 1000.0;
    return p;
}

void StudyRunner::onJobDone(const std::shared_ptr<Job>& job, const std::shared_ptr<Outcome>& outcome)
{
    std::erase_if(m_futures, [](const QFuture<void>& f) { return f.isFinished(); });
    if (job != m_job) {
        return; // a newer job started since: this one's result is stale
    }
    m_tick.stop();
    Q_EMIT progressChanged(progress());
    if (!outcome->errors.empty() || !outcome->deliver) {
        setState(State::Failed);
        Q_EMIT failed(job->id, outcome->errors.empty() ? Diagnostics{{"", "the study produced no result"}} : outcome->errors);
        return;
    }
    setState(outcome->cancelled || job->control.cancelled() ? State::Cancelled : State::Finished);
    outcome->deliver(job->id);
}

void StudyRunner::setState(State state)
{
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

} // namespace vtrain::ui
