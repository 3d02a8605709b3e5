// SPDX-License-Identifier: MIT
#include "vtrain/explorer_shard.h"

#include <algorithm>
#include <cmath>

#include <oneapi/tbb/parallel_for.h>

#include "explore/explorer_order.h"
#include "explore/explorer_shard_work.h"
#include "model/model_math.h"
#include "util/parallel.h"
#include "vtrain/plan_check.h"

namespace vtrain {
namespace {

// Relative costs, in units of one stage of the memory model (measured on the explorer's fast path).
constexpr double kRejectedGroup = 1.0; // the structural rules, once for the whole group
constexpr double kPerPlan = 4.0;       // building the plan, its own rules, the row
constexpr double kPerEvent = 10.0;     // one operation of the fast simulation (events cost more than memory stages)
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// With pruning, in the same units: the layer costs of one cost key (computed once per sweep), a legal
// group's bound, and one plan's bound when its group is not bounded out as a whole.
constexpr double kPrunedKey = 20.0;
constexpr double kPrunedGroup = 2.0;
constexpr double kPrunedPlan = 0.05;

} // namespace

std::vector<GroupRange> ExploreSplit::ranges(int shard) const
{
    std::vector<GroupRange> out;
    for (const ShardBlock& b : blocks) {
        if (b.shard != shard) {
            continue;
        }
        if (!out.empty() && out.back().end == b.groups.begin) {
            out.back().end = b.groups.end; // adjacent blocks (one shard, or empty ones between)
        } else {
            out.push_back(b.groups);
        }
    }
    return out;
}

std::uint64_t ExploreSplit::plans(int shard) const
{
    std::uint64_t n = 0;
    for (const ShardBlock& b : blocks) {
        n += b.shard == shard ? b.plan_end - b.plan_begin : 0;
    }
    return n;
}

double ExploreSplit::estimated_cost(int shard) const
{
    double c = 0;
    for (const ShardBlock& b : blocks) {
        c += b.shard == shard ? b.estimated_cost : 0;
    }
    return c;
}

std::vector<double> estimate_group_costs(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                                         bool allow_tp_across_nodes)
{
    // Per pp: the sum of v over its schedule choices (1 for gpipe and 1f1b), so a group's cost is O(1).
    std::vector<double> chunk_sums(space.pp.size(), 0.0);
    for (std::size_t pi = 0; pi < space.pp.size(); ++pi) {
        const std::vector<int>& vs = space.virtual_stage_choices(static_cast<int>(pi));
        for (const Schedule s : space.schedules) {
            if (s != Schedule::Interleaved) {
                chunk_sums[pi] += 1.0;
            } else {
                for (const int v : vs) {
                    chunk_sums[pi] += v;
                }
            }
        }
    }
    std::vector<int> node_size(space.gpus.size(), 1);
    std::vector<double> usable_bytes(space.gpus.size(), 0.0);
    for (std::size_t i = 0; i < space.gpus.size(); ++i) {
        const auto it = profiles.find(space.gpus[i]);
        node_size[i] = it == profiles.end() ? 1 : gpus_per_node_for(scenario, it->second);
        usable_bytes[i] = it == profiles.end() ? 0.0 : (it->second.memory_gib - it->second.memory_reserve_gib) * kGiB;
    }
    const double params = total_params(scenario.model);
    std::vector<double> costs(space.groups(), 0.0);
    parallel::parallel_for(std::uint64_t{0}, space.groups(), [&](std::uint64_t g) {
        const PlanGroup group = space.group(g);
        const Plan plan = group.plan(PlanVariant{});
        const bool rejected = plan.dp == 0 || check_plan(scenario.model, scenario.training, plan, group.num_gpus).has_value() ||
                              (!allow_tp_across_nodes && group.tp > node_size[static_cast<std::size_t>(group.gpu)]);
        if (rejected) {
            costs[g] = kRejectedGroup;
            return;
        }
        // Per variant: (1 + v) memory-model stages per pipeline stage, v model chunks to simulate.
        const double per_choice = static_cast<double>(group.size) / std::max(1, space.schedule_choices(group.pp_index));
        const double chunks = per_choice * chunk_sums[static_cast<std::size_t>(group.pp_index)];
        costs[g] = kPerPlan * static_cast<double>(group.size) + group.pp * (static_cast<double>(group.size) + chunks);
        // Most of a large model's small tp x pp groups cannot hold even the weights, gradients and
        // (sharded) optimizer states: none of their plans is simulated.
        const double static_bytes = params / (static_cast<double>(group.tp) * group.pp) * (4.0 + 12.0 / plan.dp);
        if (static_bytes <= usable_bytes[static_cast<std::size_t>(group.gpu)]) {
            const double micro_batches = static_cast<double>(scenario.training.global_batch) / (static_cast<double>(plan.dp) * group.micro_batch);
            costs[g] += kPerEvent * 2.0 * group.pp * micro_batches * chunks;
        }
    });
    return costs;
}

ExploreSplit split_plan_space(const PlanSpace& space, const std::vector<double>& group_costs, int shards, int blocks_per_shard)
{
    ExploreSplit out;
    out.shards = std::max(shards, 1);
    const std::size_t groups = std::min(space.groups(), group_costs.size());
    std::vector<double> prefix(groups + 1, 0.0); // sequential sums: identical in every process
    for (std::size_t g = 0; g < groups; ++g) {
        prefix[g + 1] = prefix[g] + group_costs[g];
    }
    const double total = prefix[groups];
    const std::size_t blocks = static_cast<std::size_t>(out.shards) * static_cast<std::size_t>(std::max(blocks_per_shard, 1));
    std::size_t begin = 0;
    for (std::size_t i = 0; i < blocks; ++i) {
        std::size_t end = groups;
        if (i + 1 < blocks) {
            // The cut nearest to an equal share of the total, never before this block's start.
            const double target = total * static_cast<double>(i + 1) / static_cast<double>(blocks);
            end = static_cast<std::size_t>(std::lower_bound(prefix.begin() + static_cast<std::ptrdiff_t>(begin), prefix.end(), target) -
                                           prefix.begin());
            end = std::min(end, groups);
            if (end > begin && target - prefix[end - 1] < prefix[end] - target) {
                --end;
            }
        }
        if (end > begin) {
            ShardBlock b;
            b.groups = {begin, end};
            b.plan_begin = space.group_first(begin);
            b.plan_end = space.group_first(end);
            b.estimated_cost = prefix[end] - prefix[begin];
            b.shard = static_cast<int>(i % static_cast<std::size_t>(out.shards));
            out.blocks.push_back(b);
        }
        begin = end;
    }
    return out;
}

std::vector<double> estimate_pruned_group_costs(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const PlanSpace& space,
                                                bool allow_tp_across_nodes)
{
    std::vector<int> node_size(space.gpus.size(), 1);
    for (std::size_t i = 0; i < space.gpus.size(); ++i) {
        const auto it = profiles.find(space.gpus[i]);
        node_size[i] = it == profiles.end() ? 1 : gpus_per_node_for(scenario, it->second);
    }
    std::vector<double> costs(space.groups(), 0.0);
    parallel::parallel_for(std::uint64_t{0}, space.groups(), [&](std::uint64_t g) {
        const PlanGroup group = space.group(g);
        const Plan plan = group.plan(PlanVariant{});
        const bool rejected = group.size == 0 || plan.dp == 0 || check_plan(scenario.model, scenario.training, plan, group.num_gpus).has_value() ||
                              (!allow_tp_across_nodes && group.tp > node_size[static_cast<std::size_t>(group.gpu)]);
        // A legal group costs its bound (one look-up per cost key) and a pass over its plans' bounds
        // when it is not bounded out as a whole; its keys' layer costs are counted once per unit below.
        costs[g] = rejected ? kRejectedGroup : kPrunedGroup + kPrunedPlan * static_cast<double>(group.size);
    });
    return costs;
}

namespace {

// Each group's unit: the groups that share one set of cost keys (GPU type, tp, cp, ep, etp, micro-batch).
std::vector<std::uint64_t> cost_key_units(const PlanSpace& space, std::uint64_t& units)
{
    const std::uint64_t t = space.tp.size(), c = space.cp.size(), e = space.ep.size(), x = space.etp.size(), m = space.micro_batch.size();
    units = space.gpus.size() * t * c * e * x * m;
    std::vector<std::uint64_t> unit(space.groups());
    for (std::uint64_t g = 0; g < space.groups(); ++g) {
        const PlanGroup group = space.group(g);
        unit[g] = ((((static_cast<std::uint64_t>(group.gpu) * t + static_cast<std::uint64_t>(group.tp_index)) * c +
                     static_cast<std::uint64_t>(group.cp_index)) *
                        e +
                    static_cast<std::uint64_t>(group.ep_index)) *
                       x +
                   static_cast<std::uint64_t>(group.etp_index)) *
                      m +
                  static_cast<std::uint64_t>(group.micro_batch_index);
    }
    return unit;
}

} // namespace

namespace {

// split_by_cost_keys()'s deal: each group's unit, each unit's cost (its groups and its keys' layer costs)
// and owner.
struct UnitDeal {
    std::vector<std::uint64_t> unit; // per group
    std::vector<double> unit_cost, key_cost;
    std::vector<int> owner;
};

UnitDeal deal_units(const PlanSpace& space, const std::vector<double>& group_costs, int shards)
{
    UnitDeal d;
    std::uint64_t units = 0;
    d.unit = cost_key_units(space, units);
    const std::size_t groups = std::min<std::size_t>(space.groups(), group_costs.size());
    d.unit_cost.assign(units, 0.0);
    d.key_cost.assign(units, 0.0); // a unit whose groups are all rejected computes no layer costs
    const double keys_but_sp = static_cast<double>(space.recompute.size() * space.precision.size() * space.tp_overlap.size() *
                                                   space.moe_overlap.size() * space.rank_order.size());
    for (std::size_t g = 0; g < groups; ++g) {
        d.unit_cost[d.unit[g]] += group_costs[g];
        if (group_costs[g] > kRejectedGroup) {
            d.key_cost[d.unit[g]] = kPrunedKey * keys_but_sp * space.sequence_parallel_choices(space.group(g).tp_index);
        }
    }
    for (std::uint64_t u = 0; u < units; ++u) {
        d.unit_cost[u] += d.key_cost[u];
    }
    // Longest processing time first: the costliest unit to the least loaded shard (ties: the lower
    // unit, the lower shard), so every process computes the same split.
    std::vector<std::uint64_t> order(units);
    for (std::uint64_t u = 0; u < units; ++u) {
        order[u] = u;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return d.unit_cost[a] > d.unit_cost[b]; });
    d.owner.assign(units, 0);
    std::vector<double> load(static_cast<std::size_t>(std::max(shards, 1)), 0.0);
    for (const std::uint64_t u : order) {
        const auto least = std::min_element(load.begin(), load.end()); // the first of equal loads
        d.owner[u] = static_cast<int>(least - load.begin());
        *least += d.unit_cost[u];
    }
    return d;
}

} // namespace

