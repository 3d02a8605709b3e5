// SPDX-License-Identifier: MIT
#include "views/timeline_view.h"

#include <cmath>

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMenu>
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

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent)
{
    setObjectName(QStringLiteral("timelineView"));
    viewport()->setMouseTracking(true);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setMinimumHeight(110);           // a laptop screen: the window must fit 720 px high with the chart above
    setFocusPolicy(Qt::StrongFocus); // W/S/A/D/F
}

void TimelineView::setResult(std::shared_ptr<const SimulationResult> result)
{
    m_result = std::move(result);
    m_data = m_result ? TimelineData::fromResult(*m_result) : TimelineData{};
    m_rowTops = m_layout.rowTops(m_data);
    m_hoverRow = m_hoverBar = -1;
    m_selRow = m_selBar = -1;
    m_rangeStart = m_rangeEnd = 0;
    m_matches.clear();
    m_matchIndex = -1;
    m_flows = pipelineFlows(m_data);
    m_mapping.setExtent(0, m_data.end_s > 0 ? m_data.end_s : 1.0);
    m_mapping.reset();
    verticalScrollBar()->setValue(0);
    updateGeometryState();
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::setTimeExtent(double endSeconds)
{
    m_mapping.setExtent(0, endSeconds > 0 ? endSeconds : 1.0);
    m_mapping.reset();
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::setLegendVisible(bool visible)
{
    m_layout.legendHeight = visible ? TimelineLayout{}.legendHeight : 0;
    updateGeometryState();
    viewport()->update();
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
    options.selectedRow = m_selRow;
    options.selectedBar = m_selBar;
    options.rangeStart = m_rangeStart;
    options.rangeEnd = m_rangeEnd;
    options.matches = m_matches.empty() ? nullptr : &m_matches;
    options.flows = m_showFlows ? &m_flows : nullptr;
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
    options.flows = m_showFlows ? &m_flows : nullptr;
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
    if (event->button() != Qt::LeftButton || m_data.empty()) {
        return;
    }
    m_pressPos = event->position().toPoint();
    if (event->modifiers() & Qt::ShiftModifier) {
        m_rangeDragging = true; // Shift+drag: a time selection
        m_rangeAnchor = m_mapping.mapXToTime(std::max<double>(m_pressPos.x(), m_layout.labelWidth));
        return;
    }
    m_dragging = true;
    m_dragLast = m_pressPos;
    viewport()->setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    if (m_rangeDragging) {
        const double t = m_mapping.mapXToTime(std::max<double>(pos.x(), m_layout.labelWidth));
        setRange(std::min(t, m_rangeAnchor), std::max(t, m_rangeAnchor));
        return;
    }
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
    if (event->button() != Qt::LeftButton) {
        return;
    }
    const QPoint pos = event->position().toPoint();
    const bool click = (pos - m_pressPos).manhattanLength() <= 3;
    if (m_rangeDragging) {
        m_rangeDragging = false;
        if (click) {
            setRange(0, 0);
        }
        return;
    }
    m_dragging = false;
    viewport()->unsetCursor();
    if (click) {
        // A click selects the task under the pointer (or clears the selection on empty space).
        const int row = rowAtY(pos.y());
        const int bar = row >= 0 && pos.x() >= m_layout.labelWidth ? barAt(m_data.rows[static_cast<std::size_t>(row)], m_mapping, pos.x()) : -1;
        selectTask(bar >= 0 ? row : -1, bar);
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
    if (barIndex >= 0) {
        return describeTask(rowIndex, barIndex);
    }
    {
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
}

QString TimelineView::describeTask(int rowIndex, int barIndex) const
{
    if (rowIndex < 0 || rowIndex >= static_cast<int>(m_data.rows.size()) || barIndex < 0 ||
        barIndex >= static_cast<int>(m_data.rows[static_cast<std::size_t>(rowIndex)].bars.size())) {
        return {};
    }
    const TimelineRow& row = m_data.rows[static_cast<std::size_t>(rowIndex)];
    const TimelineBar& bar = row.bars[static_cast<std::size_t>(barIndex)];
    QString text = tr("Stage %1 · %2 lane\n%3")
                       .arg(row.stage)
                       .arg(QString::fromLatin1(laneName(row.lane)), row.lane == TimelineLane::Tensor   ? tr("tensor-parallel collectives")
                                                                     : row.lane == TimelineLane::Expert ? tr("expert all-to-all (dispatch + combine)")
                                                                     : row.lane == TimelineLane::Context ? tr("context-parallel exchange")
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
        if (task.ep_comm_s > 0) {
            text += tr(" · expert all-to-all %1").arg(formatSeconds(task.ep_comm_s));
        }
        if (task.cp_comm_s > 0) {
            text += tr(" · context-parallel comm %1").arg(formatSeconds(task.cp_comm_s));
        }
    }
    return text;
}

} // namespace vtrain::ui

namespace vtrain::ui {

void TimelineView::selectTask(int row, int bar)
{
    const QString description = describeTask(row, bar);
    m_selRow = description.isEmpty() ? -1 : row;
    m_selBar = description.isEmpty() ? -1 : bar;
    viewport()->update();
    Q_EMIT taskSelected(description);
}

void TimelineView::clearSelection()
{
    setRange(0, 0);
    selectTask(-1, -1);
}

void TimelineView::setRange(double startSeconds, double endSeconds)
{
    m_rangeStart = startSeconds;
    m_rangeEnd = std::max(startSeconds, endSeconds);
    viewport()->update();
    Q_EMIT rangeChanged(m_rangeStart, m_rangeEnd);
}

void TimelineView::panBy(double fractionOfWindow)
{
    m_mapping.panPixels(-fractionOfWindow * m_mapping.viewportWidth());
    viewport()->update();
    Q_EMIT windowChanged(m_mapping.windowStart(), m_mapping.windowEnd());
}

void TimelineView::fitSelection()
{
    if (m_selRow >= 0) {
        const TimelineBar& b = m_data.rows[static_cast<std::size_t>(m_selRow)].bars[static_cast<std::size_t>(m_selBar)];
        const double pad = std::max((b.end - b.start) * 0.25, GanttMapping::kMinSpan);
        zoomTo(b.start - pad, b.end + pad);
        ensureRowVisible(m_selRow);
    } else if (m_rangeEnd > m_rangeStart) {
        zoomTo(m_rangeStart, m_rangeEnd);
    } else {
        resetZoom();
    }
}

int TimelineView::setSearch(const QString& query)
{
    m_matches = findTasks(m_data, query);
    m_matchIndex = m_matches.empty() ? -1 : 0;
    if (m_matchIndex >= 0) {
        showMatch();
    } else {
        viewport()->update();
    }
    Q_EMIT matchesChanged(matchCount(), m_matchIndex);
    return matchCount();
}

void TimelineView::nextMatch()
{
    if (m_matches.empty()) {
        return;
    }
    m_matchIndex = (m_matchIndex + 1) % matchCount();
    showMatch();
    Q_EMIT matchesChanged(matchCount(), m_matchIndex);
}

void TimelineView::previousMatch()
{
    if (m_matches.empty()) {
        return;
    }
    m_matchIndex = (m_matchIndex - 1 + matchCount()) % matchCount();
    showMatch();
    Q_EMIT matchesChanged(matchCount(), m_matchIndex);
}

void TimelineView::showMatch()
{
    // The match selected and brought into view at the current zoom (centred), its row scrolled to.
    const TimelineHit& h = m_matches[static_cast<std::size_t>(m_matchIndex)];
    const TimelineBar& b = m_data.rows[static_cast<std::size_t>(h.row)].bars[static_cast<std::size_t>(h.bar)];
    const double span = std::max(m_mapping.span(), (b.end - b.start) * 1.5);
    const double mid = (b.start + b.end) / 2;
    zoomTo(mid - span / 2, mid + span / 2);
    ensureRowVisible(h.row);
    selectTask(h.row, h.bar);
}

void TimelineView::ensureRowVisible(int row)
{
    if (row < 0 || row >= static_cast<int>(m_rowTops.size())) {
        return;
    }
    const int rowsHeight = viewport()->height() - m_layout.headerHeight - m_layout.legendHeight;
    const double top = m_rowTops[static_cast<std::size_t>(row)];
    const double bottom = top + m_layout.rowHeight(m_data.rows[static_cast<std::size_t>(row)]);
    QScrollBar* bar = verticalScrollBar();
    if (top < bar->value()) {
        bar->setValue(static_cast<int>(top));
    } else if (bottom > bar->value() + rowsHeight) {
        bar->setValue(static_cast<int>(bottom - rowsHeight + 1));
    }
}

void TimelineView::setShowFlows(bool show)
{
    m_showFlows = show;
    viewport()->update();
}

QString TimelineView::visibleRangeText() const
{
    return tr("%1 → %2 (%3)").arg(formatSeconds(m_mapping.windowStart()), formatSeconds(m_mapping.windowEnd()), formatSeconds(m_mapping.span()));
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    if (m_data.empty() || event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) {
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    switch (event->key()) {
    case Qt::Key_W: zoomBy(1.5); break;
    case Qt::Key_S: zoomBy(1 / 1.5); break;
    case Qt::Key_A: panBy(-0.2); break;
    case Qt::Key_D: panBy(0.2); break;
    case Qt::Key_F: fitSelection(); break;
    case Qt::Key_0: resetZoom(); break;
    case Qt::Key_F3: (event->modifiers() & Qt::ShiftModifier) ? previousMatch() : nextMatch(); break;
    case Qt::Key_Escape: clearSelection(); break;
    default: QAbstractScrollArea::keyPressEvent(event); return;
    }
    event->accept();
}

QMenu* TimelineView::buildContextMenu(const QPoint& pos)
{
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("timelineMenu"));
    const int row = rowAtY(pos.y());
    const int bar = row >= 0 && pos.x() >= m_layout.labelWidth ? barAt(m_data.rows[static_cast<std::size_t>(row)], m_mapping, pos.x()) : -1;
    const QString task = bar >= 0 ? describeTask(row, bar) : selectedDescription();
    QAction* copyTask = menu->addAction(tr("Copy task details"), this, [task] { QApplication::clipboard()->setText(task); });
    copyTask->setEnabled(!task.isEmpty());
    menu->addAction(tr("Copy visible range"), this, [this] { QApplication::clipboard()->setText(visibleRangeText()); });
    if (m_rangeEnd > m_rangeStart) {
        menu->addAction(tr("Copy selected range (%1)").arg(formatSeconds(m_rangeEnd - m_rangeStart)), this, [this] {
            QApplication::clipboard()->setText(
                tr("%1 → %2 (%3)").arg(formatSeconds(m_rangeStart), formatSeconds(m_rangeEnd), formatSeconds(m_rangeEnd - m_rangeStart)));
        });
    }
    menu->addAction(tr("Export visible range as image…"), this, &TimelineView::exportVisibleRequested);
    menu->addSeparator();
    if (bar >= 0) {
        menu->addAction(tr("Select this task"), this, [this, row, bar] { selectTask(row, bar); });
    }
    menu->addAction(tr("Fit selection\tF"), this, &TimelineView::fitSelection);
    menu->addAction(tr("Whole iteration\t0"), this, &TimelineView::resetZoom);
    menu->addAction(tr("Clear selection\tEsc"), this, &TimelineView::clearSelection);
    QAction* flows = menu->addAction(tr("Show pipeline flow arrows"), this, &TimelineView::setShowFlows);
    flows->setCheckable(true);
    flows->setChecked(m_showFlows);
    return menu;
}

void TimelineView::contextMenuEvent(QContextMenuEvent* event)
{
    if (m_data.empty()) {
        return;
    }
    QMenu* menu = buildContextMenu(event->pos());
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

} // namespace vtrain::ui
