// SPDX-License-Identifier: MIT
#include "views/optimal_model_view.h"

#include <limits>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>

#include "models/format.h"
#include "models/plan_dimensions.h"
#include "models/profile_catalog.h"
#include "models/settings_keys.h"
#include "views/field_row.h"
#include "views/number_text.h"

namespace vtrain::ui {
namespace {

// 76.1B, 1.52T: parameters and tokens to the precision a reader compares them at.
QString paramsText(double params)
{
    return params >= 1e12 ? QString::number(params / 1e12, 'f', 2) + QStringLiteral("T")
                          : QString::number(params / 1e9, 'f', 1) + QStringLiteral("B");
}

} // namespace

OptimalModelView::OptimalModelView(ProfileCatalog* catalog, QWidget* parent)
    : CaseStudyView(catalog,
                    {tr("models"), settings_keys::kOptimalModelInputs, tr("Compute-optimal model"), tr("compute-optimal model chart"),
                     QStringLiteral("optimal-model.png")},
                    parent)
{
    setObjectName(QStringLiteral("optimalModelView"));
    m_runner = new OptimalModelRunner(this);
    setRunner(m_runner);
    m_plot = new OptimalModelPlot(this);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("optimalModelTable"));
    m_table->setHorizontalHeaderLabels({tr("Model"), tr("Parameters"), tr("Tokens"), tr("Best simulated plan"), tr("Global batch"), tr("MFU"),
                                        tr("Days"), tr("Cost"), tr("Naive days"), tr("Within budget")});
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setAlternatingRowColors(true);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_plot);
    splitter->addWidget(m_table);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({600, 400}); // the chart first: the table scrolls
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildInputs());
    layout->addWidget(splitter, 1);

    connect(m_runner, &OptimalModelRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const OptimalModelResult> r) { onFinished(r); });
    finishSetup(tr("Set the cluster and the budget; the study runs as you edit."));
}

QWidget* OptimalModelView::buildInputs()
{
    auto* panel = new QWidget(this);
    panel->setObjectName(QStringLiteral("optimalModelInputs"));
    panel->setFixedWidth(330);
    QFormLayout* form = buildForm(panel, QStringLiteral("optimalModel.gpu"));

    m_gpus = new FieldRow(QStringLiteral("optimalModel.gpus"), tr("e.g. 3360"), tr("GPUs in the cluster; every plan uses all of them"), panel);
    form->addRow(tr("GPU count"), m_gpus);

    m_budget = new FieldRow(QStringLiteral("optimalModel.budget"), tr("e.g. 30"), tr("Wall-clock days, or dollars (GPU-hours × price)"), panel);
    m_unit = new QComboBox(panel);
    m_unit->setObjectName(QStringLiteral("optimalModel.budgetUnit"));
    m_unit->addItem(tr("days"), static_cast<int>(BudgetUnit::Days));
    m_unit->addItem(tr("US dollars"), static_cast<int>(BudgetUnit::Dollars));
    auto* budgetBox = new QHBoxLayout;
    budgetBox->addWidget(m_budget, 1);
    budgetBox->addWidget(m_unit, 0, Qt::AlignTop);
    form->addRow(tr("Budget"), budgetBox);

    m_ratio = new FieldRow(QStringLiteral("optimalModel.tokens_per_param"), tr("20 (Chinchilla)"),
                           tr("Training tokens per parameter (compute-optimal: 20)"), panel);
    form->addRow(tr("Tokens per parameter"), m_ratio);
    m_naive = new FieldRow(QStringLiteral("optimalModel.naive_utilization"), tr("100"),
                           tr("The naive answer assumes every GPU runs at this percentage of its bf16 peak"), panel);
    form->addRow(tr("Naive utilisation (%)"), m_naive);
    m_family = new QComboBox(panel);
    m_family->setObjectName(QStringLiteral("optimalModel.family"));
    m_family->addItem(tr("Megatron table (10 shapes)"), static_cast<int>(ShapeFamily::Megatron));
    m_family->addItem(tr("Fine grid (31 shapes)"), static_cast<int>(ShapeFamily::Grid));
    m_family->setToolTip(tr("The candidate model shapes (heads of 128 dimensions)"));
    form->addRow(tr("Model shapes"), m_family);

    setFields({{QStringLiteral("gpus"), m_gpus},
               {QStringLiteral("days"), m_budget},
               {QStringLiteral("dollars"), m_budget},
               {QStringLiteral("tokens_per_param"), m_ratio},
               {QStringLiteral("naive_utilization"), m_naive}},
              {{QStringLiteral("gpus"), tr("GPU count")},
               {QStringLiteral("days"), tr("Budget (days)")},
               {QStringLiteral("dollars"), tr("Budget (dollars)")},
               {QStringLiteral("tokens_per_param"), tr("Tokens per parameter")},
               {QStringLiteral("naive_utilization"), tr("Naive utilisation")}});

    m_answer = finishInputs(panel,
                            tr("<b>Compute-optimal model</b><br>The largest model trainable on this cluster within the budget, "
                               "with tokens = ratio × parameters, when each candidate runs its best simulated plan — beside "
                               "the naive answer at a fixed utilisation."),
                            form, QStringLiteral("optimalModelAnswer"));

    setInputs(gpuId(), 3360, 30, BudgetUnit::Days);
    for (FieldRow* row : {m_gpus, m_budget, m_ratio, m_naive}) {
        connect(row, &FieldRow::edited, this, &OptimalModelView::onEdited);
    }
    connect(m_family, &QComboBox::currentIndexChanged, this, &OptimalModelView::onEdited);
    connect(m_unit, &QComboBox::currentIndexChanged, this, &OptimalModelView::convertBudget);
    return panel;
}