ExploreSplit split_by_cost_keys(const PlanSpace& space, const std::vector<double>& group_costs, int shards)
{
    ExploreSplit out;
    out.shards = std::max(shards, 1);
    const UnitDeal d = deal_units(space, group_costs, out.shards);
    const std::vector<std::uint64_t>& unit = d.unit;
    const std::vector<int>& owner = d.owner;
    const std::size_t groups = std::min<std::size_t>(space.groups(), group_costs.size());
    // Blocks: runs of consecutive groups with one owner, in enumeration order.
    for (std::size_t g = 0; g < groups; ++g) {
        const int shard = owner[unit[g]];
        if (out.blocks.empty() || out.blocks.back().shard != shard) {
            ShardBlock b;
            b.groups = {g, g};
            b.plan_begin = space.group_first(g);
            b.shard = shard;
            out.blocks.push_back(b);
        }
        ShardBlock& b = out.blocks.back();
        b.groups.end = g + 1;
        b.plan_end = space.group_first(g + 1);
        b.estimated_cost += group_costs[g];
    }
    return out;
}

ExploreWork split_into_work_items(const PlanSpace& space, const std::vector<double>& group_costs, int shards)
{
    ExploreWork out;
    out.shards = std::max(shards, 1);
    const UnitDeal d = deal_units(space, group_costs, out.shards);
    const std::size_t groups = std::min<std::size_t>(space.groups(), group_costs.size());
    const std::uint64_t counts = space.num_gpus.size();
    const std::uint64_t per_count =
        space.tp.size() * space.cp.size() * space.pp.size() * space.ep.size() * space.etp.size() * space.micro_batch.size();
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::vector<std::size_t> item_of(d.unit_cost.size() * counts, kNone); // per (unit, GPU count)
    for (std::size_t g = 0; g < groups; ++g) {
        const std::uint64_t u = d.unit[g];
        const std::size_t slot = static_cast<std::size_t>(u * counts + (g / per_count) % counts);
        if (item_of[slot] == kNone) {
            item_of[slot] = out.items.size();
            out.items.emplace_back();
        }
        WorkItem& item = out.items[item_of[slot]];
        if (!item.groups.empty() && item.groups.back().end == g) {
            item.groups.back().end = g + 1;
        } else {
            item.groups.push_back({g, g + 1});
        }
        item.estimated_cost += group_costs[g];
    }
    // Each shard's units, costliest first (ties: the lower unit), each unit's items by GPU count; the
    // unit's layer costs on its first item.
    std::vector<std::uint64_t> order(d.unit_cost.size());
    for (std::uint64_t u = 0; u < order.size(); ++u) {
        order[u] = u;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return d.unit_cost[a] > d.unit_cost[b]; });
    out.queues.assign(static_cast<std::size_t>(out.shards), {});
    for (const std::uint64_t u : order) {
        bool first = true;
        for (std::uint64_t n = 0; n < counts; ++n) {
            const std::size_t i = item_of[static_cast<std::size_t>(u * counts + n)];
            if (i == kNone) {
                continue;
            }
            if (first) {
                out.items[i].estimated_cost += d.key_cost[u];
                first = false;
            }
            out.queues[static_cast<std::size_t>(d.owner[u])].push_back(i);
        }
    }
    return out;
}

