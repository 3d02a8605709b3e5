// SPDX-License-Identifier: MIT
#include "views/optimal_model_plot.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <QEvent>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "models/format.h"
#include "views/plot_style.h"

namespace vtrain::ui {
namespace {

const QColor kNaiveColor(0x9c, 0x75, 0x5f);
const QColor kSimulatedColor(0x4e, 0x79, 0xa7);
const QColor kBudgetColor(0xe1, 0x57, 0x59);

// Log ticks labelled by a formatter (dollars, days, billions) instead of QCustomPlot's 1e+06.
class LabelledLogTicker : public QCPAxisTickerLog {
public:
    explicit LabelledLogTicker(std::function<QString(double)> label) : m_label(std::move(label)) {}

protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override { return m_label(tick); }

private:
    std::function<QString(double)> m_label;
};

QString plainNumber(double v)
{
    return QString::number(v, 'g', 4);
}

double billions(double params)
{
    return params > 0 ? params / 1e9 : std::nan("");
}

QString paramsText(double params)
{
    return params >= 1e12 ? QString::number(params / 1e12, 'f', 2) + QStringLiteral("T")
                          : QString::number(params / 1e9, 'f', 1) + QStringLiteral("B");
}

} // namespace

double budgetAxisValue(const OptimalModelResult& result, double days, BudgetUnit unit)
{
    return unit == BudgetUnit::Days ? days : days * 24.0 * result.request.num_gpus * result.price_per_gpu_hour;
}

double chosenBudgetDays(const OptimalModelResult& result)
{
    const OptimalModelRequest& r = result.request;
    double days = r.budget_days.value_or(INFINITY);
    const double dollarsPerDay = 24.0 * r.num_gpus * result.price_per_gpu_hour;
    if (r.budget_usd && dollarsPerDay > 0) {
        days = std::min(days, *r.budget_usd / dollarsPerDay); // the tighter budget binds
    }
    return days;
}

std::vector<double> curveBudgets(const OptimalModelResult& result)
{
    const double budget = chosenBudgetDays(result);
    std::vector<double> steps;
    for (const OptimalCandidate& c : result.candidates) {
        if (std::isfinite(c.naive_days) && c.naive_days > 0) {
            steps.push_back(c.naive_days);
        }
        if (c.simulated && c.has_plan && c.best.training_days > 0) {
            steps.push_back(c.best.training_days);
        }
    }
    // From below the smallest model to past the largest simulated one, and a decade either side of the budget.
    double lo = std::isfinite(budget) ? budget / 10 : 1;
    double hi = std::isfinite(budget) ? budget * 10 : 10;
    for (const OptimalCandidate& c : result.candidates) {
        if (std::isfinite(c.naive_days) && c.naive_days > 0) {
            lo = std::min(lo, c.naive_days / 1.5);
        }
        if (c.simulated && c.has_plan) {
            hi = std::max(hi, c.best.training_days * 1.5);
        }
    }
    std::vector<double> out{lo, hi};
    for (double s : steps) {
        if (s > lo && s < hi) {
            out.push_back(s);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

OptimalModelPlot::OptimalModelPlot(QWidget* parent) : QWidget(parent)
{
    m_plot = new QCustomPlot(this);
    m_plot->setObjectName(QStringLiteral("optimalModelChart"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    setMinimumHeight(260);

    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, tr("Largest compute-optimal model within a budget"), plot_style::titleFont());
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_plot->yAxis->setLabel(tr("Largest feasible model (billion parameters)"));
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setLabelFont(plot_style::labelFont());
        axis->setTickLabelFont(plot_style::tickFont());
        axis->setScaleType(QCPAxis::stLogarithmic);
    }
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LabelledLogTicker(plainNumber)));

    m_naive = m_plot->addGraph();
    m_naive->setLineStyle(QCPGraph::lsStepLeft); // the answer holds until the next model fits
    m_naive->setPen(QPen(kNaiveColor, 2.2, Qt::DashLine));
    m_simulated = m_plot->addGraph();
    m_simulated->setLineStyle(QCPGraph::lsStepLeft);
    m_simulated->setPen(QPen(kSimulatedColor, 2.6));
    m_answers = m_plot->addGraph();
    m_answers->setLineStyle(QCPGraph::lsNone);
    m_answers->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kBudgetColor, 2), Qt::white, 10));
    m_answers->removeFromLegend();

    m_budgetLine = new QCPItemStraightLine(m_plot);
    m_budgetLine->setPen(QPen(kBudgetColor, 1.6, Qt::DotLine));
    m_budgetLabel = new QCPItemText(m_plot);
    m_budgetLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    m_budgetLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_budgetLabel->setColor(kBudgetColor);
    m_budgetLabel->setPadding(QMargins(5, 2, 2, 2));

    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(plot_style::tickFont());
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    m_plot->legend->setBorderPen(QPen(QColor(0xb0, 0xb0, 0xb0)));
    // Top left: small budgets buy small models, so that corner stays empty.
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    plot_style::applyPalette(m_plot, palette());
    clear();
}

