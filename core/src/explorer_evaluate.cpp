// SPDX-License-Identifier: MIT
#include "explorer_evaluate.h"

#include <cmath>
#include <cstdio>

#include <oneapi/tbb/parallel_for.h>

#include "vtrain/memory_model.h"
#include "vtrain/model_math.h"
#include "vtrain/uncertainty.h"

namespace vtrain {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string format(const char* fmt, double a, double b)
{
    char buffer[160];
    std::snprintf(buffer, sizeof buffer, fmt, a, b);
    return buffer;
}

// The interleaved schedule, virtual stages and sequence parallelism have rules of their own; every
// other rule check_plan applies depends only on the group.
bool variant_has_own_rules(const PlanVariant& v) { return v.schedule == Schedule::Interleaved || v.virtual_stages != 1 || v.sequence_parallel; }

} // namespace

PlanEvaluator::PlanEvaluator(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                             const ExploreOptions& options)
    : m_scenario(scenario), m_space(space), m_options(options)
{
    for (const auto& id : space.gpus) {
        Gpu g;
        g.profile = &profiles.at(id); // make_plan_space checked that every GPU has a profile
        g.cluster = resolve_cluster(cluster_for_gpu(scenario, id, 0), *g.profile);
        g.gpus_per_node = nvlink_domain_size(g.cluster.links); // TP may span hosts inside one NVLink domain (NVL72)
        g.usable_gib = g.profile->memory_gib - g.profile->memory_reserve_gib;
        const double precision_peak = g.profile->peak_flops(to_string(scenario.training.precision));
        g.peak_flops = precision_peak > 0 ? precision_peak : g.profile->peak_flops("bf16");
        if (const auto band = prediction_band(*g.profile)) {
            g.band_low = band->low;
            g.band_high = band->high;
        }
        m_gpus.push_back(g);
    }

    m_tokens_per_iteration = static_cast<double>(scenario.training.global_batch) * scenario.model.seq_len;
    m_iterations = std::ceil(scenario.training.tokens / m_tokens_per_iteration); // whole iterations, as simulate_checked()
    m_model_flops = model_flops_per_iteration(scenario.model, scenario.training.global_batch);
}

std::size_t PlanEvaluator::cost_slot(int gpu, int tp_index, int micro_batch_index, bool sequence_parallel, Recompute recompute) const
{
    const std::size_t per_mb = 6;
    return ((static_cast<std::size_t>(gpu) * m_space.tp.size() + tp_index) * m_space.micro_batch.size() + micro_batch_index) * per_mb +
           (sequence_parallel ? 3 : 0) + static_cast<std::size_t>(recompute);
}

void PlanEvaluator::prepare()
{
    const std::size_t slots = cost_slot(static_cast<int>(m_gpus.size()), 0, 0, false, Recompute::None);
    m_costs.assign(slots, LayerCosts{});
    m_has_costs.assign(slots, 0);
    const ModelSpec& model = m_scenario.model;
    // Every (GPU, tp, micro-batch, sequence parallel, recompute) that some legal plan can use.
    tbb::parallel_for(std::size_t{0}, slots, [&](std::size_t slot) {
        const std::size_t rest = slot / 6;
        const int mi = static_cast<int>(rest % m_space.micro_batch.size());
        const int ti = static_cast<int>((rest / m_space.micro_batch.size()) % m_space.tp.size());
        const int gpu = static_cast<int>(rest / (m_space.micro_batch.size() * m_space.tp.size()));
        const bool sp = slot % 6 >= 3;
        const auto recompute = static_cast<Recompute>(slot % 3);
        const int tp = m_space.tp[ti];
        const int kv = model.effective_kv_heads();
        if (model.heads % tp != 0 || (kv % tp != 0 && tp % kv != 0) || model.effective_ffn_hidden() % tp != 0 || (sp && tp < 2)) {
            return;
        }
        Plan plan;
        plan.tp = tp;
        plan.micro_batch = m_space.micro_batch[mi];
        plan.sequence_parallel = sp;
        plan.recompute = recompute;
        LayerCosts costs = plan_layer_costs(model, m_scenario.training, m_gpus[gpu].cluster, plan);
        costs.layer_operators.clear(); // every simulation copies the costs it is given; keep that cheap
        costs.layer_operators.shrink_to_fit();
        m_costs[slot] = std::move(costs);
        m_has_costs[slot] = 1;
    });
}

