// SPDX-License-Identifier: MIT
#include "explore/explorer_evaluate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explore/explorer_order.h"
#include "model/model_math.h"
#include "model/model_support.h"
#include "vtrain/memory_model.h"
#include "vtrain/plausibility.h"
#include "vtrain/uncertainty.h"

namespace vtrain {
namespace {

constexpr std::size_t kMaxCachedCosts = 4096; // per thread; consecutive groups share most keys

std::string format(const char* fmt, double a, double b)
{
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, fmt, a, b);
    return buffer;
}

} // namespace

CostEntry make_cost_entry(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan)
{
    CostEntry e;
    e.costs = plan_layer_costs(model, training, cluster, plan);
    e.costs.layer_operators.clear(); // every simulation copies the costs it is given; keep that cheap
    e.costs.layer_operators.shrink_to_fit();
    e.bound = bound_terms(model, e.costs);
    return e;
}

PlanEvaluator::PlanEvaluator(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                             const ExploreOptions& options)
    : m_scenario(scenario), m_space(space), m_options(options)
{
    for (const Precision p : space.precision) {
        TrainingSpec t = scenario.training;
        t.precision = p;
        m_training.push_back(t);
        m_floor_models.emplace_back(scenario.model, t);
    }
    for (const auto& id : space.gpus) {
        Gpu g;
        g.profile = &profiles.at(id); // make_plan_space checked that every GPU has a profile
        g.cluster = resolve_cluster(cluster_for_gpu(scenario, id, 0), *g.profile);
        g.gpus_per_node = nvlink_domain_size(g.cluster.links); // TP may span hosts inside one NVLink domain (NVL72)
        for (const Precision p : space.precision) {
            g.terms.push_back(gpu_terms(g.cluster, p));
            g.floor_hardware.push_back(floor_hardware(cluster_for_gpu(scenario, id, 0), *g.profile, p));
            const auto best = best_published_mfu(id, p);
            g.best_published_mfu.push_back(best ? best->mfu : -1.0);
        }
        m_gpus.push_back(g);
    }
    m_basis = metrics_basis(scenario.model, scenario.training);
}

const CostEntry* PlanEvaluator::costs_for(const CostKey& key, const Plan& plan, ThreadState& state) const
{
    auto it = state.costs.find(key);
    if (it != state.costs.end()) {
        return it->second.get();
    }
    if (state.costs.size() >= kMaxCachedCosts) {
        state.costs.clear();
    }
    auto e = std::make_unique<CostEntry>(make_cost_entry(m_scenario.model, m_training[static_cast<std::size_t>(key.precision)],
                                                         m_gpus[static_cast<std::size_t>(key.gpu)].cluster, plan));
    return state.costs.emplace(key, std::move(e)).first->second.get();
}

const BoundTerms& PlanEvaluator::bound_terms(const CostKey& key, const Plan& plan) const
{
    const auto it = m_bounds.find(key);
    if (it != m_bounds.end()) {
        return it->second;
    }
    const BoundTerms terms = make_cost_entry(m_scenario.model, m_training[static_cast<std::size_t>(key.precision)],
                                             m_gpus[static_cast<std::size_t>(key.gpu)].cluster, plan)
                                 .bound;
    return m_bounds.emplace(key, terms).first->second;
}

// True when rows already found beat `best_case` (a plan's or a group's bounds: least time and cost, most
// MFU, lowest index) on the front and in every top-k list, so no plan it stands for can appear in them.
bool PlanEvaluator::cannot_matter(const PlanRow& best_case, const PruneThresholds& prune) const
{
    if (!prune.active) {
        return false;
    }
    if (prune.top_k > 0) {
        if (!prune.kth_fastest || !detail::faster(*prune.kth_fastest, best_case) || !prune.kth_cheapest ||
            !detail::cheaper(*prune.kth_cheapest, best_case) || !prune.kth_mfu || !detail::higher_mfu(*prune.kth_mfu, best_case)) {
            return false;
        }
    }
    // The front row with the most time not above the bound has the least cost among those.
    const auto it = std::upper_bound(prune.front.begin(), prune.front.end(), best_case.training_days,
                                     [](double days, const PlanRow& r) { return days < r.training_days; });
    if (it == prune.front.begin()) {
        return false;
    }
    const PlanRow& r = *(it - 1);
    return r.cost_usd <= best_case.cost_usd &&
           (r.training_days < best_case.training_days || r.cost_usd < best_case.cost_usd || r.index < best_case.index);
}

