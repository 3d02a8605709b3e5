// SPDX-License-Identifier: MIT
#pragma once
// Progress on stderr (only when it is a terminal) and Ctrl-C cancellation for the case-study commands
// (optimal-model, schedule), which run many explore calls in a row.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include <unistd.h>

#include "vtrain/optimal_model.h"

namespace vtrain::cli {

// Installs a SIGINT handler that sets the study's cancel flag; restores the previous one when destroyed.
class CancelOnInterrupt {
public:
    explicit CancelOnInterrupt(StudyControl& control)
    {
        flag() = &control.sweep.cancel;
        struct sigaction action {};
        action.sa_handler = &CancelOnInterrupt::handle;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &m_previous);
    }
    ~CancelOnInterrupt()
    {
        sigaction(SIGINT, &m_previous, nullptr);
        flag() = nullptr;
    }
    CancelOnInterrupt(const CancelOnInterrupt&) = delete;
    CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;

private:
    static std::atomic<bool>*& flag()
    {
        static std::atomic<bool>* f = nullptr;
        return f;
    }
    static void handle(int)
    {
        if (flag() != nullptr) {
            flag()->store(true); // lock-free: safe in a signal handler
        }
    }
    struct sigaction m_previous {};
};

// "[#######.............]  3/10 models  1,234 / 5,000 plans" redrawn every 200 ms; nothing when stderr
// is not a terminal.
class StudyProgressBar {
public:
    StudyProgressBar(const StudyControl& control, std::string unit) : m_control(control), m_unit(std::move(unit))
    {
        if (isatty(STDERR_FILENO) != 0) {
            m_thread = std::thread([this] { loop(); });
        }
    }
    ~StudyProgressBar()
    {
        if (!m_thread.joinable()) {
            return;
        }
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
        std::fprintf(stderr, "\r%*s\r", 90, "");
        std::fflush(stderr);
    }
    StudyProgressBar(const StudyProgressBar&) = delete;
    StudyProgressBar& operator=(const StudyProgressBar&) = delete;

private:
    void loop()
    {
        std::unique_lock lock(m_mutex);
        while (!m_wake.wait_for(lock, std::chrono::milliseconds(200), [this] { return m_stop; })) {
            const auto steps = m_control.steps_total.load();
            if (steps == 0) {
                continue;
            }
            const auto done = m_control.steps_done.load();
            const auto plans_total = m_control.sweep.total.load();
            const auto plans_done = m_control.sweep.done.load();
            const double inner = plans_total > 0 ? static_cast<double>(plans_done) / plans_total : 0;
            const double fraction = std::min(1.0, (done + (done < steps ? inner : 0)) / steps);
            const int width = 24;
            const int filled = static_cast<int>(width * fraction);
            std::fprintf(stderr, "\r[%s%s] %3d%%  %llu/%llu %s  %llu/%llu plans   ", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                         std::string(static_cast<std::size_t>(width - filled), '.').c_str(), static_cast<int>(100 * fraction),
                         static_cast<unsigned long long>(done), static_cast<unsigned long long>(steps), m_unit.c_str(),
                         static_cast<unsigned long long>(plans_done), static_cast<unsigned long long>(plans_total));
            std::fflush(stderr);
        }
    }

    const StudyControl& m_control;
    std::string m_unit;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace vtrain::cli
