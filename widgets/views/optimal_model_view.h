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

#include "models/optimal_model_runner.h"
#include "views/case_study_view.h"
#include "views/optimal_model_plot.h"

class QComboBox;
class QLabel;
class QTableWidget;

namespace vtrain::ui {

class FieldRow;

class OptimalModelView : public CaseStudyView {
    Q_OBJECT
public:
    enum Column { ColModel, ColParams, ColTokens, ColPlan, ColBatch, ColMfu, ColDays, ColCost, ColNaiveDays, ColFits, ColumnCount };

    // `catalog` must outlive the view.
    explicit OptimalModelView(ProfileCatalog* catalog, QWidget* parent = nullptr);

    // The inputs as the core request; std::nullopt (and the fields marked) when some input is refused.
    std::optional<OptimalModelRequest> request();
    // Inputs (tests, restore): GPU id, count, budget and its unit, tokens per parameter, naive utilisation in %.
    void setInputs(const QString& gpu, int gpus, double budget, BudgetUnit unit, double tokensPerParam = 20, double naivePercent = 100);

    OptimalModelRunner* runner() const { return m_runner; }
    std::shared_ptr<const OptimalModelResult> result() const { return m_result; }
    QTableWidget* table() const { return m_table; }
    QCustomPlot* customPlot() const override;
    OptimalModelPlot* plot() const { return m_plot; }
    // fieldError() knows "gpu", "gpus", "days" or "dollars" (the budget), "tokens_per_param", "naive_utilization".
    QString answerText() const;

protected:
    Study study() override;
    QVariantMap savedInputs() const override;
    void loadInputs(const QVariantMap& saved) override;

private:
    QWidget* buildInputs();
    void convertBudget(); // on a change of the budget's unit
    void onFinished(std::shared_ptr<const OptimalModelResult> result);
    void fillTable(const OptimalModelResult& result);
    void fillAnswer(const OptimalModelResult& result);

    OptimalModelRunner* m_runner = nullptr;
    FieldRow* m_gpus = nullptr;
    FieldRow* m_budget = nullptr;
    QComboBox* m_unit = nullptr;
    FieldRow* m_ratio = nullptr;
    FieldRow* m_naive = nullptr;
    QComboBox* m_family = nullptr;
    QLabel* m_answer = nullptr;
    OptimalModelPlot* m_plot = nullptr;
    QTableWidget* m_table = nullptr;
    std::shared_ptr<const OptimalModelResult> m_result;
};

} // namespace vtrain::ui
