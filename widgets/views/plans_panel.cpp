// SPDX-License-Identifier: MIT
#include "views/plans_panel.h"

#include <algorithm>
#include <map>

#include <QCheckBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/plan_filter_model.h"
#include "models/plan_table_model.h"
#include "models/reject_model.h"

namespace vtrain::ui {

PlansPanel::PlansPanel(PlanTableModel* plans, RejectModel* rejects, QWidget* parent) : QWidget(parent), m_plans(plans), m_rejectModel(rejects)
{
    m_filter = new PlanFilterModel(this);
    m_filter->setPlanModel(plans);

    m_filterEdit = new QLineEdit(this);
    m_filterEdit->setObjectName(QStringLiteral("planFilter"));
    m_filterEdit->setPlaceholderText(tr("Filter: tp=8 pp<=16 days<40 cost<2e7 1f1b …"));
    m_filterEdit->setClearButtonEnabled(true);
    m_filterEdit->setToolTip(tr("Terms that must all hold: comparisons on tp, pp, dp, mb, vs, zero, gpus, gpu, days, cost, mfu (%), "
                                "bubble (%), mem (GiB), or words such as 1f1b, interleaved, selective"));
    m_frontOnly = new QCheckBox(tr("Front only"), this);
    m_frontOnly->setObjectName(QStringLiteral("frontOnly"));
    m_staleNote = new QLabel(this);
    m_staleNote->setObjectName(QStringLiteral("plansStaleNote"));
    m_staleNote->setWordWrap(true);
    m_staleNote->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; padding: 3px; }"));
    m_staleNote->setVisible(false);
    m_filterError = new QLabel(this);
    m_filterError->setStyleSheet(QStringLiteral("color: #c62828;"));

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("planTable"));
    m_table->setModel(m_filter);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(PlanTableModel::CostColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    // Fixed widths: ResizeToContents would measure every row of a million-row table. Each column is as wide
    // as its typical content (front rows are bold, so the objectives are measured bold) and never narrower
    // than its header: title, padding and the sort arrow (sectionSizeHint counts them).
    const int digit = m_table->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const int widths[PlanTableModel::ColumnCount] = {3, 6, 13, 12, 15, 7, 4, 4, 5, 4, 11, 4, 10, 4, 5, 4, 4, 4, 8, 10, 10, 7, 7, 10};
    QFont boldFont = m_table->font();
    boldFont.setBold(true);
    const QFontMetrics bold(boldFont);
    const int cellPadding = 2 * m_table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_table) + 8;
    // Days up to 999.99 (a band's upper end past 100 days is common on small clusters), costs up to $99M.
    const std::map<int, QString> boldSamples{{PlanTableModel::DaysColumn, QStringLiteral("999.99")},
                                             {PlanTableModel::DaysBandColumn, QStringLiteral("999.99–999.99*")},
                                             {PlanTableModel::CostColumn, QStringLiteral("$88,888,888")}};
    for (int c = 0; c < PlanTableModel::ColumnCount; ++c) {
        int w = widths[c] * digit + 12;
        if (const auto it = boldSamples.find(c); it != boldSamples.end()) {
            w = bold.horizontalAdvance(it->second) + cellPadding;
        }
        m_table->setColumnWidth(c, std::max(w, m_table->horizontalHeader()->sectionSizeHint(c)));
    }

    m_rejectSort = new QSortFilterProxyModel(this);
    m_rejectSort->setSourceModel(rejects);
    m_rejectSort->setSortRole(RejectModel::SortRole);
    m_rejects = new QTableView(this);
    m_rejects->setObjectName(QStringLiteral("rejectTable"));
    m_rejects->setModel(m_rejectSort);
    m_rejects->setSortingEnabled(true);
    m_rejects->sortByColumn(RejectModel::CountColumn, Qt::DescendingOrder);
    m_rejects->verticalHeader()->setVisible(false);
    m_rejects->horizontalHeader()->setStretchLastSection(true);
    m_rejects->horizontalHeader()->setSectionResizeMode(RejectModel::ReasonColumn, QHeaderView::ResizeToContents);
    m_rejects->horizontalHeader()->setSectionResizeMode(RejectModel::CountColumn, QHeaderView::ResizeToContents);
    m_rejects->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents); // wrapped example messages
    m_rejects->setWordWrap(true);
    m_rejects->setSelectionBehavior(QAbstractItemView::SelectRows);

    auto* plansPage = new QWidget(this);
    auto* filterRow = new QHBoxLayout;
    filterRow->addWidget(m_filterEdit, 1);
    filterRow->addWidget(m_frontOnly);
    auto* plansLayout = new QVBoxLayout(plansPage);
    plansLayout->setContentsMargins(2, 2, 2, 2);
    plansLayout->setSpacing(2);
    plansLayout->addWidget(m_staleNote);
    plansLayout->addLayout(filterRow);
    plansLayout->addWidget(m_filterError);
    plansLayout->addWidget(m_table, 1);
    m_filterError->setVisible(false);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("plansTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(plansPage, tr("Feasible plans"));
    m_tabs->addTab(m_rejects, tr("Rejected"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);

    connect(m_filterEdit, &QLineEdit::textChanged, this, &PlansPanel::setFilterText);
    connect(m_frontOnly, &QCheckBox::toggled, m_filter, &PlanFilterModel::setFrontOnly);
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
        if (m_selecting || !current.isValid()) {
            return;
        }
        Q_EMIT rowSelected(m_plans->idAt(m_filter->mapToSource(current).row()));
    });
    connect(plans, &QAbstractItemModel::rowsInserted, this, &PlansPanel::updateCounts);
    connect(plans, &QAbstractItemModel::modelReset, this, &PlansPanel::updateCounts);
    connect(plans, &PlanTableModel::frontChanged, this, &PlansPanel::updateCounts);
    connect(rejects, &QAbstractItemModel::modelReset, this, &PlansPanel::updateCounts);
    updateCounts();
}