std::optional<PlanRejection> PlanEvaluator::check_group(const PlanGroup& group) const
{
    // The group's neutral variant (1F1B, no sequence parallelism, ZeRO 0, no overlap), checked for the
    // rules that look at group fields only (below) and so reject every variant alike; any other rule
    // is left to each plan, as it may depend on the variant (ZeRO stage, schedule, flags).
    PlanVariant neutral;
    neutral.precision = m_space.precision.front();
    const Plan plan = group.plan(neutral);
    if (plan.dp == 0) {
        const long long model_parallel = static_cast<long long>(group.tp) * group.cp * group.pp;
        const std::string cp = group.cp != 1 ? " x " + std::to_string(group.cp) : "";
        return PlanRejection{RejectReason::GpuCountMismatch,
                             {"plan", std::string(group.cp != 1 ? "tp x cp x pp = " : "tp x pp = ") + std::to_string(group.tp) + cp + " x " +
                                          std::to_string(group.pp) + " = " + std::to_string(model_parallel) + " does not divide the GPU count, " +
                                          std::to_string(group.num_gpus) + " (dp would not be a whole number)"}};
    }
    if (auto rejection = check_plan(m_scenario.model, m_training.front(), plan, group.num_gpus)) {
        switch (rejection->reason) {
        case RejectReason::GpuCountMismatch:
        case RejectReason::TpNotDividingHeads:
        case RejectReason::TpNotDividingFfn:
        case RejectReason::PpNotDividingLayers: // plan.pp here: the neutral variant is not interleaved
        case RejectReason::BatchNotDivisible: return rejection;
        default: break;
        }
    }
    const int node = m_gpus[static_cast<std::size_t>(group.gpu)].gpus_per_node;
    if (!m_options.allow_tp_across_nodes && group.tp > node) {
        return PlanRejection{RejectReason::TpSpansNodes,
                             {"plan.tp", "tp = " + std::to_string(group.tp) + " is wider than an NVLink domain of " + std::to_string(node) +
                                             " GPUs (tensor parallelism stays inside a domain unless allowed)"}};
    }
    return std::nullopt;
}

void PlanEvaluator::reject(ChunkResult& out, const PlanRejection& rejection, std::uint64_t count, std::uint64_t index) const
{
    const auto r = static_cast<std::size_t>(rejection.reason);
    out.rejected[r] += count;
    out.evaluated += count;
    if (!out.example[r]) {
        out.example[r] = rejection.diagnostic;
        out.example_index[r] = index;
    }
}

void PlanEvaluator::fill_metrics(PlanRow& row, double iteration_s, const Gpu& gpu, int precision_index, std::vector<StageBreakdown>& stages) const
{
    const GpuTerms& terms = gpu.terms[static_cast<std::size_t>(precision_index)];
    const IterationMetrics m = iteration_metrics(m_basis, terms, row.num_gpus, iteration_s, stages);
    row.iteration_time_s = m.iteration_time_s;
    row.iteration_time_low_s = m.iteration_time_low_s;
    row.iteration_time_high_s = m.iteration_time_high_s;
    row.band_calibrated = terms.band && terms.band->calibrated;
    row.tokens_per_s = m.tokens_per_s;
    row.mfu = m.mfu;
    row.bubble_fraction = m.bubble_fraction;
    row.training_days = m.training_days;
    row.cost_usd = m.cost_usd;
}

