// SPDX-License-Identifier: MIT
#pragma once
// vTrain's compute-optimal model case study: on a fixed cluster (GPU type x count) and a budget of days
// and/or dollars, the largest model that can be trained compute-optimally (tokens = ratio x parameters,
// Chinchilla's 20 by default) when each candidate runs its best simulated plan -- beside the naive answer
// that assumes a fixed utilisation of peak FLOP/s.
//
// Candidates come from a family of decoder shapes (layers x hidden, heads of 128 dimensions). Each
// candidate's best plan is found with explore() over a deliberately small plan space (see
// candidate_search_space): one explore call per (tp, pp) pair that fits the GPU count, the global batch
// rounded per pair to a multiple of dp.
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/explorer.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

// Progress and cancellation of a case study made of many explore calls: `sweep` is handed to each
// explore call in turn (its done/total count the current call's plans; setting its cancel flag stops
// the whole study), steps count the explore calls (or throughput curves) of the study.
struct StudyControl {
    RunControl sweep;
    std::atomic<std::uint64_t> steps_done{0};
    std::atomic<std::uint64_t> steps_total{0};
    bool cancelled() const { return sweep.cancel.load(std::memory_order_relaxed); }
};

// Megatron: the ten shapes of Narayanan et al. SC'21 Table 1 (1.7B .. 1T; vTrain's case study picks from
// these: 145.6B = 80 x 12288, 76.1B = 60 x 10240). Grid: hidden 2048..32768 in steps of 1024, layers
// interpolated (log-linear in hidden) from the Megatron table's aspect ratios, rounded to a multiple of 4.
enum class ShapeFamily { Megatron, Grid };
const char* to_string(ShapeFamily family);
std::optional<ShapeFamily> shape_family_from_string(const std::string& text);

// GPT-style shapes (GELU, tied embeddings), heads = hidden / 128, by increasing parameter count.
std::vector<ModelSpec> model_family(ShapeFamily family, int seq_len, int vocab);

struct OptimalModelRequest {
    std::string gpu; // profile id
    int num_gpus = 0;
    int gpus_per_node = 0;             // 0 = the profile's node size
    std::optional<double> budget_days; // at least one budget is required
    std::optional<double> budget_usd;
    std::optional<double> price_per_gpu_hour; // unset = the profile's price
    double tokens_per_param = 20;
    double naive_utilization = 1.0; // the naive answer's fraction of peak (the paper uses 100%)
    int target_global_batch = 1536; // sequences; per plan rounded to the nearest multiple of dp
    int seq_len = 2048;
    int vocab = 51200;
    ShapeFamily family = ShapeFamily::Megatron;
    AttentionKernel attention = AttentionKernel::Flash;
    int threads = 0; // explore worker threads, 0 = all cores
};

// Every field is checked; errors name the request field ("num_gpus", "budget_days", ...).
Diagnostics check_request(const OptimalModelRequest& request);

struct OptimalCandidate {
    ModelSpec model;
    double params = 0;
    double tokens = 0;      // tokens_per_param x params
    double model_flops = 0; // to train on `tokens` (Megatron's formula, no recompute)
    double naive_days = 0;  // at naive_utilization of peak on every GPU
    double naive_cost_usd = 0;
    bool naive_within_budget = false;
    bool simulated = false;     // false when the study was cancelled before this candidate
    bool has_plan = false;      // some plan fits in memory
    PlanRow best;               // its fastest plan (valid when has_plan)
    int global_batch = 0;       // of the best plan
    bool within_budget = false; // the best plan meets every budget
    std::uint64_t plans_enumerated = 0;
    std::uint64_t plans_feasible = 0;
    std::string note; // why there is no plan (the most common rejection)
};

struct OptimalModelResult {
    OptimalModelRequest request;
    double peak_tflops_per_gpu = 0;
    double price_per_gpu_hour = 0;
    std::vector<OptimalCandidate> candidates;   // by increasing parameter count
    std::optional<std::size_t> naive_choice;    // the largest candidate within budget at naive utilisation
    std::optional<std::size_t> feasible_choice; // the largest candidate whose best simulated plan is within budget
    bool cancelled = false;
    double elapsed_s = 0;
    std::uint64_t plans_enumerated = 0;
};

// The plan space tried for one (tp, pp) pair: micro-batch 1/2/4/8; 1F1B and interleaved with 2 virtual
// stages; no, selective and full recompute; sequence parallelism off/on (on only with tp > 1); ZeRO 0/1.
SearchSpace candidate_search_space(int tp, int pp, int num_gpus);

// The global batch a plan with `dp` replicas uses: the multiple of dp nearest `target` (at least dp).
int rounded_global_batch(int target, int dp);

// Model FLOPs (3 x forward, Megatron's formula) to train `model` on `tokens` tokens.
double training_model_flops(const ModelSpec& model, double tokens);

// Finds the fastest plan of one model on the request's cluster (explore over every (tp, pp) pair).
// `profiles` must hold request.gpu.
OptimalCandidate evaluate_candidate(const ModelSpec& model, const OptimalModelRequest& request, const std::map<std::string, GpuProfile>& profiles,
                                    StudyControl& control);

// The whole study. Cancelling keeps the candidates done so far (result.cancelled).
Expected<OptimalModelResult> find_optimal_model(const OptimalModelRequest& request, const GpuProfile& profile, StudyControl& control);

// Budget (days) vs largest model, naive and simulated, for the GUI's plot; one point per budget.
struct BudgetPoint {
    double budget_days = 0;
    double naive_params = 0; // 0 = no candidate fits
    double feasible_params = 0;
};
std::vector<BudgetPoint> budget_curve(const OptimalModelResult& result, const std::vector<double>& budgets_days);

nlohmann::json optimal_model_to_json(const OptimalModelResult& result);

} // namespace vtrain
