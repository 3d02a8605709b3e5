// SPDX-License-Identifier: MIT
#pragma once
// One background job's thread and the hand-back of what it computed to the UI thread.
//
// Why not QtConcurrent::run with a queued lambda that carries the result: Qt reference-counts the queued
// lambda with its own atomics inside libQt6Core, so the worker may drop the last reference and destroy the
// captured result after the UI thread has moved from it. Those atomics do order the two threads, but
// ThreadSanitizer cannot see them (Debian's Qt is not instrumented) and reports the destruction as a data
// race (issue 27: ~vector<PlanRow> in tst_sweep_runner, about one run in three). Here everything the two
// threads share passes through a std::mutex, the thread is a std::jthread joined before its state goes,
// and the wake-up queued to the UI thread carries no data (a slot invoked by name), so every hand-off is
// one TSan checks.
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <QMetaObject>
#include <QObject>

namespace vtrain::ui {

template <typename Outcome>
class WorkerThread {
public:
    WorkerThread() = default;
    WorkerThread(const WorkerThread&) = delete;
    WorkerThread& operator=(const WorkerThread&) = delete;
    // Joins (std::jthread): the work has returned before the outcome and whatever the work used go, so
    // declare a WorkerThread after the state its work touches.
    ~WorkerThread() = default;

    // Runs `work()` on a new thread (it must not throw; it returns the Outcome), keeps what it returns for
    // take(), then queues a call of `receiver`'s slot `wakeSlot` (a slot without arguments, named as in
    // its declaration) on the receiver's thread. The receiver must outlive this object. Throws
    // std::system_error when no thread can be started.
    template <typename Work>
    void start(QObject* receiver, const char* wakeSlot, Work work)
    {
        m_thread = std::jthread([this, receiver, wakeSlot, work = std::move(work)]() mutable {
            Outcome outcome = work();
            {
                const std::lock_guard lock(m_mutex);
                m_outcome = std::move(outcome);
                m_finished = true;
            }
            QMetaObject::invokeMethod(receiver, wakeSlot, Qt::QueuedConnection);
        });
    }

    // The outcome once the work has returned, at most once; nothing before.
    std::optional<Outcome> take()
    {
        const std::lock_guard lock(m_mutex);
        return std::exchange(m_outcome, std::nullopt);
    }

    // The work has returned (its outcome taken or not), or never started: destroying this object now
    // only waits for the thread to leave. Call from the thread that called start().
    bool finished() const
    {
        const std::lock_guard lock(m_mutex);
        return m_finished || !m_thread.joinable();
    }

private:
    mutable std::mutex m_mutex; // guards the two below
    std::optional<Outcome> m_outcome;
    bool m_finished = false;
    std::jthread m_thread; // last: destroyed (joined) first
};

} // namespace vtrain::ui