void PlanEvaluator::fill_floors(PlanRow& row, const Gpu& gpu, int precision_index, ThreadState& state) const
{
    const auto p = static_cast<std::size_t>(precision_index);
    if (resolve_pipeline_layout(m_scenario.model, row.plan, state.floor_layout)) {
        return; // check_plan accepted the plan, so its layout resolves
    }
    const PhysicalFloors f = m_floor_models[p].floors(row.plan, state.floor_layout, gpu.floor_hardware[p]);
    row.floor_s = f.binding_s();
    row.floor_resource = f.binding;
    row.plausibility = static_cast<std::uint8_t>(plausibility_flags(gpu.best_published_mfu[p], row.mfu, row.iteration_time_s, row.floor_s));
}

PlanEvaluator::KeySlots PlanEvaluator::key_slots(const PlanGroup& group) const
{
    KeySlots k;
    k.low = static_cast<std::uint64_t>(m_space.moe_overlap.size() * m_space.tp_overlap.size() * m_space.precision.size());
    k.zero = static_cast<std::uint64_t>(m_space.zero_stage.size());
    k.slots = static_cast<std::uint64_t>(m_space.sequence_parallel_choices(group.tp_index)) * m_space.recompute.size() * k.low;
    return k;
}

std::optional<PlanRow> PlanEvaluator::group_best_case(const PlanGroup& group, ThreadState& state) const
{
    if (group.size == 0 || check_group(group)) {
        return std::nullopt;
    }
    const Gpu& gpu = m_gpus[static_cast<std::size_t>(group.gpu)];
    int most_v = 1; // the shortest model chunk: the least pipeline fill
    // A pp x v that does not divide the layers takes the average bound, which can be below the even
    // bound of most_v: the group's bound is then the least of the two.
    bool uneven = m_scenario.model.layers % group.pp != 0;
    for (const int v : m_space.virtual_stage_choices(group.pp_index)) {
        most_v = std::max(most_v, v);
        uneven = uneven || m_scenario.model.layers % (group.pp * v) != 0;
    }
    double least_s = -1;
    // Each cost key of the group once (schedule choice 0, ZeRO digit 0), its terms kept for the plans.
    const KeySlots k = key_slots(group);
    state.slots.assign(k.slots, nullptr);
    for (std::uint64_t slot = 0; slot < k.slots; ++slot) {
        PlanVariant v = group.variant((slot / k.low) * k.zero * k.low + slot % k.low);
        if (v.sequence_parallel && group.tp < 2) {
            continue; // rejected by the rules
        }
        v.schedule = Schedule::Interleaved;
        v.virtual_stages = most_v;
        v.layout_index = -1; // the layout pp x most_v takes (the bound of any layout is at most the even one)
        const Plan p = group.plan(v);
        const CostKey key{group.gpu,
                          group.tp,
                          group.cp,
                          group.ep,
                          group.etp,
                          group.micro_batch,
                          static_cast<int>(v.recompute),
                          v.precision_index,
                          v.sequence_parallel,
                          v.tp_overlap,
                          v.moe_overlap,
                          v.rank_order_index};
        const BoundTerms& terms = bound_terms(key, p);
        state.slots[slot] = &terms;
        double t = iteration_lower_bound_s(m_scenario.model, m_scenario.training.global_batch, terms, p);
        if (uneven) {
            Plan any_layout = p;
            any_layout.pipeline_layout = "-"; // only read as "not even": the bound every layout obeys
            t = std::min(t, iteration_lower_bound_s(m_scenario.model, m_scenario.training.global_batch, terms, any_layout));
        }
        least_s = least_s < 0 ? t : std::min(least_s, t);
    }
    if (least_s < 0) {
        return std::nullopt;
    }
    PlanRow bound;
    bound.index = group.first_index;
    bound.num_gpus = group.num_gpus;
    int smallest_peak = 0; // the smallest peak gives the largest MFU bound
    for (std::size_t p = 1; p < gpu.terms.size(); ++p) {
        smallest_peak = gpu.terms[p].peak_flops < gpu.terms[static_cast<std::size_t>(smallest_peak)].peak_flops ? static_cast<int>(p) : smallest_peak;
    }
    fill_metrics(bound, least_s, gpu, smallest_peak, state.no_stages);
    return bound;
}

