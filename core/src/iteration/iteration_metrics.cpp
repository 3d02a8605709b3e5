// SPDX-License-Identifier: MIT
#include "iteration/iteration_metrics.h"

#include <cmath>

#include "iteration/event_simulation.h"
#include "model/fine_tuning.h"
#include "model/model_math.h"

namespace vtrain {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double busy_seconds(const StageBreakdown& b)
{
    return b.compute_s + b.tp_comm_s + b.ep_comm_s + b.cp_comm_s + b.pp_comm_s + b.dp_comm_exposed_s + b.optimizer_s;
}

} // namespace

MetricsBasis metrics_basis(const ModelSpec& model, const TrainingSpec& training)
{
    MetricsBasis b;
    // Tokens the model learns from: padded fine-tuning samples count their useful tokens only (fine_tuning.h).
    b.tokens_per_iteration = useful_tokens_per_iteration(model, training);
    b.tokens_useful_only = b.tokens_per_iteration < static_cast<double>(training.global_batch) * model.seq_len;
    // Model FLOPs of the training mode: a frozen base (LoRA) has no weight-gradient GEMMs.
    b.model_flops = mode_model_flops_per_iteration(model, training);
    // A run ends after whole iterations: the last one is counted in full.
    b.iterations = training.tokens > 0 ? std::ceil(training.tokens / b.tokens_per_iteration) : 0;
    return b;
}

GpuTerms gpu_terms(const ResolvedCluster& cluster, Precision precision)
{
    const GpuProfile& profile = *cluster.profile;
    GpuTerms g;
    const double precision_peak = profile.peak_flops(to_string(precision));
    g.peak_flops = precision_peak > 0 ? precision_peak : profile.peak_flops("bf16");
    g.price_per_gpu_hour = cluster.price_per_gpu_hour;
    g.usable_memory_gib = profile.memory_gib - profile.memory_reserve_gib;
    g.band = prediction_band(profile);
    return g;
}

IterationMetrics iteration_metrics(const MetricsBasis& basis, const GpuTerms& gpu, int num_gpus, double iteration_s,
                                   std::vector<StageBreakdown>& stages, double hardware_flops)
{
    const double T = iteration_s;
    IterationMetrics m;
    m.iteration_time_s = T;
    m.iteration_time_low_s = gpu.band ? gpu.band->low * T : T;
    m.iteration_time_high_s = gpu.band ? gpu.band->high * T : T;
    m.tokens_per_s = T > 0 ? basis.tokens_per_iteration / T : 0;
    m.model_tflops_per_gpu = T > 0 ? basis.model_flops / T / num_gpus / 1e12 : 0;
    m.hardware_tflops_per_gpu = T > 0 ? hardware_flops / T / num_gpus / 1e12 : 0;
    m.mfu = gpu.peak_flops > 0 ? m.model_tflops_per_gpu * 1e12 / gpu.peak_flops : 0;

    const double pp = static_cast<double>(stages.size());
    double bubble_sum = 0;
    for (StageBreakdown& b : stages) {
        b.bubble_s = bubble_seconds(T, busy_seconds(b));
        bubble_sum += T > 0 ? b.bubble_s / T : 0;
        StageBreakdown& mean = m.mean_stage;
        mean.compute_s += b.compute_s / pp;
        mean.tp_comm_s += b.tp_comm_s / pp;
        mean.ep_comm_s += b.ep_comm_s / pp;
        mean.cp_comm_s += b.cp_comm_s / pp;
        mean.pp_comm_s += b.pp_comm_s / pp;
        mean.dp_comm_exposed_s += b.dp_comm_exposed_s / pp;
        mean.optimizer_s += b.optimizer_s / pp;
        mean.bubble_s += b.bubble_s / pp;
    }
    m.bubble_fraction = stages.empty() ? 0 : bubble_sum / pp;

    m.training_days = basis.iterations * T / 86400.0;
    m.cost_usd = m.training_days * 24.0 * num_gpus * gpu.price_per_gpu_hour;
    return m;
}

PeakMemory peak_memory(const std::vector<StageMemory>& stages)
{
    PeakMemory p;
    double peak_bytes = 0;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        if (stages[s].total_bytes() > peak_bytes) {
            peak_bytes = stages[s].total_bytes();
            p.stage = s;
        }
    }
    p.gib = peak_bytes / kGiB;
    return p;
}

} // namespace vtrain
