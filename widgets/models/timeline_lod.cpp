// SPDX-License-Identifier: MIT
#include "models/timeline_lod.h"

#include <algorithm>
#include <cmath>

namespace vtrain::ui {

std::vector<DrawItem> visibleItems(const TimelineRow& row, const GanttMapping& mapping, double minPixels)
{
    std::vector<DrawItem> items;
    const double left = mapping.viewportX();
    const double right = left + mapping.viewportWidth();
    const double t0 = mapping.mapXToTime(left);
    const double t1 = mapping.mapXToTime(right);
    constexpr int kKinds = static_cast<int>(TaskKind::FsdpReduceScatter) + 1;
    double busy[kKinds] = {};
    DrawItem run;
    bool hasRun = false;
    auto startRun = [&](std::size_t i, double x0, double x1) {
        run = DrawItem{x0, x1, static_cast<std::uint32_t>(i), 1, false, row.bars[i].kind};
        std::fill(std::begin(busy), std::end(busy), 0.0);
        busy[static_cast<int>(row.bars[i].kind)] = x1 - x0;
        hasRun = true;
    };
    auto flush = [&] {
        if (!hasRun) {
            return;
        }
        if (run.x1 - run.x0 < 1.0) {
            run.x1 = run.x0 + 1.0; // at least one pixel, so a lone short task stays visible
        }
        if (run.mixed) {
            run.kind = static_cast<TaskKind>(std::max_element(std::begin(busy), std::end(busy)) - std::begin(busy));
        }
        items.push_back(run);
        hasRun = false;
    };
    for (std::size_t i = row.firstEndingAfter(t0); i < row.bars.size() && row.bars[i].start <= t1; ++i) {
        const TimelineBar& b = row.bars[i];
        if (b.end < t0) {
            continue; // an earlier long bar raised max_end; this one is still left of the window
        }
        double x0 = std::max(left - 1.0, mapping.mapTimeToX(b.start));
        const double x1 = std::min(right + 1.0, mapping.mapTimeToX(b.end));
        const double previousEnd = hasRun ? run.x1 : (items.empty() ? -1e300 : items.back().x1);
        if (x0 > previousEnd && x0 - previousEnd < 1.0) {
            x0 = previousEnd; // a sub-pixel gap would show as a stray light line between merged runs
        }
        if (x1 - x0 >= minPixels) {
            flush();
            items.push_back(DrawItem{x0, x1, static_cast<std::uint32_t>(i), 1, false, b.kind});
            continue;
        }
        if (hasRun && x0 <= run.x1 + 1.0 && x1 - run.x0 <= minPixels) {
            run.mixed = run.mixed || row.bars[run.first].kind != b.kind;
            run.x1 = std::max(run.x1, x1);
            busy[static_cast<int>(b.kind)] += x1 - x0;
            ++run.count;
            continue;
        }
        flush();
        startRun(i, x0, x1);
    }
    flush();
    return items;
}

int barAt(const TimelineRow& row, const GanttMapping& mapping, double x, double slackPixels)
{
    const double t = mapping.mapXToTime(x);
    const double slack = slackPixels * mapping.secondsPerPixel();
    int best = -1;
    double bestDistance = slack;
    for (std::size_t i = row.firstEndingAfter(t - slack); i < row.bars.size() && row.bars[i].start <= t + slack; ++i) {
        const TimelineBar& b = row.bars[i];
        const double d = t < b.start ? b.start - t : (t > b.end ? t - b.end : 0.0);
        if (d <= bestDistance) {
            // Inside a bar beats near one; among bars containing t, the shortest (most specific) wins.
            if (best < 0 || d < bestDistance ||
                (d == 0 && b.end - b.start < row.bars[static_cast<std::size_t>(best)].end - row.bars[static_cast<std::size_t>(best)].start)) {
                best = static_cast<int>(i);
                bestDistance = d;
            }
        }
    }
    return best;
}

} // namespace vtrain::ui