void OptimalModelView::setInputs(const QString& gpu, int gpus, double budget, BudgetUnit unit, double tokensPerParam, double naivePercent)
{
    editInputs([&] {
        selectGpu(gpu);
        m_gpus->setText(QString::number(gpus));
        m_budget->setText(QString::number(budget, 'g', 10));
        m_unit->setCurrentIndex(m_unit->findData(static_cast<int>(unit)));
        m_ratio->setText(QString::number(tokensPerParam, 'g', 10));
        m_naive->setText(QString::number(naivePercent, 'g', 10));
    });
}

void OptimalModelView::loadInputs(const QVariantMap& saved)
{
    m_gpus->setText(saved.value(QStringLiteral("gpus")).toString());
    m_budget->setText(saved.value(QStringLiteral("budget")).toString());
    m_unit->setCurrentIndex(std::max(0, m_unit->findData(saved.value(QStringLiteral("unit")).toInt())));
    m_ratio->setText(saved.value(QStringLiteral("tokens_per_param")).toString());
    m_naive->setText(saved.value(QStringLiteral("naive_utilization")).toString());
    m_family->setCurrentIndex(std::max(0, m_family->findData(saved.value(QStringLiteral("family")).toInt())));
}

QVariantMap OptimalModelView::savedInputs() const
{
    return {{QStringLiteral("gpus"), m_gpus->text()},
            {QStringLiteral("budget"), m_budget->text()},
            {QStringLiteral("unit"), m_unit->currentData()},
            {QStringLiteral("tokens_per_param"), m_ratio->text()},
            {QStringLiteral("naive_utilization"), m_naive->text()},
            {QStringLiteral("family"), m_family->currentData()}};
}

void OptimalModelView::convertBudget()
{
    // The same budget in the other unit (cost = days x 24 x GPUs x price), so switching the unit does not
    // turn 30 days into 30 dollars.
    const auto budget = parseNumberText(m_budget->text());
    const auto gpus = parseNumberText(m_gpus->text());
    const auto profile = isLoading() ? nullptr : catalog()->profile(gpuId().toStdString());
    if (budget && gpus && *gpus > 0 && profile && profile->price_usd_per_gpu_hour > 0) {
        const double dollarsPerDay = 24.0 * *gpus * profile->price_usd_per_gpu_hour;
        const bool toDollars = static_cast<BudgetUnit>(m_unit->currentData().toInt()) == BudgetUnit::Dollars;
        m_budget->setText(QString::number(toDollars ? *budget * dollarsPerDay : *budget / dollarsPerDay, 'g', 4));
    }
    onEdited();
}

