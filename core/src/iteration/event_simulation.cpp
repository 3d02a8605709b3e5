// SPDX-License-Identifier: MIT
#include "iteration/event_simulation.h"

#include <algorithm>

namespace vtrain {

void simulate_events(const TaskGraph& g, TaskTimes& times, EventSimulationScratch& s)
{
    const auto n = static_cast<std::int32_t>(g.size());
    times.start.assign(static_cast<std::size_t>(n), 0.0);
    times.end.resize(static_cast<std::size_t>(n)); // each written when its task runs
    times.makespan = 0;

    // Stream order is an implicit edge from each task to the next one on its stream.
    s.last_on_stream.assign(static_cast<std::size_t>(g.stream_count), -1);
    s.next_on_stream.resize(static_cast<std::size_t>(n));
    s.pending.resize(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) {
        auto& last = s.last_on_stream[g.stream[i]];
        s.next_on_stream[i] = -1;
        s.pending[i] = last >= 0 ? 1 : 0;
        if (last >= 0) {
            s.next_on_stream[last] = i;
        }
        last = i;
    }
    // Explicit dependencies in compressed-row form.
    s.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (const auto from : g.dep_from) {
        ++s.offsets[from + 1];
    }
    for (std::int32_t i = 0; i < n; ++i) {
        s.offsets[i + 1] += s.offsets[i];
    }
    s.children.resize(g.dep_from.size());
    s.queue.assign(s.offsets.begin(), s.offsets.end() - 1); // reuse as fill cursors
    for (std::size_t e = 0; e < g.dep_from.size(); ++e) {
        s.children[s.queue[g.dep_from[e]]++] = g.dep_to[e];
        ++s.pending[g.dep_to[e]];
    }

    s.queue.clear();
    s.queue.reserve(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) {
        if (s.pending[i] == 0) {
            s.queue.push_back(i);
        }
    }
    auto release = [&](std::int32_t child, double ready) {
        times.start[child] = std::max(times.start[child], ready);
        if (--s.pending[child] == 0) {
            s.queue.push_back(child);
        }
    };
    double makespan = 0;
    for (std::size_t head = 0; head < s.queue.size(); ++head) {
        const std::int32_t u = s.queue[head];
        const double end = times.start[u] + g.duration[u];
        times.end[u] = end;
        makespan = std::max(makespan, end);
        if (s.next_on_stream[u] >= 0) {
            release(s.next_on_stream[u], end);
        }
        for (std::int32_t e = s.offsets[u]; e < s.offsets[u + 1]; ++e) {
            release(s.children[e], end);
        }
    }
    times.makespan = makespan;
    times.complete = static_cast<std::int32_t>(s.queue.size()) == n;
}

TaskTimes simulate_events(const TaskGraph& graph)
{
    TaskTimes times;
    EventSimulationScratch scratch;
    simulate_events(graph, times, scratch);
    return times;
}

} // namespace vtrain
