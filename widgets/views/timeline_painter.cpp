// SPDX-License-Identifier: MIT
#include "views/timeline_painter.h"

#include <algorithm>
#include <cmath>

#include <QFontInfo>
#include <QFontMetrics>
#include <QPainter>

#include "models/format.h"
#include "models/timeline_lod.h"
#include "views/plot_style.h"

namespace vtrain::ui {

double TimelineLayout::contentHeight(const TimelineData& data) const
{
    const std::vector<double> tops = rowTops(data);
    return tops.empty() ? 0 : tops.back() + rowHeight(data.rows.back()) + stageGap;
}

std::vector<double> TimelineLayout::rowTops(const TimelineData& data) const
{
    std::vector<double> tops;
    tops.reserve(data.rows.size());
    double y = 0;
    for (std::size_t i = 0; i < data.rows.size(); ++i) {
        if (i > 0 && data.rows[i].stage != data.rows[i - 1].stage) {
            y += stageGap;
        }
        tops.push_back(y);
        y += rowHeight(data.rows[i]);
    }
    return tops;
}

TimelineLayout TimelineLayout::fittedTo(const TimelineData& data, double height) const
{
    const double full = contentHeight(data);
    if (full <= height || full <= 0) {
        return *this;
    }
    TimelineLayout l = *this;
    const double f = std::max(0.2, height / full);
    l.computeHeight = std::max(4.0, computeHeight * f);
    l.laneHeight = std::max(2.0, laneHeight * f);
    l.stageGap = std::max(1.0, stageGap * f);
    return l;
}

double niceTimeStep(double secondsPerPixel, double pixels)
{
    const double raw = secondsPerPixel * pixels;
    if (!(raw > 0)) {
        return 1;
    }
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * magnitude >= raw) {
            return m * magnitude;
        }
    }
    return 10 * magnitude;
}

QString fittingBarLabel(const TimelineBar& b, bool interleaved, double width, const QFontMetrics& metrics)
{
    if (b.micro_batch < 0) {
        const QString kind = plot_style::taskShortName(b.kind);
        return metrics.horizontalAdvance(kind) + 4 <= width ? kind : QString();
    }
    QString number = QString::number(b.micro_batch);
    if (interleaved) {
        number += QLatin1Char('.') + QString::number(b.chunk);
    }
    const QString full = plot_style::taskShortName(b.kind) + number;
    if (metrics.horizontalAdvance(full) + 4 <= width) {
        return full;
    }
    // Two-digit micro-batches are as wide as "F9" plus a digit: the number alone still fits.
    return metrics.horizontalAdvance(number) + 2 <= width ? number : QString();
}

QString timeTickLabel(double t, double step)
{
    if (std::abs(t) < step * 1e-6) {
        return QStringLiteral("0");
    }
    // The unit follows the step, then moves up while the label would need four or more integer digits.
    static const double units[] = {1e-6, 1e-3, 1.0};
    static const char* const suffixes[] = {" µs", " ms", " s"};
    int u = step < 1e-3 ? 0 : step < 1.0 ? 1 : 2;
    while (u < 2 && std::abs(t) / units[u] >= 1000) {
        ++u;
    }
    const double scaledStep = step / units[u];
    const int decimals = scaledStep >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(scaledStep) - 1e-9));
    return QString::number(t / units[u], 'f', std::min(decimals, 9)) + QString::fromUtf8(suffixes[u]);
}