std::vector<GroupRange> ExploreWork::own_groups(int shard) const
{
    std::vector<GroupRange> all;
    if (shard >= 0 && static_cast<std::size_t>(shard) < queues.size()) {
        for (const std::size_t i : queues[static_cast<std::size_t>(shard)]) {
            all.insert(all.end(), items[i].groups.begin(), items[i].groups.end());
        }
    }
    std::sort(all.begin(), all.end(), [](const GroupRange& a, const GroupRange& b) { return a.begin < b.begin; });
    std::vector<GroupRange> out;
    for (const GroupRange& r : all) {
        if (!out.empty() && out.back().end == r.begin) {
            out.back().end = r.end;
        } else {
            out.push_back(r);
        }
    }
    return out;
}

Expected<ExploreWork> plan_explore_work(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                        int shards)
{
    if (shards < 1) {
        return Diagnostic{"shards", "at least one shard is needed, not " + std::to_string(shards)};
    }
    auto space = make_plan_space(scenario, profiles, options.allow_tp_across_nodes);
    if (!space.ok()) {
        return space.errors();
    }
    return split_into_work_items(*space, estimate_pruned_group_costs(scenario, profiles, *space, options.allow_tp_across_nodes), shards);
}

WorkQueue::WorkQueue(const ExploreWork& work) : m_work(work)
{
    for (const auto& queue : work.queues) {
        m_front.push_back(0);
        m_back.push_back(queue.size());
        double left = 0;
        for (const std::size_t i : queue) {
            left += work.items[i].estimated_cost;
        }
        m_left.push_back(left);
    }
}

