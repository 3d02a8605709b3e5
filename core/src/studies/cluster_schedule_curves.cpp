// SPDX-License-Identifier: MIT
// Throughput curves: the fastest plan of a model at every GPU count a job may be given.
#include "vtrain/cluster_schedule_curves.h"

#include <algorithm>
#include <sstream>

#include "vtrain/explorer.h"

namespace vtrain {
namespace {

// Keeps the faster row per key; on a tie the first (lower enumeration index) stays.
template <typename Key>
void keep_fastest(std::map<Key, PlanRow>& rows, const Key& key, const PlanRow& row)
{
    auto it = rows.find(key);
    if (it == rows.end()) {
        rows.emplace(key, row);
    } else if (row.tokens_per_s > it->second.tokens_per_s) {
        it->second = row;
    }
}

} // namespace

std::vector<int> allocation_counts(int cluster_gpus, const std::vector<int>& extra)
{
    std::vector<int> counts;
    for (long long g = 1; g <= cluster_gpus; g *= 2) {
        counts.push_back(static_cast<int>(g));
    }
    for (const int g : extra) {
        if (g >= 1 && g <= cluster_gpus) {
            counts.push_back(g);
        }
    }
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    return counts;
}

SearchSpace curve_search_space(const ModelSpec& model, const std::vector<int>& counts)
{
    SearchSpace s;
    s.num_gpus = counts;
    s.tp = {1, 2, 4, 8};
    for (int pp = 1; pp <= std::min(16, model.layers); ++pp) {
        if (model.layers % pp == 0) {
            s.pp.push_back(pp);
        }
    }
    s.micro_batch = {1, 2, 4, 8};
    s.schedule = {Schedule::OneFOneB};
    s.recompute = {Recompute::None, Recompute::Selective, Recompute::Full};
    s.zero_stage = {0, 1};
    // sequence_parallel left empty: false, and true when tp > 1
    return s;
}

std::string curve_key(const ModelSpec& m, int global_batch)
{
    std::ostringstream key;
    key << m.layers << 'x' << m.hidden << " h" << m.heads << " kv" << m.effective_kv_heads() << " f" << m.effective_ffn_hidden() << " s" << m.seq_len
        << " v" << m.vocab << ' ' << to_string(m.activation) << (m.tied_embeddings ? " tied" : " untied") << " gb" << global_batch;
    return key.str();
}

Expected<ThroughputCurve> throughput_curve(const CurveRequest& request, const std::map<std::string, GpuProfile>& profiles, StudyControl& control,
                                           bool& cancelled, std::uint64_t& plans_enumerated)
{
    cancelled = false;
    if (request.counts.empty()) {
        return Diagnostic{"gpus", "no GPU counts to build a throughput curve on"};
    }
    Scenario s;
    s.model = request.model;
    s.cluster.gpu = request.gpu;
    s.cluster.num_gpus = request.counts.back();
    s.cluster.gpus_per_node = request.gpus_per_node;
    s.training.global_batch = request.global_batch;
    s.training.tokens = 1e9; // throughput does not depend on it; the explorer needs some
    s.search = curve_search_space(request.model, request.counts);

    // Fastest row per GPU count, and per (GPU count, tp x pp). Rows arrive in enumeration order.
    std::map<int, PlanRow> best;
    std::map<std::pair<int, int>, PlanRow> by_degree;
    ExploreOptions options;
    options.threads = request.threads;
    options.top_k = 0;
    const auto result = explore(s, profiles, options, control.sweep, [&](const PlanRow& row) {
        keep_fastest(best, row.num_gpus, row);
        keep_fastest(by_degree, std::make_pair(row.num_gpus, row.plan.tp * row.plan.pp), row);
    });
    if (!result.ok()) {
        return result.errors();
    }
    cancelled = result->cancelled;
    plans_enumerated += result->total;

    const auto point = [](const PlanRow& r) { return CurvePoint{r.num_gpus, r.plan, r.tokens_per_s, r.mfu}; };
    ThroughputCurve curve;
    for (const auto& [gpus, row] : best) {
        curve.best.push_back(point(row));
    }
    if (!curve.best.empty()) {
        const int g0 = curve.best.front().gpus;
        int degree = 0;
        for (const auto& [key, row] : by_degree) {
            if (key.first == g0) {
                degree = key.second; // the map is ordered: the first at g0 is the smallest degree
                break;
            }
        }
        for (const auto& [key, row] : by_degree) {
            if (key.second == degree) {
                curve.dp_scaling.push_back(point(row));
            }
        }
    }
    return curve;
}

std::string cache_key(const CurveRequest& r)
{
    std::string key = curve_key(r.model, r.global_batch) + " on " + r.gpu + " node" + std::to_string(r.gpus_per_node) + " @";
    for (const int g : r.counts) {
        key += ' ';
        key += std::to_string(g);
    }
    return key;
}

Expected<const ThroughputCurve*> cached_throughput_curve(const CurveRequest& request, const std::map<std::string, GpuProfile>& profiles,
                                                         StudyControl& control, CurveCache& cache, std::uint64_t& plans_enumerated)
{
    const std::string key = cache_key(request);
    if (const auto it = cache.find(key); it != cache.end()) {
        return &it->second;
    }
    bool cancelled = false;
    auto curve = throughput_curve(request, profiles, control, cancelled, plans_enumerated);
    if (!curve.ok()) {
        return curve.errors();
    }
    if (cancelled) {
        return static_cast<const ThroughputCurve*>(nullptr);
    }
    return &cache.emplace(key, std::move(curve).value()).first->second;
}

std::vector<ClusterJob> generate_simulated_workload(WorkloadOptions options, const GpuProfile& profile, int gpus_per_node, int threads,
                                                    StudyControl& control, CurveCache& cache, std::uint64_t& plans_enumerated)
{
    const std::map<std::string, GpuProfile> profiles{{profile.id, profile}};
    options.tokens_per_s = [&](const ModelSpec& model, int global_batch, int gpus) {
        const CurveRequest request{model, global_batch, profile.id, gpus_per_node, allocation_counts(options.cluster_gpus, {gpus}), threads};
        const auto curve = cached_throughput_curve(request, profiles, control, cache, plans_enumerated);
        const CurvePoint* point = curve.ok() && curve.value() != nullptr ? curve.value()->at(gpus) : nullptr;
        return point != nullptr ? point->tokens_per_s : 0.0;
    };
    return generate_workload(options);
}

} // namespace vtrain
