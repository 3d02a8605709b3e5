// SPDX-License-Identifier: MIT
#pragma once
// The one place where an iteration's time and its stages' busy times become the reported metrics: the time
// and its band, tokens/s, TFLOP/s, MFU, the bubble, peak memory, training days and cost. simulate()
// (task_graph_simulation.cpp) and the explorer's rows (explorer_evaluate.cpp) both call it, so the two
// iteration models can never disagree on a formula.
#include <cstddef>
#include <optional>
#include <vector>

#include "iteration/plan_costs.h"
#include "vtrain/memory_model.h"
#include "vtrain/simulation_result.h"
#include "vtrain/uncertainty.h"

namespace vtrain {

// What a scenario's metrics need that no plan changes.
struct MetricsBasis {
    double tokens_per_iteration = 0; // global batch x sequence length (x sample_tokens for padded fine-tuning samples)
    bool tokens_useful_only = false; // tokens_per_iteration leaves out padding (TrainingSpec::sequence_packing false)
    double model_flops = 0;          // per iteration, recompute not counted
    double iterations = 0;           // whole iterations over the training tokens (the last one counted in full)
};
MetricsBasis metrics_basis(const ModelSpec& model, const TrainingSpec& training);

// What they need of the GPU at one precision.
struct GpuTerms {
    double peak_flops = 0;         // the precision's dense peak (BF16's where the profile has none)
    double price_per_gpu_hour = 0; // the scenario's, else the profile's list price
    double usable_memory_gib = 0;  // capacity less the profile's reserve
    std::optional<PredictionBand> band;
};
GpuTerms gpu_terms(const ResolvedCluster& cluster, Precision precision);

struct IterationMetrics {
    double iteration_time_s = 0;
    double iteration_time_low_s = 0; // the band around the time: the time itself when the profile has none
    double iteration_time_high_s = 0;
    double tokens_per_s = 0;
    double model_tflops_per_gpu = 0;
    double hardware_tflops_per_gpu = 0; // recompute counted (0 unless its FLOPs are given)
    double mfu = 0;
    double bubble_fraction = 0; // mean over the stages of idle time / iteration time
    StageBreakdown mean_stage;  // mean over the stages; its parts add up to the iteration time
    double training_days = 0;
    double cost_usd = 0;
};

// A plan of `num_gpus` GPUs whose iteration takes `iteration_s`. `stages` holds each stage's busy parts as
// an iteration model accounted them; their idle time (bubble_s) is filled in here. Empty where only the time
// matters (the explorer's bounds).
IterationMetrics iteration_metrics(const MetricsBasis& basis, const GpuTerms& gpu, int num_gpus, double iteration_s,
                                   std::vector<StageBreakdown>& stages, double hardware_flops = 0);

// The stage with the most memory and how much it holds.
struct PeakMemory {
    double gib = 0;
    std::size_t stage = 0;
};
PeakMemory peak_memory(const std::vector<StageMemory>& stages);

} // namespace vtrain
