// SPDX-License-Identifier: MIT
#include "views/compare_view.h"

#include <cmath>

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/plan_dimensions.h"
#include "views/timeline_view.h"
#include "vtrain/simulation_result.h"

namespace vtrain::ui {
namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

// B minus A, signed and coloured: green when B needs less.
QTableWidgetItem* deltaCell(double a, double b, QString (*format)(double), bool lowerIsBetter = true)
{
    const double d = b - a;
    auto* item = cell(deltaText(a, b, format));
    if (std::abs(d) > 1e-12 * std::max(std::abs(a), std::abs(b))) {
        const bool better = lowerIsBetter ? d < 0 : d > 0;
        item->setForeground(better ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
    }
    return item;
}

QString seconds(double s)
{
    return formatSeconds(s);
}
QString gib(double g)
{
    return formatGiB(g);
}
QString days(double d)
{
    return formatDays(d);
}
QString dollars(double d)
{
    return d < 0 ? QStringLiteral("-") + formatDollars(-d) : formatDollars(d);
}
QString percent(double f)
{
    return formatPercent(f);
}

QString describe(const SimulationResult* r)
{
    if (!r) {
        return QObject::tr("—");
    }
    return QStringLiteral("%1 × %2 · %3 · %4 · %5 · iteration %6")
        .arg(formatCount(r->num_gpus), QString::fromStdString(r->gpu), planSummary(r->plan), formatDays(r->training_days), formatDollars(r->cost_usd),
             formatSeconds(r->iteration_time_s));
}

} // namespace

QString deltaText(double a, double b, QString (*format)(double))
{
    const double d = b - a;
    QString text = (d > 0 ? QStringLiteral("+") : QString()) + format(d);
    if (std::abs(a) > 1e-12) {
        const double pct = 100.0 * d / std::abs(a);
        text += QStringLiteral(" (%1)").arg(formatPercentChange(pct, std::abs(pct) < 10 ? 1 : 0));
    } else if (std::abs(d) > 1e-12) {
        text += QStringLiteral(" (—)");
    }
    return text;
}

CompareView::CompareView(QWidget* parent) : QWidget(parent)
{
    // A and B one line each (the whole description as tooltip), Pin and Swap beside the page tabs: the
    // Compare tab fits the selected-plan dock of a 1280x720 window without a scroll area around it, so
    // both timelines show at once and only they scroll (nested scrolling once hid B below A).
    m_labelA = new QLabel(this);
    m_labelB = new QLabel(this);
    for (QLabel* l : {m_labelA, m_labelB}) {
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // cut, never widening the dock
    }
    m_labelA->setObjectName(QStringLiteral("compareLabelA"));
    m_labelB->setObjectName(QStringLiteral("compareLabelB"));
    m_pin = new QPushButton(QIcon(QStringLiteral(":/icons/pin.svg")), tr("Pin selected as A"), this);
    m_pin->setObjectName(QStringLiteral("pinButton"));
    m_pin->setToolTip(tr("Pin the selected plan as A: B follows the selection"));
    m_swap = new QPushButton(tr("Swap A and B"), this);
    connect(m_pin, &QPushButton::clicked, this, &CompareView::pinCurrent);
    connect(m_swap, &QPushButton::clicked, this, &CompareView::swap);

    m_summary = new QTableWidget(this);
    m_summary->setObjectName(QStringLiteral("compareSummary"));
    m_stages = new QTableWidget(this);
    m_stages->setObjectName(QStringLiteral("compareStages"));
    for (QTableWidget* t : {m_summary, m_stages}) {
        t->verticalHeader()->setVisible(false);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
        t->setAlternatingRowColors(true);
        t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
        t->horizontalHeader()->setStretchLastSection(true);
        t->setWordWrap(false); // "+10.985 s (+56 %)" on one line
        t->setMinimumHeight(60);
    }

    auto* heads = new QGridLayout;
    heads->setContentsMargins(0, 0, 0, 0);
    heads->setVerticalSpacing(0);
    heads->addWidget(new QLabel(tr("<b>A</b> (pinned)"), this), 0, 0);
    heads->addWidget(m_labelA, 0, 1);
    heads->addWidget(new QLabel(tr("<b>B</b> (selected)"), this), 1, 0);
    heads->addWidget(m_labelB, 1, 1);
    heads->setColumnStretch(1, 1);

    // The summary keeps the width of its four columns (fillSummary() sets it): on a 1280-pixel screen the
    // stage table, which scrolls sideways anyway, gives up room rather than the B − A column.
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("compareSplit"));
    split->addWidget(m_summary);
    split->addWidget(m_stages);
    split->setChildrenCollapsible(false);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    m_stages->setMinimumWidth(160);

