// SPDX-License-Identifier: MIT
#pragma once
// Draws a pipeline timeline (TimelineData) into any QPainter: the widget, a PNG, an SVG or a PDF page
// share this code, so an export looks exactly like the screen. Layout: a time ruler on top, stage and
// lane labels on the left, per stage a tall compute lane (forward/backward/recompute blocks labelled by
// micro-batch, optimizer step, hatched idle bubbles) and thin communication lanes, a legend at the bottom.
#include <vector>

#include <QColor>
#include <QPalette>
#include <QRect>
#include <QString>

#include "models/gantt_mapping.h"
#include "models/timeline_data.h"
#include "models/timeline_search.h"

class QFontMetrics;
class QPainter;

namespace vtrain::ui {

struct TimelineLayout {
    int labelWidth = 92;
    int headerHeight = 26;
    int legendHeight = 24;
    int titleHeight = 0; // > 0 draws `title` above the ruler (exports)
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
    int selectedRow = -1;
    int selectedBar = -1;
    double rangeStart = 0; // a time selection when rangeEnd > rangeStart
    double rangeEnd = 0;
    const std::vector<TimelineHit>* matches = nullptr; // search hits, outlined
    const std::vector<PipelineFlow>* flows = nullptr;  // pipeline sends, drawn as arrows
};

// Flow arrows are drawn when at most this many are in view; past it, zoom in to see them.
inline constexpr int kMaxFlowArrows = 150;

// `rect` is the whole area to draw into; the mapping's viewport must already span the time area
// (rect.left() + labelWidth .. rect.right()).
void paintTimeline(QPainter& painter, const QRect& rect, const TimelineData& data, const GanttMapping& mapping, const TimelineLayout& layout,
                   const QPalette& palette, const TimelinePaintOptions& options = {});

// A "nice" tick step (1, 2 or 5 times a power of ten) for about `pixels` per tick.
double niceTimeStep(double secondsPerPixel, double pixels);
// A ruler label in the unit that keeps it short: "250 ms", "4.5 s" (not "4500 ms"), "4.001 s" when zoomed in.
QString timeTickLabel(double t, double step);

// The text drawn on a compute bar `width` pixels wide: "F12" (or "F12.1" interleaved), else just "12"
// when only the number fits, else nothing.
QString fittingBarLabel(const TimelineBar& bar, bool interleaved, double width, const QFontMetrics& metrics);

struct LegendEntry {
    QString name;
    QColor color;
    bool hatched = false;
};
// One entry per kind of work the timeline holds (parameter gather only where ZeRO-3 gathers, ...).
std::vector<LegendEntry> timelineLegend(const TimelineData& data);

} // namespace vtrain::ui
