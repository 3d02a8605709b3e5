// SPDX-License-Identifier: MIT
#include "views/timeline_painter.h"

#include <algorithm>
#include <cmath>

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

namespace {

QString barLabel(const TimelineBar& b, bool interleaved)
{
    QString s = plot_style::taskShortName(b.kind);
    if (b.micro_batch >= 0) {
        s += QString::number(b.micro_batch);
        if (interleaved) {
            s += QLatin1Char('.') + QString::number(b.chunk);
        }
    }
    return s;
}

// Tick labels in one unit chosen by the step, with just the decimals the step needs ("0", "250 ms", "1.5 s").
QString tickLabel(double t, double step)
{
    if (std::abs(t) < step * 1e-6) {
        return QStringLiteral("0");
    }
    double unit = 1.0;
    const char* suffix = " s";
    if (step < 1e-3) {
        unit = 1e-6;
        suffix = " µs";
    } else if (step < 1.0) {
        unit = 1e-3;
        suffix = " ms";
    }
    const double scaledStep = step / unit;
    const int decimals = scaledStep >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(scaledStep) - 1e-9));
    return QString::number(t / unit, 'f', decimals) + QString::fromUtf8(suffix);
}

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
        p.drawText(QRectF(x + 3, area.top(), 200, area.height() - 4), Qt::AlignLeft | Qt::AlignVCenter,
                   tickLabel(t, step));
    }
    p.drawLine(area.bottomLeft(), area.bottomRight());
}

void paintLegend(QPainter& p, const QRect& area, const QPalette& palette)
{
    p.fillRect(area, palette.color(QPalette::Window));
    const QFontMetrics fm(p.font());
    struct Entry {
        QString name;
        QBrush brush;
    };
    const std::vector<Entry> entries{
        {plot_style::taskName(TaskKind::Forward), plot_style::taskColor(TaskKind::Forward)},
        {plot_style::taskName(TaskKind::Backward), plot_style::taskColor(TaskKind::Backward)},
        {plot_style::taskName(TaskKind::Recompute), plot_style::taskColor(TaskKind::Recompute)},
        {QStringLiteral("TP comm"), QColor(0x76, 0xb7, 0xb2)},
        {QStringLiteral("PP send"), plot_style::taskColor(TaskKind::SendForward)},
        {QStringLiteral("DP reduce"), plot_style::taskColor(TaskKind::GradReduce)},
        {QStringLiteral("optimizer"), plot_style::taskColor(TaskKind::OptimizerStep)},
        {QStringLiteral("idle (bubble)"), QBrush(plot_style::bubbleColor().darker(140), Qt::BDiagPattern)},
    };
    double x = area.left() + 8;
    const double y = area.top() + (area.height() - 12) / 2.0;
    p.setPen(palette.color(QPalette::WindowText));
    for (const Entry& e : entries) {
        p.fillRect(QRectF(x, y, 12, 12), e.brush);
        p.drawRect(QRectF(x, y, 12, 12));
        x += 16;
        const int w = fm.horizontalAdvance(e.name);
        p.drawText(QRectF(x, area.top(), w + 2, area.height()), Qt::AlignVCenter | Qt::AlignLeft, e.name);
        x += w + 14;
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
    const bool interleaved = std::any_of(data.rows.begin(), data.rows.end(),
                                         [](const TimelineRow& r) { return std::any_of(r.bars.begin(), r.bars.end(), [](const TimelineBar& b) { return b.chunk > 0; }); });
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
                p.drawText(QRectF(rect.left() + 6, y, layout.labelWidth - (lanes ? 34 : 10), lanes ? group : h),
                           Qt::AlignVCenter | Qt::AlignLeft, QStringLiteral("stage %1").arg(row.stage));
            }
        } else if (h >= 7) {
            QFont laneFont = small;
            laneFont.setPixelSize(std::max(6, static_cast<int>(h)));
            p.setFont(laneFont);
            const char* names[] = {"", "TP", "PP", "DP"};
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
            QColor color = row.lane == TimelineLane::Tensor ? QColor(0x76, 0xb7, 0xb2) : plot_style::taskColor(item.kind);
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
                const QString label = barLabel(bar, interleaved);
                if (sfm.horizontalAdvance(label) + 4 <= r.width()) {
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
    paintLegend(p, QRect(rect.left(), rect.bottom() - layout.legendHeight + 1, rect.width(), layout.legendHeight), palette);
    p.restore();
}

} // namespace vtrain::ui
