// SPDX-License-Identifier: MIT
#pragma once
// Internal to the explorer: evaluating one group of plans (rejection rules, memory check, simulation)
// with the caches every plan of a sweep shares.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/explorer.h"
#include "vtrain/explorer_fast_sim.h"
#include "vtrain/explorer_space.h"
#include "vtrain/simulator.h"

namespace vtrain {

struct ChunkResult {
    std::uint64_t evaluated = 0;
    std::uint64_t feasible = 0;
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> rejected{};
    std::array<std::optional<Diagnostic>, static_cast<std::size_t>(RejectReason::Count)> example{};
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> example_index{};
    std::vector<PlanRow> rows; // feasible rows in enumeration order
};

// Scratch space of one thread.
struct ThreadState {
    SimulationWorkspace workspace;
    FastSimScratch fast;
};

class PlanEvaluator {
public:
    PlanEvaluator(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                  const ExploreOptions& options);

    // Computes the layer costs every plan will look up (call inside the sweep's task arena).
    void prepare();

    // Rejects or simulates every plan of the group into `out`; false when cancelled part-way.
    bool evaluate_group(const PlanGroup& group, ThreadState& state, ChunkResult& out, RunControl& control) const;

private:
    struct Gpu {
        const GpuProfile* profile = nullptr;
        ResolvedCluster cluster;
        int gpus_per_node = 8;
        double usable_gib = 0; // capacity less the profile's reserve
        double peak_flops = 0;
        double band_low = 1;  // the profile's uncertainty band, as multipliers on an iteration time
        double band_high = 1;
    };

    void fill_metrics(PlanRow& row, double iteration_s, const Gpu& gpu) const;

    std::size_t cost_slot(int gpu, int tp_index, int micro_batch_index, bool sequence_parallel, Recompute recompute) const;
    std::optional<PlanRejection> check_group(const PlanGroup& group) const;
    // `index`: the first rejected plan's enumeration index.
    void reject(ChunkResult& out, const PlanRejection& rejection, std::uint64_t count, std::uint64_t index) const;

    const Scenario& m_scenario;
    const PlanSpace& m_space;
    const ExploreOptions& m_options;
    std::vector<Gpu> m_gpus;
    std::vector<LayerCosts> m_costs; // by cost_slot(); empty operator lists (the sweep does not report them)
    std::vector<char> m_has_costs;
    double m_tokens_per_iteration = 0;
    double m_iterations = 0;
    double m_model_flops = 0;
};

} // namespace vtrain
