// SPDX-License-Identifier: MIT
// The sweep: a oneTBB pipeline over chunks of the plan space. A serial input stage cuts the space into
// chunks of whole groups, a parallel stage evaluates them (each thread with its own workspace), and a
// serial in-order output stage merges counts, fronts and top-k lists and hands rows to the sink -- so
// the result and the order of rows are the same for any number of threads, and only a few chunks are
// alive at once (bounded memory for any sweep size).
#include "vtrain/explorer.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include "explorer_evaluate.h"
#include "explorer_order.h"
#include "vtrain/explorer_space.h"

namespace vtrain {
namespace {

using detail::cheaper;
using detail::faster;
using detail::higher_mfu;
using detail::mark_front;
using detail::merge_top;

constexpr std::uint64_t kChunkPlans = 64;   // plans per chunk: small enough to balance, large enough to amortise
constexpr std::size_t kTokensPerThread = 32; // chunks in flight per thread (bounds buffered rows)
constexpr std::size_t kReasons = static_cast<std::size_t>(RejectReason::Count);

struct Chunk : ChunkResult {
    std::size_t group_begin = 0;
    std::size_t group_end = 0;
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
        tbb::task_arena arena(threads);
        arena.execute([&] {
            m_evaluator.prepare(); // layer costs, in parallel
            const std::vector<GroupRange> ranges = clamped_ranges(m_options, m_space);
            std::size_t range = 0;
            std::size_t next_group = ranges.empty() ? 0 : ranges[0].begin;
            tbb::parallel_pipeline(
                static_cast<std::size_t>(threads) * kTokensPerThread,
                tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order,
                                               [&](tbb::flow_control& fc) -> Chunk* {
                                                   while (range < ranges.size() && next_group >= ranges[range].end) {
                                                       next_group = ++range < ranges.size() ? ranges[range].begin : next_group;
                                                   }
                                                   if (range >= ranges.size() || m_control.cancel.load(std::memory_order_relaxed)) {
                                                       fc.stop();
                                                       return nullptr;
                                                   }
                                                   const std::size_t end_group = ranges[range].end; // a chunk stays in its range
                                                   auto* chunk = new Chunk;
                                                   chunk->group_begin = next_group;
                                                   const std::uint64_t first = m_space.group_start[next_group];
                                                   while (next_group < end_group && m_space.group_start[next_group] - first < kChunkPlans) {
                                                       ++next_group;
                                                   }
                                                   chunk->group_end = next_group;
                                                   return chunk;
                                               }) &
                    tbb::make_filter<Chunk*, Chunk*>(tbb::filter_mode::parallel,
                                                     [&](Chunk* chunk) {
                                                         evaluate(*chunk);
                                                         return chunk;
                                                     }) &
                    tbb::make_filter<Chunk*, void>(tbb::filter_mode::serial_in_order, [&](Chunk* chunk) {
                        merge(*chunk, result, sink);
                        delete chunk;
                    }));
        });
        result.front = std::move(m_front);
        result.fastest = std::move(m_top.fastest);
        result.cheapest = std::move(m_top.cheapest);
        result.best_mfu = std::move(m_top.best_mfu);
    }

private:
    void evaluate(Chunk& chunk)
    {
        ThreadState& state = m_states.local();
        for (std::size_t g = chunk.group_begin; g < chunk.group_end; ++g) {
            const PlanGroup group = m_space.group(g);
            if (!m_evaluator.evaluate_group(group, state, chunk, m_control)) {
                return; // cancelled
            }
        }
    }

    void merge(Chunk& chunk, ExploreResult& result, const RowSink& sink)
    {
        result.evaluated += chunk.evaluated;
        result.feasible += chunk.feasible;
        for (std::size_t r = 0; r < kReasons; ++r) {
            result.rejected[r] += chunk.rejected[r];
            if (chunk.example[r] && result.example[r].message.empty()) {
                result.example[r] = *chunk.example[r]; // chunks arrive in order: the first is the lowest index
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
};

} // namespace

Expected<ExploreResult> explore(const Scenario& scenario, const std::map<std::string, GpuProfile>& profiles, const ExploreOptions& options,
                                RunControl& control, const RowSink& sink)
{
    const auto start = std::chrono::steady_clock::now();
    auto space = make_plan_space(scenario, profiles, options.allow_tp_across_nodes);
    if (!space.ok()) {
        return space.errors();
    }
    ExploreResult result;
    for (const GroupRange& r : clamped_ranges(options, *space)) {
        result.total += space->group_start[r.end] - space->group_start[r.begin];
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
