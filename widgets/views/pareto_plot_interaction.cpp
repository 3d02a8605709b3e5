// SPDX-License-Identifier: MIT
// The Pareto plot's pointer side: which plan is under the mouse (a bisection over points sorted by
// training time, then pixel distances), hover tooltips and markers, click to select, and telling user
// zoom/pan apart from the automatic fit.
#include <algorithm>

#include <QMouseEvent>
#include <QToolTip>

#include <qcustomplot.h>

#include "models/plan_table_model.h"
#include "views/pareto_plot.h"

namespace vtrain::ui {

QPoint ParetoPlot::pixelOfRow(int row) const
{
    if (!m_model || row < 0 || row >= m_model->rowCount()) {
        return {};
    }
    const PlanRow& r = m_model->planRow(row);
    return QPoint(qRound(m_plot->xAxis->coordToPixel(r.training_days)), qRound(m_plot->yAxis->coordToPixel(r.cost_usd)));
}

void ParetoPlot::ensureSortedIndex() const
{
    if (!m_pointsSorted) {
        std::sort(m_points.begin(), m_points.end(), [](const Point& a, const Point& b) { return a.days < b.days; });
        m_pointsSorted = true;
    }
}

int ParetoPlot::rowAt(const QPointF& pos, double radius) const
{
    if (m_points.empty()) {
        return -1;
    }
    ensureSortedIndex();
    double lo = m_plot->xAxis->pixelToCoord(pos.x() - radius);
    double hi = m_plot->xAxis->pixelToCoord(pos.x() + radius);
    if (lo > hi) {
        std::swap(lo, hi);
    }
    auto it = std::lower_bound(m_points.begin(), m_points.end(), lo, [](const Point& p, double d) { return p.days < d; });
    int best = -1;
    double bestD2 = radius * radius;
    bool bestOnFront = false;
    for (; it != m_points.end() && it->days <= hi; ++it) {
        const double dx = m_plot->xAxis->coordToPixel(it->days) - pos.x();
        const double dy = m_plot->yAxis->coordToPixel(it->cost) - pos.y();
        const double d2 = dx * dx + dy * dy;
        const bool onFront = m_model && m_model->planRow(it->row).on_front;
        // Prefer front plans among near-equals: they are drawn on top and are what a user aims at.
        if (d2 < bestD2 - 1.0 || (d2 <= bestD2 && onFront && !bestOnFront)) {
            best = it->row;
            bestD2 = d2;
            bestOnFront = onFront;
        }
    }
    return best;
}

bool ParetoPlot::eventFilter(QObject* watched, QEvent* event)
{
    if (watched != m_plot) {
        return QWidget::eventFilter(watched, event);
    }
    switch (event->type()) {
    case QEvent::MouseMove: {
        auto* e = static_cast<QMouseEvent*>(event);
        if (e->buttons() & Qt::LeftButton) {
            if ((e->position().toPoint() - m_pressPos).manhattanLength() > 3) {
                m_userZoomed = true; // dragging pans
            }
            break;
        }
        const int row = rowAt(e->position());
        if (row != m_hoverRow) {
            m_hoverRow = row;
            updateMarkers();
            m_plot->layer(QStringLiteral("marks"))->replot();
        }
        if (row >= 0 && m_model) {
            QToolTip::showText(e->globalPosition().toPoint(), m_model->describe(row), m_plot);
        } else {
            QToolTip::hideText();
        }
        break;
    }
    case QEvent::MouseButtonPress: m_pressPos = static_cast<QMouseEvent*>(event)->position().toPoint(); break;
    case QEvent::MouseButtonRelease: {
        auto* e = static_cast<QMouseEvent*>(event);
        if (e->button() == Qt::LeftButton && (e->position().toPoint() - m_pressPos).manhattanLength() <= 3) {
            const int row = rowAt(e->position());
            if (row >= 0) {
                setSelectedRow(row);
                Q_EMIT rowClicked(row);
            }
        }
        break;
    }
    case QEvent::Wheel: m_userZoomed = true; break;
    case QEvent::MouseButtonDblClick:
        m_userZoomed = false; // double-click: back to the front (or every plan, with Show all)
        rescaleIfNotZoomed();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return true;
    case QEvent::Leave:
        if (m_hoverRow >= 0) {
            m_hoverRow = -1;
            updateMarkers();
            m_plot->layer(QStringLiteral("marks"))->replot();
        }
        break;
    default: break;
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace vtrain::ui
