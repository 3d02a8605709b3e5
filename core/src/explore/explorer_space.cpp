// SPDX-License-Identifier: MIT
#include "vtrain/explorer_space.h"

#include <algorithm>
#include <limits>

#include "vtrain/comm_model.h"
#include "vtrain/json_fields.h"
#include "vtrain/pipeline_layout.h"

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

// Keeps the first occurrence of each value: a repeated list entry would count plans twice. In O(n log n)
// (a list of a million distinct values took minutes when each was looked up in the ones kept).
template <typename T>
std::vector<T> unique_in_order(const std::vector<T>& values)
{
    std::vector<T> out;
    if constexpr (requires(const T& a, const T& b) { a < b; }) {
        if (values.size() > 32) {
            std::vector<std::size_t> order(values.size());
            for (std::size_t i = 0; i < order.size(); ++i) {
                order[i] = i;
            }
            // Equal values in index order: the first of each run is the value's first occurrence.
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
            std::vector<char> first(values.size(), 0);
            for (std::size_t k = 0; k < order.size(); ++k) {
                first[order[k]] = k == 0 || values[order[k - 1]] < values[order[k]] ? 1 : 0;
            }
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (first[i] != 0) {
                    out.push_back(values[i]);
                }
            }
            return out;
        }
    }
    for (const auto& v : values) {
        if (std::find(out.begin(), out.end(), v) == out.end()) {
            out.push_back(v);
        }
    }
    return out;
}

// A list the search gives, or the one default value.
template <typename T>
std::vector<T> or_default(const std::vector<T>& listed, T fallback)
{
    return listed.empty() ? std::vector<T>{fallback} : unique_in_order(listed);
}

// a x b, or nullopt past 2^63 (the index type stays far from wrapping).
bool multiply(std::uint64_t& a, std::uint64_t b)
{
    constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;
    if (b != 0 && a > kLimit / b) {
        return false;
    }
    a *= b;
    return true;
}

