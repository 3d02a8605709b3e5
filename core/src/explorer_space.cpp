// SPDX-License-Identifier: MIT
#include "vtrain/explorer_space.h"

#include <algorithm>

namespace vtrain {
namespace {

std::vector<int> powers_of_two_up_to(int limit)
{
    std::vector<int> out;
    for (int v = 1; v <= limit; v *= 2) {
        out.push_back(v);
    }
    return out;
}

// Keeps the first occurrence of each value: a repeated list entry would count plans twice.
template <typename T>
std::vector<T> unique_in_order(const std::vector<T>& values)
{
    std::vector<T> out;
    for (const auto& v : values) {
        if (std::find(out.begin(), out.end(), v) == out.end()) {
            out.push_back(v);
        }
    }
    return out;
}

std::vector<PlanVariant> make_variants(const SearchSpace& search, const ModelSpec& model, int tp, int pp)
{
    const std::vector<Schedule> schedules =
        search.schedule.empty() ? std::vector<Schedule>{Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved} : unique_in_order(search.schedule);
    const std::vector<Recompute> recomputes =
        search.recompute.empty() ? std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full} : unique_in_order(search.recompute);
    std::vector<bool> sequence_parallel = unique_in_order(search.sequence_parallel);
    if (sequence_parallel.empty()) {
        sequence_parallel = tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false};
    }
    const std::vector<int> zero_stages = search.zero_stage.empty() ? std::vector<int>{0, 1} : unique_in_order(search.zero_stage);

    std::vector<std::pair<Schedule, int>> schedule_variants;
    for (const Schedule s : schedules) {
        if (s != Schedule::Interleaved) {
            schedule_variants.emplace_back(s, 1);
            continue;
        }
        if (!search.virtual_stages.empty()) {
            for (const int v : unique_in_order(search.virtual_stages)) {
                schedule_variants.emplace_back(s, v);
            }
            continue;
        }
        if (pp >= 2 && model.layers % pp == 0) {
            for (const int v : divisors(model.layers / pp)) {
                if (v >= 2) {
                    schedule_variants.emplace_back(s, v);
                }
            }
        }
    }

    std::vector<PlanVariant> out;
    out.reserve(schedule_variants.size() * recomputes.size() * sequence_parallel.size() * zero_stages.size());
    for (const auto& [schedule, v] : schedule_variants) {
        for (const Recompute r : recomputes) {
            for (const bool sp : sequence_parallel) {
                for (const int z : zero_stages) {
                    out.push_back({schedule, v, r, sp, z});
                }
            }
        }
    }
    return out;
}

} // namespace

std::vector<int> divisors(int n)
{
    std::vector<int> out;
    for (int d = 1; d <= n; ++d) {
        if (n % d == 0) {
            out.push_back(d);
        }
    }
    return out;
}

Plan PlanGroup::plan(const PlanVariant& v) const
{
    Plan p = base != nullptr ? *base : Plan{};
    p.tp = tp;
    p.pp = pp;
    p.dp = num_gpus % (tp * pp) == 0 ? num_gpus / (tp * pp) : 0;
    p.micro_batch = micro_batch;
    p.schedule = v.schedule;
    p.virtual_stages = v.virtual_stages;
    p.recompute = v.recompute;
    p.sequence_parallel = v.sequence_parallel;
    p.zero_stage = v.zero_stage;
    return p;
}

PlanGroup PlanSpace::group(std::size_t g) const
{
    // Mixed radix, micro-batch innermost.
    PlanGroup out;
    std::size_t rest = g;
    out.micro_batch_index = static_cast<int>(rest % micro_batch.size());
    rest /= micro_batch.size();
    out.pp_index = static_cast<int>(rest % pp.size());
    rest /= pp.size();
    out.tp_index = static_cast<int>(rest % tp.size());
    rest /= tp.size();
    const int n_index = static_cast<int>(rest % num_gpus.size());
    rest /= num_gpus.size();
    out.gpu = static_cast<int>(rest);
    out.num_gpus = num_gpus[n_index];
    out.tp = tp[out.tp_index];
    out.pp = pp[out.pp_index];
    out.micro_batch = micro_batch[out.micro_batch_index];
    out.first_index = group_start[g];
    out.variants = &variants[static_cast<std::size_t>(out.tp_index) * pp.size() + out.pp_index];
    out.base = &base;
    return out;
}