    // A over B on one time axis (the longer iteration's), zoom and pan shared; the colour legend is the
    // main timeline's, so these keep their height for stages.
    m_timelineA = new TimelineView(this);
    m_timelineA->setObjectName(QStringLiteral("compareTimelineA"));
    m_timelineB = new TimelineView(this);
    m_timelineB->setObjectName(QStringLiteral("compareTimelineB"));
    for (TimelineView* t : {m_timelineA, m_timelineB}) {
        t->setLegendVisible(false);
        t->setMinimumHeight(52); // the ruler and one stage's compute row, with a frame
    }
    auto sync = [this](TimelineView* from, TimelineView* to) {
        connect(from, &TimelineView::windowChanged, to, [this, to](double t0, double t1) {
            if (m_syncing) {
                return;
            }
            m_syncing = true;
            to->zoomTo(t0, t1);
            m_syncing = false;
        });
    };
    sync(m_timelineA, m_timelineB);
    sync(m_timelineB, m_timelineA);
    auto* stacked = new QWidget(this);
    auto* stackedLayout = new QGridLayout(stacked);
    stackedLayout->setContentsMargins(0, 0, 0, 0);
    stackedLayout->setSpacing(2);
    stackedLayout->addWidget(new QLabel(tr("<b>A</b>"), stacked), 0, 0, Qt::AlignTop);
    stackedLayout->addWidget(m_timelineA, 0, 1);
    stackedLayout->addWidget(new QLabel(tr("<b>B</b>"), stacked), 1, 0, Qt::AlignTop);
    stackedLayout->addWidget(m_timelineB, 1, 1);
    stackedLayout->setRowStretch(0, 1);
    stackedLayout->setRowStretch(1, 1);
    stackedLayout->setColumnStretch(1, 1);

    auto* pages = new QTabWidget(this);
    m_pages = pages;
    pages->setObjectName(QStringLiteral("comparePages"));
    pages->setDocumentMode(true);
    pages->addTab(split, tr("Numbers"));
    pages->addTab(stacked, tr("Timelines on one axis"));
    auto* buttons = new QWidget(this);
    auto* buttonsLayout = new QHBoxLayout(buttons);
    buttonsLayout->setContentsMargins(0, 0, 0, 2);
    buttonsLayout->addWidget(m_pin);
    buttonsLayout->addWidget(m_swap);
    pages->setCornerWidget(buttons, Qt::TopRightCorner);

    m_workloadNote = new QLabel(this);
    m_workloadNote->setObjectName(QStringLiteral("compareWorkloadNote"));
    m_workloadNote->setWordWrap(true);
    m_workloadNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_workloadNote->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; padding: 3px; }"));
    m_workloadNote->setVisible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addWidget(m_workloadNote);
    layout->addLayout(heads);
    layout->addWidget(pages, 1);
    refresh();
}

void CompareView::setCurrent(std::shared_ptr<const SimulationResult> result)
{
    m_b = std::move(result);
    refresh();
    Q_EMIT currentChanged(m_b);
}

