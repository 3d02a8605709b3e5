// SPDX-License-Identifier: MIT
#pragma once
// The shared-cluster tab (vTrain's case study 3): inputs (GPU type and count, a seeded workload of jobs),
// the metrics of the three policies (deadline satisfaction, average JCT, makespan, GPU utilisation,
// cluster MFU) and a Gantt chart of one policy's schedule. Runs on a worker (ScheduleRunner): every
// valid edit starts a new study shortly after, replacing the running one; refused inputs are shown at
// their field and keep the last result on screen.
#include <memory>
#include <optional>

#include "models/schedule_runner.h"
#include "views/case_study_view.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace vtrain::ui {

class ClusterGanttPlot;
class FieldRow;

class ClusterScheduleView : public CaseStudyView {
    Q_OBJECT
public:
    enum Column { ColPolicy, ColDeadlines, ColJct, ColMakespan, ColUtilization, ColMfu, ColRestarts, ColumnCount };

    // `catalog` must outlive the view.
    explicit ClusterScheduleView(ProfileCatalog* catalog, QWidget* parent = nullptr);

    // The inputs; std::nullopt (and the fields marked) when some input is refused.
    std::optional<ScheduleInputs> inputs();
    void setInputs(const QString& gpu, int gpus, int jobs, std::uint64_t seed, double windowHours = 80);
    // The policy the Gantt shows.
    void setGanttPolicy(SchedulePolicy policy);
    SchedulePolicy ganttPolicy() const;

    ScheduleRunner* runner() const { return m_runner; }
    std::shared_ptr<const ScheduleRunResult> result() const { return m_result; }
    QTableWidget* table() const { return m_table; }
    ClusterGanttPlot* gantt() const { return m_gantt; }
    QCustomPlot* customPlot() const override;
    // fieldError() knows "gpu", "gpus", "jobs", "seed", "window_hours".
    QString summaryText() const;

protected:
    Study study() override;
    QVariantMap savedInputs() const override;
    void loadInputs(const QVariantMap& saved) override;

private:
    QWidget* buildInputs();
    void onFinished(std::shared_ptr<const ScheduleRunResult> result);
    void fillTable(const ScheduleRunResult& result);
    void fillSummary(const ScheduleRunResult& result);
    void showGantt();

    ScheduleRunner* m_runner = nullptr;
    FieldRow* m_gpus = nullptr;
    FieldRow* m_jobs = nullptr;
    FieldRow* m_seed = nullptr;
    FieldRow* m_window = nullptr;
    QComboBox* m_policy = nullptr;
    QLabel* m_summary = nullptr;
    ClusterGanttPlot* m_gantt = nullptr;
    QTableWidget* m_table = nullptr;
    std::shared_ptr<const ScheduleRunResult> m_result;
};

} // namespace vtrain::ui