// A default list with the scenario plan's own value added where it is missing (ascending): the plan a
// scenario states is always in its own space.
std::vector<int> with_own(std::vector<int> list, const std::optional<Plan>& plan, int Plan::*field)
{
    if (plan && (*plan).*field >= 0 && std::find(list.begin(), list.end(), (*plan).*field) == list.end()) {
        list.insert(std::upper_bound(list.begin(), list.end(), (*plan).*field), (*plan).*field);
    }
    return list;
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

int default_tp_limit(const Scenario& scenario, const LinkSpec& profile_links)
{
    // Tensor parallelism stays in an NVLink domain; on racks whose domain spans hosts (NVL72: trays of 4)
    // the default still tries up to 8, the width Megatron recipes use there.
    LinkSpec links = profile_links;
    if (scenario.cluster.gpus_per_node > 0) {
        links.gpus_per_node = scenario.cluster.gpus_per_node;
    }
    if (scenario.cluster.nvlink_domain_gpus > 0) {
        links.nvlink_domain_gpus = scenario.cluster.nvlink_domain_gpus;
    }
    return std::max(std::max(1, links.gpus_per_node), std::min(8, nvlink_domain_size(links)));
}

std::vector<int> default_tp_widths(const Scenario& scenario, int tp_limit)
{
    return with_own(powers_of_two_up_to(tp_limit), scenario.plan, &Plan::tp);
}

std::vector<int> default_micro_batches(const Scenario& scenario)
{
    return with_own(powers_of_two_up_to(16), scenario.plan, &Plan::micro_batch);
}

std::vector<int> default_zero_stages(const Scenario& scenario)
{
    return with_own({0, 1, 2}, scenario.plan, &Plan::zero_stage);
}

std::vector<int> default_pipeline_depths(const Scenario& scenario)
{
    const int layers = std::max(1, scenario.model.layers);
    std::vector<int> out = divisors(layers);
    // Powers of two too, laid out unevenly where they do not divide (Megatron-Bridge runs Llama 3.1 405B's
    // 126 layers on 8 and 16 stages): the depths practitioners pick, not only the even ones.
    for (int pp = 2; pp <= layers; pp *= 2) {
        if (std::find(out.begin(), out.end(), pp) == out.end()) {
            out.insert(std::upper_bound(out.begin(), out.end(), pp), pp);
        }
    }
    return with_own(std::move(out), scenario.plan, &Plan::pp);
}

int PlanSpace::schedule_choices(int pp_index) const
{
    return static_cast<int>(sched_prefix[static_cast<std::size_t>(pp_index) + 1] - sched_prefix[static_cast<std::size_t>(pp_index)]);
}

int PlanSpace::sequence_parallel_choices(int tp_index) const
{
    return static_cast<int>(sp_prefix[static_cast<std::size_t>(tp_index) + 1] - sp_prefix[static_cast<std::size_t>(tp_index)]);
}

const std::vector<int>& PlanSpace::virtual_stage_choices(int pp_index) const
{
    // default_v is only filled when the interleaved schedule is searched: never index an empty list.
    static const std::vector<int> kNone;
    if (!virtual_stages.empty()) {
        return virtual_stages;
    }
    return default_v.empty() ? kNone : default_v[static_cast<std::size_t>(pp_index)];
}

PlanVariant PlanGroup::variant(std::uint64_t i) const
{
    const PlanSpace& s = *space;
    PlanVariant v;
    // Innermost digit first: activation offload, optimizer offload, rank order, DP overlap, moe_overlap,
    // tp_overlap, precision, zero, sequence parallel, recompute, schedule.
    auto digit = [&i](std::size_t radix) {
        const std::size_t d = static_cast<std::size_t>(i % radix);
        i /= radix;
        return d;
    };
    v.offload_activations = s.offload_activations[digit(s.offload_activations.size())];
    v.offload_optimizer = s.offload_optimizer[digit(s.offload_optimizer.size())];
    v.rank_order_index = static_cast<int>(digit(s.rank_order.size()));
    v.overlap_grad_reduce = s.overlap_grad_reduce[digit(s.overlap_grad_reduce.size())];
    v.moe_overlap = s.moe_overlap[digit(s.moe_overlap.size())];
    v.tp_overlap = s.tp_overlap[digit(s.tp_overlap.size())];
    v.precision_index = static_cast<int>(digit(s.precision.size()));
    v.precision = s.precision[static_cast<std::size_t>(v.precision_index)];
    v.zero_stage = s.zero_stage[digit(s.zero_stage.size())];
    const std::size_t sp = digit(static_cast<std::size_t>(s.sequence_parallel_choices(tp_index)));
    v.sequence_parallel = s.sequence_parallel.empty() ? sp == 1 : static_cast<bool>(s.sequence_parallel[sp]);
    v.recompute = s.recompute[digit(s.recompute.size())];
    const PlanSpace::ScheduleChoice& c = s.schedule_choice_list[static_cast<std::size_t>(pp_index)][static_cast<std::size_t>(i)];
    v.schedule = c.schedule;
    v.virtual_stages = c.virtual_stages;
    v.layout_index = c.layout_index;
    return v;
}

Plan PlanGroup::plan(const PlanVariant& v) const
{
    Plan p = space->base;
    p.tp = tp;
    p.cp = cp;
    p.pp = pp;
    p.ep = ep;
    p.etp = etp;
    const long long model_parallel = static_cast<long long>(tp) * cp * pp;
    p.dp = num_gpus % model_parallel == 0 ? static_cast<int>(num_gpus / model_parallel) : 0;
    p.micro_batch = micro_batch;
    p.schedule = v.schedule;
    p.virtual_stages = v.virtual_stages;
    p.recompute = v.recompute;
    p.sequence_parallel = v.sequence_parallel;
    p.zero_stage = v.zero_stage;
    p.tp_overlap = v.tp_overlap;
    p.moe_overlap = v.moe_overlap;
    p.overlap_grad_reduce = v.overlap_grad_reduce;
    p.rank_order = space->rank_order[static_cast<std::size_t>(v.rank_order_index)];
    p.offload_optimizer = v.offload_optimizer;
    p.offload_activations = v.offload_activations;
    // Layers that pp x v do not divide: the schedule choice's standard layout (see the header).
    const int layout = v.layout_index >= 0 ? v.layout_index : space->first_layout(pp, plan_chunks(p));
    if (layout > 0) {
        p.pipeline_layout = space->layouts[static_cast<std::size_t>(layout)];
    }
    return p;
}

std::vector<std::string> uneven_layouts(int layers, int mtp_layers, const Plan& base, int pp, int virtual_stages)
{
    const long long n = static_cast<long long>(pp) * virtual_stages;
    if (layers <= 0 || n <= 0 || layers % n == 0) {
        return {};
    }
    if (base.first_stage_layers > 0 || base.last_stage_layers > 0) {
        std::string balanced = balanced_pipeline_layout(layers, mtp_layers, pp, virtual_stages);
        return balanced.empty() ? std::vector<std::string>{} : std::vector<std::string>{std::move(balanced)};
    }
    return standard_pipeline_layouts(layers, mtp_layers, pp, virtual_stages);
}

std::vector<int> PlanSpace::layout_choices(int pp_count, int v)
{
    const std::vector<std::string> wanted = uneven_layouts(layers, mtp_layers, base, pp_count, v);
    std::vector<int> out;
    for (const std::string& w : wanted) {
        const auto [it, added] = layout_ids.emplace(w, static_cast<int>(layouts.size()));
        out.push_back(it->second);
        if (added) {
            layouts.push_back(w);
        }
    }
    return out.empty() ? std::vector<int>{0} : out;
}

int PlanSpace::first_layout(int pp_count, int v) const
{
    const std::vector<std::string> wanted = uneven_layouts(layers, mtp_layers, base, pp_count, v);
    const auto it = layout_ids.find(wanted.empty() ? std::string() : wanted.front());
    return it == layout_ids.end() ? -1 : it->second;
}

// Strides of the index (see the header): per (GPU, GPU count) block, sum over tp of sp(tp), times cp,
// times sum over pp of schedules(pp), times ep x etp x micro-batch, times the variant tail.
PlanGroup PlanSpace::group(std::uint64_t g) const
{
    PlanGroup out;
    out.space = this;
    std::uint64_t rest = g;
    auto digit = [&rest](std::size_t radix) {
        const int d = static_cast<int>(rest % radix);
        rest /= radix;
        return d;
    };
    out.micro_batch_index = digit(micro_batch.size());
    out.etp_index = digit(etp.size());
    out.ep_index = digit(ep.size());
    out.pp_index = digit(pp.size());
    out.cp_index = digit(cp.size());
    out.tp_index = digit(tp.size());
    const int n_index = digit(num_gpus.size());
    out.gpu = static_cast<int>(rest);
    out.num_gpus = num_gpus[static_cast<std::size_t>(n_index)];
    out.tp = tp[static_cast<std::size_t>(out.tp_index)];
    out.cp = cp[static_cast<std::size_t>(out.cp_index)];
    out.pp = pp[static_cast<std::size_t>(out.pp_index)];
    out.ep = ep[static_cast<std::size_t>(out.ep_index)];
    out.etp = etp[static_cast<std::size_t>(out.etp_index)];
    out.micro_batch = micro_batch[static_cast<std::size_t>(out.micro_batch_index)];
    out.first_index = group_first(g);
    out.size = static_cast<std::uint64_t>(sequence_parallel_choices(out.tp_index)) * static_cast<std::uint64_t>(schedule_choices(out.pp_index)) *
               variant_tail;
    return out;
}

std::uint64_t PlanSpace::group_first(std::uint64_t g) const
{
    if (g >= m_groups) {
        return m_size;
    }
    const std::uint64_t m = micro_batch.size(), x = etp.size(), e = ep.size(), p = pp.size(), c = cp.size(), t = tp.size();
    const std::uint64_t j = g % (e * x * m); // (ep, etp, micro-batch) digits
    std::uint64_t rest = g / (e * x * m);
    const std::uint64_t pi = rest % p;
    rest /= p;
    const std::uint64_t ci = rest % c;
    rest /= c;
    const std::uint64_t ti = rest % t;
    const std::uint64_t block = rest / t; // GPU type x GPU count
    const std::uint64_t sum_sp = sp_prefix.back(), sum_s = sched_prefix.back(), exm = e * x * m;
    const std::uint64_t sp = sp_prefix[ti + 1] - sp_prefix[ti];
    const std::uint64_t s = sched_prefix[pi + 1] - sched_prefix[pi];
    return block * sum_sp * c * sum_s * exm * variant_tail + sp_prefix[ti] * c * sum_s * exm * variant_tail + ci * sp * sum_s * exm * variant_tail +
           sp * sched_prefix[pi] * exm * variant_tail + j * sp * s * variant_tail;
}

std::uint64_t PlanSpace::group_of(std::uint64_t index) const
{
    const std::uint64_t m = micro_batch.size(), x = etp.size(), e = ep.size(), p = pp.size(), c = cp.size(), t = tp.size();
    const std::uint64_t sum_sp = sp_prefix.back(), sum_s = sched_prefix.back(), exm = e * x * m;
    const std::uint64_t per_block = sum_sp * c * sum_s * exm * variant_tail;
    const std::uint64_t block = index / per_block;
    std::uint64_t r = index % per_block;
    // The prefix entry at or below u whose next entry is above it: the non-empty row holding u.
    auto row = [](const std::vector<std::uint64_t>& prefix, std::uint64_t u) {
        return static_cast<std::uint64_t>(std::upper_bound(prefix.begin(), prefix.end(), u) - prefix.begin()) - 1;
    };
    const std::uint64_t per_tp_unit = c * sum_s * exm * variant_tail;
    const std::uint64_t ti = row(sp_prefix, r / per_tp_unit);
    r -= sp_prefix[ti] * per_tp_unit;
    const std::uint64_t sp = sp_prefix[ti + 1] - sp_prefix[ti];
    const std::uint64_t per_cp = sp * sum_s * exm * variant_tail;
    const std::uint64_t ci = r / per_cp;
    r -= ci * per_cp;
    const std::uint64_t per_pp_unit = sp * exm * variant_tail;
    const std::uint64_t pi = row(sched_prefix, r / per_pp_unit);
    r -= sched_prefix[pi] * per_pp_unit;
    const std::uint64_t per_group = sp * (sched_prefix[pi + 1] - sched_prefix[pi]) * variant_tail;
    const std::uint64_t j = r / per_group;
    return (((block * t + ti) * c + ci) * p + pi) * exm + j;
}

PlanSpace::Entry PlanSpace::at(std::uint64_t index) const
{
    const PlanGroup g = group(group_of(index));
    const PlanVariant v = g.variant(index - g.first_index);
    return {g.gpu, g.num_gpus, g.plan(v), v.precision};
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
    c.nvlink_domain_gpus = scenario.cluster.nvlink_domain_gpus;
    if (gpu == scenario.cluster.gpu) {
        c.price_per_gpu_hour = scenario.cluster.price_per_gpu_hour;
        c.links = scenario.cluster.links;
    } else if (const auto it = scenario.cluster.gpu_prices.find(gpu); it != scenario.cluster.gpu_prices.end()) {
        c.price_per_gpu_hour = it->second;
    }
    return c;
}

Expected<PlanSpace> make_plan_space(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, bool allow_tp_across_nodes,
                                    const std::atomic<bool>* cancel)
{
    const auto cancelled = [cancel] { return cancel != nullptr && cancel->load(std::memory_order_relaxed); };
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
    const Plan given = scenario.plan.value_or(Plan{});
    // Fields no search list sets keep the scenario plan's value. A pipeline_layout string does not carry
    // over (it lists the stages of the plan's own pp); first/last stage layer counts do: they say the same
    // thing at any pp (e.g. DeepSeek-V3's 61 layers as 4 per stage and 1 on the last), and plan_check()
    // rejects a pp whose remaining layers do not split evenly.
    space.base.grad_bucket_mb = given.grad_bucket_mb;
    space.base.overlap_grad_reduce = given.overlap_grad_reduce;
    space.base.overlap_param_gather = given.overlap_param_gather;
    space.base.shard_group = given.shard_group;
    space.base.cp_kind = given.cp_kind;
    space.layers = scenario.model.layers;
    space.mtp_layers = scenario.model.mtp_layers;
    space.base.first_stage_layers = given.first_stage_layers;
    space.base.last_stage_layers = given.last_stage_layers;
    space.base.recompute_modules = given.recompute_modules; // on top of each searched recompute choice
    space.gpus = search.gpu.empty() ? std::vector<std::string>{scenario.cluster.gpu} : unique_in_order(search.gpu);
    int largest_node = 1;
    for (std::size_t i = 0; i < space.gpus.size(); ++i) {
        const auto it = profiles.find(space.gpus[i]);
        if (it == profiles.end()) {
            errors.push_back(
                {search.gpu.empty() ? "cluster.gpu" : "search.gpu", "no GPU profile \"" + json_fields::bounded(space.gpus[i]) + "\" was loaded"});
            continue;
        }
        largest_node = std::max(largest_node, default_tp_limit(scenario, it->second.links));
    }
    space.num_gpus = search.num_gpus.empty() ? std::vector<int>{scenario.cluster.num_gpus} : unique_in_order(search.num_gpus);
    if (std::any_of(space.num_gpus.begin(), space.num_gpus.end(), [](int n) { return n < 1; })) {
        errors.push_back({search.num_gpus.empty() ? "cluster.num_gpus" : "search.num_gpus", "GPU counts must be positive"});
    }
    space.tp = search.tp.empty() ? default_tp_widths(scenario, allow_tp_across_nodes ? 64 : largest_node) : unique_in_order(search.tp);
    space.pp = search.pp.empty() ? default_pipeline_depths(scenario) : unique_in_order(search.pp);
    space.micro_batch = search.micro_batch.empty() ? default_micro_batches(scenario) : unique_in_order(search.micro_batch);
    space.cp = or_default(search.cp, given.cp);
    space.ep = or_default(search.ep, given.ep);
    space.etp = or_default(search.etp, given.etp);
    space.schedules = search.schedule.empty() ? std::vector<Schedule>{Schedule::GPipe, Schedule::OneFOneB, Schedule::Interleaved}
                                              : unique_in_order(search.schedule);
    space.virtual_stages = unique_in_order(search.virtual_stages);
    space.recompute =
        search.recompute.empty() ? std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full} : unique_in_order(search.recompute);
    space.sequence_parallel = unique_in_order(search.sequence_parallel);
    space.zero_stage = search.zero_stage.empty() ? default_zero_stages(scenario) : unique_in_order(search.zero_stage);
    space.precision = or_default(search.precision, scenario.training.precision);
    space.tp_overlap = or_default(search.tp_overlap, given.tp_overlap);
    space.moe_overlap = or_default(search.moe_overlap, given.moe_overlap);
    space.overlap_grad_reduce = or_default(search.overlap_grad_reduce, given.overlap_grad_reduce);
    space.rank_order = or_default(search.rank_order, given.rank_order);
    space.offload_optimizer = or_default(search.offload_optimizer, given.offload_optimizer);
    space.offload_activations = or_default(search.offload_activations, given.offload_activations);
    for (const auto& [list, field] : {std::pair{&space.tp, "search.tp"},
                                      {&space.pp, "search.pp"},
                                      {&space.micro_batch, "search.micro_batch"},
                                      {&space.cp, "search.cp"},
                                      {&space.ep, "search.ep"},
                                      {&space.virtual_stages, "search.virtual_stages"}}) {
        if (std::any_of(list->begin(), list->end(), [](int v) { return v < 1; })) {
            errors.push_back({field, "values must be positive"});
        }
    }
    if (std::any_of(space.etp.begin(), space.etp.end(), [](int v) { return v < 0; })) {
        errors.push_back({"search.etp", "values must be positive (or 0: the same as tp)"});
    }
    if (std::any_of(space.offload_activations.begin(), space.offload_activations.end(), [](double v) { return !(v >= 0 && v <= 1); })) {
        errors.push_back({"search.offload_activations", "values are shares from 0 to 1"});
    }
    if (std::any_of(space.zero_stage.begin(), space.zero_stage.end(), [](int v) { return v < 0 || v > 3; })) {
        errors.push_back({"search.zero_stage", "stages are 0, 1, 2 or 3"});
    }
    if (!errors.empty()) {
        return errors;
    }

    // The sizes that can be known before the space is laid out, refused before any work that grows with them.
    bool fits = true;
    space.m_groups = 1;
    for (const std::size_t n : {space.gpus.size(), space.num_gpus.size(), space.tp.size(), space.cp.size(), space.pp.size(), space.ep.size(),
                                space.etp.size(), space.micro_batch.size()}) {
        fits = fits && multiply(space.m_groups, n);
    }
    const auto count = [](std::uint64_t n) { return std::to_string(n); };
    if (!fits) {
        return Diagnostic{"search", "the lists describe more than 2^63 plans; narrow them"};
    }
    if (space.m_groups > kMaxSpaceGroups) {
        return Diagnostic{"search", "the lists describe " + count(space.m_groups) +
                                        " plan groups (GPU type x GPU count x tp x cp x pp x ep x etp x "
                                        "micro_batch), more than the " +
                                        count(kMaxSpaceGroups) + " a sweep enumerates in reasonable time; narrow them"};
    }
    const bool interleaved_searched = std::find(space.schedules.begin(), space.schedules.end(), Schedule::Interleaved) != space.schedules.end();
    if (interleaved_searched && !space.virtual_stages.empty() && space.pp.size() * space.virtual_stages.size() > kMaxPipelineShapes) {
        return Diagnostic{"search", "search.pp x search.virtual_stages = " + count(space.pp.size()) + " x " + count(space.virtual_stages.size()) +
                                        " pipeline shapes, more than the " + count(kMaxPipelineShapes) + " a sweep lays out; narrow them"};
    }

    // Lengths of the two dependent axes, as prefix sums over the tp and pp lists.
    space.sp_prefix.assign(space.tp.size() + 1, 0);
    for (std::size_t ti = 0; ti < space.tp.size(); ++ti) {
        const std::uint64_t n = !space.sequence_parallel.empty() ? space.sequence_parallel.size() : space.tp[ti] > 1 ? 2 : 1;
        space.sp_prefix[ti + 1] = space.sp_prefix[ti] + n;
    }
    const bool interleaved = std::find(space.schedules.begin(), space.schedules.end(), Schedule::Interleaved) != space.schedules.end();
    if (interleaved && space.virtual_stages.empty()) {
        space.default_v.resize(space.pp.size());
    }
    space.sched_prefix.assign(space.pp.size() + 1, 0);
    space.schedule_choice_list.assign(space.pp.size(), {});
    const int layers = scenario.model.layers;
    for (std::size_t pi = 0; pi < space.pp.size(); ++pi) {
        if (cancelled()) {
            return Diagnostic{"search", "cancelled"};
        }
        if (interleaved && space.virtual_stages.empty()) {
            const int pp = space.pp[pi];
            if (pp >= 2 && layers % pp == 0) {
                for (const int v : divisors(layers / pp)) {
                    if (v >= 2) {
                        space.default_v[pi].push_back(v);
                    }
                }
            } else if (pp >= 2) {
                // pp does not divide the layers: the v whose balanced layout fits (embedding and loss counted)
                // and that layout_choices() lays out (without first/last stage counts, no more virtual stages
                // than layers), so no default v is enumerated only to be rejected.
                for (int v = 2; static_cast<long long>(pp) * v <= layers + 2; ++v) {
                    if (!balanced_pipeline_layout(layers, space.mtp_layers, pp, v).empty() &&
                        !uneven_layouts(layers, space.mtp_layers, space.base, pp, v).empty()) {
                        space.default_v[pi].push_back(v);
                    }
                }
            }
        }
        // The choices in variant order: each schedule, interleaved once per v, each with its layouts.
        auto& choices = space.schedule_choice_list[pi];
        // Without a pipeline (pp = 1) GPipe and 1F1B are the same plan: list it once, as 1F1B.
        const bool one_f_one_b = std::find(space.schedules.begin(), space.schedules.end(), Schedule::OneFOneB) != space.schedules.end();
        for (const Schedule sched : space.schedules) {
            if (space.pp[pi] == 1 && sched == Schedule::GPipe && one_f_one_b) {
                continue;
            }
            for (const int v : sched == Schedule::Interleaved ? space.virtual_stage_choices(static_cast<int>(pi)) : std::vector<int>{1}) {
                for (const int layout : space.layout_choices(space.pp[pi], v)) {
                    choices.push_back({sched, v, layout});
                }
            }
        }
        space.sched_prefix[pi + 1] = space.sched_prefix[pi] + choices.size();
    }

    space.variant_tail = 1;
    for (const std::size_t n :
         {space.recompute.size(), space.zero_stage.size(), space.precision.size(), space.tp_overlap.size(), space.moe_overlap.size(),
          space.overlap_grad_reduce.size(), space.rank_order.size(), space.offload_optimizer.size(), space.offload_activations.size()}) {
        fits = fits && multiply(space.variant_tail, n);
    }
    space.m_size = space.gpus.size() * space.num_gpus.size();
    for (const std::uint64_t n : {space.sp_prefix.back(), static_cast<std::uint64_t>(space.cp.size()), space.sched_prefix.back(),
                                  static_cast<std::uint64_t>(space.ep.size() * space.etp.size() * space.micro_batch.size()), space.variant_tail}) {
        fits = fits && multiply(space.m_size, n);
    }
    if (!fits) {
        return Diagnostic{"search", "the lists describe more than 2^63 plans; narrow them"};
    }
    if (space.m_size > kMaxSpacePlans) {
        return Diagnostic{"search", "the lists describe " + count(space.m_size) + " plans, more than the " + count(kMaxSpacePlans) +
                                        " a sweep enumerates in reasonable time; narrow them"};
    }
    return space;
}

} // namespace vtrain