std::optional<std::size_t> WorkQueue::next(int shard)
{
    const std::lock_guard lock(m_mutex);
    std::size_t from = static_cast<std::size_t>(shard);
    const bool own = from < m_front.size() && m_front[from] < m_back[from];
    if (!own) {
        // The queue with the most estimated work left (the lowest shard of equals).
        from = m_front.size();
        for (std::size_t s = 0; s < m_front.size(); ++s) {
            if (m_front[s] < m_back[s] && (from == m_front.size() || m_left[s] > m_left[from])) {
                from = s;
            }
        }
        if (from == m_front.size()) {
            return std::nullopt;
        }
        ++m_stolen;
    }
    const std::size_t item = own ? m_work.queues[from][m_front[from]++] : m_work.queues[from][--m_back[from]];
    m_left[from] -= m_work.items[item].estimated_cost;
    return item;
}

std::uint64_t WorkQueue::stolen() const
{
    return m_stolen;
}

ExploreOptions options_for_shard(ExploreOptions options, const ExploreWork& work, int shard, std::function<std::optional<std::size_t>()> next)
{
    options.group_ranges = work.own_groups(shard);
    if (options.group_ranges.empty()) {
        options.group_ranges.push_back({0, 0}); // nothing of its own (an empty list would mean everything)
    }
    options.next_work = [&work, next = std::move(next)]() {
        const auto item = next();
        return item ? work.items[*item].groups : std::vector<GroupRange>{};
    };
    return options;
}