std::optional<std::uint64_t> PlanEvaluator::plans_past_bound(const PlanGroup& group, ThreadState& state, const PruneThresholds& prune) const
{
    if (group.size == 0 || check_group(group)) {
        return std::nullopt;
    }
    const auto best = group_best_case(group, state);
    if (!best) {
        return group.size;
    }
    if (cannot_matter(*best, prune)) {
        return std::nullopt;
    }
    const KeySlots slots = key_slots(group);
    const Gpu& gpu = m_gpus[static_cast<std::size_t>(group.gpu)];
    std::uint64_t n = 0;
    for (std::uint64_t i = 0; i < group.size; ++i) {
        const BoundTerms* terms = state.slots[((i / slots.low / slots.zero) * slots.low + i % slots.low) % slots.slots];
        if (terms == nullptr) {
            continue;
        }
        const PlanVariant v = group.variant(i);
        const Plan plan = group.plan(v);
        PlanRow bound;
        bound.index = group.first_index + i;
        bound.num_gpus = group.num_gpus;
        fill_metrics(bound, iteration_lower_bound_s(m_scenario.model, m_scenario.training.global_batch, *terms, plan), gpu, v.precision_index,
                     state.no_stages);
        n += cannot_matter(bound, prune) ? 0 : 1;
    }
    return n;
}