std::vector<LegendEntry> timelineLegend(const TimelineData& data)
{
    bool present[16] = {};
    bool tensor = false;
    bool expert = false;
    bool context = false;
    bool idle = false;
    for (const TimelineRow& row : data.rows) {
        if (row.lane == TimelineLane::Tensor) {
            tensor = tensor || !row.bars.empty();
            continue;
        }
        if (row.lane == TimelineLane::Expert) {
            expert = expert || !row.bars.empty();
            continue;
        }
        if (row.lane == TimelineLane::Context) {
            context = context || !row.bars.empty();
            continue;
        }
        idle = idle || !row.idle.empty();
        for (const TimelineBar& b : row.bars) {
            present[static_cast<int>(b.kind)] = true;
        }
    }
    std::vector<LegendEntry> entries;
    for (TaskKind k : {TaskKind::Forward, TaskKind::Backward, TaskKind::Recompute}) {
        if (present[static_cast<int>(k)]) {
            entries.push_back({plot_style::taskName(k), plot_style::taskColor(k)});
        }
    }
    if (tensor) {
        entries.push_back({QStringLiteral("TP comm"), plot_style::tensorCommColor()});
    }
    if (expert) {
        entries.push_back({QStringLiteral("EP all-to-all"), plot_style::expertCommColor()});
    }
    if (context) {
        entries.push_back({QStringLiteral("CP comm"), plot_style::contextCommColor()});
    }
    for (TaskKind k : {TaskKind::SendForward, TaskKind::SendBackward, TaskKind::GradReduce, TaskKind::EmbeddingSync, TaskKind::ParamGather,
                       TaskKind::FsdpGather, TaskKind::FsdpReduceScatter, TaskKind::OptimizerStep}) {
        if (present[static_cast<int>(k)]) {
            entries.push_back({plot_style::taskName(k), plot_style::taskColor(k)});
        }
    }
    if (idle) {
        entries.push_back({QStringLiteral("idle (bubble)"), plot_style::bubbleColor().darker(140), true});
    }
    return entries;
}

namespace {

void paintRuler(QPainter& p, const QRect& area, const GanttMapping& mapping, const QPalette& palette)
{
    p.fillRect(area, palette.color(QPalette::Window));
    p.setPen(palette.color(QPalette::WindowText));
    const QFontMetrics fm(p.font());
    const double step = niceTimeStep(mapping.secondsPerPixel(), fm.horizontalAdvance(QStringLiteral("000.0 ms")) + 30);
    const double first = std::ceil(mapping.windowStart() / step) * step;
    for (double t = first; t <= mapping.windowEnd(); t += step) {
        const double x = mapping.mapTimeToX(t);
        p.drawLine(QPointF(x, area.bottom() - 6), QPointF(x, area.bottom()));
        p.drawText(QRectF(x + 3, area.top(), 200, area.height() - 4), Qt::AlignLeft | Qt::AlignVCenter, timeTickLabel(t, step));
    }
    p.drawLine(area.bottomLeft(), area.bottomRight());
}

void paintLegend(QPainter& p, const QRect& area, const QPalette& palette, const TimelineData& data)
{
    p.fillRect(area, palette.color(QPalette::Window));
    const std::vector<LegendEntry> entries = timelineLegend(data);
    // Every entry must show: a smaller font when the row is too narrow for all of them.
    QFont font = p.font();
    auto needed = [&entries](const QFontMetrics& m) {
        double w = 8;
        for (const LegendEntry& e : entries) {
            w += 16 + m.horizontalAdvance(e.name) + 12;
        }
        return w;
    };
    const double full = needed(QFontMetrics(font));
    if (full > area.width() && full > 0) {
        const int px = std::max(7, static_cast<int>(QFontInfo(font).pixelSize() * 0.95 * area.width() / full));
        font.setPixelSize(px);
        p.setFont(font);
    }
    const QFontMetrics fm(p.font());
    double x = area.left() + 8;
    const double y = area.top() + (area.height() - 12) / 2.0;
    p.setPen(palette.color(QPalette::WindowText));
    for (const LegendEntry& e : entries) {
        p.fillRect(QRectF(x, y, 12, 12), e.hatched ? QBrush(e.color, Qt::BDiagPattern) : QBrush(e.color));
        p.drawRect(QRectF(x, y, 12, 12));
        x += 16;
        const int w = fm.horizontalAdvance(e.name);
        p.drawText(QRectF(x, area.top(), w + 2, area.height()), Qt::AlignVCenter | Qt::AlignLeft, e.name);
        x += w + 12;
        if (x > area.right()) {
            break;
        }
    }
}

} // namespace

