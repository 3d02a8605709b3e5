// SPDX-License-Identifier: MIT
#pragma once
// The simulator's loop (vTrain's Algorithm 1). Tasks sit on streams; a stream runs its tasks in the
// order they were added, and a task also waits for the tasks it depends on. Processing tasks in
// topological order (Kahn's algorithm, FIFO) gives every task its earliest start:
//     start(task) = max(end(previous task on its stream), end(each dependency))
//     end(task)   = start(task) + duration(task)
// The iteration time is the latest end over all streams.
#include <cstdint>
#include <vector>

namespace vtrain {

struct TaskGraph {
    std::vector<double> duration;     // seconds, per task
    std::vector<std::int32_t> stream; // stream id, per task
    // Dependencies as edge lists: dep_to[i] waits for dep_from[i].
    std::vector<std::int32_t> dep_from;
    std::vector<std::int32_t> dep_to;
    int stream_count = 0;

    std::int32_t add_task(int stream_id, double seconds)
    {
        duration.push_back(seconds);
        stream.push_back(stream_id);
        if (stream_id >= stream_count) {
            stream_count = stream_id + 1;
        }
        return static_cast<std::int32_t>(duration.size() - 1);
    }
    void add_dependency(std::int32_t before, std::int32_t after)
    {
        if (before >= 0 && after >= 0) {
            dep_from.push_back(before);
            dep_to.push_back(after);
        }
    }
    std::size_t size() const { return duration.size(); }
    void clear()
    {
        duration.clear();
        stream.clear();
        dep_from.clear();
        dep_to.clear();
        stream_count = 0;
    }
};

struct TaskTimes {
    std::vector<double> start;
    std::vector<double> end;
    double makespan = 0;
    bool complete = true; // false if a dependency cycle left tasks unscheduled (a bug in the graph)
};

// Reusable scratch space so that sweeps simulate without allocating per plan.
struct EventSimulationScratch {
    std::vector<std::int32_t> offsets, children, pending, queue, last_on_stream, next_on_stream;
};

void simulate_events(const TaskGraph& graph, TaskTimes& times, EventSimulationScratch& scratch);

// A stage's idle time, from the iteration time and the sum of its busy parts. The task graph and the
// explorer's fast path add the same parts in different orders, so an idle time within rounding of the
// iteration time (1e-12 of it) is none in both.
inline double bubble_seconds(double iteration_s, double busy_s)
{
    const double idle = iteration_s - busy_s;
    return idle > 1e-12 * iteration_s ? idle : 0.0;
}
TaskTimes simulate_events(const TaskGraph& graph);

} // namespace vtrain
