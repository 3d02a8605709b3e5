// SPDX-License-Identifier: MIT
#include "details_panel.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/plan_dimensions.h"
#include "views/compare_view.h"
#include "views/launch_dialog.h"
#include "views/memory_view.h"
#include "views/timeline_view.h"
#include "vtrain/simulation_result.h"
#include "vtrain/simulator.h"
#include "vtrain/uncertainty.h"

namespace vtrain::ui {

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent)
{
    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("detailsHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wraps instead of setting the window's minimum width (a one-line summary once asked for 1,862 px).
    m_header->setWordWrap(true);
    m_header->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_header->setMinimumWidth(120);
    m_staleNote = new QLabel(this);
    m_staleNote->setObjectName(QStringLiteral("detailsStaleNote"));
    m_staleNote->setWordWrap(true);
    m_staleNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_staleNote->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #5c4400; padding: 3px; }"));
    m_staleNote->setVisible(false);
    m_timeline = new TimelineView(this);
    m_memory = new MemoryView(this);
    m_compare = new CompareView(this);

    auto* zoomOut = new QToolButton(this);
    zoomOut->setText(QStringLiteral("−"));
    zoomOut->setToolTip(tr("Zoom out (or turn the wheel over the timeline)"));
    auto* zoomIn = new QToolButton(this);
    zoomIn->setText(QStringLiteral("+"));
    zoomIn->setToolTip(tr("Zoom in"));
    auto* reset = new QToolButton(this);
    reset->setIcon(QIcon(QStringLiteral(":/icons/zoom-reset.svg")));
    reset->setToolTip(tr("Whole iteration (or double-click the timeline)"));
    connect(zoomIn, &QToolButton::clicked, m_timeline, [this] { m_timeline->zoomBy(2.0); });
    connect(zoomOut, &QToolButton::clicked, m_timeline, [this] { m_timeline->zoomBy(0.5); });
    connect(reset, &QToolButton::clicked, m_timeline, &TimelineView::resetZoom);
    m_launch = new QToolButton(this);
    m_launch->setObjectName(QStringLiteral("launchFlagsButton"));
    m_launch->setText(tr("Launch flags…"));
    m_launch->setToolTip(tr("This plan as Megatron-LM arguments or a DeepSpeed config"));
    connect(m_launch, &QToolButton::clicked, this, &DetailsPanel::showLaunchFlags);

    // Search over the tasks (Ctrl+F, F3), and a side panel with the clicked task and the time selection.
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("timelineSearch"));
    m_search->setPlaceholderText(tr("Search tasks: B12, stage 3, DP reduce"));
    m_search->setClearButtonEnabled(true);
    m_search->setToolTip(tr("Phrases such as F3, B12, stage 3, compute, DP reduce, optimizer, micro-batch 7; separate several with commas "
                            "(all must hold). Enter or F3: next match, Shift+F3: previous."));
    m_matches = new QLabel(this);
    m_matches->setObjectName(QStringLiteral("timelineMatches"));
    auto* find = new QAction(this);
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(find);
    connect(find, &QAction::triggered, m_search, [this] {
        m_tabs->setCurrentIndex(0);
        m_search->setFocus();
        m_search->selectAll();
    });
    connect(m_search, &QLineEdit::textChanged, m_timeline, &TimelineView::setSearch);
    connect(m_search, &QLineEdit::returnPressed, m_timeline, &TimelineView::nextMatch);
    connect(m_timeline, &TimelineView::matchesChanged, this, [this](int count, int current) {
        m_matches->setText(m_search->text().trimmed().isEmpty() ? QString()
                           : count == 0                         ? tr("no match")
                                                                : tr("%1 of %2").arg(current + 1).arg(count));
    });
    m_taskPanel = new QLabel(this);
    m_taskPanel->setObjectName(QStringLiteral("taskDetails"));
    m_taskPanel->setWordWrap(true);
    m_taskPanel->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_taskPanel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_taskPanel->setMargin(6);
    m_taskPanel->setMinimumWidth(150);
    connect(m_timeline, &TimelineView::taskSelected, this, &DetailsPanel::updateTaskPanel);
    connect(m_timeline, &TimelineView::rangeChanged, this, &DetailsPanel::updateTaskPanel);
    updateTaskPanel();

    auto* searchRow = new QHBoxLayout;
    searchRow->setContentsMargins(2, 0, 2, 0);
    searchRow->addWidget(m_search, 1);
    searchRow->addWidget(m_matches);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("timelineSplit"));
    split->addWidget(m_timeline);
    split->addWidget(m_taskPanel);
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 1);
    split->setCollapsible(0, false);
    split->setSizes({800, 190});
    auto* timelinePage = new QWidget(this);
    auto* timelineLayout = new QVBoxLayout(timelinePage);
    timelineLayout->setContentsMargins(0, 0, 0, 0);
    timelineLayout->setSpacing(2);
    timelineLayout->addLayout(searchRow);
    timelineLayout->addWidget(split, 1);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("detailsTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(timelinePage, tr("Pipeline timeline"));
    m_tabs->addTab(m_memory, tr("Memory per stage"));
    // No scroll area around Compare: it fits the dock, and only its tables and timelines scroll.
    m_tabs->addTab(m_compare, tr("Compare"));

    auto* header = new QHBoxLayout;
    header->setContentsMargins(6, 2, 6, 0);
    header->addWidget(m_header, 1);
    header->addWidget(zoomOut);
    header->addWidget(zoomIn);
    header->addWidget(reset);
    header->addWidget(m_launch);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(header);
    layout->addWidget(m_staleNote);
    layout->addWidget(m_tabs, 1);
    clear();
}

