// SPDX-License-Identifier: MIT
#pragma once
// The compute-optimal model tab (vTrain's case study 2): inputs (GPU type and count, a budget in days or
// dollars, tokens per parameter, the naive answer's utilisation, the model family), a chart of budget vs
// the largest feasible model (naive and simulated, the chosen budget marked), and the table of every
// candidate with its best simulated plan. Runs on a worker (OptimalModelRunner): every valid edit starts
// a new study shortly after, which replaces the running one; refused inputs are shown at their field and
// keep the last result on screen.
#include <memory>
#include <optional>

#include <QHash>
#include <QWidget>

#include "models/optimal_model_runner.h"
#include "views/export.h"
#include "views/optimal_model_plot.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QTableWidget;

namespace vtrain::ui {

class FieldRow;
class ProfileCatalog;
class StudyBar;

class OptimalModelView : public QWidget {
    Q_OBJECT
public:
    enum Column { ColModel, ColParams, ColTokens, ColPlan, ColBatch, ColMfu, ColDays, ColCost, ColNaiveDays, ColFits, ColumnCount };

    // `catalog` must outlive the view.
    explicit OptimalModelView(ProfileCatalog* catalog, QWidget* parent = nullptr);

    // The inputs as the core request; std::nullopt (and the fields marked) when some input is refused.
    std::optional<OptimalModelRequest> request();
    // Starts a study of the current inputs now (false when an input is refused).
    bool run();
    void cancel();
    // Inputs (tests, restore): GPU id, count, budget and its unit, tokens per parameter, naive utilisation in %.
    void setInputs(const QString& gpu, int gpus, double budget, BudgetUnit unit, double tokensPerParam = 20, double naivePercent = 100);
    // The inputs of the last session (QSettings), if any; they are saved on every edit.
    void restoreInputs();
    // Re-run on every valid edit (on by default).
    void setAutoRun(bool on) { m_autoRun = on; }

    OptimalModelRunner* runner() const { return m_runner; }
    std::shared_ptr<const OptimalModelResult> result() const { return m_result; }
    QTableWidget* table() const { return m_table; }
    QCustomPlot* customPlot() const;
    OptimalModelPlot* plot() const { return m_plot; }
    // The error shown at a field, by the core's field name ("gpu", "gpus", "days" or "dollars" (the budget),
    // "tokens_per_param", "naive_utilization"); "" = none.
    QString fieldError(const QString& field) const;
    QString statusText() const;
    QString answerText() const;

    bool exportImage(const QString& path, const ExportSize& size, QString* error);
    // Asks for a file and size, then exports (the Export button, the main window's menu).
    void exportDialog();

protected:
    void showEvent(QShowEvent* event) override;

private:
    QWidget* buildInputs();
    void onEdited();
    void convertBudget(); // on a change of the budget's unit
    void saveInputs() const;
    void showErrors(const Diagnostics& errors);
    void clearErrors();
    void onFinished(std::shared_ptr<const OptimalModelResult> result);
    void fillTable(const OptimalModelResult& result);
    void fillAnswer(const OptimalModelResult& result);

    ProfileCatalog* m_catalog;
    OptimalModelRunner* m_runner = nullptr;
    QComboBox* m_gpu = nullptr;
    FieldRow* m_gpus = nullptr;
    FieldRow* m_budget = nullptr;
    QComboBox* m_unit = nullptr;
    FieldRow* m_ratio = nullptr;
    FieldRow* m_naive = nullptr;
    QComboBox* m_family = nullptr;
    QLabel* m_gpuError = nullptr;
    StudyBar* m_bar = nullptr;
    QLabel* m_answer = nullptr;
    OptimalModelPlot* m_plot = nullptr;
    QTableWidget* m_table = nullptr;
    QHash<QString, FieldRow*> m_fields; // by the core's field names
    std::shared_ptr<const OptimalModelResult> m_result;
    QString m_resultStatus; // how the shown result ended, shown again once a refused input is fixed
    bool m_autoRun = true;
    bool m_loading = false; // inputs being set programmatically: no auto-run per field
    bool m_shown = false;
    bool m_saving = false; // off while the constructor sets defaults: they must not overwrite the saved inputs
};

} // namespace vtrain::ui
