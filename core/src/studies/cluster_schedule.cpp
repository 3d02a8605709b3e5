// SPDX-License-Identifier: MIT
// The discrete-event simulation of a shared cluster: events are arrivals and completions; between two
// events every running job progresses at its allocation's simulated throughput.
#include "vtrain/cluster_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "model/model_math.h"

namespace vtrain {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHour = 3600.0;

struct JobState {
    double remaining = 0; // tokens
    bool arrived = false;
    bool done = false;
    int point = -1;     // index into the policy's real curve; -1 = not running
    double ready_s = 0; // progress starts here (restart overhead)
    double finish_s = 0;
};

// What a policy believes and what actually happens for one job.
struct JobView {
    const std::vector<CurvePoint>* real = nullptr; // the plans the job runs with
    std::vector<double> believed;                  // believed tokens/s per point of `real`
};

JobView view_for(const ThroughputCurve& curve, SchedulePolicy policy)
{
    JobView v;
    v.real = policy == SchedulePolicy::ElasticFlow ? &curve.dp_scaling : &curve.best;
    double per_gpu = 0; // ElasticFlow: the most efficient allocation's tokens/s per GPU holds at any scale
    for (const CurvePoint& p : *v.real) {
        per_gpu = std::max(per_gpu, p.tokens_per_s / p.gpus);
    }
    for (const CurvePoint& p : *v.real) {
        v.believed.push_back(policy == SchedulePolicy::ElasticFlow ? per_gpu * p.gpus : p.tokens_per_s);
    }
    return v;
}

class ClusterSimulation {
public:
    ClusterSimulation(const std::vector<ClusterJob>& jobs, const std::vector<ThroughputCurve>& curves, SchedulePolicy policy,
                      const ScheduleOptions& options)
        : m_jobs(jobs), m_policy(policy), m_options(options), m_states(jobs.size())
    {
        m_result.policy = policy;
        m_result.jobs.resize(jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            m_views.push_back(view_for(curves[i], policy));
            m_states[i].remaining = jobs[i].tokens;
            m_result.jobs[i].schedulable = !m_views[i].real->empty() && (policy != SchedulePolicy::Fixed || fixed_point(i) >= 0);
        }
        m_order.resize(jobs.size());
        std::iota(m_order.begin(), m_order.end(), std::size_t{0});
        std::stable_sort(m_order.begin(), m_order.end(), [&](std::size_t a, std::size_t b) { return jobs[a].arrival_h < jobs[b].arrival_h; });
    }

    PolicyResult run()
    {
        std::size_t next_arrival = 0;
        double now = 0;
        while (true) {
            if (m_options.cancel != nullptr && m_options.cancel->load(std::memory_order_relaxed)) {
                m_result.cancelled = true;
                break;
            }
            const double arrival = next_arrival < m_order.size() ? m_jobs[m_order[next_arrival]].arrival_h * kHour : kInf;
            const double finish = next_finish(now);
            const double t = std::max(now, std::min(arrival, finish));
            if (t == kInf) {
                break;
            }
            advance(now, t);
            now = t;
            bool changed = complete(now);
            while (next_arrival < m_order.size() && m_jobs[m_order[next_arrival]].arrival_h * kHour <= now) {
                m_states[m_order[next_arrival]].arrived = true;
                ++next_arrival;
                changed = true;
            }
            if (changed) {
                replan(now);
                ++m_result.replans;
            }
        }
        close_all(now);
        summarise();
        return std::move(m_result);
    }

private:
    double finish_time(std::size_t j, double now) const
    {
        const JobState& s = m_states[j];
        const double rate = (*m_views[j].real)[static_cast<std::size_t>(s.point)].tokens_per_s;
        return std::max(now, s.ready_s) + s.remaining / rate;
    }

    double next_finish(double now) const
    {
        double t = kInf;
        for (std::size_t j = 0; j < m_states.size(); ++j) {
            if (m_states[j].point >= 0) {
                t = std::min(t, finish_time(j, now));
            }
        }
        return t;
    }

    void advance(double from, double to)
    {
        for (std::size_t j = 0; j < m_states.size(); ++j) {
            JobState& s = m_states[j];
            if (s.point < 0) {
                continue;
            }
            const double busy = std::max(0.0, to - std::max(from, s.ready_s));
            const double rate = (*m_views[j].real)[static_cast<std::size_t>(s.point)].tokens_per_s;
            s.remaining = std::max(0.0, s.remaining - rate * busy);
        }
    }

    // Marks the jobs that finish at `now` (to a relative tolerance) as done.
    bool complete(double now)
    {
        bool any = false;
        for (std::size_t j = 0; j < m_states.size(); ++j) {
            JobState& s = m_states[j];
            if (s.point >= 0 && (s.remaining <= 1e-9 * m_jobs[j].tokens || finish_time(j, now) <= now * (1 + 1e-12) + 1e-9)) {
                s.remaining = 0;
                s.done = true;
                s.finish_s = now;
                set_point(j, -1, now);
                any = true;
            }
        }
        return any;
    }