std::vector<std::vector<GroupRange>> rebalance_groups(const ExploreSplit& split, const std::vector<std::vector<GroupWork>>& open,
                                                      const std::vector<double>& settled)
{
    const std::size_t shards = static_cast<std::size_t>(std::max(split.shards, 1));
    std::vector<double> load(shards, 0.0);
    struct Item {
        GroupWork work;
        std::size_t owner = 0;
    };
    std::vector<Item> items;
    for (std::size_t s = 0; s < shards; ++s) {
        load[s] = s < settled.size() ? settled[s] : 0.0;
        if (s < open.size()) {
            for (const GroupWork& w : open[s]) {
                items.push_back({w, s});
            }
        }
    }
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.work.cost != b.work.cost ? a.work.cost > b.work.cost : a.work.group < b.work.group; });
    std::vector<std::vector<std::uint64_t>> moved_out(shards), moved_in(shards);
    for (const Item& item : items) {
        std::size_t best = item.owner;
        double best_load = load[item.owner] + item.work.cost;
        for (std::size_t s = 0; s < shards; ++s) {
            const double l = load[s] + item.work.cost + shard_work::kMoveGroup;
            if (s != item.owner && l < best_load) {
                best = s;
                best_load = l;
            }
        }
        load[best] = best_load;
        if (best != item.owner) {
            moved_out[item.owner].push_back(item.work.group);
            moved_in[best].push_back(item.work.group);
        }
    }
    std::vector<std::vector<GroupRange>> out(shards);
    for (std::size_t s = 0; s < shards; ++s) {
        std::vector<std::uint64_t>& gone = moved_out[s];
        std::sort(gone.begin(), gone.end());
        std::vector<GroupRange> pieces;
        std::size_t k = 0;
        for (const GroupRange& r : split.ranges(static_cast<int>(s))) {
            std::uint64_t begin = r.begin;
            for (; k < gone.size() && gone[k] < r.end; ++k) {
                if (gone[k] >= begin) {
                    if (gone[k] > begin) {
                        pieces.push_back({begin, gone[k]});
                    }
                    begin = gone[k] + 1;
                }
            }
            if (begin < r.end) {
                pieces.push_back({begin, r.end});
            }
        }
        for (const std::uint64_t g : moved_in[s]) {
            pieces.push_back({g, g + 1});
        }
        std::sort(pieces.begin(), pieces.end(), [](const GroupRange& a, const GroupRange& b) { return a.begin < b.begin; });
        for (const GroupRange& p : pieces) {
            if (!out[s].empty() && out[s].back().end == p.begin) {
                out[s].back().end = p.end;
            } else {
                out[s].push_back(p);
            }
        }
    }
    return out;
}

