// SPDX-License-Identifier: MIT
// The compute-optimal model study: a family of shapes, each candidate's fastest plan from explore(), and
// the largest candidate within budget -- simulated and at a naive fixed utilisation.
#include "vtrain/optimal_model.h"
#include "studies/cluster_request_checks.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include "model/model_math.h"
#include "vtrain/explorer_io.h"
#include "vtrain/explorer_space.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain {
namespace {

constexpr double kSecondsPerDay = 86400.0;
constexpr int kHeadDim = 128;

struct Shape {
    int layers;
    int hidden;
};

// Narayanan et al. SC'21, Table 1 (the weak-scaling family; 1.7B .. 1T).
constexpr std::array<Shape, 10> kMegatronShapes{
    {{24, 2304}, {30, 3072}, {36, 4096}, {40, 6144}, {48, 8192}, {60, 10240}, {80, 12288}, {96, 16384}, {105, 20480}, {128, 25600}}};

ModelSpec gpt_shape(int layers, int hidden, int seq_len, int vocab)
{
    ModelSpec m;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = hidden / kHeadDim;
    m.seq_len = seq_len;
    m.vocab = vocab;
    m.activation = FfnActivation::Gelu;
    m.tied_embeddings = true;
    return m;
}

// Layers for a hidden size: log-linear interpolation of the Megatron table, constant aspect ratio outside.
int interpolated_layers(int hidden)
{
    const auto& t = kMegatronShapes;
    double layers = 0;
    if (hidden <= t.front().hidden) {
        layers = static_cast<double>(hidden) * t.front().layers / t.front().hidden;
    } else if (hidden >= t.back().hidden) {
        layers = static_cast<double>(hidden) * t.back().layers / t.back().hidden;
    } else {
        std::size_t i = 1;
        while (t[i].hidden < hidden) {
            ++i;
        }
        const double f = std::log(static_cast<double>(hidden) / t[i - 1].hidden) / std::log(static_cast<double>(t[i].hidden) / t[i - 1].hidden);
        layers = t[i - 1].layers + f * (t[i].layers - t[i - 1].layers);
    }
    return std::max(4, 4 * static_cast<int>(std::lround(layers / 4)));
}

std::string params_label(double params)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, params >= 1e12 ? "%.2fT" : "%.1fB", params >= 1e12 ? params / 1e12 : params / 1e9);
    return buffer;
}

bool faster_row(const PlanRow& a, const PlanRow& b)
{
    return a.training_days != b.training_days ? a.training_days < b.training_days : a.cost_usd < b.cost_usd;
}

bool within(const OptimalModelRequest& r, double days, double cost)
{
    return (!r.budget_days || days <= *r.budget_days) && (!r.budget_usd || cost <= *r.budget_usd);
}

// The most frequent rejection other than a GPU-count mismatch, as "reason: example".
std::string main_rejection(const std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)>& counts,
                           const std::array<Diagnostic, static_cast<std::size_t>(RejectReason::Count)>& examples)
{
    const auto oom = static_cast<std::size_t>(RejectReason::OutOfMemory);
    if (counts[oom] > 0) { // the usual reason a large model has no plan; other rejections are incidental
        return "out of memory on every plan that passes the other rules (first example: " + examples[oom].to_string() + ")";
    }
    std::size_t best = counts.size();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (static_cast<RejectReason>(i) != RejectReason::GpuCountMismatch && counts[i] > 0 && (best == counts.size() || counts[i] > counts[best])) {
            best = i;
        }
    }
    if (best == counts.size()) {
        return "no (tp, pp) pair divides the GPU count";
    }
    return std::string(to_string(static_cast<RejectReason>(best))) + ": " + examples[best].to_string();
}

