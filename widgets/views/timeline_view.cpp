// SPDX-License-Identifier: MIT
#include "views/timeline_view.h"

#include <cmath>

#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include "models/format.h"
#include "models/timeline_lod.h"
#include "views/plot_style.h"
#include "vtrain/simulation_result.h"

namespace vtrain::ui {

TimelineView::TimelineView(QWidget* parent)
    : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("timelineView"));
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setMinimumHeight(160);
}

void TimelineView::setResult(std::shared_ptr<const SimulationResult> result)
{
    m_result = std::move(result);
    m_data = m_result ? TimelineData::fromResult(*m_result) : TimelineData{};
    m_rowTops = m_layout.rowTops(m_data);
    m_hoverRow = m_hoverBar = -1;
    m_mapping.setExtent(0, m_data.end_s > 0 ? m_data.end_s : 1.0);
    m_mapping.reset();
    verticalScrollBar()->setValue(0);
    updateGeometryState();
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::clear()
{
    setResult(nullptr);
}

void TimelineView::updateGeometryState()
{
    m_mapping.setViewport(m_layout.labelWidth, viewport()->width() - m_layout.labelWidth);
    const int rowsHeight = viewport()->height() - m_layout.headerHeight - m_layout.legendHeight;
    const int content = static_cast<int>(std::ceil(m_layout.contentHeight(m_data)));
    verticalScrollBar()->setRange(0, std::max(0, content - rowsHeight));
    verticalScrollBar()->setPageStep(std::max(1, rowsHeight));
    verticalScrollBar()->setSingleStep(static_cast<int>(m_layout.computeHeight));
}

void TimelineView::resetZoom()
{
    m_mapping.reset();
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::zoomBy(double factor)
{
    m_mapping.zoomAt(factor, m_mapping.viewportX() + m_mapping.viewportWidth() / 2);
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::zoomTo(double startSeconds, double endSeconds)
{
    m_mapping.setWindow(startSeconds, endSeconds);
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::paintEvent(QPaintEvent*)
{
    QPainter p(viewport());
    if (m_data.empty()) {
        p.fillRect(viewport()->rect(), palette().color(QPalette::Base));
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(viewport()->rect(), Qt::AlignCenter, tr("Select a plan in the chart or the table to see its pipeline timeline."));
        return;
    }
    TimelinePaintOptions options;
    options.scrollY = verticalScrollBar()->value();
    options.hoverRow = m_hoverRow;
    options.hoverBar = m_hoverBar;
    paintTimeline(p, viewport()->rect(), m_data, m_mapping, m_layout, palette(), options);
}

void TimelineView::render(QPainter& painter, const QSize& size, const QString& title) const
{
    TimelineLayout layout = m_layout;
    layout.titleHeight = title.isEmpty() ? 0 : 30;
    layout = layout.fittedTo(m_data, size.height() - layout.headerHeight - layout.legendHeight - layout.titleHeight);
    GanttMapping mapping = m_mapping;
    mapping.setViewport(layout.labelWidth, size.width() - layout.labelWidth);
    mapping.setWindow(m_mapping.windowStart(), m_mapping.windowEnd());
    TimelinePaintOptions options;
    options.title = title;
    paintTimeline(painter, QRect(QPoint(0, 0), size), m_data, mapping, layout, palette(), options);
}

double TimelineView::naturalHeight() const
{
    return m_layout.contentHeight(m_data) + m_layout.headerHeight + m_layout.legendHeight + 30;
}

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    updateGeometryState();
}

void TimelineView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    if (m_data.empty()) {
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        QAbstractScrollArea::wheelEvent(event); // shift+wheel scrolls through the stages
        return;
    }
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        return;
    }
    m_mapping.zoomAt(std::pow(1.25, steps), event->position().x());
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = true;
        m_dragLast = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    if (m_dragging) {
        const QPoint delta = pos - m_dragLast;
        m_dragLast = pos;
        m_mapping.panPixels(delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        viewport()->update();
        Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
        return;
    }
    const int row = rowAtY(pos.y());
    const int bar = row >= 0 && pos.x() >= m_layout.labelWidth ? barAt(m_data.rows[static_cast<std::size_t>(row)], m_mapping, pos.x()) : -1;
    if (row != m_hoverRow || bar != m_hoverBar) {
        m_hoverRow = row;
        m_hoverBar = bar;
        viewport()->update();
    }
    const QString text = describeAt(pos);
    if (text.isEmpty()) {
        QToolTip::hideText();
    } else {
        QToolTip::showText(event->globalPosition().toPoint(), text, viewport());
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        m_dragging = false;
        viewport()->unsetCursor();
    }
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*)
{
    resetZoom();
}

void TimelineView::leaveEvent(QEvent* event)
{
    m_hoverRow = m_hoverBar = -1;
    viewport()->update();
    QAbstractScrollArea::leaveEvent(event);
}

int TimelineView::rowAtY(int y) const
{
    const double rowY = y - m_layout.headerHeight + verticalScrollBar()->value();
    if (y < m_layout.headerHeight || y > viewport()->height() - m_layout.legendHeight) {
        return -1;
    }
    for (std::size_t i = 0; i < m_rowTops.size(); ++i) {
        if (rowY >= m_rowTops[i] && rowY < m_rowTops[i] + m_layout.rowHeight(m_data.rows[i])) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

QString TimelineView::describeAt(const QPoint& pos) const
{
    const int rowIndex = rowAtY(pos.y());
    if (rowIndex < 0 || pos.x() < m_layout.labelWidth) {
        return {};
    }
    const TimelineRow& row = m_data.rows[static_cast<std::size_t>(rowIndex)];
    const int barIndex = barAt(row, m_mapping, pos.x());
    if (barIndex < 0) {
        const double t = m_mapping.mapXToTime(pos.x());
        for (const auto& [a, b] : row.idle) {
            if (t >= a && t <= b) {
                return tr("Stage %1 idle (pipeline bubble)\n%2 → %3 (%4)")
                    .arg(row.stage)
                    .arg(formatSeconds(a), formatSeconds(b), formatSeconds(b - a));
            }
        }
        return {};
    }
    const TimelineBar& bar = row.bars[static_cast<std::size_t>(barIndex)];
    QString text = tr("Stage %1 · %2 lane\n%3").arg(row.stage).arg(QString::fromLatin1(laneName(row.lane)),
                                                                    row.lane == TimelineLane::Tensor ? tr("tensor-parallel collectives")
                                                                                                     : plot_style::taskName(bar.kind));
    if (bar.micro_batch >= 0) {
        text += tr(" · micro-batch %1").arg(bar.micro_batch);
        if (m_result && m_result->plan.virtual_stages > 1) {
            text += tr(" · chunk %1").arg(bar.chunk);
        }
    }
    text += tr("\n%1 → %2 (%3)").arg(formatSeconds(bar.start), formatSeconds(bar.end), formatSeconds(bar.end - bar.start));
    if (row.lane == TimelineLane::Compute && bar.layers > 0) {
        text += tr("\n%1 layers").arg(bar.layers);
    }
    if (m_result && bar.task >= 0 && row.lane == TimelineLane::Compute) {
        const TimelineTask& task = m_result->timeline[static_cast<std::size_t>(bar.task)];
        if (task.tp_comm_s > 0) {
            text += tr(" · tensor-parallel comm %1").arg(formatSeconds(task.tp_comm_s));
        }
    }
    return text;
}

} // namespace vtrain::ui