Expected<ExploreSplit> plan_explore_split(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                          int shards, int blocks_per_shard)
{
    if (shards < 1) {
        return Diagnostic{"shards", "at least one shard is needed, not " + std::to_string(shards)};
    }
    auto space = make_plan_space(scenario, profiles, options.allow_tp_across_nodes);
    if (!space.ok()) {
        return space.errors();
    }
    if (options.prune && !options.keep_all_rows) {
        return split_by_cost_keys(*space, estimate_pruned_group_costs(scenario, profiles, *space, options.allow_tp_across_nodes), shards);
    }
    // Every plan evaluated (the rows are written): the same units, priced by estimate_group_costs(), so
    // that here too no two shards compute the same layer costs.
    (void)blocks_per_shard;
    return split_by_cost_keys(*space, estimate_group_costs(scenario, profiles, *space, options.allow_tp_across_nodes), shards);
}

ExploreOptions options_for_shard(ExploreOptions options, const ExploreSplit& split, int shard)
{
    options.group_ranges = split.ranges(shard);
    if (options.group_ranges.empty()) {
        options.group_ranges.push_back({0, 0}); // nothing (an empty list would mean everything)
    }
    return options;
}

ExploreResult merge_explore_results(const std::vector<ExploreResult>& parts, std::size_t top_k)
{
    ExploreResult out;
    std::vector<PlanRow> fronts;
    for (const ExploreResult& part : parts) {
        out.total += part.total;
        out.evaluated += part.evaluated;
        out.feasible += part.feasible;
        out.bounded += part.bounded;
        for (std::size_t r = 0; r < out.rejected.size(); ++r) {
            out.rejected[r] += part.rejected[r];
            const bool has = !part.example[r].message.empty();
            if (has && (out.example[r].message.empty() || part.example_index[r] < out.example_index[r])) {
                out.example[r] = part.example[r];
                out.example_index[r] = part.example_index[r];
            }
        }
        fronts.insert(fronts.end(), part.front.begin(), part.front.end());
        // A row in the global top k is in its own shard's top k, so merging the lists is exact.
        detail::merge_top(out.fastest, part.fastest, top_k, detail::faster);
        detail::merge_top(out.cheapest, part.cheapest, top_k, detail::cheaper);
        detail::merge_top(out.best_mfu, part.best_mfu, top_k, detail::higher_mfu);
        out.rows.insert(out.rows.end(), part.rows.begin(), part.rows.end());
        out.cancelled = out.cancelled || part.cancelled;
        out.elapsed_s = std::max(out.elapsed_s, part.elapsed_s);
        out.threads += part.threads;
    }
    // A row on the global front is on its shard's front (nothing in the shard dominates it).
    out.front = pareto_front(std::move(fronts));
    std::stable_sort(out.rows.begin(), out.rows.end(), [](const PlanRow& a, const PlanRow& b) { return a.index < b.index; });
    out.cancelled = out.cancelled || out.evaluated != out.total;
    detail::mark_front(out.fastest, out.front);
    detail::mark_front(out.cheapest, out.front);
    detail::mark_front(out.best_mfu, out.front);
    detail::mark_front(out.rows, out.front);
    return out;
}

} // namespace vtrain