void DetailsPanel::setResult(std::shared_ptr<const SimulationResult> result, bool asCompareB)
{
    m_timeline->setResult(result);
    // The search and the task panel follow the new plan: the query finds its tasks, the old task goes.
    if (!m_search->text().trimmed().isEmpty()) {
        m_timeline->setSearch(m_search->text());
    }
    updateTaskPanel();
    m_memory->setResult(result);
    if (asCompareB) {
        m_compare->setCurrent(result);
    }
    if (!result) {
        clear();
        return;
    }
    const SimulationResult& r = *result;
    // The iteration with its uncertainty band when the profile has one: "19.66 s (19.03–22.32 s)".
    QString iteration = formatSeconds(r.iteration_time_s);
    if (r.band_coverage > 0) {
        iteration += QStringLiteral(" (%1–%2)").arg(formatSeconds(r.iteration_time_low_s), formatSeconds(r.iteration_time_high_s));
    }
    QString tip = r.band_coverage > 0 ? tr("The iteration time's band: %1% of the GPU profile's validation runs fall within it (%2)")
                                            .arg(qRound(100 * r.band_coverage))
                                            .arg(QString::fromStdString(r.band_source))
                                      : tr("This GPU profile has no uncertainty band (it was not calibrated)");
    // What the time does if the framework's CPU cost per operator differs from the profile's by the prior's
    // width (host_term_range): said in the header when it moves the time by more than 5% (host_bound).
    QString host;
    if (r.host_heavy_s > 0 && r.iteration_time_s > 0) {
        tip += tr("\n\nWith the framework's CPU time per operator ÷/× %1: %2 to %3")
                   .arg(kHostTermPriorWidth)
                   .arg(formatSeconds(r.host_light_s), formatSeconds(r.host_heavy_s));
        if (host_bound(r)) {
            host = tr(" · host-bound"); // the two times are in the tooltip (the header must stay short)
        }
    }
    // The binding physical floor (physical_floors.h) and the plausibility flags (plausibility.h).
    QString floor = host;
    if (r.floors.binding_s() > 0 && r.iteration_time_s > 0) {
        floor += tr(" · %1-bound floor %2")
                     .arg(QString::fromLatin1(to_string(r.floors.binding)), formatPercent(r.floors.binding_s() / r.iteration_time_s));
        tip += QStringLiteral("\n\n") + QString::fromStdString(floor_summary(r.floors, r.floor_hardware, r.iteration_time_s));
    }
    if (r.plausibility != 0) {
        floor += QStringLiteral(" · <span style=\"color:#d62728\">⚠ %1</span>").arg(tr("implausible (hover)"));
        for (const std::string& reason : r.plausibility_reasons) {
            tip += QStringLiteral("\n⚠ ") + QString::fromStdString(reason);
        }
    }
    m_header->setToolTip(tip);
    m_header->setText(tr("<b>%1 × %2</b> · %3 &nbsp;—&nbsp; iteration %4 · bubble %5 · MFU %6 · peak %7 · %8 · %9 · %10 tasks")
                          .arg(formatCount(r.num_gpus), QString::fromStdString(r.gpu), planSummary(r.plan).toHtmlEscaped(), iteration,
                               formatPercent(r.bubble_fraction), formatPercent(r.mfu), formatGiB(r.peak_memory_gib), formatDays(r.training_days),
                               formatDollars(r.cost_usd))
                          .arg(formatCount(static_cast<double>(r.task_count ? r.task_count : r.timeline.size()))) +
                      floor);
}

