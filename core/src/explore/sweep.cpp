// SPDX-License-Identifier: MIT
// The sweep: a oneTBB pipeline over chunks of the plan space. A serial input stage cuts the space into
// chunks of whole groups, a parallel stage evaluates them (each thread with its own workspace), and a
// serial in-order output stage merges counts, fronts and top-k lists and hands rows to the sink -- so
// the result and the order of rows are the same for any number of threads, and only a few chunks are
// alive at once (bounded memory for any sweep size).
//
// With pruning, the space is swept in waves of a fixed number of chunks instead: every chunk of a wave is
// bounded against the same thresholds -- the front and top-k rows merged from the waves before it -- so
// which plans are simulated does not depend on the thread count or the timing either.
#include "vtrain/explorer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include "explore/explorer_evaluate.h"
#include "explore/explorer_order.h"
#include "explore/explorer_shard_work.h"
#include "util/parallel.h"
#include "vtrain/explorer_space.h"

namespace vtrain {
namespace {

using detail::cheaper;
using detail::faster;
using detail::higher_mfu;
using detail::mark_front;
using detail::merge_top;

constexpr std::uint64_t kChunkPlans = 64;    // plans per chunk: small enough to balance, large enough to amortise
constexpr std::uint64_t kChunkGroups = 4096; // groups per chunk at most (only empty groups reach it)
constexpr std::size_t kTokensPerThread = 32; // chunks in flight per thread (bounds buffered rows)
// Chunks per wave when pruning: constants, so the waves are the same for any thread count. The first
// waves are short so that thresholds exist early; later ones long so that threads rarely wait.
constexpr std::size_t kFirstWaveChunks = 4;
constexpr std::size_t kWaveChunks = 256;
// Seeding: before the first wave, the groups with the best bounds (of up to kSeedScan groups spread over
// the space) are simulated so that thresholds are strong from the start; kSeedGroups per objective.
constexpr std::uint64_t kSeedScan = 1 << 16;
constexpr std::size_t kSeedGroups = 4;
constexpr std::size_t kReasons = static_cast<std::size_t>(RejectReason::Count);

struct Chunk : ChunkResult {
    std::uint64_t group_begin = 0;
    std::uint64_t group_end = 0;
};

struct TopK {
    std::vector<PlanRow> fastest, cheapest, best_mfu;
};

// The groups to evaluate: the options' ranges within the space, or all of it.
std::vector<GroupRange> clamped_ranges(const ExploreOptions& options, const PlanSpace& space)
{
    if (options.group_ranges.empty()) {
        return {{0, space.groups()}};
    }
    std::vector<GroupRange> out;
    for (const GroupRange& r : options.group_ranges) {
        const std::size_t end = std::min(r.end, space.groups());
        if (r.begin < end) {
            out.push_back({r.begin, end});
        }
    }
    // In enumeration order, so that rows reach the sink in order and the first example is the lowest.
    std::sort(out.begin(), out.end(), [](const GroupRange& a, const GroupRange& b) { return a.begin < b.begin; });
    return out;
}

// Rows by enumeration index, each once.
std::vector<PlanRow> unique_by_index(std::vector<PlanRow> rows)
{
    std::sort(rows.begin(), rows.end(), [](const PlanRow& a, const PlanRow& b) { return a.index < b.index; });
    rows.erase(std::unique(rows.begin(), rows.end(), [](const PlanRow& a, const PlanRow& b) { return a.index == b.index; }), rows.end());
    return rows;
}

class Sweep {
public:
    Sweep(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options, const PlanSpace& space,
          RunControl& control)
        : m_options(options), m_space(space), m_control(control), m_evaluator(scenario, profiles, space, options)
    {
    }

