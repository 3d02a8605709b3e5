// SPDX-License-Identifier: MIT
#include "models/plan_detail_runner.h"

#include <exception>
#include <system_error>

#include "models/worker_thread.h"

namespace vtrain::ui {

struct PlanDetailRunner::Request {
    std::uint64_t id = 0;
    WorkerThread<Expected<SimulationResult>> worker;
};

PlanDetailRunner::PlanDetailRunner(QObject* parent) : QObject(parent) {}

PlanDetailRunner::~PlanDetailRunner() = default; // each request's worker joins (a simulation is not cancellable)

std::uint64_t PlanDetailRunner::request(const Scenario& scenario, const Plan& plan, const std::string& gpu, int numGpus,
                                        std::shared_ptr<const GpuProfile> profile)
{
    const std::uint64_t id = ++m_latest;
    m_busy = true;
    Scenario s = scenario;
    s.cluster.gpu = gpu;
    s.cluster.num_gpus = numGpus;
    s.plan = plan;
    auto& request = m_requests.emplace_back(std::make_unique<Request>());
    request->id = id;
    try {
        request->worker.start(this, "onWorkerDone", [s = std::move(s), plan, profile = std::move(profile)]() -> Expected<SimulationResult> {
            SimulationOptions options;
            options.timeline = true;
            try {
                auto result = simulate(s, plan, *profile, options);
                // How far the plan rests on the framework's CPU time per operator (the details header says so).
                if (result.ok()) {
                    attach_host_term_range(result.value(), s, plan, *profile);
                }
                return result;
            } catch (const std::exception& e) {
                return Diagnostic{"", e.what()};
            } catch (...) {
                return Diagnostic{"", "the simulation failed: unknown error"};
            }
        });
    } catch (const std::system_error& e) {
        m_requests.pop_back();
        m_busy = false;
        Q_EMIT failed(id, QString::fromStdString(std::string("the simulation could not start a thread: ") + e.what()));
    }
    return id;
}

void PlanDetailRunner::onWorkerDone()
{
    std::vector<std::pair<std::uint64_t, Expected<SimulationResult>>> returned;
    std::erase_if(m_requests, [&](const std::unique_ptr<Request>& r) {
        if (auto outcome = r->worker.take()) {
            returned.emplace_back(r->id, std::move(*outcome));
        }
        return r->worker.finished();
    });
    for (auto& [id, outcome] : returned) {
        if (id != m_latest) {
            continue; // superseded by a newer selection
        }
        m_busy = false;
        if (!outcome.ok()) {
            Q_EMIT failed(id, QString::fromStdString(outcome.first_error()));
            continue;
        }
        m_last = std::make_shared<const SimulationResult>(std::move(outcome).value());
        Q_EMIT resultReady(id, m_last);
    }
}

} // namespace vtrain::ui