void PlansPanel::setFilterText(const QString& text)
{
    if (m_filterEdit->text() != text) {
        m_filterEdit->setText(text); // comes back through textChanged
        return;
    }
    const QString error = m_filter->setFilterText(text);
    m_filterError->setText(error);
    m_filterError->setVisible(!error.isEmpty());
}

void PlansPanel::setStaleNote(const QString& note)
{
    m_staleNote->setText(note);
    m_staleNote->setVisible(!note.isEmpty());
}

QString PlansPanel::staleNote() const
{
    return m_staleNote->text();
}

int PlansPanel::objectiveColumnsWidth() const
{
    int w = 0;
    for (int c = 0; c <= PlanTableModel::CostColumn; ++c) {
        w += m_table->columnWidth(c);
    }
    // The table's frame and vertical scroll bar (a sweep's rows always outnumber the visible ones), and
    // the page's margins around it.
    const int margins = layout() ? layout()->contentsMargins().left() + layout()->contentsMargins().right() : 0;
    return w + 2 * m_table->frameWidth() + m_table->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_table) + 4 + margins;
}

void PlansPanel::selectRow(int row)
{
    m_selecting = true;
    if (row < 0) {
        m_table->selectionModel()->clear();
    } else {
        const QModelIndex index = m_filter->mapFromSource(m_plans->index(m_plans->modelRowOf(row), 0));
        if (index.isValid()) {
            m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_table->scrollTo(index, QAbstractItemView::EnsureVisible);
        } else {
            m_table->selectionModel()->clear(); // filtered out: nothing to show it on
        }
    }
    m_selecting = false;
}

int PlansPanel::selectedRow() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : m_plans->idAt(m_filter->mapToSource(rows.front()).row());
}

void PlansPanel::updateCounts()
{
    m_tabs->setTabText(0, tr("Feasible plans (%1)").arg(formatCount(m_plans->rowCount())));
    const QString rejected = formatCount(static_cast<double>(m_rejectModel->totalRejected()));
    m_tabs->setTabText(1, m_rejectModel->bounded() > 0
                              ? tr("Rejected (%1) · bounded (%2)").arg(rejected, formatCount(static_cast<double>(m_rejectModel->bounded())))
                              : tr("Rejected (%1)").arg(rejected));
}

} // namespace vtrain::ui
