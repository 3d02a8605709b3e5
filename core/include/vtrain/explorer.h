// SPDX-License-Identifier: MIT
#pragma once
// The design-space explorer: enumerates every plan of a scenario's "search" block (plans x GPU counts x
// GPU types), rejects each illegal one with a reason, simulates the rest in parallel (oneTBB) and keeps
// the (training time, cost) Pareto front, the top plans per objective and per-reason counts. Memory
// stays bounded: rows stream to a sink instead of being kept, unless asked for.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/physical_floors.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario.h"
#include "vtrain/simulator.h"

namespace vtrain {

// Progress and cancellation shared between a sweep and whoever watches it (CLI progress bar, GUI).
struct RunControl {
    std::atomic<bool> cancel{false};
    std::atomic<std::uint64_t> done{0};  // plans evaluated or rejected so far
    std::atomic<std::uint64_t> total{0}; // plans in the space (set before evaluation starts)
};

// Plan groups [begin, end) of a PlanSpace.
struct GroupRange {
    std::size_t begin = 0;
    std::size_t end = 0;
};

struct PlanRow; // below

// A plan group's remaining work as a shard estimates it once the seeds are exchanged: its plans whose
// own bounds still pass the exchanged rows, each a simulation (ExploreOptions::rebalance).
struct GroupWork {
    std::uint64_t group = 0;
    double cost = 0; // in explorer_shard.h's units
};

struct ExploreOptions {
    int threads = 0;                    // 0 = all cores
    std::size_t top_k = 20;             // best plans kept per objective
    bool allow_tp_across_nodes = false; // framework default: tensor parallelism stays inside a node
    bool keep_all_rows = false;         // also return every feasible row (the GUI's table; small sweeps)
    bool exact_simulation = false;      // run simulate_checked()'s task graph for every plan instead of the
                                        // explorer's fast path (same results; tst_explorer_fast_sim checks it)
    // Skip plans whose lower bounds (time, cost, MFU) prove they cannot reach the front or a top-k list
    // (see explorer_evaluate.cpp): same front and top-k lists, fewer simulations. Ignored with
    // keep_all_rows; the sink then receives the simulated rows only. Off by default here (a sink or a plot
    // of every feasible plan needs them all); `vtrain explore` turns it on.
    bool prune = false;
    // Evaluate only these plan groups (ranges of explorer_space.h's groups, increasing and disjoint):
    // one shard of a sweep split across processes (explorer_shard.h). Empty: every group. The result
    // then counts the shard's plans only (total too).
    std::vector<GroupRange> group_ranges;
    // With pruning: called once per sweep, after it has simulated its most promising groups (the seed),
    // with those rows (its seed's front and top-k rows); returns rows of the same space found elsewhere,
    // to bound plans against as well (thresholds only: they are counted where they are swept). A sweep
    // split into shards passes each shard's seed to all (explorer_shard.h), so that every shard prunes
    // against the best rows of the whole space, not only of its share; the merge stays exact because
    // every such row is a real plan. Called from the thread that called explore(), also when the shard
    // is empty or cancelled (a collective exchange must not wait for a missing shard).
    std::function<std::vector<PlanRow>(const std::vector<PlanRow>& seed_rows)> share_seed;
    // With share_seed: called once right after it, with this shard's groups that the exchanged rows do
    // not bound out as a whole (each with its remaining work) and the work of the rest of its groups
    // (`settled`, which stays with it); returns the groups this shard sweeps from then on. The shards'
    // answers must partition their groups (explorer_shard.h's rebalance_groups() computes them alike in
    // every shard), so that the work near the front, known only now, is spread over every shard.
    std::function<std::vector<GroupRange>(const std::vector<GroupWork>& open, double settled)> rebalance;
    // Work stealing (explorer_shard.h's ExploreWork and WorkQueue), with pruning: once its seed is done
    // (and shared), the sweep takes its groups from this instead of group_ranges, one item at a time
    // between waves -- its own items first, then items taken from the shard with the most work left --
    // until it returns nothing (no work left anywhere). group_ranges still name the shard's own groups,
    // which its seed draws from. The result's total counts the plans of the items it took. Called from
    // the thread that called explore(). Which shard sweeps a group depends on the timing; the merged
    // front and top-k lists do not (every row is a real plan, counted where it is swept).
    std::function<std::vector<GroupRange>()> next_work;
};

// One evaluated plan, as the table, the plot and the CSV show it.
struct PlanRow {
    std::uint64_t index = 0; // position in the enumeration (stable across thread counts)
    Plan plan;
    Precision precision = Precision::Bf16; // the training precision it runs at (a search axis)
    std::string gpu;
    int num_gpus = 0;
    double iteration_time_s = 0;
    double iteration_time_low_s = 0;  // the profile's uncertainty band around iteration_time_s (see
    double iteration_time_high_s = 0; // uncertainty.h); both equal iteration_time_s when it has none
    double tokens_per_s = 0;
    double mfu = 0;
    double bubble_fraction = 0;
    double peak_memory_gib = 0;
    double training_days = 0;
    double cost_usd = 0;
    bool on_front = false;
    bool band_calibrated = false; // the band is the profile's calibrated one, not the uncalibrated default
    // The plan's binding physical floor (physical_floors.h, closed forms per plan) and its plausibility
    // flags (plausibility.h PlausibilityFlag bits: MFU above the best published run, far above the floor,
    // below the floor).
    FloorResource floor_resource = FloorResource::Compute;
    std::uint8_t plausibility = 0;
    double floor_s = 0;
};

struct ExploreResult {
    std::uint64_t total = 0;     // plans enumerated
    std::uint64_t evaluated = 0; // feasible + bounded + every rejected: equals total unless cancelled
    std::uint64_t feasible = 0;  // simulated and fitting in memory
    std::uint64_t bounded = 0;   // skipped: their lower bounds cannot reach the front or a top-k list
                                 // (checked before the plan's own rules and the memory model, after
                                 // the rules of its group; so rejected counts are lower with pruning)
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> rejected{};
    std::array<Diagnostic, static_cast<std::size_t>(RejectReason::Count)> example{};          // one message per reason
    std::array<std::uint64_t, static_cast<std::size_t>(RejectReason::Count)> example_index{}; // its plan: the lowest index
    std::vector<PlanRow> front;    // Pareto front of (training_days, cost_usd), by increasing time
    std::vector<PlanRow> fastest;  // top_k by training time
    std::vector<PlanRow> cheapest; // top_k by cost
    std::vector<PlanRow> best_mfu; // top_k by MFU
    std::vector<PlanRow> rows;     // every feasible row, only with keep_all_rows (enumeration order)
    bool cancelled = false;
    double elapsed_s = 0;
    int threads = 0; // worker threads the sweep ran on
};

// Receives feasible rows in enumeration order (so a CSV is identical for any thread count), one call at
// a time, from one of the sweep's worker threads (not necessarily the caller's). A row's on_front is
// false there: the front is only known at the end (ExploreResult::front has the indices).
using RowSink = std::function<void(const PlanRow&)>;

// `profiles` maps GPU id to its profile and must hold every GPU the search names. The plan space and its
// defaults are described in explorer_space.h. Blocks until the sweep ends or control.cancel is set; a
// cancelled result holds what was evaluated (cancelled = true, evaluated < total, counts consistent).
Expected<ExploreResult> explore(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                RunControl& control, const RowSink& sink = {});

// Exact Pareto front (minimise both) of (training_days, cost_usd) in O(n log n); ties keep the lower index.
std::vector<PlanRow> pareto_front(std::vector<PlanRow> rows);

} // namespace vtrain