    void run(ExploreResult& result, const RowSink& sink)
    {
        const int threads = m_options.threads > 0 ? m_options.threads : tbb::info::default_concurrency();
        result.threads = threads;
        m_threads = threads;
        m_ranges = clamped_ranges(m_options, m_space);
        m_next_group = m_ranges.empty() ? 0 : m_ranges[0].begin;
        tbb::task_arena arena(threads);
        parallel::execute(arena, [&] {
            if (m_options.prune && !m_options.keep_all_rows) {
                run_waves(result, sink);
            } else {
                run_pipeline(threads, result, sink);
            }
        });
        result.front = std::move(m_front);
        result.fastest = std::move(m_top.fastest);
        result.cheapest = std::move(m_top.cheapest);
        result.best_mfu = std::move(m_top.best_mfu);
    }

private:
    // The next chunk of whole groups (at least kChunkPlans plans unless its range ends), or null at the end.
    // Stealing work (ExploreOptions::next_work), the ranges run out at the end of each item: the next
    // item is taken only when `may_take` (so a shard holds little more work than its threads sweep at once).
    Chunk* next_chunk(bool may_take = true)
    {
        while (m_range < m_ranges.size() && m_next_group >= m_ranges[m_range].end) {
            m_next_group = ++m_range < m_ranges.size() ? m_ranges[m_range].begin : m_next_group;
        }
        if (m_stealing && m_range >= m_ranges.size() && may_take && !m_control.cancel.load(std::memory_order_relaxed)) {
            take_item();
        }
        if (m_range >= m_ranges.size() || m_control.cancel.load(std::memory_order_relaxed)) {
            return nullptr;
        }
        const std::uint64_t end_group = m_ranges[m_range].end; // a chunk stays in its range
        auto* chunk = new Chunk;
        chunk->group_begin = m_next_group;
        const std::uint64_t first = m_space.group_first(m_next_group);
        // Empty groups (no schedule choice pairs with their pp) hold no plans: a chunk also ends after
        // kChunkGroups groups, so that a run of millions of them never holds up the sweep or a cancel.
        const std::uint64_t group_limit = m_next_group + kChunkGroups;
        while (m_next_group < end_group && m_next_group < group_limit && m_space.group_first(m_next_group) - first < kChunkPlans) {
            ++m_next_group;
        }
        chunk->group_end = m_next_group;
        return chunk;
    }

    // The next item from ExploreOptions::next_work (none: no work left anywhere), counted in the total.
    void take_item()
    {
        ExploreOptions item;
        item.group_ranges = m_options.next_work();
        m_ranges = item.group_ranges.empty() ? std::vector<GroupRange>{} : clamped_ranges(item, m_space);
        m_range = 0;
        m_next_group = m_ranges.empty() ? 0 : m_ranges[0].begin;
        for (const GroupRange& r : m_ranges) {
            m_result->total += m_space.group_first(r.end) - m_space.group_first(r.begin);
        }
        m_control.total.store(m_result->total);
    }

    void run_pipeline(int threads, ExploreResult& result, const RowSink& sink)
    {
        auto take = [&](tbb::flow_control& fc) -> Chunk* {
            Chunk* chunk = next_chunk();
            if (chunk == nullptr) {
                fc.stop();
            }
            return chunk;
        };
        auto sweep = [&](Chunk* chunk) -> Chunk* {
            evaluate(*chunk);
            return chunk;
        };
        auto keep = [&](Chunk* chunk) {
            merge(*chunk, result, sink);
            delete chunk;
        };
        // Each stage a task of one hand-off (util/parallel.h): a chunk passes from stage to stage through it.
        parallel::joined([&](const parallel::HandOff& h) {
            tbb::parallel_pipeline(static_cast<std::size_t>(threads) * kTokensPerThread,
                                   tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order, h.task(take)) &
                                       tbb::make_filter<Chunk*, Chunk*>(tbb::filter_mode::parallel, h.task(sweep)) &
                                       tbb::make_filter<Chunk*, void>(tbb::filter_mode::serial_in_order, h.task(keep)));
        });
    }