void CompareView::setPinned(std::shared_ptr<const SimulationResult> result)
{
    m_a = std::move(result);
    refresh();
    Q_EMIT pinnedChanged(m_a);
}

void CompareView::pinCurrent()
{
    if (m_b) {
        setPinned(m_b);
    }
}

void CompareView::swap()
{
    std::swap(m_a, m_b);
    refresh();
    Q_EMIT pinnedChanged(m_a);
    Q_EMIT currentChanged(m_b);
}

void CompareView::setWorkloadNote(const QString& note)
{
    m_workloadNote->setText(note);
    m_workloadNote->setVisible(!note.isEmpty());
}

QString CompareView::workloadNote() const
{
    return m_workloadNote->text();
}

int CompareView::stageRowCount() const
{
    return m_stages->rowCount();
}

void CompareView::refresh()
{
    m_labelA->setText(m_a ? describe(m_a.get()) : tr("Select a plan and press \"Pin selected as A\"."));
    m_labelB->setText(describe(m_b.get()));
    m_labelA->setToolTip(m_labelA->text());
    m_labelB->setToolTip(m_labelB->text());
    m_pin->setEnabled(m_b != nullptr);
    m_swap->setEnabled(m_a || m_b);
    fillSummary();
    fillStages();
    // One time axis: both views span the longer iteration, so equal times line up.
    m_timelineA->setResult(m_a);
    m_timelineB->setResult(m_b);
    const double end = std::max(m_a ? m_a->iteration_time_s : 0.0, m_b ? m_b->iteration_time_s : 0.0);
    if (end > 0) {
        m_timelineA->setTimeExtent(end);
        m_timelineB->setTimeExtent(end);
    }
    // Said on the tab rather than over the timelines: their height goes to stages.
    m_pages->setTabToolTip(1, m_a && m_b ? tr("One time axis: iteration A %1, B %2 (%3). Zoom or pan either; the other follows.")
                                               .arg(formatSeconds(m_a->iteration_time_s), formatSeconds(m_b->iteration_time_s),
                                                    deltaText(m_a->iteration_time_s, m_b->iteration_time_s, seconds))
                                         : tr("Pin a plan as A and select another as B to see both timelines on one time axis."));
}

void CompareView::fillSummary()
{
    m_summary->clear();
    m_summary->setColumnCount(4);
    m_summary->setHorizontalHeaderLabels({tr("Per iteration"), tr("A"), tr("B"), tr("B − A")});
    const SimulationResult* a = m_a.get();
    const SimulationResult* b = m_b.get();
    struct Line {
        QString name;
        double (*get)(const SimulationResult&);
        QString (*format)(double);
        bool lowerIsBetter;
    };
    const std::vector<Line> lines{
        {tr("Iteration time"), [](const SimulationResult& r) { return r.iteration_time_s; }, seconds, true},
        {tr("Compute"), [](const SimulationResult& r) { return r.breakdown.compute_s; }, seconds, true},
        {tr("Tensor-parallel comm"), [](const SimulationResult& r) { return r.breakdown.tp_comm_s; }, seconds, true},
        {tr("Expert all-to-all (exposed)"), [](const SimulationResult& r) { return r.breakdown.ep_comm_s; }, seconds, true},
        {tr("Context-parallel comm (exposed)"), [](const SimulationResult& r) { return r.breakdown.cp_comm_s; }, seconds, true},
        {tr("Pipeline comm"), [](const SimulationResult& r) { return r.breakdown.pp_comm_s; }, seconds, true},
        {tr("Data-parallel comm (exposed)"), [](const SimulationResult& r) { return r.breakdown.dp_comm_exposed_s; }, seconds, true},
        {tr("Optimizer"), [](const SimulationResult& r) { return r.breakdown.optimizer_s; }, seconds, true},
        {tr("Bubble (idle)"), [](const SimulationResult& r) { return r.breakdown.bubble_s; }, seconds, true},
        {tr("Peak memory"), [](const SimulationResult& r) { return r.peak_memory_gib; }, gib, true},
        {tr("MFU"), [](const SimulationResult& r) { return r.mfu; }, percent, false},
        {tr("Training time"), [](const SimulationResult& r) { return r.training_days; }, days, true},
        {tr("Training cost"), [](const SimulationResult& r) { return r.cost_usd; }, dollars, true},
    };
    m_summary->setRowCount(static_cast<int>(lines.size()));
    for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
        const Line& l = lines[static_cast<std::size_t>(i)];
        m_summary->setItem(i, 0, cell(l.name, Qt::AlignLeft | Qt::AlignVCenter));
        if (a) {
            m_summary->setItem(i, 1, cell(l.format(l.get(*a))));
        }
        if (b) {
            m_summary->setItem(i, 2, cell(l.format(l.get(*b))));
        }
        if (a && b) {
            m_summary->setItem(i, 3, deltaCell(l.get(*a), l.get(*b), l.format, l.lowerIsBetter));
        }
    }
    // Wide enough for every column's text, the frame and a vertical scroll bar.
    QHeaderView* header = m_summary->horizontalHeader();
    int width = 2 * m_summary->frameWidth() + m_summary->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < m_summary->columnCount(); ++c) {
        width += std::max(header->sectionSizeHint(c), static_cast<const QAbstractItemView*>(m_summary)->sizeHintForColumn(c));
    }
    m_summary->setMinimumWidth(width);
}