std::size_t PlanSpace::group_of(std::uint64_t index) const
{
    const auto it = std::upper_bound(group_start.begin(), group_start.end(), index);
    return static_cast<std::size_t>(it - group_start.begin()) - 1;
}

PlanSpace::Entry PlanSpace::at(std::uint64_t index) const
{
    const PlanGroup g = group(group_of(index));
    return {g.gpu, g.num_gpus, g.plan((*g.variants)[index - g.first_index])};
}

int gpus_per_node_for(const Scenario& scenario, const GpuProfile& profile)
{
    return scenario.cluster.gpus_per_node > 0 ? scenario.cluster.gpus_per_node : profile.links.gpus_per_node;
}

ClusterSpec cluster_for_gpu(const Scenario& scenario, const std::string& gpu, int num_gpus)
{
    ClusterSpec c;
    c.gpu = gpu;
    c.num_gpus = num_gpus;
    c.gpus_per_node = scenario.cluster.gpus_per_node;
    if (gpu == scenario.cluster.gpu) {
        c.price_per_gpu_hour = scenario.cluster.price_per_gpu_hour;
        c.links = scenario.cluster.links;
    }
    return c;
}

Expected<PlanSpace> make_plan_space(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, bool allow_tp_across_nodes)
{
    const SearchSpace search = scenario.search.value_or(SearchSpace{});
    Diagnostics errors;
    if (!(scenario.training.tokens > 0)) {
        errors.push_back({"training.tokens", "is needed to explore: training time and cost are the explorer's two objectives"});
    }
    if (scenario.model.layers < 1) {
        errors.push_back({"model.layers", "must be positive"});
    }
    if (scenario.training.global_batch < 1) {
        errors.push_back({"training.global_batch", "must be positive"});
    }

    PlanSpace space;
    if (scenario.plan) {
        space.base.grad_bucket_mb = scenario.plan->grad_bucket_mb;
        space.base.overlap_grad_reduce = scenario.plan->overlap_grad_reduce;
    }
    space.gpus = search.gpu.empty() ? std::vector<std::string>{scenario.cluster.gpu} : unique_in_order(search.gpu);
    int largest_node = 1;
    for (std::size_t i = 0; i < space.gpus.size(); ++i) {
        const auto it = profiles.find(space.gpus[i]);
        if (it == profiles.end()) {
            errors.push_back({search.gpu.empty() ? "cluster.gpu" : "search.gpu", "no GPU profile \"" + space.gpus[i] + "\" was loaded"});
            continue;
        }
        largest_node = std::max(largest_node, gpus_per_node_for(scenario, it->second));
    }
    space.num_gpus = search.num_gpus.empty() ? std::vector<int>{scenario.cluster.num_gpus} : unique_in_order(search.num_gpus);
    if (std::any_of(space.num_gpus.begin(), space.num_gpus.end(), [](int n) { return n < 1; })) {
        errors.push_back({search.num_gpus.empty() ? "cluster.num_gpus" : "search.num_gpus", "GPU counts must be positive"});
    }
    space.tp = search.tp.empty() ? powers_of_two_up_to(allow_tp_across_nodes ? 64 : largest_node) : unique_in_order(search.tp);
    space.pp = search.pp.empty() ? divisors(std::max(1, scenario.model.layers)) : unique_in_order(search.pp);
    space.micro_batch = search.micro_batch.empty() ? powers_of_two_up_to(16) : unique_in_order(search.micro_batch);
    if (!errors.empty()) {
        return errors;
    }

    space.variants.resize(space.tp.size() * space.pp.size());
    for (std::size_t ti = 0; ti < space.tp.size(); ++ti) {
        for (std::size_t pi = 0; pi < space.pp.size(); ++pi) {
            space.variants[ti * space.pp.size() + pi] = make_variants(search, scenario.model, space.tp[ti], space.pp[pi]);
        }
    }
    const std::size_t groups = space.gpus.size() * space.num_gpus.size() * space.tp.size() * space.pp.size() * space.micro_batch.size();
    space.group_start.resize(groups + 1);
    space.group_start[0] = 0;
    for (std::size_t g = 0; g < groups; ++g) {
        // Only the tp and pp indices matter for the size; decode them as group() does.
        const std::size_t pi = (g / space.micro_batch.size()) % space.pp.size();
        const std::size_t ti = (g / (space.micro_batch.size() * space.pp.size())) % space.tp.size();
        space.group_start[g + 1] = space.group_start[g] + space.variants[ti * space.pp.size() + pi].size();
    }
    return space;
}

} // namespace vtrain
