// SPDX-License-Identifier: MIT
#pragma once
// The shared cluster's jobs over time under one policy, as a Gantt chart: one row per job (in arrival
// order, the first at the top), a bar per allocation segment coloured by its GPU count, a thin line while
// the job waits (arrival to first start), and a mark at its deadline (dark when met, red when missed).
// Hovering a bar or a mark tells its job, GPUs, times and plan.
#include <vector>

#include <QHash>
#include <QPointF>
#include <QWidget>

#include "vtrain/cluster_schedule.h"

class QCPAbstractItem;
class QCustomPlot;
class QCPItemLine;
class QCPTextElement;

namespace vtrain::ui {

QString policyTitle(SchedulePolicy policy); // "simulator-informed (vTrain)", ...

class ClusterGanttPlot : public QWidget {
    Q_OBJECT
public:
    explicit ClusterGanttPlot(QWidget* parent = nullptr);

    // `gpuCounts`: every allocation size any policy used, so a colour means the same on every policy.
    void setSchedule(const std::vector<ClusterJob>& jobs, const PolicyResult& result, const std::vector<int>& gpuCounts, const QString& title);
    void clear();

    QCustomPlot* customPlot() const { return m_plot; }
    int rowCount() const { return m_rows; }
    int segmentCount() const { return m_segments; }
    // Each job's deadline mark as (hours, row), in job order; for tests.
    std::vector<QPointF> deadlineMarks() const;
    // What hovering at `pos` (customPlot() coordinates) tells: the bar's job, GPUs, time and plan, or the
    // deadline's; empty when nothing is there.
    QString toolTipAt(const QPointF& pos) const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void addLegendEntry(const QString& name, const QColor& color, bool line);

    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    std::vector<QCPItemLine*> m_deadlines;
    QHash<const QCPAbstractItem*, QString> m_tips;
    int m_rows = 0;
    int m_segments = 0;
};

} // namespace vtrain::ui
