// SPDX-License-Identifier: MIT
#pragma once
// A sweep split across processes (MPI ranks, machines): the plan space cut into blocks of about equal
// estimated work, dealt round-robin to the shards, each shard evaluated with explore() on its own
// (ExploreOptions::group_ranges), and the partial results merged into exactly what one process
// computes -- same counts, same example per reason, same Pareto front, same top-k lists in the same
// order. Plain values only: how the parts travel between processes is the caller's business
// (explorer_wire.h encodes them).
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/explorer.h"
#include "vtrain/explorer_space.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

// Blocks per shard: several, dealt round-robin, so that work the estimate misses (how many plans of a
// region fit in memory, and so get simulated) spreads over every shard instead of landing on one.
constexpr int kBlocksPerShard = 16;

// Whole plan groups, so each group's shared work (rules, memory) stays in one process.
struct ShardBlock {
    GroupRange groups;
    std::uint64_t plan_begin = 0; // the groups' enumeration indices [plan_begin, plan_end)
    std::uint64_t plan_end = 0;
    double estimated_cost = 0; // in the units of estimate_group_costs()
    int shard = 0;             // who evaluates it
};

struct ExploreSplit {
    int shards = 1;
    std::vector<ShardBlock> blocks; // every non-empty block, in enumeration order

    std::vector<GroupRange> ranges(int shard) const; // its blocks' groups, in enumeration order
    std::uint64_t plans(int shard) const;
    double estimated_cost(int shard) const;
};

// Estimated evaluation work of each group, in relative units. Plans differ widely in cost: a group the
// structural rules reject costs one check for all its variants; every other plan a memory model pass
// per pipeline stage, and, when it fits, a simulation of each stage's 2 x micro-batches x virtual
// stages operations -- counted for every plan here, as fitting is not known before the memory model.
std::vector<double> estimate_group_costs(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                                         bool allow_tp_across_nodes);

// Cuts the groups into shards x blocks_per_shard contiguous blocks of about equal cost (each cut at
// the group nearest to an equal share; a block may be empty and is then left out) and deals block i
// to shard i % shards. Deterministic: every process computes the same split.
ExploreSplit split_plan_space(const PlanSpace& space, const std::vector<double>& group_costs, int shards, int blocks_per_shard = kBlocksPerShard);

// With pruning, most of a sweep's work is the bound of each legal group and, once per cost key (GPU type,
// tp, cp, ep, etp, micro-batch and the variant flags the layer costs read), the layer costs the bounds
// need; which plans are simulated depends on what each shard has found, so it is not estimated. The
// estimate per group, in estimate_group_costs()'s units: 1 for a group the structural rules reject,
// else its bound plus a pass over its plans' bounds.
std::vector<double> estimate_pruned_group_costs(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                                                bool allow_tp_across_nodes);

// The split for a pruned sweep: the groups that share cost keys (same GPU type, tp, cp, ep, etp and
// micro-batch, every GPU count and pp) go to one shard, so that no two shards compute the same layer
// costs; these units, each costed as its groups plus its keys' layer costs, are dealt costliest first
// to the least loaded shard. Blocks are the runs of consecutive groups of one shard (many, small).
// Deterministic: every process computes the same split.
ExploreSplit split_by_cost_keys(const PlanSpace& space, const std::vector<double>& group_costs, int shards);

// ExploreOptions::rebalance for every shard at once: `open[s]` and `settled[s]` are what shard s reported
// (its open groups with their work, the work of the rest). The open groups, costliest first, go to the
// shard whose load stays least, a shard other than their own paying for the layer costs it must compute
// again; the rest stay. Returns each shard's groups from then on: a partition of split's groups, in
// enumeration order. Deterministic, so every shard computes the same answer from the same reports.
std::vector<std::vector<GroupRange>> rebalance_groups(const ExploreSplit& split, const std::vector<std::vector<GroupWork>>& open,
                                                      const std::vector<double>& settled);

// Dynamic balance for a pruned sweep. Which plans get simulated -- most of the work near the front --
// is known only as the shards' thresholds form, so no split made before the sweep balances it: the
// shards take work as they go instead. The items are split_by_cost_keys()'s cost-key units (dealt the
// same way: each shard owns its units and computes their layer costs), each cut into one item per GPU
// count so that a heavy unit is shared by the shards near the end. A shard sweeps its own items, its
// costliest units first; one that has run out takes the last item of the shard with the most estimated
// work left (cheap units, or the tail of one, so it seldom computes layer costs its owner also computes).
struct WorkItem {
    std::vector<GroupRange> groups; // in enumeration order
    double estimated_cost = 0;      // estimate_pruned_group_costs()'s units, with the unit's keys on its first item
};
struct ExploreWork {
    int shards = 1;
    std::vector<WorkItem> items;
    std::vector<std::vector<std::size_t>> queues;        // per shard: its items in the order it sweeps them
    std::vector<GroupRange> own_groups(int shard) const; // its items' groups, in enumeration order (for its seed)
};
ExploreWork split_into_work_items(const PlanSpace& space, const std::vector<double>& group_costs, int shards);
Expected<ExploreWork> plan_explore_work(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                        int shards);

// The queues of an ExploreWork as the shards drain them (thread-safe): one object for the shards of one
// process, or at MPI rank 0 for every rank.
class WorkQueue {
public:
    explicit WorkQueue(const ExploreWork& work);
    // The next item for `shard` (an index into work.items): the front of its own queue, else the back of
    // the queue with the most estimated work left; none once every queue is empty.
    std::optional<std::size_t> next(int shard);
    std::uint64_t stolen() const; // items a shard took from another's queue

private:
    const ExploreWork& m_work;
    std::mutex m_mutex;
    std::vector<std::size_t> m_front, m_back; // per shard: its queue's remaining items are [front, back)
    std::vector<double> m_left;               // per shard: their estimated work
    std::uint64_t m_stolen = 0;
};

// The options that make explore() sweep `shard`'s items of `work`, taking further items from `next`
// (ExploreOptions::next_work: WorkQueue::next() in one process, a request to MPI rank 0 across ranks).
ExploreOptions options_for_shard(ExploreOptions options, const ExploreWork& work, int shard, std::function<std::optional<std::size_t>()> next);

// Both steps from a scenario (split_by_cost_keys() when options.prune and not keep_all_rows, else
// split_plan_space()); errors as make_plan_space() reports them, or a shard count below 1.
Expected<ExploreSplit> plan_explore_split(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                          int shards, int blocks_per_shard = kBlocksPerShard);

// The options that make explore() evaluate only `shard`.
ExploreOptions options_for_shard(ExploreOptions options, const ExploreSplit& split, int shard);

// Merges the shards' results (in any order) into the single-process result for `top_k`: counts add
// up, each reason keeps the example with the lowest enumeration index (as the sweep itself does),
// fronts and top-k lists are re-ranked with the sweep's own orders (ties by index), rows are put in
// enumeration order. cancelled when any part was; threads add up; elapsed_s is the slowest part's.
ExploreResult merge_explore_results(const std::vector<ExploreResult>& parts, std::size_t top_k);

} // namespace vtrain