    // Changes job j's allocation to point p (-1 = none), closing and opening Gantt segments.
    void set_point(std::size_t j, int p, double now)
    {
        JobState& s = m_states[j];
        if (p == s.point) {
            return;
        }
        JobOutcome& out = m_result.jobs[j];
        if (s.point >= 0) {
            out.segments.back().end_h = now / kHour;
        }
        if (p >= 0) {
            const CurvePoint& c = (*m_views[j].real)[static_cast<std::size_t>(p)];
            if (out.first_start_h < 0) {
                out.first_start_h = now / kHour;
            } else {
                ++out.restarts;
            }
            s.ready_s = now + m_options.restart_overhead_s;
            out.segments.push_back({now / kHour, s.ready_s / kHour, now / kHour, c.gpus, c.plan, c.tokens_per_s});
        }
        s.point = p;
    }

    void close_all(double now)
    {
        for (std::size_t j = 0; j < m_states.size(); ++j) {
            if (m_states[j].point >= 0) {
                m_result.jobs[j].segments.back().end_h = now / kHour;
            }
        }
    }

    bool waiting(std::size_t j) const { return m_states[j].arrived && !m_states[j].done && m_result.jobs[j].schedulable; }

    // The fixed policy's point: the requested count, else the smallest count above it with a plan.
    int fixed_point(std::size_t j) const
    {
        const auto& real = *m_views[j].real;
        for (std::size_t p = 0; p < real.size(); ++p) {
            if (real[p].gpus >= m_jobs[j].requested_gpus && real[p].gpus <= m_options.cluster_gpus) {
                return static_cast<int>(p);
            }
        }
        return -1;
    }

    void replan(double now)
    {
        if (m_policy == SchedulePolicy::Fixed) {
            replan_fixed(now);
        } else {
            replan_elastic(now);
        }
    }

    // First come, first served; a later job starts when it fits (first-fit backfilling); no resizing.
    void replan_fixed(double now)
    {
        int free = m_options.cluster_gpus;
        for (std::size_t j = 0; j < m_states.size(); ++j) {
            if (m_states[j].point >= 0) {
                free -= (*m_views[j].real)[static_cast<std::size_t>(m_states[j].point)].gpus;
            }
        }
        for (const std::size_t j : m_order) {
            if (!waiting(j) || m_states[j].point >= 0) {
                continue;
            }
            const int p = fixed_point(j);
            const int gpus = (*m_views[j].real)[static_cast<std::size_t>(p)].gpus;
            if (gpus <= free) {
                set_point(j, p, now);
                free -= gpus;
            }
        }
    }

    // Believed seconds to finish job j on point p from now (restart overhead when the allocation changes).
    double believed_time(std::size_t j, int p, double now) const
    {
        const JobState& s = m_states[j];
        const double overhead = p == s.point ? std::max(0.0, s.ready_s - now) : m_options.restart_overhead_s;
        return overhead + s.remaining / m_views[j].believed[static_cast<std::size_t>(p)];
    }

    void replan_elastic(double now)
    {
        std::vector<std::size_t> active;
        for (const std::size_t j : m_order) {
            if (waiting(j)) {
                active.push_back(j);
            }
        }
        std::stable_sort(active.begin(), active.end(), [&](std::size_t a, std::size_t b) { return m_jobs[a].deadline_h < m_jobs[b].deadline_h; });
        std::vector<int> target(m_states.size(), -1);
        int free = m_options.cluster_gpus;
        const auto gpus_at = [&](std::size_t j, int p) { return p < 0 ? 0 : (*m_views[j].real)[static_cast<std::size_t>(p)].gpus; };

        // 1. The smallest allocation believed to meet the deadline.
        for (const std::size_t j : active) {
            const double deadline_s = m_jobs[j].deadline_h * kHour;
            for (int p = 0; p < static_cast<int>(m_views[j].real->size()); ++p) {
                if (gpus_at(j, p) > free) {
                    break;
                }
                if (now + believed_time(j, p, now) <= deadline_s) {
                    target[j] = p;
                    free -= gpus_at(j, p);
                    break;
                }
            }
        }
        // 2. Jobs without GPUs (late, or no room above) get their smallest allocation if it fits.
        for (const std::size_t j : active) {
            if (target[j] < 0 && gpus_at(j, 0) <= free) {
                target[j] = 0;
                free -= gpus_at(j, 0);
            }
        }
        // 3. Leftover GPUs, one step at a time, where the believed completion time drops most per GPU.
        while (free > 0) {
            double best_gain = 0;
            std::size_t best_job = 0;
            int best_point = -1;
            for (const std::size_t j : active) {
                if (target[j] < 0) {
                    continue;
                }
                const double current = believed_time(j, target[j], now);
                for (int p = target[j] + 1; p < static_cast<int>(m_views[j].real->size()); ++p) {
                    const int extra = gpus_at(j, p) - gpus_at(j, target[j]);
                    if (extra > free) {
                        break;
                    }
                    const double gain = (current - believed_time(j, p, now)) / extra;
                    if (gain > best_gain) {
                        best_gain = gain;
                        best_job = j;
                        best_point = p;
                    }
                }
            }
            if (best_point < 0) {
                break;
            }
            free -= gpus_at(best_job, best_point) - gpus_at(best_job, target[best_job]);
            target[best_job] = best_point;
        }
        for (const std::size_t j : active) {
            set_point(j, target[j], now);
        }
    }