void OptimalModelPlot::clear()
{
    m_naive->data()->clear();
    m_simulated->data()->clear();
    m_answers->data()->clear();
    m_budgetLine->setVisible(false);
    m_budgetLabel->setVisible(false);
    for (QCPItemText* label : m_answerLabels) {
        m_plot->removeItem(label);
    }
    m_answerLabels.clear();
    m_naive->setName(tr("naive (fixed utilisation of peak)"));
    m_simulated->setName(tr("simulated (each model's best plan)"));
    m_plot->xAxis->setLabel(tr("Budget"));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

double OptimalModelPlot::budgetMark() const
{
    return m_budgetLine->visible() ? m_budgetLine->point1->coords().x() : std::nan("");
}

void OptimalModelPlot::setResult(const OptimalModelResult& result, BudgetUnit unit)
{
    clear();
    const OptimalModelRequest& r = result.request;
    m_title->setText(tr("Largest compute-optimal model on %1 × %2 (%3 tokens per parameter)")
                         .arg(formatCount(r.num_gpus), QString::fromStdString(r.gpu), plainNumber(r.tokens_per_param)));
    m_naive->setName(tr("naive: %1% of the %2 TFLOP/s peak").arg(plainNumber(100 * r.naive_utilization), plainNumber(result.peak_tflops_per_gpu)));
    m_simulated->setName(result.cancelled ? tr("simulated (cancelled: models done so far)") : tr("simulated: each model's best plan"));
    if (unit == BudgetUnit::Days) {
        m_plot->xAxis->setLabel(tr("Budget (days of training)"));
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LabelledLogTicker(plainNumber)));
    } else {
        m_plot->xAxis->setLabel(tr("Budget (US dollars, at %1 per GPU-hour)").arg(formatDollars(result.price_per_gpu_hour)));
        m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new LabelledLogTicker(formatDollars)));
    }

    const std::vector<double> budgets = curveBudgets(result);
    const std::vector<BudgetPoint> points = budget_curve(result, budgets);
    double yMin = INFINITY, yMax = 0;
    for (const BudgetPoint& p : points) {
        const double x = budgetAxisValue(result, p.budget_days, unit);
        m_naive->addData(x, billions(p.naive_params));
        m_simulated->addData(x, billions(p.feasible_params));
        for (double params : {p.naive_params, p.feasible_params}) {
            if (params > 0) {
                yMin = std::min(yMin, params / 1e9);
                yMax = std::max(yMax, params / 1e9);
            }
        }
    }
    if (!points.empty()) {
        m_plot->xAxis->setRange(budgetAxisValue(result, budgets.front(), unit), budgetAxisValue(result, budgets.back(), unit));
    }
    if (yMax > 0) {
        m_plot->yAxis->setRange(yMin / 1.6, yMax * 2.5); // headroom above for the legend
    }

    const double budgetDays = chosenBudgetDays(result);
    if (std::isfinite(budgetDays)) {
        const double x = budgetAxisValue(result, budgetDays, unit);
        m_budgetLine->point1->setCoords(x, 1);
        m_budgetLine->point2->setCoords(x, 2);
        m_budgetLine->setVisible(true);
        m_budgetLabel->position->setCoords(x, 0.0);
        m_budgetLabel->setText(tr("budget: %1").arg(unit == BudgetUnit::Days ? formatDays(budgetDays) : formatDollars(x)));
        m_budgetLabel->setVisible(true);
        // Both answers sit on the budget line; the naive one is the larger, so its label goes above.
        const auto mark = [&](std::optional<std::size_t> choice, const QString& what, Qt::Alignment vertical) {
            if (!choice) {
                return;
            }
            const double params = result.candidates[*choice].params;
            m_answers->addData(x, params / 1e9);
            auto* label = new QCPItemText(m_plot);
            label->position->setCoords(x, params / 1e9);
            label->setPositionAlignment(Qt::AlignLeft | vertical);
            label->setPadding(QMargins(8, 2, 2, 2));
            label->setText(tr("%1: %2").arg(what, paramsText(params)));
            label->setFont(plot_style::labelFont());
            label->setColor(palette().color(QPalette::WindowText));
            m_answerLabels.push_back(label);
        };
        const bool same = result.naive_choice && result.feasible_choice && *result.naive_choice == *result.feasible_choice;
        if (same) {
            mark(result.feasible_choice, tr("naive and simulated"), Qt::AlignVCenter);
        } else {
            mark(result.naive_choice, tr("naive"), Qt::AlignBottom);
            mark(result.feasible_choice, tr("simulated"), Qt::AlignTop);
        }
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void OptimalModelPlot::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::PaletteChange) {
        plot_style::applyPalette(m_plot, palette());
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    QWidget::changeEvent(event);
}

} // namespace vtrain::ui