std::optional<OptimalModelRequest> OptimalModelView::request()
{
    clearErrors();
    Diagnostics bad;
    OptimalModelRequest r;
    r.gpu = gpuId().toStdString();
    r.family = static_cast<ShapeFamily>(m_family->currentData().toInt());
    const auto unit = static_cast<BudgetUnit>(m_unit->currentData().toInt());
    const std::string budgetField = unit == BudgetUnit::Days ? "days" : "dollars";
    // Text that is not a number at all is refused here; ranges are the core's to judge (check_request).
    const auto gpus = parseWholeText(m_gpus->text(), std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    const auto budget = parseNumberText(m_budget->text());
    const auto ratio = parseNumberText(m_ratio->text());
    const auto naive = parseNumberText(m_naive->text());
    if (!gpus) {
        bad.push_back({"gpus", notA(m_gpus->text(), tr("a whole number of GPUs"))});
    }
    if (!budget) {
        bad.push_back({budgetField, notA(m_budget->text(), tr("a number"))});
    }
    if (!ratio) {
        bad.push_back({"tokens_per_param", notA(m_ratio->text(), tr("a number"))});
    }
    if (!naive || !(*naive > 0 && *naive <= 100)) {
        bad.push_back({"naive_utilization", "must be a percentage of peak in (0, 100]"});
    }
    if (bad.empty()) {
        r.num_gpus = static_cast<int>(*gpus);
        (unit == BudgetUnit::Days ? r.budget_days : r.budget_usd) = *budget;
        r.tokens_per_param = *ratio;
        r.naive_utilization = *naive / 100;
        bad = check_request(r);
    }
    if (r.gpu.empty()) {
        bad.push_back({"gpu", "no GPU profile was found (see vtrain profiles)"});
    }
    if (!bad.empty()) {
        showErrors(bad);
        return std::nullopt;
    }
    return r;
}

CaseStudyView::Study OptimalModelView::study()
{
    const auto r = request();
    if (!r) {
        return {};
    }
    return [this, r = *r](Start start) {
        QString error;
        auto profile = catalog()->profile(r.gpu, &error);
        if (!profile) {
            showErrors({{"gpu", error.toStdString()}});
            return false;
        }
        if (start == Start::Now) {
            m_runner->start(r, std::move(profile));
        } else {
            m_runner->schedule(r, std::move(profile), kDebounceMs);
        }
        return true;
    };
}

QString OptimalModelView::answerText() const
{
    return m_answer->text();
}

QCustomPlot* OptimalModelView::customPlot() const
{
    return m_plot->customPlot();
}

void OptimalModelView::onFinished(std::shared_ptr<const OptimalModelResult> result)
{
    m_result = result;
    const auto unit = result->request.budget_days ? BudgetUnit::Days : BudgetUnit::Dollars;
    m_plot->setResult(*result, unit);
    fillTable(*result);
    fillAnswer(*result);
    int simulated = 0;
    for (const OptimalCandidate& c : result->candidates) {
        simulated += c.simulated ? 1 : 0;
    }
    showFinished(result->cancelled ? tr("Cancelled: %1 of %2 models simulated; the rest are not in the chart or the answer.")
                                         .arg(simulated)
                                         .arg(model_family(result->request.family, result->request.seq_len, result->request.vocab).size())
                                   : tr("%1 models, %2 plans in %3.")
                                         .arg(result->candidates.size())
                                         .arg(formatCount(static_cast<double>(result->plans_enumerated)), formatSeconds(result->elapsed_s)));
}

void OptimalModelView::fillTable(const OptimalModelResult& result)
{
    m_table->setRowCount(static_cast<int>(result.candidates.size()));
    const QColor simulatedAnswer(0xd5, 0xe8, 0xd4);
    const QColor naiveAnswer(0xf3, 0xe3, 0xd3);
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const std::size_t i = static_cast<std::size_t>(row);
        const OptimalCandidate& c = result.candidates[i];
        const bool plan = c.simulated && c.has_plan;
        m_table->setItem(row, ColModel, cell(QString::fromStdString(c.model.name), Qt::AlignLeft | Qt::AlignVCenter));
        m_table->setItem(row, ColParams, cell(paramsText(c.params)));
        m_table->setItem(row, ColTokens, cell(paramsText(c.tokens)));
        QTableWidgetItem* planCell = cell(plan          ? planSummary(c.best.plan)
                                          : c.simulated ? tr("no plan fits")
                                                        : tr("(cancelled)"),
                                          Qt::AlignLeft | Qt::AlignVCenter);
        planCell->setToolTip(plan ? planDescription(c.best) : QString::fromStdString(c.note));
        m_table->setItem(row, ColPlan, planCell);
        m_table->setItem(row, ColBatch, cell(plan ? formatCount(c.global_batch) : QStringLiteral("–")));
        m_table->setItem(row, ColMfu, cell(plan ? formatPercent(c.best.mfu) : QStringLiteral("–")));
        m_table->setItem(row, ColDays, cell(plan ? formatDays(c.best.training_days) : QStringLiteral("–")));
        m_table->setItem(row, ColCost, cell(plan ? formatDollars(c.best.cost_usd) : QStringLiteral("–")));
        m_table->setItem(row, ColNaiveDays, cell(formatDays(c.naive_days)));
        QString fits = !c.simulated ? tr("?") : c.within_budget ? tr("yes") : tr("no");
        QColor background;
        if (result.naive_choice == i) {
            fits += tr(" · naive answer");
            background = naiveAnswer;
        }
        if (result.feasible_choice == i) {
            fits += tr(" · simulated answer");
            background = simulatedAnswer;
        }
        m_table->setItem(row, ColFits, cell(fits, Qt::AlignLeft | Qt::AlignVCenter));
        for (int col = 0; col < ColumnCount; ++col) {
            QTableWidgetItem* item = m_table->item(row, col);
            if (background.isValid()) {
                item->setBackground(background);
                item->setForeground(QColor(0x20, 0x20, 0x20)); // readable on the light marks in a dark theme too
            }
            QFont f = item->font();
            f.setBold(result.feasible_choice == i);
            item->setFont(f);
        }
    }
}