std::optional<PlanRejection> PlanEvaluator::check_group(const PlanGroup& group) const
{
    const Plan plan = group.plan(PlanVariant{});
    if (plan.dp == 0) {
        const double tp_pp = static_cast<double>(group.tp) * group.pp;
        return PlanRejection{RejectReason::GpuCountMismatch,
                             {"plan", "tp x pp = " + std::to_string(group.tp) + " x " + std::to_string(group.pp) + " = " +
                                          std::to_string(static_cast<long long>(tp_pp)) + " does not divide the GPU count, " +
                                          std::to_string(group.num_gpus) + " (dp would not be a whole number)"}};
    }
    if (auto rejection = check_plan(m_scenario.model, m_scenario.training, plan, group.num_gpus)) {
        return rejection;
    }
    const int node = m_gpus[group.gpu].gpus_per_node;
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

// The same formulas, in the same order, as simulate_checked().
void PlanEvaluator::fill_metrics(PlanRow& row, double iteration_s, const Gpu& gpu) const
{
    const double T = iteration_s;
    row.iteration_time_s = T;
    row.iteration_time_low_s = T * gpu.band_low;
    row.iteration_time_high_s = T * gpu.band_high;
    row.tokens_per_s = T > 0 ? m_tokens_per_iteration / T : 0;
    const double model_tflops_per_gpu = T > 0 ? m_model_flops / T / row.num_gpus / 1e12 : 0;
    row.mfu = gpu.peak_flops > 0 ? model_tflops_per_gpu * 1e12 / gpu.peak_flops : 0;
    row.training_days = m_iterations * T / 86400.0;
    row.cost_usd = row.training_days * 24.0 * row.num_gpus * gpu.cluster.price_per_gpu_hour;
}

bool PlanEvaluator::evaluate_group(const PlanGroup& group, ThreadState& state, ChunkResult& out, RunControl& control) const
{
    const std::vector<PlanVariant>& variants = *group.variants;
    if (auto rejection = check_group(group)) {
        reject(out, *rejection, variants.size(), group.first_index);
        control.done.fetch_add(variants.size(), std::memory_order_relaxed);
        return true;
    }
    const ModelSpec& model = m_scenario.model;
    const TrainingSpec& training = m_scenario.training;
    const Gpu& gpu = m_gpus[group.gpu];
    SimulationOptions sim_options;
    sim_options.timeline = false;

    for (std::size_t i = 0; i < variants.size(); ++i) {
        if (control.cancel.load(std::memory_order_relaxed)) {
            return false;
        }
        control.done.fetch_add(1, std::memory_order_relaxed);
        const PlanVariant& v = variants[i];
        const Plan plan = group.plan(v);
        if (variant_has_own_rules(v)) {
            if (auto rejection = check_plan(model, training, plan, group.num_gpus)) {
                reject(out, *rejection, 1, group.first_index + i);
                continue;
            }
        }
        // Memory first: it needs no simulation and rejects many plans.
        const auto memory = plan_memory(model, training, plan);
        double peak_bytes = 0;
        std::size_t peak_stage = 0;
        for (std::size_t s = 0; s < memory.size(); ++s) {
            if (memory[s].total_bytes() > peak_bytes) {
                peak_bytes = memory[s].total_bytes();
                peak_stage = s;
            }
        }
        const double peak_gib = peak_bytes / kGiB;
        if (!(peak_gib <= gpu.usable_gib)) { // as simulate_checked() decides fits_memory
            const auto r = static_cast<std::size_t>(RejectReason::OutOfMemory);
            if (out.example[r]) {
                ++out.rejected[r];
                ++out.evaluated;
            } else {
                reject(out, {RejectReason::OutOfMemory,
                             {"plan", "stage " + std::to_string(peak_stage) + format(" needs %.1f GiB of memory but %.1f GiB are usable", peak_gib,
                                                                                      gpu.usable_gib) +
                                          " on " + gpu.profile->id}},
                       1, group.first_index + i);
            }
            continue;
        }
        const std::size_t slot = cost_slot(group.gpu, group.tp_index, group.micro_batch_index, v.sequence_parallel, v.recompute);
        const LayerCosts* costs = m_has_costs[slot] ? &m_costs[slot] : nullptr;
        PlanRow row;
        row.index = group.first_index + i;
        row.plan = plan;
        row.gpu = gpu.profile->id;
        row.num_gpus = group.num_gpus;
        row.peak_memory_gib = peak_gib;
        FastSimResult fast;
        if (!m_options.exact_simulation && costs != nullptr && fast_simulate(model, training, gpu.cluster, plan, *costs, state.fast, fast)) {
            fill_metrics(row, fast.iteration_time_s, gpu);
            row.bubble_fraction = fast.bubble_fraction;
        } else {
            sim_options.cached_costs = costs;
            const SimulationResult sim = simulate_checked(model, training, gpu.cluster, plan, sim_options, state.workspace);
            row.iteration_time_s = sim.iteration_time_s;
            row.iteration_time_low_s = sim.iteration_time_s * gpu.band_low;
            row.iteration_time_high_s = sim.iteration_time_s * gpu.band_high;
            row.tokens_per_s = sim.tokens_per_s;
            row.mfu = sim.mfu;
            row.bubble_fraction = sim.bubble_fraction;
            row.training_days = sim.training_days;
            row.cost_usd = sim.cost_usd;
        }
        out.rows.push_back(std::move(row));
        ++out.feasible;
        ++out.evaluated;
    }
    return true;
}

} // namespace vtrain