    // Rows of a few promising groups, found before the sweep: thresholds only (the sweep meets the same
    // plans again and counts them then). Deterministic: the groups are chosen by bound, ties by index.
    void seed()
    {
        std::uint64_t groups = 0;
        for (const GroupRange& r : m_ranges) {
            groups += r.end - r.begin;
        }
        const std::uint64_t stride = std::max<std::uint64_t>(1, groups / kSeedScan);
        // Every stride-th group of the ranges taken together, found without visiting the others (a space
        // of 10^10 groups took 17 s here, deaf to Ctrl-C).
        std::vector<std::uint64_t> candidates;
        std::uint64_t n = 0; // groups of the ranges before r
        for (const GroupRange& r : m_ranges) {
            for (std::uint64_t g = r.begin + (stride - n % stride) % stride; g < r.end; g += stride) {
                candidates.push_back(g);
            }
            n += r.end - r.begin;
        }
        std::vector<std::optional<PlanRow>> best(candidates.size());
        parallel::parallel_for(std::size_t{0}, candidates.size(), [&](std::size_t i) {
            if (!m_control.cancel.load(std::memory_order_relaxed)) {
                best[i] = m_evaluator.group_best_case(m_space.group(candidates[i]), m_states.local());
            }
        });
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < best.size(); ++i) {
            if (best[i]) {
                order.push_back(i);
            }
        }
        std::vector<std::uint64_t> chosen;
        auto pick = [&](auto better) {
            const std::size_t k = std::min(kSeedGroups, order.size());
            std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                              [&](std::size_t a, std::size_t b) { return better(*best[a], *best[b]); });
            for (std::size_t i = 0; i < k; ++i) {
                chosen.push_back(candidates[order[i]]);
            }
        };
        pick(faster);
        pick(cheaper);
        pick(higher_mfu);
        std::sort(chosen.begin(), chosen.end());
        chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
        std::vector<ChunkResult> parts(chosen.size());
        const PruneThresholds none;
        parallel::parallel_for(std::size_t{0}, chosen.size(), [&](std::size_t i) {
            if (!m_control.cancel.load(std::memory_order_relaxed)) {
                // Seed plans are not progress (the sweep counts them when it meets them); a cancel stops them.
                m_evaluator.evaluate_group(m_space.group(chosen[i]), m_states.local(), parts[i], m_control, none, false);
            }
        });
        std::vector<PlanRow> rows;
        for (auto& part : parts) {
            rows.insert(rows.end(), std::make_move_iterator(part.rows.begin()), std::make_move_iterator(part.rows.end()));
        }
        if (m_options.share_seed) {
            // Only the rows that can be thresholds travel: the seed's front and top-k rows.
            std::vector<PlanRow> mine = pareto_front(rows);
            TopK top;
            merge_top(top.fastest, rows, m_options.top_k, faster);
            merge_top(top.cheapest, rows, m_options.top_k, cheaper);
            merge_top(top.best_mfu, rows, m_options.top_k, higher_mfu);
            for (const auto* list : {&top.fastest, &top.cheapest, &top.best_mfu}) {
                mine.insert(mine.end(), list->begin(), list->end());
            }
            std::vector<PlanRow> more = m_options.share_seed(unique_by_index(std::move(mine)));
            rows.insert(rows.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
            rows = unique_by_index(std::move(rows)); // a row in two lists, or from two shards, counts once
        }
        m_seed_front = pareto_front(rows);
        merge_top(m_seed_top.fastest, rows, m_options.top_k, faster);
        merge_top(m_seed_top.cheapest, rows, m_options.top_k, cheaper);
        merge_top(m_seed_top.best_mfu, rows, m_options.top_k, higher_mfu);
    }

    // The k-th best of two lists of real rows (a row may be in both: counted once).
    template <typename Better>
    std::optional<PlanRow> kth(const std::vector<PlanRow>& a, const std::vector<PlanRow>& b, Better better) const
    {
        const std::size_t k = m_options.top_k;
        std::vector<PlanRow> all(a);
        all.insert(all.end(), b.begin(), b.end());
        std::sort(all.begin(), all.end(), better);
        all.erase(std::unique(all.begin(), all.end(), [](const PlanRow& x, const PlanRow& y) { return x.index == y.index; }), all.end());
        return k > 0 && all.size() >= k ? std::optional<PlanRow>(all[k - 1]) : std::nullopt;
    }

