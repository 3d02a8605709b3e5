// SPDX-License-Identifier: MIT
// The seeded synthetic workload and the preset model catalog of the cluster study.
#include "vtrain/cluster_schedule_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/model_math.h"

namespace vtrain {
namespace {

// splitmix64 (Steele et al.): tiny, seedable and the same on every platform (unlike <random>'s distributions).
class Random {
public:
    explicit Random(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

private:
    std::uint64_t m_state;
};

CatalogModel entry(const char* id, int layers, int hidden, int heads, int global_batch, int gpus_small, int gpus_large, double weight)
{
    CatalogModel c;
    c.id = id;
    c.model.name = id;
    c.model.layers = layers;
    c.model.hidden = hidden;
    c.model.heads = heads;
    c.model.seq_len = 2048;
    c.model.vocab = 51200;
    c.global_batch = global_batch;
    c.requested_gpus[0] = gpus_small;
    c.requested_gpus[1] = gpus_large;
    c.weight = weight;
    return c;
}

double job_tokens_per_s(const ClusterJob& job, const WorkloadOptions& o)
{
    if (o.tokens_per_s) {
        const double simulated = o.tokens_per_s(job.model, job.global_batch, job.requested_gpus);
        if (simulated > 0) {
            return simulated;
        }
    }
    const double flops_per_token = model_flops_per_iteration(job.model, 1) / job.model.seq_len;
    return job.requested_gpus * o.peak_tflops_per_gpu * 1e12 * o.assumed_mfu / flops_per_token;
}

} // namespace

double offered_load(const std::vector<ClusterJob>& jobs, const WorkloadOptions& o)
{
    double gpu_hours = 0;
    for (const ClusterJob& job : jobs) {
        gpu_hours += job.requested_gpus * job.tokens / job_tokens_per_s(job, o) / 3600;
    }
    const double capacity = static_cast<double>(o.cluster_gpus) * o.window_hours;
    return capacity > 0 ? gpu_hours / capacity : 0;
}

const std::vector<CatalogModel>& workload_catalog()
{
    // GPT-3 paper shapes (Brown et al. 2020, Table 2.1) and two of Megatron-LM's (Narayanan et al. SC'21).
    static const std::vector<CatalogModel> catalog{
        entry("gpt-1.3b", 24, 2048, 16, 512, 8, 16, 0.25),      entry("gpt-2.7b", 32, 2560, 32, 512, 16, 32, 0.20),
        entry("gpt-6.7b", 32, 4096, 32, 1024, 32, 64, 0.20),    entry("gpt-13b", 40, 5120, 40, 1024, 64, 128, 0.15),
        entry("gpt-18.4b", 40, 6144, 48, 1024, 128, 256, 0.12), entry("gpt-39.1b", 48, 8192, 64, 1536, 256, 512, 0.08),
    };
    return catalog;
}

const CatalogModel* find_catalog_model(const std::string& id)
{
    for (const auto& c : workload_catalog()) {
        if (c.id == id) {
            return &c;
        }
    }
    return nullptr;
}

Diagnostics check_workload_options(const WorkloadOptions& o)
{
    Diagnostics d;
    if (o.jobs < 1 || o.jobs > 100'000) {
        d.push_back({"jobs", "must be a whole number of jobs from 1 to 100,000"});
    }
    if (!(o.window_hours >= 0 && std::isfinite(o.window_hours))) {
        d.push_back({"window_hours", "must be a number of hours >= 0"});
    }
    if (!(o.min_hours > 0 && o.max_hours >= o.min_hours && std::isfinite(o.max_hours))) {
        d.push_back({"min_hours", "need 0 < min_hours <= max_hours"});
    }
    if (!(o.slack_min > 0 && o.slack_max >= o.slack_min && std::isfinite(o.slack_max))) {
        d.push_back({"slack_min", "need 0 < slack_min <= slack_max"});
    }
    if (!(o.assumed_mfu > 0 && o.assumed_mfu <= 1)) {
        d.push_back({"assumed_mfu", "must be in (0, 1]"});
    }
    if (!(o.peak_tflops_per_gpu > 0 && std::isfinite(o.peak_tflops_per_gpu))) {
        d.push_back({"peak_tflops_per_gpu", "must be positive"});
    }
    if (o.cluster_gpus < 1) {
        d.push_back({"gpus", "must be >= 1"});
    }
    return d;
}

std::vector<ClusterJob> generate_workload(const WorkloadOptions& o)
{
    const auto& catalog = workload_catalog();
    double total_weight = 0;
    for (const auto& c : catalog) {
        total_weight += c.weight;
    }
    Random random(o.seed);
    std::vector<ClusterJob> jobs;
    for (int i = 0; i < o.jobs; ++i) {
        // Draw every number of a job in a fixed order, so one job's choices never shift another's.
        const double pick = random.uniform() * total_weight;
        const bool large = random.uniform() < 0.5;
        const double duration_h = o.min_hours * std::pow(o.max_hours / o.min_hours, random.uniform());
        const double arrival_h = random.uniform(0, o.window_hours);
        const double slack = random.uniform(o.slack_min, o.slack_max);

        std::size_t m = 0;
        for (double acc = catalog[0].weight; acc <= pick && m + 1 < catalog.size(); acc += catalog[m].weight) {
            ++m;
        }
        const CatalogModel& c = catalog[m];
        ClusterJob job;
        job.model = c.model;
        job.global_batch = c.global_batch;
        job.requested_gpus = std::min(c.requested_gpus[large ? 1 : 0], o.cluster_gpus);
        const double tokens_per_s = job_tokens_per_s(job, o);
        job.tokens = std::round(duration_h * 3600 * tokens_per_s / 1e6) * 1e6;
        job.arrival_h = arrival_h;
        job.deadline_h = arrival_h + slack * duration_h;
        jobs.push_back(job);
    }
    std::stable_sort(jobs.begin(), jobs.end(), [](const ClusterJob& a, const ClusterJob& b) { return a.arrival_h < b.arrival_h; });
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "job-%03zu", i);
        jobs[i].name = name;
    }
    return jobs;
}

} // namespace vtrain
