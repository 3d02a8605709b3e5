// SPDX-License-Identifier: MIT
#include "models/timeline_data.h"

#include <algorithm>
#include <array>

namespace vtrain::ui {

const char* laneName(TimelineLane lane)
{
    switch (lane) {
    case TimelineLane::Compute: return "compute";
    case TimelineLane::Tensor: return "tensor";
    case TimelineLane::Expert: return "expert";
    case TimelineLane::Context: return "context";
    case TimelineLane::Pipeline: return "pipeline";
    case TimelineLane::DataParallel: return "data parallel";
    }
    return "";
}

std::size_t TimelineRow::firstEndingAfter(double t) const
{
    return static_cast<std::size_t>(std::lower_bound(max_end.begin(), max_end.end(), t) - max_end.begin());
}

namespace {

constexpr int kLanes = 6;

TimelineLane laneOf(Lane lane)
{
    switch (lane) {
    case Lane::Compute: return TimelineLane::Compute;
    case Lane::Pipeline: return TimelineLane::Pipeline;
    case Lane::DataParallel: return TimelineLane::DataParallel;
    }
    return TimelineLane::Compute;
}

void finishRow(TimelineRow& row, double iterationEnd)
{
    std::stable_sort(row.bars.begin(), row.bars.end(), [](const TimelineBar& a, const TimelineBar& b) { return a.start < b.start; });
    row.max_end.resize(row.bars.size());
    double m = 0;
    for (std::size_t i = 0; i < row.bars.size(); ++i) {
        m = std::max(m, row.bars[i].end);
        row.max_end[i] = m;
    }
    if (row.lane != TimelineLane::Compute) {
        return;
    }
    // Bubbles: every stretch of the iteration the compute stream spends waiting.
    constexpr double kMinIdle = 1e-9;
    double cursor = 0;
    for (const TimelineBar& b : row.bars) {
        if (b.start - cursor > kMinIdle) {
            row.idle.emplace_back(cursor, b.start);
        }
        cursor = std::max(cursor, b.end);
    }
    if (iterationEnd - cursor > kMinIdle) {
        row.idle.emplace_back(cursor, iterationEnd);
    }
}

} // namespace

TimelineData TimelineData::fromResult(const SimulationResult& result)
{
    TimelineData data;
    data.stages = static_cast<int>(result.stages.size());
    data.end_s = result.iteration_time_s;
    if (data.stages == 0) {
        return data;
    }
    std::vector<std::array<TimelineRow, kLanes>> lanes(static_cast<std::size_t>(data.stages));
    for (std::size_t i = 0; i < result.timeline.size(); ++i) {
        const TimelineTask& t = result.timeline[i];
        if (t.stage < 0 || t.stage >= data.stages) {
            continue;
        }
        auto& stageLanes = lanes[static_cast<std::size_t>(t.stage)];
        const TimelineBar bar{t.start_s, t.end_s, t.kind, t.micro_batch, t.chunk, t.layers, static_cast<std::int32_t>(i)};
        stageLanes[static_cast<int>(laneOf(t.lane))].bars.push_back(bar);
        data.end_s = std::max(data.end_s, t.end_s);
        // Tensor-parallel collectives run inside compute tasks, at the end of each layer's slice (as in the
        // Chrome trace export, so both pictures agree).
        // Expert dispatch/combine comes just before that, and the context-parallel exchange (the KV blocks
        // attention needs) at the start of each layer's slice.
        const double dur = t.end_s - t.start_s;
        if ((t.tp_comm_s > 0 || t.ep_comm_s > 0 || t.cp_comm_s > 0) && dur > 0) {
            const int layers = std::max(1, t.layers);
            const double slice = dur / layers;
            const double tp = t.tp_comm_s / layers;
            const double ep = t.ep_comm_s / layers;
            const double cp = t.cp_comm_s / layers;
            const auto task = static_cast<std::int32_t>(i);
            for (int l = 0; l < layers; ++l) {
                const double begin = t.start_s + l * slice;
                const double end = begin + slice;
                if (tp > 0) {
                    stageLanes[static_cast<int>(TimelineLane::Tensor)].bars.push_back(
                        TimelineBar{end - tp, end, t.kind, t.micro_batch, t.chunk, 1, task});
                }
                if (ep > 0) {
                    const double epEnd = std::max(begin + ep, end - tp);
                    stageLanes[static_cast<int>(TimelineLane::Expert)].bars.push_back(
                        TimelineBar{epEnd - ep, epEnd, t.kind, t.micro_batch, t.chunk, 1, task});
                }
                if (cp > 0) {
                    stageLanes[static_cast<int>(TimelineLane::Context)].bars.push_back(
                        TimelineBar{begin, begin + cp, t.kind, t.micro_batch, t.chunk, 1, task});
                }
            }
        }
    }
    // Keep a lane only if some stage uses it (no tensor lane at tp 1, no data-parallel lane at dp 1).
    std::array<bool, kLanes> used{};
    for (const auto& stageLanes : lanes) {
        for (int l = 0; l < kLanes; ++l) {
            used[l] = used[l] || !stageLanes[l].bars.empty();
        }
    }
    used[0] = true;
    for (int s = 0; s < data.stages; ++s) {
        for (int l = 0; l < kLanes; ++l) {
            if (!used[l]) {
                continue;
            }
            TimelineRow row = std::move(lanes[static_cast<std::size_t>(s)][l]);
            row.stage = s;
            row.lane = static_cast<TimelineLane>(l);
            finishRow(row, data.end_s);
            data.bar_count += row.bars.size();
            data.rows.push_back(std::move(row));
        }
    }
    return data;
}

} // namespace vtrain::ui
