// SPDX-License-Identifier: MIT
#pragma once
// The shared-cluster tab (vTrain's case study 3): inputs (GPU type and count, a seeded workload of jobs),
// the metrics of the three policies (deadline satisfaction, average JCT, makespan, GPU utilisation,
// cluster MFU) and a Gantt chart of one policy's schedule. Runs on a worker (ScheduleRunner): every
// valid edit starts a new study shortly after, replacing the running one; refused inputs are shown at
// their field and keep the last result on screen.
#include <memory>
#include <optional>

#include <QHash>
#include <QWidget>

#include "models/schedule_runner.h"
#include "views/export.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QTableWidget;

namespace vtrain::ui {

class ClusterGanttPlot;
class FieldRow;
class ProfileCatalog;
class StudyBar;

class ClusterScheduleView : public QWidget {
    Q_OBJECT
public:
    enum Column { ColPolicy, ColDeadlines, ColJct, ColMakespan, ColUtilization, ColMfu, ColRestarts, ColumnCount };

    // `catalog` must outlive the view.
    explicit ClusterScheduleView(ProfileCatalog* catalog, QWidget* parent = nullptr);

    // The inputs; std::nullopt (and the fields marked) when some input is refused.
    std::optional<ScheduleInputs> inputs();
    bool run();
    void cancel();
    void setInputs(const QString& gpu, int gpus, int jobs, std::uint64_t seed, double windowHours = 80);
    void restoreInputs();
    void setAutoRun(bool on) { m_autoRun = on; }
    // The policy the Gantt shows.
    void setGanttPolicy(SchedulePolicy policy);
    SchedulePolicy ganttPolicy() const;

    ScheduleRunner* runner() const { return m_runner; }
    std::shared_ptr<const ScheduleRunResult> result() const { return m_result; }
    QTableWidget* table() const { return m_table; }
    ClusterGanttPlot* gantt() const { return m_gantt; }
    QCustomPlot* customPlot() const;
    // The error shown at a field, by the core's field name ("gpu", "gpus", "jobs", "seed", "window_hours").
    QString fieldError(const QString& field) const;
    QString statusText() const;
    QString summaryText() const;

    bool exportImage(const QString& path, const ExportSize& size, QString* error);
    void exportDialog();

protected:
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildInputs();
    void onEdited();
    void saveInputs() const;
    void clearErrors();
    void showErrors(const Diagnostics& errors);
    void onFinished(std::shared_ptr<const ScheduleRunResult> result);
    void fillTable(const ScheduleRunResult& result);
    void fillSummary(const ScheduleRunResult& result);
    void showGantt();

    ProfileCatalog* m_catalog;
    ScheduleRunner* m_runner = nullptr;
    QComboBox* m_gpu = nullptr;
    QLabel* m_gpuError = nullptr;
    FieldRow* m_gpus = nullptr;
    FieldRow* m_jobs = nullptr;
    FieldRow* m_seed = nullptr;
    FieldRow* m_window = nullptr;
    QComboBox* m_policy = nullptr;
    StudyBar* m_bar = nullptr;
    QLabel* m_summary = nullptr;
    ClusterGanttPlot* m_gantt = nullptr;
    QTableWidget* m_table = nullptr;
    QHash<QString, FieldRow*> m_fields;
    std::shared_ptr<const ScheduleRunResult> m_result;
    QString m_resultStatus; // how the shown result ended, shown again once a refused input is fixed
    bool m_autoRun = true;
    bool m_loading = false;
    bool m_shown = false;
    bool m_saving = false; // off while the constructor sets defaults: they must not overwrite the saved inputs
};

} // namespace vtrain::ui