void CompareView::fillStages()
{
    m_stages->clear();
    const QStringList headers{tr("Stage"),  tr("A busy"),   tr("A comm"),   tr("A bubble"), tr("A memory"), tr("B busy"),
                              tr("B comm"), tr("B bubble"), tr("B memory"), tr("Δ bubble"), tr("Δ memory")};
    m_stages->setColumnCount(static_cast<int>(headers.size()));
    m_stages->setHorizontalHeaderLabels(headers);
    const std::size_t na = m_a ? m_a->stages.size() : 0;
    const std::size_t nb = m_b ? m_b->stages.size() : 0;
    const std::size_t n = std::max(na, nb);
    m_stages->setRowCount(static_cast<int>(n));
    auto busy = [](const StageBreakdown& b) { return b.compute_s + b.optimizer_s; };
    auto comm = [](const StageBreakdown& b) { return b.tp_comm_s + b.ep_comm_s + b.cp_comm_s + b.pp_comm_s + b.dp_comm_exposed_s; };
    for (std::size_t s = 0; s < n; ++s) {
        const int row = static_cast<int>(s);
        m_stages->setItem(row, 0, cell(QString::number(s)));
        const StageResult* sa = s < na ? &m_a->stages[s] : nullptr;
        const StageResult* sb = s < nb ? &m_b->stages[s] : nullptr;
        if (sa) {
            m_stages->setItem(row, 1, cell(seconds(busy(sa->breakdown))));
            m_stages->setItem(row, 2, cell(seconds(comm(sa->breakdown))));
            m_stages->setItem(row, 3, cell(seconds(sa->breakdown.bubble_s)));
            m_stages->setItem(row, 4, cell(gib(sa->peak_memory_gib)));
        }
        if (sb) {
            m_stages->setItem(row, 5, cell(seconds(busy(sb->breakdown))));
            m_stages->setItem(row, 6, cell(seconds(comm(sb->breakdown))));
            m_stages->setItem(row, 7, cell(seconds(sb->breakdown.bubble_s)));
            m_stages->setItem(row, 8, cell(gib(sb->peak_memory_gib)));
        }
        if (sa && sb) {
            m_stages->setItem(row, 9, deltaCell(sa->breakdown.bubble_s, sb->breakdown.bubble_s, seconds));
            m_stages->setItem(row, 10, deltaCell(sa->peak_memory_gib, sb->peak_memory_gib, gib));
        }
    }
}

} // namespace vtrain::ui