bool PlanEvaluator::evaluate_group(const PlanGroup& group, ThreadState& state, ChunkResult& out, RunControl& control, const PruneThresholds& prune,
                                   bool count_progress) const
{
    const std::uint64_t counted = count_progress ? 1 : 0;
    if (group.size == 0) {
        return true;
    }
    if (auto rejection = check_group(group)) {
        reject(out, *rejection, group.size, group.first_index);
        control.done.fetch_add(group.size * counted, std::memory_order_relaxed);
        return true;
    }
    const ModelSpec& model = m_scenario.model;
    const Gpu& gpu = m_gpus[static_cast<std::size_t>(group.gpu)];
    auto key_of = [&](const PlanVariant& v) {
        return CostKey{group.gpu,
                       group.tp,
                       group.cp,
                       group.ep,
                       group.etp,
                       group.micro_batch,
                       static_cast<int>(v.recompute),
                       v.precision_index,
                       v.sequence_parallel,
                       v.tp_overlap,
                       v.moe_overlap,
                       v.rank_order_index};
    };

    const KeySlots slots = key_slots(group);
    if (prune.active) {
        // The whole group at once: its best case against what has been found.
        const auto best = group_best_case(group, state); // also fills state.slots
        if (!best) {
            state.slots.assign(slots.slots, nullptr); // no plan is bounded; the rules judge each
        } else if (cannot_matter(*best, prune)) {
            out.bounded += group.size;
            out.evaluated += group.size;
            control.done.fetch_add(group.size * counted, std::memory_order_relaxed);
            return true;
        }
    }

    SimulationOptions sim_options;
    sim_options.timeline = false;
    // The bound reads the group's fields and the variant's schedule, virtual stages and layout only: one
    // plan patched per variant, so that a plan bounded out costs no copy of the plan's strings and lists.
    Plan bound_plan = prune.active ? group.plan(PlanVariant{}) : Plan{};
    for (std::uint64_t i = 0; i < group.size; ++i) {
        if (control.cancel.load(std::memory_order_relaxed)) {
            return false;
        }
        control.done.fetch_add(counted, std::memory_order_relaxed);
        const std::uint64_t index = group.first_index + i;
        const PlanVariant v = group.variant(i);
        const TrainingSpec& training = m_training[static_cast<std::size_t>(v.precision_index)];
        // The bound first: a table look-up, cheaper than the plan's own rules (which build a message
        // when they reject), and most plans of a large space fail it. The group's rules passed, so the
        // bound's inputs (dp, micro-batches) are whole.
        const BoundTerms* terms = prune.active ? state.slots[((i / slots.low / slots.zero) * slots.low + i % slots.low) % slots.slots] : nullptr;
        if (terms != nullptr) { // null: sequence parallelism at tp = 1, which the rules reject
            bound_plan.schedule = v.schedule;
            bound_plan.virtual_stages = v.virtual_stages;
            const int layout = v.layout_index >= 0 ? v.layout_index : 0;
            bound_plan.pipeline_layout.assign(m_space.layouts[static_cast<std::size_t>(layout)]);
            PlanRow bound;
            bound.index = index;
            bound.num_gpus = group.num_gpus;
            fill_metrics(bound, iteration_lower_bound_s(model, m_scenario.training.global_batch, *terms, bound_plan), gpu, v.precision_index,
                         state.no_stages);
            if (cannot_matter(bound, prune)) {
                ++out.bounded;
                ++out.evaluated;
                continue;
            }
        }
        const Plan plan = group.plan(v);
        if (auto rejection = check_plan(model, training, plan, group.num_gpus)) {
            reject(out, *rejection, 1, index);
            continue;
        }
        if (auto rejection = check_simulation_size(training, plan)) {
            reject(out, *rejection, 1, index);
            continue;
        }
        if (auto reason = not_modeled_reason(model, training, plan)) {
            reject(out, {RejectReason::NotModeled, {"plan", *reason}}, 1, index);
            continue;
        }
        const CostEntry* costs = nullptr;
        // Memory first: it needs no simulation and rejects many plans.
        const auto memory = plan_memory(model, training, plan);
        const PeakMemory peak = peak_memory(memory);
        const double peak_gib = peak.gib;
        const double usable_gib = gpu.terms[static_cast<std::size_t>(v.precision_index)].usable_memory_gib;
        if (!(peak_gib <= usable_gib)) { // as simulate_checked() decides fits_memory
            const auto r = static_cast<std::size_t>(RejectReason::OutOfMemory);
            if (out.example[r]) {
                ++out.rejected[r];
                ++out.evaluated;
            } else {
                reject(out,
                       {RejectReason::OutOfMemory,
                        {"plan", "stage " + std::to_string(peak.stage) +
                                     format(" needs %.1f GiB of memory but %.1f GiB are usable", peak_gib, usable_gib) + " on " + gpu.profile->id}},
                       1, index);
            }
            continue;
        }
        if (costs == nullptr) {
            costs = costs_for(key_of(v), plan, state);
        }
        PlanRow row;
        row.index = index;
        row.plan = plan;
        row.precision = v.precision;
        row.gpu = gpu.profile->id;
        row.num_gpus = group.num_gpus;
        row.peak_memory_gib = peak_gib;
        // Either iteration model gives the time and each stage's busy parts; the metrics come from them.
        FastSimResult fast;
        if (!m_options.exact_simulation && fast_simulate(model, training, gpu.cluster, plan, costs->costs, state.fast, fast, state.stages)) {
            fill_metrics(row, fast.iteration_time_s, gpu, v.precision_index, state.stages);
        } else {
            sim_options.cached_costs = &costs->costs;
            const SimulationResult sim = simulate_checked(model, training, gpu.cluster, plan, sim_options, state.workspace);
            state.stages.clear();
            for (const StageResult& st : sim.stages) {
                state.stages.push_back(st.breakdown);
            }
            fill_metrics(row, sim.iteration_time_s, gpu, v.precision_index, state.stages);
        }
        fill_floors(row, gpu, v.precision_index, state);
        out.rows.push_back(std::move(row));
        ++out.feasible;
        ++out.evaluated;
    }
    return true;
}

} // namespace vtrain
