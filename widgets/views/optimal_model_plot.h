// SPDX-License-Identifier: MIT
#pragma once
// The compute-optimal model chart: budget (x, days or dollars, log) vs the largest model trainable
// compute-optimally within it (y, billions of parameters, log), as two step lines -- the naive answer
// (a fixed utilisation of peak) and the simulated one (each model's best plan) -- with the chosen budget
// and both answers marked.
#include <vector>

#include <QWidget>

#include "vtrain/optimal_model.h"

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPTextElement;

namespace vtrain::ui {

enum class BudgetUnit { Days, Dollars };

// The chart's x: days, or dollars for the whole cluster (cost is days x 24 x GPUs x price).
double budgetAxisValue(const OptimalModelResult& result, double days, BudgetUnit unit);
// The budget to mark, in days (a dollar budget converted at the result's price).
double chosenBudgetDays(const OptimalModelResult& result);
// Budgets (days) where either curve steps, plus the chart's ends, sorted: budget_curve() at these is exact.
std::vector<double> curveBudgets(const OptimalModelResult& result);

class OptimalModelPlot : public QWidget {
    Q_OBJECT
public:
    explicit OptimalModelPlot(QWidget* parent = nullptr);

    void setResult(const OptimalModelResult& result, BudgetUnit unit);
    void clear();
    QCustomPlot* customPlot() const { return m_plot; }
    QCPGraph* naiveGraph() const { return m_naive; }
    QCPGraph* simulatedGraph() const { return m_simulated; }
    // The x of the budget line (in the chart's unit); NaN when none is shown.
    double budgetMark() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    QCustomPlot* m_plot = nullptr;
    QCPTextElement* m_title = nullptr;
    QCPGraph* m_naive = nullptr;
    QCPGraph* m_simulated = nullptr;
    QCPGraph* m_answers = nullptr;
    QCPItemStraightLine* m_budgetLine = nullptr;
    QCPItemText* m_budgetLabel = nullptr;
    std::vector<QCPItemText*> m_answerLabels;
};

} // namespace vtrain::ui