void OptimalModelView::fillAnswer(const OptimalModelResult& result)
{
    const OptimalModelRequest& r = result.request;
    QString text;
    if (result.feasible_choice) {
        const OptimalCandidate& c = result.candidates[*result.feasible_choice];
        text += tr("<p><b>Simulated answer: %1</b> (%2 parameters, %3 tokens)<br>%4<br>MFU %5, %6, %7</p>")
                    .arg(QString::fromStdString(c.model.name).toHtmlEscaped(), paramsText(c.params), paramsText(c.tokens),
                         planSummary(c.best.plan).toHtmlEscaped(), formatPercent(c.best.mfu), formatDays(c.best.training_days),
                         formatDollars(c.best.cost_usd));
    } else {
        text += tr("<p><b>Simulated answer:</b> no model of the family fits the budget.</p>");
    }
    if (result.naive_choice) {
        const OptimalCandidate& c = result.candidates[*result.naive_choice];
        text += tr("<p><b>Naive answer: %1</b> at %2 of the %3 TFLOP/s peak: %4")
                    .arg(QString::fromStdString(c.model.name).toHtmlEscaped(), formatPercent(r.naive_utilization),
                         QString::number(result.peak_tflops_per_gpu, 'f', 0), formatDays(c.naive_days));
        if (c.simulated && c.has_plan) {
            text += tr("; its best simulated plan takes %1 (MFU %2)").arg(formatDays(c.best.training_days), formatPercent(c.best.mfu));
        } else if (c.simulated) {
            text += tr("; no plan of it fits in memory");
        }
        text += QStringLiteral(".");
        if (result.feasible_choice) {
            text += tr(" The naive answer is <b>%1×</b> the feasible model.")
                        .arg(QString::number(c.params / result.candidates[*result.feasible_choice].params, 'f', 2));
        }
        text += QStringLiteral("</p>");
    } else {
        text += tr("<p><b>Naive answer:</b> no model of the family fits.</p>");
    }
    m_answer->setText(text);
}

} // namespace vtrain::ui
