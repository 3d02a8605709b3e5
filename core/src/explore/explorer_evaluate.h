// SPDX-License-Identifier: MIT
#pragma once
// Internal to the explorer: evaluating one group of plans (rejection rules, memory check, lower bounds,
// simulation) with the caches every plan of a sweep shares.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/tbb/concurrent_unordered_map.h>

#include "explore/plan_bounds.h"
#include "iteration/fast_simulation.h"
#include "iteration/iteration_metrics.h"
#include "iteration/task_graph_simulation.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_space.h"
#include "vtrain/physical_floors.h"

namespace vtrain {

struct ChunkResult {
    std::uint64_t evaluated = 0;
    std::uint64_t feasible = 0;
    std::uint64_t bounded = 0;
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> rejected{};
    std::array<std::optional<Diagnostic>, static_cast<std::size_t>(RejectReason::Count)> example{};
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> example_index{};
    std::vector<PlanRow> rows; // feasible rows in enumeration order
};

// What the layer costs depend on: the GPU and every plan field plan_layer_costs() may read (not pp, dp,
// the schedule or ZeRO), and the precision.
struct CostKey {
    int gpu = 0, tp = 1, cp = 1, ep = 1, etp = 0, micro_batch = 1;
    int recompute = 0, precision = 0;
    bool sequence_parallel = false, tp_overlap = false, moe_overlap = false;
    int rank_order = 0; // index into PlanSpace::rank_order: it places the cp and ep groups
    bool operator==(const CostKey&) const = default;
};
struct CostKeyHash {
    std::size_t operator()(const CostKey& k) const
    {
        std::size_t h = 1469598103934665603ull;
        for (const int v : {k.gpu, k.tp, k.cp, k.ep, k.etp, k.micro_batch, k.recompute, k.precision, int(k.sequence_parallel), int(k.tp_overlap),
                            int(k.moe_overlap), k.rank_order}) {
            h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ull;
        }
        return h;
    }
};

// A plan's layer costs with its bound terms.
struct CostEntry {
    LayerCosts costs;
    BoundTerms bound;
};

CostEntry make_cost_entry(const ModelSpec& model, const TrainingSpec& training, const ResolvedCluster& cluster, const Plan& plan);

// Scratch space of one thread.
struct ThreadState {
    SimulationWorkspace workspace;
    FastSimScratch fast;
    std::unordered_map<CostKey, std::unique_ptr<CostEntry>, CostKeyHash> costs; // bounded: cleared when large
    std::vector<const BoundTerms*> slots;                                       // the current group's bound terms per cost key (see key_slots)
    std::vector<StageBreakdown> stages;                                         // the iteration model's per-stage busy parts
    std::vector<StageBreakdown> no_stages;                                      // always empty: a bound has a time only
    PipelineLayout floor_layout;                                                // the row's layout for its physical floors
};

// What a plan must beat to matter: the current front and the k-th row of each top-k list (copies taken
// between waves of the sweep, so every thread sees the same ones whatever the timing).
struct PruneThresholds {
    bool active = false;
    std::size_t top_k = 0;
    std::vector<PlanRow> front;                                // by increasing time
    std::optional<PlanRow> kth_fastest, kth_cheapest, kth_mfu; // set once the list holds k rows
};

class PlanEvaluator {
public:
    PlanEvaluator(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space, const ExploreOptions& options);

    // Rejects, bounds out or simulates every plan of the group into `out`; false when cancelled part-way.
    // `count_progress` false: the plans are not counted in control.done (the seed's: the sweep counts them
    // when it meets them), though control.cancel still stops the group.
    bool evaluate_group(const PlanGroup& group, ThreadState& state, ChunkResult& out, RunControl& control, const PruneThresholds& prune,
                        bool count_progress = true) const;

    // After seeding: none when the group's rules reject it or its bound rules it out as a whole; else
    // how many of its plans pass their own bounds (all of them when it has no bound).
    std::optional<std::uint64_t> plans_past_bound(const PlanGroup& group, ThreadState& state, const PruneThresholds& prune) const;

    // The best any plan of a legal group can do (least days and cost, most MFU, its first index), or none
    // when the group's rules reject it.
    std::optional<PlanRow> group_best_case(const PlanGroup& group, ThreadState& state) const;

private:
    struct Gpu {
        const GpuProfile* profile = nullptr;
        ResolvedCluster cluster;
        int gpus_per_node = 8;
        std::vector<GpuTerms> terms;               // per precision of the space: peak, price, usable memory, band
        std::vector<FloorHardware> floor_hardware; // per precision: the datasheet figures of the physical floors
        std::vector<double> best_published_mfu;    // per precision: plausibility.h's table entry, < 0 for none
    };

    // A group's cost keys, numbered by its variant digits less the schedule and the ZeRO stage: variant
    // i has slot ((i / low / zero) x low + i % low) mod slots.
    struct KeySlots {
        std::uint64_t low = 1;   // MoE overlap x TP overlap x precision
        std::uint64_t zero = 1;  // ZeRO stages
        std::uint64_t slots = 1; // recompute x sequence parallelism x low
    };
    KeySlots key_slots(const PlanGroup& group) const;

    // A row's figures from its iteration time (and its stages' busy parts, empty for a bound): iteration_metrics().
    void fill_metrics(PlanRow& row, double iteration_s, const Gpu& gpu, int precision_index, std::vector<StageBreakdown>& stages) const;
    // A simulated row's binding physical floor and its plausibility flags (closed forms, no simulation).
    void fill_floors(PlanRow& row, const Gpu& gpu, int precision_index, ThreadState& state) const;
    const CostEntry* costs_for(const CostKey& key, const Plan& plan, ThreadState& state) const;
    // The key's bound terms from the table every thread shares (computed on first use; a race computes
    // the same numbers twice, harmlessly).
    const BoundTerms& bound_terms(const CostKey& key, const Plan& plan) const;
    bool cannot_matter(const PlanRow& best_case, const PruneThresholds& prune) const;

    std::optional<PlanRejection> check_group(const PlanGroup& group) const;
    // `index`: the first rejected plan's enumeration index.
    void reject(ChunkResult& out, const PlanRejection& rejection, std::uint64_t count, std::uint64_t index) const;

    const Scenario& m_scenario;
    const PlanSpace& m_space;
    const ExploreOptions& m_options;
    std::vector<Gpu> m_gpus;
    std::vector<TrainingSpec> m_training;   // per precision of the space
    std::vector<FloorModel> m_floor_models; // per precision: the model's per-layer floor sums
    MetricsBasis m_basis;
    mutable tbb::concurrent_unordered_map<CostKey, BoundTerms, CostKeyHash> m_bounds; // grows to the keys met (tens of bytes each)
};

} // namespace vtrain