    // The thresholds from the seed's rows and the rows merged so far.
    void update_thresholds()
    {
        m_prune.active = true;
        m_prune.top_k = m_options.top_k;
        std::vector<PlanRow> front = m_front;
        for (const PlanRow& r : m_seed_front) {
            if (std::none_of(m_front.begin(), m_front.end(), [&r](const PlanRow& f) { return f.index == r.index; })) {
                front.push_back(r);
            }
        }
        m_prune.front = pareto_front(std::move(front));
        m_prune.kth_fastest = kth(m_top.fastest, m_seed_top.fastest, faster);
        m_prune.kth_cheapest = kth(m_top.cheapest, m_seed_top.cheapest, cheaper);
        m_prune.kth_mfu = kth(m_top.best_mfu, m_seed_top.best_mfu, higher_mfu);
    }

    // ExploreOptions::rebalance: this shard's open groups and their work against the seed's thresholds,
    // then the groups it sweeps from now on.
    void rebalance(ExploreResult& result)
    {
        update_thresholds();
        std::vector<std::uint64_t> groups;
        for (const GroupRange& r : m_ranges) {
            for (std::uint64_t g = r.begin; g < r.end; ++g) {
                groups.push_back(g);
            }
        }
        std::vector<std::optional<std::uint64_t>> past(groups.size());
        parallel::parallel_for(std::size_t{0}, groups.size(), [&](std::size_t i) {
            if (!m_control.cancel.load(std::memory_order_relaxed)) {
                past[i] = m_evaluator.plans_past_bound(m_space.group(groups[i]), m_states.local(), m_prune);
            }
        });
        std::vector<GroupWork> open;
        double settled = 0;
        for (std::size_t i = 0; i < groups.size(); ++i) {
            if (past[i]) {
                open.push_back({groups[i], shard_work::kPassPlan * static_cast<double>(m_space.group(groups[i]).size) +
                                               shard_work::kSimulatePlan * static_cast<double>(*past[i])});
            } else {
                settled += shard_work::kSettledGroup;
            }
        }
        std::vector<GroupRange> ranges = m_options.rebalance(open, settled);
        ExploreOptions moved;
        moved.group_ranges = std::move(ranges);
        m_ranges = clamped_ranges(moved, m_space);
        if (moved.group_ranges.empty()) {
            m_ranges.clear(); // nothing left here (clamped_ranges() reads an empty list as everything)
        }
        m_range = 0;
        m_next_group = m_ranges.empty() ? 0 : m_ranges[0].begin;
        result.total = 0;
        for (const GroupRange& r : m_ranges) {
            result.total += m_space.group_first(r.end) - m_space.group_first(r.begin);
        }
        m_control.total.store(result.total);
    }

    void run_waves(ExploreResult& result, const RowSink& sink)
    {
        seed();
        if (m_options.share_seed && m_options.rebalance) {
            rebalance(result);
        }
        if (m_options.next_work) {
            // From now on the groups come from the work queue, this shard's own items first.
            m_stealing = true;
            m_result = &result;
            m_ranges.clear();
            m_range = 0;
            result.total = 0;
            m_control.total.store(0);
        }
        std::vector<std::unique_ptr<Chunk>> wave;
        std::size_t wave_chunks = kFirstWaveChunks;
        for (;; wave_chunks = std::min(2 * wave_chunks, kWaveChunks)) {
            wave.clear();
            while (wave.size() < wave_chunks) {
                // Stealing, a wave takes a further item only while its threads would otherwise idle.
                Chunk* chunk = next_chunk(wave.size() < 2 * static_cast<std::size_t>(m_threads));
                if (chunk == nullptr) {
                    break;
                }
                wave.emplace_back(chunk);
            }
            if (wave.empty()) {
                return;
            }
            update_thresholds();
            parallel::parallel_for(tbb::blocked_range<std::size_t>(0, wave.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
                for (std::size_t i = r.begin(); i != r.end(); ++i) {
                    evaluate(*wave[i]);
                }
            });
            for (const auto& chunk : wave) {
                merge(*chunk, result, sink);
            }
        }
    }

