// SPDX-License-Identifier: MIT
#include "models/study_runner.h"

#include <algorithm>
#include <exception>
#include <system_error>

#include "models/worker_thread.h"

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
    QElapsedTimer clock;          // UI thread only
    WorkerThread<Outcome> worker; // last: joined before the members above go
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
    m_job.reset(); // joins; superseded jobs are cancelled already
    m_superseded.clear();
}

std::uint64_t StudyRunner::launch(Work work)
{
    m_debounce.stop();
    m_scheduled = nullptr;
    if (m_job) {
        m_job->control.sweep.cancel = true; // the old worker stops soon; what it still delivers is dropped
        m_superseded.push_back(std::move(m_job));
    }
    std::erase_if(m_superseded, [](const std::unique_ptr<Job>& j) { return j->worker.finished(); });

    m_job = std::make_unique<Job>();
    Job* job = m_job.get();
    job->id = ++m_jobId;
    job->clock.start();
    setState(State::Running);
    try {
        job->worker.start(this, "onWorkerDone", [job, work = std::move(work)]() -> Outcome {
            try {
                return work(job->control);
            } catch (const std::exception& e) {
                return Outcome{{Diagnostic{"", std::string("the study failed: ") + e.what()}}, false, nullptr};
            } catch (...) {
                return Outcome{{Diagnostic{"", "the study failed: unknown error"}}, false, nullptr};
            }
        });
    } catch (const std::system_error& e) {
        Q_EMIT started(job->id);
        finish(Outcome{{Diagnostic{"", std::string("the study could not start a thread: ") + e.what()}}, false, nullptr});
        return job->id;
    }
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

void StudyRunner::onWorkerDone()
{
    std::erase_if(m_superseded, [](const std::unique_ptr<Job>& j) { return j->worker.finished(); });
    if (!m_job) {
        return;
    }
    if (auto outcome = m_job->worker.take()) { // empty: the wake was a superseded job's
        finish(std::move(*outcome));
    }
}

void StudyRunner::finish(Outcome outcome)
{
    const std::uint64_t id = m_job->id;
    const bool cancelRequested = m_job->control.cancelled();
    m_tick.stop();
    Q_EMIT progressChanged(progress());
    if (!outcome.errors.empty() || !outcome.deliver) {
        setState(State::Failed);
        Q_EMIT failed(id, outcome.errors.empty() ? Diagnostics{{"", "the study produced no result"}} : outcome.errors);
        return;
    }
    setState(outcome.cancelled || cancelRequested ? State::Cancelled : State::Finished);
    outcome.deliver(id);
}

void StudyRunner::setState(State state)
{
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

} // namespace vtrain::ui