void paintTimeline(QPainter& p, const QRect& rect, const TimelineData& data, const GanttMapping& mapping, const TimelineLayout& layout,
                   const QPalette& palette, const TimelinePaintOptions& options)
{
    p.save();
    p.setClipRect(rect);
    p.fillRect(rect, palette.color(QPalette::Base));
    const QColor text = palette.color(QPalette::Text);
    const QFont baseFont = p.font();

    int top = rect.top();
    if (layout.titleHeight > 0 && !options.title.isEmpty()) {
        QFont bold = p.font();
        bold.setBold(true);
        bold.setPointSizeF(bold.pointSizeF() * 1.15);
        p.setFont(bold);
        p.setPen(text);
        p.drawText(QRect(rect.left() + 8, top, rect.width() - 16, layout.titleHeight), Qt::AlignVCenter | Qt::AlignLeft, options.title);
        p.setFont(baseFont);
        top += layout.titleHeight;
    }
    const QRect ruler(rect.left() + layout.labelWidth, top, rect.width() - layout.labelWidth, layout.headerHeight);
    const QRect rowsArea(rect.left(), ruler.bottom() + 1, rect.width(), rect.bottom() - ruler.bottom() - layout.legendHeight);
    const double timeLeft = rect.left() + layout.labelWidth;

    const std::vector<double> tops = layout.rowTops(data);
    const bool interleaved = std::any_of(data.rows.begin(), data.rows.end(), [](const TimelineRow& r) {
        return std::any_of(r.bars.begin(), r.bars.end(), [](const TimelineBar& b) { return b.chunk > 0; });
    });
    p.save();
    p.setClipRect(rowsArea);
    QFont small = p.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    for (std::size_t i = 0; i < data.rows.size(); ++i) {
        const TimelineRow& row = data.rows[i];
        const double h = layout.rowHeight(row);
        const double y = rowsArea.top() + tops[i] - options.scrollY;
        if (y + h < rowsArea.top() || y > rowsArea.bottom()) {
            continue;
        }
        // Alternate stage backgrounds so lanes group visibly by stage.
        if (row.stage % 2 == 1) {
            QColor band = text;
            band.setAlpha(12);
            p.fillRect(QRectF(rect.left(), y, rect.width(), h), band);
        }
        // Row label.
        p.setPen(text);
        if (row.lane == TimelineLane::Compute) {
            // The stage's name spans its lanes. Squeezed rows (an export of a deep pipeline) get a smaller
            // font, and only every k-th stage is named.
            double group = h;
            for (std::size_t j = i + 1; j < data.rows.size() && data.rows[j].stage == row.stage; ++j) {
                group += layout.rowHeight(data.rows[j]);
            }
            const int basePixels = QFontMetrics(baseFont).height();
            const int every = group >= 9 ? 1 : static_cast<int>(std::ceil(9.0 / std::max(group, 1.0)));
            if (row.stage % every == 0) {
                QFont f = baseFont;
                if (group < basePixels) {
                    f.setPixelSize(std::max(7, static_cast<int>(group)));
                }
                p.setFont(f);
                const bool lanes = group > h + 1;
                p.drawText(QRectF(rect.left() + 6, y, layout.labelWidth - (lanes ? 34 : 10), lanes ? group : h), Qt::AlignVCenter | Qt::AlignLeft,
                           QStringLiteral("stage %1").arg(row.stage));
            }
        } else if (h >= 7) {
            QFont laneFont = small;
            laneFont.setPixelSize(std::max(6, static_cast<int>(h)));
            p.setFont(laneFont);
            const char* names[] = {"", "TP", "EP", "CP", "PP", "DP"}; // by TimelineLane
            p.drawText(QRectF(rect.left() + 6, y, layout.labelWidth - 10, h), Qt::AlignVCenter | Qt::AlignRight,
                       QString::fromLatin1(names[static_cast<int>(row.lane)]));
        }
        p.save();
        p.setClipRect(QRectF(timeLeft, std::max<double>(y, rowsArea.top()), rect.right() - timeLeft + 1, h).intersected(rowsArea));
        // Idle bubbles first, hatched, so blocks draw over their edges.
        for (const auto& [a, b] : row.idle) {
            const double x0 = mapping.mapTimeToX(a);
            const double x1 = mapping.mapTimeToX(b);
            if (x1 < timeLeft || x0 > rect.right() || x1 - x0 < 0.5) {
                continue;
            }
            p.fillRect(QRectF(x0, y + 1, x1 - x0, h - 2), plot_style::bubbleColor());
            p.fillRect(QRectF(x0, y + 1, x1 - x0, h - 2), QBrush(plot_style::bubbleColor().darker(160), Qt::BDiagPattern));
        }
        const std::vector<DrawItem> items = visibleItems(row, mapping);
        p.setFont(small);
        const QFontMetrics sfm(small);
        for (const DrawItem& item : items) {
            const TimelineBar& bar = row.bars[item.first];
            QColor color = row.lane == TimelineLane::Tensor    ? plot_style::tensorCommColor()
                           : row.lane == TimelineLane::Expert  ? plot_style::expertCommColor()
                           : row.lane == TimelineLane::Context ? plot_style::contextCommColor()
                                                               : plot_style::taskColor(item.kind);
            if (item.folded() && item.mixed) {
                color = color.lighter(115); // merged tasks of several kinds: the dominant one's colour, paler
            }
            const QRectF r(item.x0, y + 1, item.x1 - item.x0, h - 2);
            p.fillRect(r, color);
            if (r.width() >= 4 && h >= 8) {
                p.setPen(color.darker(150));
                p.drawRect(r.adjusted(0, 0, -0.5, -0.5));
            }
            if (!item.folded() && row.lane == TimelineLane::Compute && h >= sfm.height()) {
                const QString label = fittingBarLabel(bar, interleaved, r.width(), sfm);
                if (!label.isEmpty()) {
                    p.setPen(bar.kind == TaskKind::Recompute ? QColor(0x20, 0x20, 0x20) : QColor(Qt::white));
                    p.drawText(r, Qt::AlignCenter, label);
                }
            }
        }
        if (static_cast<int>(i) == options.hoverRow && options.hoverBar >= 0 && options.hoverBar < static_cast<int>(row.bars.size())) {
            const TimelineBar& b = row.bars[static_cast<std::size_t>(options.hoverBar)];
            const double x0 = mapping.mapTimeToX(b.start);
            const double x1 = std::max(x0 + 2, mapping.mapTimeToX(b.end));
            p.setPen(QPen(text, 2));
            p.setBrush(Qt::NoBrush);
            p.drawRect(QRectF(x0, y, x1 - x0, h));
        }
        p.restore();
    }
    auto rowY = [&](int r) { return rowsArea.top() + tops[static_cast<std::size_t>(r)] - options.scrollY; };
    auto barRect = [&](int r, int b) {
        const TimelineBar& bar = data.rows[static_cast<std::size_t>(r)].bars[static_cast<std::size_t>(b)];
        const double x0 = mapping.mapTimeToX(bar.start);
        const double x1 = std::max(x0 + 2, mapping.mapTimeToX(bar.end));
        return QRectF(x0, rowY(r), x1 - x0, layout.rowHeight(data.rows[static_cast<std::size_t>(r)]));
    };
    const QRectF timeArea(timeLeft, rowsArea.top(), rect.right() - timeLeft + 1, rowsArea.height());
    p.save();
    p.setClipRect(timeArea);
    // Pipeline sends: an arrow from the send on the sender's pipeline lane to the receiving stage.
    // Only as many as stay readable: zoomed out over a whole iteration, hundreds of arrows hide the bars.
    if (options.flows) {
        std::vector<const PipelineFlow*> visible;
        for (const PipelineFlow& f : *options.flows) {
            if (f.toRow >= 0 && f.end >= mapping.windowStart() && f.start <= mapping.windowEnd()) {
                visible.push_back(&f);
            }
        }
        if (!visible.empty() && static_cast<int>(visible.size()) <= kMaxFlowArrows) {
            p.setRenderHint(QPainter::Antialiasing, true);
            QColor arrow = text;
            arrow.setAlpha(130);
            p.setPen(QPen(arrow, 1));
            p.setBrush(arrow);
            for (const PipelineFlow* f : visible) {
                const TimelineRow& src = data.rows[static_cast<std::size_t>(f->fromRow)];
                const TimelineRow& dst = data.rows[static_cast<std::size_t>(f->toRow)];
                const QPointF from(mapping.mapTimeToX(f->start), rowY(f->fromRow) + layout.rowHeight(src) / 2);
                const bool down = f->toRow > f->fromRow;
                const QPointF to(mapping.mapTimeToX(f->end), down ? rowY(f->toRow) + 1 : rowY(f->toRow) + layout.rowHeight(dst) - 1);
                p.drawLine(from, to);
                const double dy = down ? -5 : 5;
                p.drawPolygon(QPolygonF({to, QPointF(to.x() - 3, to.y() + dy), QPointF(to.x() + 3, to.y() + dy)}));
            }
            p.setRenderHint(QPainter::Antialiasing, false);
        }
    }
    if (options.matches) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0xff, 0xb3, 0x00), 2));
        for (const TimelineHit& h : *options.matches) {
            const QRectF r = barRect(h.row, h.bar);
            if (r.right() >= timeLeft && r.left() <= rect.right() && r.bottom() >= rowsArea.top() && r.top() <= rowsArea.bottom()) {
                p.drawRect(r.adjusted(-1, -1, 1, 1));
            }
        }
    }
    if (options.selectedRow >= 0 && options.selectedRow < static_cast<int>(data.rows.size()) && options.selectedBar >= 0 &&
        options.selectedBar < static_cast<int>(data.rows[static_cast<std::size_t>(options.selectedRow)].bars.size())) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0xd6, 0x27, 0x28), 2.5));
        p.drawRect(barRect(options.selectedRow, options.selectedBar).adjusted(-1.5, -1.5, 1.5, 1.5));
    }
    if (options.rangeEnd > options.rangeStart) {
        const double x0 = mapping.mapTimeToX(options.rangeStart);
        const double x1 = mapping.mapTimeToX(options.rangeEnd);
        QColor shade = palette.color(QPalette::Highlight);
        shade.setAlpha(45);
        p.fillRect(QRectF(x0, rowsArea.top(), x1 - x0, rowsArea.height()), shade);
        p.setPen(QPen(palette.color(QPalette::Highlight), 1));
        p.drawLine(QPointF(x0, rowsArea.top()), QPointF(x0, rowsArea.bottom()));
        p.drawLine(QPointF(x1, rowsArea.top()), QPointF(x1, rowsArea.bottom()));
        const QString label = QStringLiteral("Δ ") + formatSeconds(options.rangeEnd - options.rangeStart);
        const QFontMetrics fm(p.font());
        const QRectF box(std::max(timeLeft, (x0 + x1) / 2 - fm.horizontalAdvance(label) / 2.0 - 4), rowsArea.top() + 2,
                         fm.horizontalAdvance(label) + 8, fm.height() + 2);
        p.fillRect(box, palette.color(QPalette::Highlight));
        p.setPen(palette.color(QPalette::HighlightedText));
        p.drawText(box, Qt::AlignCenter, label);
    }
    p.restore();

    // The iteration's end as a dashed line: everything right of it belongs to the next iteration.
    const double xe = mapping.mapTimeToX(data.end_s);
    if (xe >= timeLeft && xe <= rect.right()) {
        p.setPen(QPen(text, 1, Qt::DashLine));
        p.drawLine(QPointF(xe, rowsArea.top()), QPointF(xe, rowsArea.bottom()));
    }
    p.restore();

    p.setPen(QColor(text.red(), text.green(), text.blue(), 60));
    p.drawLine(QPointF(timeLeft - 1, rowsArea.top()), QPointF(timeLeft - 1, rowsArea.bottom()));
    p.setFont(baseFont);
    p.fillRect(QRect(rect.left(), top, layout.labelWidth, layout.headerHeight), palette.color(QPalette::Window));
    paintRuler(p, ruler, mapping, palette);
    if (layout.legendHeight > 0) {
        paintLegend(p, QRect(rect.left(), rect.bottom() - layout.legendHeight + 1, rect.width(), layout.legendHeight), palette, data);
    }
    p.restore();
}

} // namespace vtrain::ui
