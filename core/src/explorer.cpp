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
constexpr std::size_t kWaveChunks = 256;     // chunks per wave when pruning (a constant: the same waves for any thread count)
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
        m_ranges = clamped_ranges(m_options, m_space);
        m_next_group = m_ranges.empty() ? 0 : m_ranges[0].begin;
        tbb::task_arena arena(threads);
        arena.execute([&] {
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
    Chunk* next_chunk()
    {
        while (m_range < m_ranges.size() && m_next_group >= m_ranges[m_range].end) {
            m_next_group = ++m_range < m_ranges.size() ? m_ranges[m_range].begin : m_next_group;
        }
        if (m_range >= m_ranges.size() || m_control.cancel.load(std::memory_order_relaxed)) {
            return nullptr;
        }
        const std::uint64_t end_group = m_ranges[m_range].end; // a chunk stays in its range
        auto* chunk = new Chunk;
        chunk->group_begin = m_next_group;
        const std::uint64_t first = m_space.group_first(m_next_group);
        while (m_next_group < end_group && m_space.group_first(m_next_group) - first < kChunkPlans) {
            ++m_next_group;
        }
        chunk->group_end = m_next_group;
        return chunk;
    }

    void run_pipeline(int threads, ExploreResult& result, const RowSink& sink)
    {
        tbb::parallel_pipeline(static_cast<std::size_t>(threads) * kTokensPerThread,
                               tbb::make_filter<void, Chunk*>(tbb::filter_mode::serial_in_order,
                                                              [&](tbb::flow_control& fc) -> Chunk* {
                                                                  Chunk* chunk = next_chunk();
                                                                  if (chunk == nullptr) {
                                                                      fc.stop();
                                                                  }
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
    }

    void run_waves(ExploreResult& result, const RowSink& sink)
    {
        std::vector<std::unique_ptr<Chunk>> wave;
        for (;;) {
            wave.clear();
            while (wave.size() < kWaveChunks) {
                Chunk* chunk = next_chunk();
                if (chunk == nullptr) {
                    break;
                }
                wave.emplace_back(chunk);
            }
            if (wave.empty()) {
                return;
            }
            m_prune.active = true;
            m_prune.top_k = m_options.top_k;
            m_prune.front = m_front;
            const std::size_t k = m_options.top_k;
            auto kth = [k](const std::vector<PlanRow>& list) { return k > 0 && list.size() >= k ? std::optional<PlanRow>(list[k - 1]) : std::nullopt; };
            m_prune.kth_fastest = kth(m_top.fastest);
            m_prune.kth_cheapest = kth(m_top.cheapest);
            m_prune.kth_mfu = kth(m_top.best_mfu);
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, wave.size(), 1), [&](const tbb::blocked_range<std::size_t>& r) {
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
    PruneThresholds m_prune; // inactive unless sweeping in waves; written between waves only
    std::vector<GroupRange> m_ranges;
    std::size_t m_range = 0;
    std::uint64_t m_next_group = 0;
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
