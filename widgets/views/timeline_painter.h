// SPDX-License-Identifier: MIT
#pragma once
// Draws a pipeline timeline (TimelineData) into any QPainter: the widget, a PNG, an SVG or a PDF page
// share this code, so an export looks exactly like the screen. Layout: a time ruler on top, stage and
// lane labels on the left, per stage a tall compute lane (forward/backward/recompute blocks labelled by
// micro-batch, optimizer step, hatched idle bubbles) and thin communication lanes, a legend at the bottom.
#include <vector>

#include <QPalette>
#include <QRect>
#include <QString>

#include "models/gantt_mapping.h"
#include "models/timeline_data.h"

class QPainter;

namespace vtrain::ui {

struct TimelineLayout {
    int labelWidth = 92;
    int headerHeight = 26;
    int legendHeight = 24;
    int titleHeight = 0;  // > 0 draws `title` above the ruler (exports)
    double computeHeight = 22;
    double laneHeight = 10;
    double stageGap = 5;

    double rowHeight(const TimelineRow& row) const { return row.lane == TimelineLane::Compute ? computeHeight : laneHeight; }
    // Height of all rows (without header and legend).
    double contentHeight(const TimelineData& data) const;
    // Row tops relative to the first row, in data.rows order.
    std::vector<double> rowTops(const TimelineData& data) const;
    // Shrinks row heights (down to a floor) so all rows fit in `height` pixels of rows.
    TimelineLayout fittedTo(const TimelineData& data, double height) const;
};

struct TimelinePaintOptions {
    QString title;
    double scrollY = 0; // rows scrolled out at the top (the widget's vertical scroll bar)
    int hoverRow = -1;
    int hoverBar = -1;
};

// `rect` is the whole area to draw into; the mapping's viewport must already span the time area
// (rect.left() + labelWidth .. rect.right()).
void paintTimeline(QPainter& painter, const QRect& rect, const TimelineData& data, const GanttMapping& mapping,
                   const TimelineLayout& layout, const QPalette& palette, const TimelinePaintOptions& options = {});

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `pixels` per tick.
double niceTimeStep(double secondsPerPixel, double pixels);

} // namespace vtrain::ui