nlohmann::json candidate_to_json(const OptimalCandidate& c)
{
    nlohmann::json j;
    j["name"] = c.model.name;
    j["layers"] = c.model.layers;
    j["hidden"] = c.model.hidden;
    j["heads"] = c.model.heads;
    j["params"] = c.params;
    j["tokens"] = c.tokens;
    j["model_flops"] = c.model_flops;
    j["naive_days"] = c.naive_days;
    j["naive_cost_usd"] = c.naive_cost_usd;
    j["naive_within_budget"] = c.naive_within_budget;
    j["simulated"] = c.simulated;
    j["has_plan"] = c.has_plan;
    j["within_budget"] = c.within_budget;
    j["plans_enumerated"] = c.plans_enumerated;
    j["plans_feasible"] = c.plans_feasible;
    if (c.has_plan) {
        j["best_plan"] = plan_to_json(c.best.plan);
        j["best_plan_label"] = plan_label(c.best.plan);
        j["global_batch"] = c.global_batch;
        j["mfu"] = c.best.mfu;
        j["tokens_per_s"] = c.best.tokens_per_s;
        j["days"] = c.best.training_days;
        j["cost_usd"] = c.best.cost_usd;
        j["peak_memory_gib"] = c.best.peak_memory_gib;
    } else if (!c.note.empty()) {
        j["note"] = c.note;
    }
    return j;
}

} // namespace

const char* to_string(ShapeFamily family)
{
    return family == ShapeFamily::Megatron ? "megatron" : "grid";
}

std::optional<ShapeFamily> shape_family_from_string(const std::string& text)
{
    if (text == "megatron") {
        return ShapeFamily::Megatron;
    }
    if (text == "grid") {
        return ShapeFamily::Grid;
    }
    return std::nullopt;
}

std::vector<ModelSpec> model_family(ShapeFamily family, int seq_len, int vocab)
{
    std::vector<ModelSpec> out;
    if (family == ShapeFamily::Megatron) {
        for (const Shape& s : kMegatronShapes) {
            out.push_back(gpt_shape(s.layers, s.hidden, seq_len, vocab));
        }
    } else {
        for (int hidden = 2048; hidden <= 32768; hidden += 1024) {
            out.push_back(gpt_shape(interpolated_layers(hidden), hidden, seq_len, vocab));
        }
    }
    std::sort(out.begin(), out.end(), [](const ModelSpec& a, const ModelSpec& b) { return total_params(a) < total_params(b); });
    for (ModelSpec& m : out) {
        m.name = "GPT " + params_label(total_params(m)) + " (" + std::to_string(m.layers) + "x" + std::to_string(m.hidden) + ")";
    }
    return out;
}

Diagnostics check_request(const OptimalModelRequest& r)
{
    Diagnostics d;
    check_cluster_fields(r.gpu, r.num_gpus, r.gpus_per_node, d);
    if (!r.budget_days && !r.budget_usd) {
        d.push_back({"days", "a budget is required: days, dollars or both"});
    }
    if (r.budget_days && !(*r.budget_days > 0 && std::isfinite(*r.budget_days))) {
        d.push_back({"days", "must be a positive number of days"});
    }
    if (r.budget_usd && !(*r.budget_usd > 0 && std::isfinite(*r.budget_usd))) {
        d.push_back({"dollars", "must be a positive amount"});
    }
    if (r.price_per_gpu_hour && !(*r.price_per_gpu_hour > 0 && std::isfinite(*r.price_per_gpu_hour))) {
        d.push_back({"price", "must be a positive price per GPU-hour"});
    }
    if (!(r.tokens_per_param > 0 && r.tokens_per_param <= 1e4)) {
        d.push_back({"tokens_per_param", "must be a positive ratio up to 10,000"});
    }
    if (!(r.naive_utilization > 0 && r.naive_utilization <= 1)) {
        d.push_back({"naive_utilization", "must be in (0, 1] (a fraction of peak FLOP/s)"});
    }
    if (r.target_global_batch < 1 || r.target_global_batch > 1'000'000) {
        d.push_back({"global_batch", "must be a whole number of sequences from 1 to 1,000,000"});
    }
    if (r.seq_len < 1 || r.seq_len > (1 << 20)) {
        d.push_back({"seq_len", "must be a whole number from 1 to 1,048,576"});
    }
    if (r.vocab < 1 || r.vocab > (1 << 24)) {
        d.push_back({"vocab", "must be a whole number from 1 to 16,777,216"});
    }
    return d;
}

SearchSpace candidate_search_space(int tp, int pp, int num_gpus)
{
    SearchSpace s;
    s.tp = {tp};
    s.pp = {pp};
    s.num_gpus = {num_gpus};
    s.micro_batch = {1, 2, 4, 8};
    s.schedule = {Schedule::OneFOneB, Schedule::Interleaved};
    s.virtual_stages = {2};
    s.recompute = {Recompute::None, Recompute::Selective, Recompute::Full};
    s.sequence_parallel = tp > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false};
    s.zero_stage = {0, 1};
    return s;
}

