// SPDX-License-Identifier: MIT
#include "details_panel.h"

#include <QHBoxLayout>
#include <QLabel>
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

namespace vtrain::ui {

DetailsPanel::DetailsPanel(QWidget* parent)
    : QWidget(parent)
{
    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("detailsHeader"));
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
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

    auto* timelinePage = new QWidget(this);
    auto* timelineLayout = new QVBoxLayout(timelinePage);
    timelineLayout->setContentsMargins(0, 0, 0, 0);
    timelineLayout->addWidget(m_timeline);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("detailsTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(timelinePage, tr("Pipeline timeline"));
    m_tabs->addTab(m_memory, tr("Memory per stage"));
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
    layout->addWidget(m_tabs, 1);
    clear();
}

void DetailsPanel::setResult(std::shared_ptr<const SimulationResult> result)
{
    m_timeline->setResult(result);
    m_memory->setResult(result);
    m_compare->setCurrent(result);
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
    m_header->setToolTip(r.band_coverage > 0 ? tr("The iteration time's band: %1% of the GPU profile's validation runs fall within it (%2)")
                                                   .arg(qRound(100 * r.band_coverage))
                                                   .arg(QString::fromStdString(r.band_source))
                                             : tr("This GPU profile has no uncertainty band (it was not calibrated)"));
    m_header->setText(tr("<b>%1 × %2</b> · %3 &nbsp;—&nbsp; iteration %4 · bubble %5 · MFU %6 · peak %7 · %8 · %9 · %10 tasks")
                          .arg(formatCount(r.num_gpus), QString::fromStdString(r.gpu), planSummary(r.plan).toHtmlEscaped(), iteration,
                               formatPercent(r.bubble_fraction), formatPercent(r.mfu),
                               formatGiB(r.peak_memory_gib), formatDays(r.training_days), formatDollars(r.cost_usd))
                          .arg(formatCount(static_cast<double>(r.task_count ? r.task_count : r.timeline.size()))));
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

void DetailsPanel::clear()
{
    m_launchScenario.reset();
    m_launch->setEnabled(false);
    m_header->setText(tr("No plan selected: click a point in the chart or a row in the table."));
}

QString DetailsPanel::headline() const
{
    return m_header->text();
}

} // namespace vtrain::ui