    void evaluate(Chunk& chunk)
    {
        ThreadState& state = m_states.local();
        for (std::uint64_t g = chunk.group_begin; g < chunk.group_end; ++g) {
            const PlanGroup group = m_space.group(g);
            if (!m_evaluator.evaluate_group(group, state, chunk, m_control, m_prune)) {
                return; // cancelled
            }
        }
    }

    void merge(Chunk& chunk, ExploreResult& result, const RowSink& sink)
    {
        result.evaluated += chunk.evaluated;
        result.feasible += chunk.feasible;
        result.bounded += chunk.bounded;
        for (std::size_t r = 0; r < kReasons; ++r) {
            result.rejected[r] += chunk.rejected[r];
            if (chunk.example[r] && (result.example[r].message.empty() || chunk.example_index[r] < result.example_index[r])) {
                result.example[r] = *chunk.example[r]; // the lowest index (chunks arrive in order unless work is stolen)
                result.example_index[r] = chunk.example_index[r];
            }
        }
        if (chunk.rows.empty()) {
            return;
        }
        if (sink) {
            for (const PlanRow& row : chunk.rows) {
                sink(row);
            }
        }
        auto local_front = pareto_front(chunk.rows);
        if (!local_front.empty()) {
            local_front.insert(local_front.end(), m_front.begin(), m_front.end());
            m_front = pareto_front(std::move(local_front));
        }
        merge_top(m_top.fastest, chunk.rows, m_options.top_k, faster);
        merge_top(m_top.cheapest, chunk.rows, m_options.top_k, cheaper);
        merge_top(m_top.best_mfu, chunk.rows, m_options.top_k, higher_mfu);
        if (m_options.keep_all_rows) {
            result.rows.insert(result.rows.end(), std::make_move_iterator(chunk.rows.begin()), std::make_move_iterator(chunk.rows.end()));
        }
    }

    const ExploreOptions& m_options;
    const PlanSpace& m_space;
    RunControl& m_control;
    PlanEvaluator m_evaluator;
    tbb::enumerable_thread_specific<ThreadState> m_states;
    std::vector<PlanRow> m_front;
    TopK m_top;
    PruneThresholds m_prune;           // inactive unless sweeping in waves; written between waves only
    std::vector<PlanRow> m_seed_front; // from seed(): real rows of the space, thresholds only
    TopK m_seed_top;
    std::vector<GroupRange> m_ranges;
    std::size_t m_range = 0;
    std::uint64_t m_next_group = 0;
    bool m_stealing = false; // the ranges come from ExploreOptions::next_work
    int m_threads = 1;
    ExploreResult* m_result = nullptr; // while stealing: its total grows with each item taken
};

} // namespace

Expected<ExploreResult> explore(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                RunControl& control, const RowSink& sink)
{
    const auto start = std::chrono::steady_clock::now();
    auto space = make_plan_space(scenario, profiles, options.allow_tp_across_nodes, &control.cancel);
    if (!space.ok()) {
        if (control.cancel.load()) {
            ExploreResult cancelled;
            cancelled.cancelled = true;
            cancelled.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            return cancelled;
        }
        return space.errors();
    }
    ExploreResult result;
    for (const GroupRange& r : clamped_ranges(options, *space)) {
        result.total += space->group_first(r.end) - space->group_first(r.begin);
    }
    control.total.store(result.total);
    control.done.store(0);

    Sweep sweep(scenario, profiles, options, *space, control);
    sweep.run(result, sink);

    result.cancelled = result.evaluated != result.total;
    mark_front(result.fastest, result.front);
    mark_front(result.cheapest, result.front);
    mark_front(result.best_mfu, result.front);
    mark_front(result.rows, result.front);
    result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace vtrain