void DetailsPanel::updateTaskPanel()
{
    QString text = m_timeline->selectedDescription().toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    if (text.isEmpty()) {
        text = tr("<i>Click a task to see it here.</i><br><br>Shift+drag: measure a time range.<br>W/S zoom, A/D pan, F fit.");
    } else {
        text.prepend(tr("<b>Selected task</b><br>"));
    }
    if (m_timeline->rangeEnd() > m_timeline->rangeStart()) {
        text += tr("<br><br><b>Time selection</b><br>%1 → %2<br>duration <b>%3</b>")
                    .arg(formatSeconds(m_timeline->rangeStart()), formatSeconds(m_timeline->rangeEnd()),
                         formatSeconds(m_timeline->rangeEnd() - m_timeline->rangeStart()));
    }
    m_taskPanel->setText(text);
}

QString DetailsPanel::taskPanelText() const
{
    return m_taskPanel->text();
}

void DetailsPanel::setBusy(const QString& message)
{
    m_header->setText(message);
}

void DetailsPanel::setLaunchScenario(const Scenario& scenario)
{
    m_launchScenario = scenario;
    m_launch->setEnabled(scenario.plan.has_value());
}

void DetailsPanel::showLaunchFlags()
{
    if (!m_launchScenario || !m_launchScenario->plan) {
        return;
    }
    auto* dialog = new LaunchDialog(*m_launchScenario, *m_launchScenario->plan, m_launchScenario->cluster.gpus_per_node, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

void DetailsPanel::clear(const QString& message)
{
    m_launchScenario.reset();
    m_launch->setEnabled(false);
    if (m_timeline->result()) {
        m_timeline->setResult(nullptr);
        m_memory->setResult(nullptr);
        m_compare->setCurrent(nullptr);
    }
    updateTaskPanel();
    m_header->setText(message.isEmpty() ? tr("No plan selected: click a point in the chart or a row in the table.") : message);
}

void DetailsPanel::resetForNewScenario(const QString& message)
{
    m_search->clear(); // a query for the old model's plan ("B12", "stage 30") need not mean anything here
    clear(message);
    setStaleNote({});
}

bool DetailsPanel::hasPlan() const
{
    return m_timeline->result() != nullptr;
}

void DetailsPanel::setStaleNote(const QString& note)
{
    m_staleNote->setText(note);
    m_staleNote->setVisible(!note.isEmpty());
}

QString DetailsPanel::staleNote() const
{
    return m_staleNote->text();
}

QString DetailsPanel::headline() const
{
    return m_header->text();
}

} // namespace vtrain::ui