    void summarise()
    {
        PolicyResult& r = m_result;
        double jct_sum = 0;
        double gpu_hours = 0;
        double flops = 0;
        int met = 0;
        for (std::size_t j = 0; j < m_jobs.size(); ++j) {
            JobOutcome& out = r.jobs[j];
            const JobState& s = m_states[j];
            out.completed = s.done;
            r.restarts += out.restarts;
            r.unschedulable += out.schedulable ? 0 : 1;
            if (s.done) {
                out.finish_h = s.finish_s / kHour;
                out.met_deadline = out.finish_h <= m_jobs[j].deadline_h * (1 + 1e-12);
                met += out.met_deadline ? 1 : 0;
                jct_sum += out.finish_h - m_jobs[j].arrival_h;
                r.makespan_h = std::max(r.makespan_h, out.finish_h);
                ++r.completed;
            }
            const double flops_per_token = model_flops_per_iteration(m_jobs[j].model, 1) / m_jobs[j].model.seq_len;
            for (const JobSegment& seg : out.segments) {
                gpu_hours += seg.gpus * (seg.end_h - seg.start_h);
                flops += seg.tokens_per_s * std::max(0.0, seg.end_h - seg.ready_h) * kHour * flops_per_token;
            }
        }
        r.deadline_satisfaction = m_jobs.empty() ? 0 : static_cast<double>(met) / m_jobs.size();
        r.average_jct_h = r.completed > 0 ? jct_sum / r.completed : 0;
        const double capacity_h = static_cast<double>(m_options.cluster_gpus) * r.makespan_h;
        r.gpu_utilization = capacity_h > 0 ? gpu_hours / capacity_h : 0;
        r.cluster_mfu = capacity_h > 0 && m_options.peak_tflops_per_gpu > 0 ? flops / (capacity_h * kHour * m_options.peak_tflops_per_gpu * 1e12) : 0;
    }

    const std::vector<ClusterJob>& m_jobs;
    SchedulePolicy m_policy;
    ScheduleOptions m_options;
    std::vector<JobView> m_views;
    std::vector<JobState> m_states;
    std::vector<std::size_t> m_order; // by arrival
    PolicyResult m_result;
};

} // namespace

const CurvePoint* ThroughputCurve::at(int gpus) const
{
    for (const auto& p : best) {
        if (p.gpus == gpus) {
            return &p;
        }
    }
    return nullptr;
}

const CurvePoint* ThroughputCurve::smallest_at_least(int gpus) const
{
    for (const auto& p : best) {
        if (p.gpus >= gpus) {
            return &p;
        }
    }
    return nullptr;
}

const char* to_string(SchedulePolicy policy)
{
    switch (policy) {
    case SchedulePolicy::SimulatorInformed: return "vtrain";
    case SchedulePolicy::Fixed: return "fixed";
    case SchedulePolicy::ElasticFlow: return "elasticflow";
    }
    return "?";
}

std::optional<SchedulePolicy> schedule_policy_from_string(const std::string& text)
{
    for (const auto p : {SchedulePolicy::SimulatorInformed, SchedulePolicy::Fixed, SchedulePolicy::ElasticFlow}) {
        if (text == to_string(p)) {
            return p;
        }
    }
    return std::nullopt;
}

PolicyResult simulate_cluster(const std::vector<ClusterJob>& jobs, const std::vector<ThroughputCurve>& curves, SchedulePolicy policy,
                              const ScheduleOptions& options)
{
    if (curves.size() != jobs.size()) {
        PolicyResult r;
        r.policy = policy;
        r.jobs.resize(jobs.size());
        for (auto& j : r.jobs) {
            j.schedulable = false;
        }
        r.unschedulable = static_cast<int>(jobs.size());
        return r;
    }
    return ClusterSimulation(jobs, curves, policy, options).run();
}

} // namespace vtrain