int rounded_global_batch(int target, int dp)
{
    if (dp <= 0) {
        return std::max(1, target);
    }
    const long long k = std::max<long long>(1, std::llround(static_cast<double>(target) / dp));
    return static_cast<int>(std::min<long long>(k * dp, 1'000'000'000LL));
}

double training_model_flops(const ModelSpec& model, double tokens)
{
    return model_flops_per_iteration(model, 1) / model.seq_len * tokens;
}

OptimalCandidate evaluate_candidate(const ModelSpec& model, const OptimalModelRequest& request, const std::map<std::string, GpuProfile>& profiles,
                                    StudyControl& control)
{
    const GpuProfile& profile = profiles.at(request.gpu);
    const double price = request.price_per_gpu_hour.value_or(profile.price_usd_per_gpu_hour);
    const double peak = profile.peak_flops("bf16");
    OptimalCandidate c;
    c.model = model;
    c.params = total_params(model);
    c.tokens = request.tokens_per_param * c.params;
    c.model_flops = training_model_flops(model, c.tokens);
    c.naive_days = peak > 0 ? c.model_flops / (request.num_gpus * peak * request.naive_utilization) / kSecondsPerDay : INFINITY;
    c.naive_cost_usd = c.naive_days * 24 * request.num_gpus * price;
    c.naive_within_budget = within(request, c.naive_days, c.naive_cost_usd);

    const int node = request.gpus_per_node > 0 ? request.gpus_per_node : profile.links.gpus_per_node;
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> rejected{};
    std::array<Diagnostic, static_cast<std::size_t>(RejectReason::Count)> examples{};
    bool cancelled = false;
    for (int tp = 1; tp <= node && tp <= request.num_gpus; tp *= 2) {
        for (const int pp : divisors(model.layers)) {
            if (request.num_gpus % (tp * pp) != 0 || cancelled) {
                continue;
            }
            const int dp = request.num_gpus / (tp * pp);
            Scenario s;
            s.model = model;
            s.cluster.gpu = request.gpu;
            s.cluster.num_gpus = request.num_gpus;
            s.cluster.gpus_per_node = request.gpus_per_node;
            s.cluster.price_per_gpu_hour = price;
            s.training.global_batch = rounded_global_batch(request.target_global_batch, dp);
            s.training.tokens = c.tokens;
            s.training.attention = request.attention;
            s.search = candidate_search_space(tp, pp, request.num_gpus);
            ExploreOptions options;
            options.threads = request.threads;
            options.top_k = 1;
            const auto r = explore(s, profiles, options, control.sweep);
            if (!r.ok()) {
                c.note = r.first_error();
                continue;
            }
            cancelled = r->cancelled;
            c.plans_enumerated += r->total;
            c.plans_feasible += r->feasible;
            for (std::size_t i = 0; i < rejected.size(); ++i) {
                if (rejected[i] == 0 && r->rejected[i] > 0) {
                    examples[i] = r->example[i];
                }
                rejected[i] += r->rejected[i];
            }
            if (!r->fastest.empty() && (!c.has_plan || faster_row(r->fastest.front(), c.best))) {
                c.has_plan = true;
                c.best = r->fastest.front();
                c.global_batch = s.training.global_batch;
            }
        }
    }
    c.simulated = !cancelled;
    c.within_budget = c.simulated && c.has_plan && within(request, c.best.training_days, c.best.cost_usd);
    if (!c.has_plan && c.note.empty()) {
        c.note = main_rejection(rejected, examples);
    }
    return c;
}

Expected<OptimalModelResult> find_optimal_model(const OptimalModelRequest& request, const GpuProfile& profile, StudyControl& control)
{
    Diagnostics errors = check_request(request);
    if (!errors.empty()) {
        return errors;
    }
    if (profile.id != request.gpu) {
        return Diagnostic{"gpu",
                          "the profile given is \"" + json_fields::bounded(profile.id) + "\", not \"" + json_fields::bounded(request.gpu) + "\""};
    }
    if (profile.peak_flops("bf16") <= 0) {
        return Diagnostic{"gpu", "profile \"" + profile.id + "\" has no bf16 peak FLOP/s"};
    }
    const auto start = std::chrono::steady_clock::now();
    const std::map<std::string, GpuProfile> profiles{{request.gpu, profile}};
    OptimalModelResult result;
    result.request = request;
    result.peak_tflops_per_gpu = profile.peak_flops("bf16") / 1e12;
    result.price_per_gpu_hour = request.price_per_gpu_hour.value_or(profile.price_usd_per_gpu_hour);
    const auto family = model_family(request.family, request.seq_len, request.vocab);
    control.steps_total.store(family.size());
    control.steps_done.store(0);
    for (const ModelSpec& model : family) {
        if (control.cancelled()) {
            result.cancelled = true;
            break;
        }
        OptimalCandidate c = evaluate_candidate(model, request, profiles, control);
        result.plans_enumerated += c.plans_enumerated;
        result.cancelled = result.cancelled || !c.simulated;
        result.candidates.push_back(std::move(c));
        control.steps_done.fetch_add(1);
    }
    for (std::size_t i = 0; i < result.candidates.size(); ++i) {
        if (result.candidates[i].naive_within_budget) {
            result.naive_choice = i;
        }
        if (result.candidates[i].within_budget) {
            result.feasible_choice = i;
        }
    }
    result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

std::vector<BudgetPoint> budget_curve(const OptimalModelResult& result, const std::vector<double>& budgets_days)
{
    std::vector<BudgetPoint> out;
    for (const double budget : budgets_days) {
        BudgetPoint p;
        p.budget_days = budget;
        for (const auto& c : result.candidates) {
            if (c.naive_days <= budget) {
                p.naive_params = std::max(p.naive_params, c.params);
            }
            if (c.simulated && c.has_plan && c.best.training_days <= budget) {
                p.feasible_params = std::max(p.feasible_params, c.params);
            }
        }
        out.push_back(p);
    }
    return out;
}

nlohmann::json optimal_model_to_json(const OptimalModelResult& result)
{
    const OptimalModelRequest& r = result.request;
    nlohmann::json j;
    j["gpu"] = r.gpu;
    j["num_gpus"] = r.num_gpus;
    j["budget_days"] = r.budget_days ? nlohmann::json(*r.budget_days) : nlohmann::json();
    j["budget_usd"] = r.budget_usd ? nlohmann::json(*r.budget_usd) : nlohmann::json();
    j["tokens_per_param"] = r.tokens_per_param;
    j["naive_utilization"] = r.naive_utilization;
    j["target_global_batch"] = r.target_global_batch;
    j["seq_len"] = r.seq_len;
    j["vocab"] = r.vocab;
    j["family"] = to_string(r.family);
    j["attention"] = to_string(r.attention);
    j["peak_tflops_per_gpu"] = result.peak_tflops_per_gpu;
    j["price_per_gpu_hour"] = result.price_per_gpu_hour;
    j["cancelled"] = result.cancelled;
    j["elapsed_s"] = result.elapsed_s;
    j["plans_enumerated"] = result.plans_enumerated;
    j["candidates"] = nlohmann::json::array();
    for (const auto& c : result.candidates) {
        j["candidates"].push_back(candidate_to_json(c));
    }
    const auto choice = [&](const std::optional<std::size_t>& i) {
        if (!i) {
            return nlohmann::json();
        }
        const auto& c = result.candidates[*i];
        nlohmann::json k{{"index", *i}, {"name", c.model.name}, {"params", c.params}, {"tokens", c.tokens}};
        if (c.has_plan) {
            k["simulated_days"] = c.best.training_days;
            k["simulated_mfu"] = c.best.mfu;
        }
        return k;
    };
    j["naive_choice"] = choice(result.naive_choice);
    j["feasible_choice"] = choice(result.feasible_choice);
    if (result.naive_choice && result.feasible_choice) {
        const double naive = result.candidates[*result.naive_choice].params;
        const double feasible = result.candidates[*result.feasible_choice].params;
        if (feasible > 0) {
            j["naive_overestimate"] = naive / feasible - 1;
        }
    }
    return j;
}

} // namespace vtrain
