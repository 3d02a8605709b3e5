// SPDX-License-Identifier: MIT
#pragma once
// The pipeline timeline of one simulated plan: one row group per pipeline stage (compute lane plus the
// tensor, pipeline and data-parallel communication lanes). Wheel zooms about the cursor, dragging pans
// (horizontally in time, vertically through the stages), double-click shows the whole iteration, hovering
// shows a task's times. Drawing goes through level of detail, so 100,000 tasks stay smooth.
#include <memory>

#include <QAbstractScrollArea>

#include "models/gantt_mapping.h"
#include "models/timeline_data.h"
#include "views/timeline_painter.h"

namespace vtrain {
struct SimulationResult;
}

namespace vtrain::ui {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const SimulationResult> result);
    void clear();
    std::shared_ptr<const SimulationResult> result() const { return m_result; }
    const TimelineData& data() const { return m_data; }
    int stageCount() const { return m_data.stages; }
    const GanttMapping& mapping() const { return m_mapping; }

    // Renders the current time window with every stage, fitted to `size` (exports).
    void render(QPainter& painter, const QSize& size, const QString& title) const;
    // Height every row needs at its natural size, with ruler, legend and a title line.
    double naturalHeight() const;
    // Text of the tooltip for the task under `pos` (viewport coordinates); empty if none.
    QString describeAt(const QPoint& pos) const;

public Q_SLOTS:
    void resetZoom();
    void zoomBy(double factor);
    void zoomTo(double startSeconds, double endSeconds);

Q_SIGNALS:
    void windowChanged(double startSeconds, double endSeconds);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    void updateGeometryState();
    // The data row under viewport y, or -1.
    int rowAtY(int y) const;

    std::shared_ptr<const SimulationResult> m_result;
    TimelineData m_data;
    TimelineLayout m_layout;
    std::vector<double> m_rowTops;
    GanttMapping m_mapping;
    QPoint m_dragLast;
    bool m_dragging = false;
    int m_hoverRow = -1;
    int m_hoverBar = -1;
};

} // namespace vtrain::ui
