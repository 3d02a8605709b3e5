// SPDX-License-Identifier: MIT
#pragma once
// Level of detail for the timeline: of one row, only the bars inside the visible window (found by
// bisection), and runs of bars narrower than a few pixels folded into one item that carries a count
// (after Tracy's MinVisSize and hotspot's "skip draws that would not change a pixel"). What is drawn is
// then bounded by the width in pixels, not by the number of tasks.
#include <cstdint>
#include <vector>

#include "models/gantt_mapping.h"
#include "models/timeline_data.h"

namespace vtrain::ui {

struct DrawItem {
    double x0 = 0; // pixels
    double x1 = 0;
    std::uint32_t first = 0;           // first bar of the row covered
    std::uint32_t count = 1;           // bars covered; > 1 = a folded run
    bool mixed = false;                // a folded run of several task kinds
    TaskKind kind = TaskKind::Forward; // the kind covering most of the item's time (its colour)
    bool folded() const { return count > 1; }
};

inline constexpr double kMinBarPixels = 3.0;

// Visible items of `row` under `mapping`, left to right. Bars narrower than `minPixels` merge with
// neighbours less than a pixel away, into runs at most `minPixels` wide (so a merged stretch still shows
// which kind of work dominates where).
std::vector<DrawItem> visibleItems(const TimelineRow& row, const GanttMapping& mapping, double minPixels = kMinBarPixels);

// The bar under pixel x (within `slackPixels`), or -1; for hover tooltips.
int barAt(const TimelineRow& row, const GanttMapping& mapping, double x, double slackPixels = 2.0);

} // namespace vtrain::ui
