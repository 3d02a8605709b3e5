// SPDX-License-Identifier: MIT
#pragma once
// A simulated iteration's tasks regrouped for drawing: per pipeline stage one row per lane (compute,
// tensor-parallel, expert all-to-all, context-parallel, pipeline, data-parallel), each row's bars sorted by start with a running maximum of
// their ends (so a view finds the first visible bar by bisection even where bars overlap), and the idle
// gaps (bubbles) of the compute lane.
#include <cstdint>
#include <utility>
#include <vector>

#include "vtrain/simulation_result.h"

namespace vtrain::ui {

// Tensor, Expert and Context are traffic inside compute tasks (each layer's exposed share), drawn on rows
// of their own so an MoE plan's all-to-all and a long-context plan's ring exchange are seen apart.
enum class TimelineLane : std::uint8_t { Compute, Tensor, Expert, Context, Pipeline, DataParallel };
const char* laneName(TimelineLane lane);

struct TimelineBar {
    double start = 0;
    double end = 0;
    TaskKind kind = TaskKind::Forward;
    std::int32_t micro_batch = -1;
    std::int32_t chunk = 0;
    std::int32_t layers = 0;
    std::int32_t task = -1; // index into SimulationResult::timeline (tensor-lane slices: their compute task)
};

struct TimelineRow {
    int stage = 0;
    TimelineLane lane = TimelineLane::Compute;
    std::vector<TimelineBar> bars;               // sorted by start
    std::vector<double> max_end;                 // max_end[i] = max(bars[0..i].end)
    std::vector<std::pair<double, double>> idle; // compute lane only: idle intervals within the iteration
    // Index of the first bar that may end at or after `t` (bars before it all end earlier).
    std::size_t firstEndingAfter(double t) const;
};

struct TimelineData {
    std::vector<TimelineRow> rows; // stage-major: stage 0's lanes, stage 1's lanes, ...
    int stages = 0;
    double end_s = 0; // the iteration time
    std::size_t bar_count = 0;

    static TimelineData fromResult(const SimulationResult& result);
    bool empty() const { return rows.empty(); }
};

} // namespace vtrain::ui
