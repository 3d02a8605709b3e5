// SPDX-License-Identifier: MIT
#include "views/cluster_schedule_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSettings>
#include <QSplitter>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/profile_catalog.h"
#include "models/settings_keys.h"
#include "views/cluster_gantt_plot.h"
#include "views/export_dialog.h"
#include "views/field_row.h"
#include "views/number_text.h"
#include "views/study_bar.h"

namespace vtrain::ui {
namespace {

constexpr int kDebounceMs = 500;

std::string notA(const QString& text, const QString& what)
{
    return QStringLiteral("\"%1\" is not %2").arg(text, what).toStdString();
}

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter)
{
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(align);
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    return item;
}

QString hours(double h)
{
    return QString::number(h, 'f', 1) + QStringLiteral(" h");
}

} // namespace

ClusterScheduleView::ClusterScheduleView(ProfileCatalog* catalog, QWidget* parent)
    : QWidget(parent)
    , m_catalog(catalog)
{
    setObjectName(QStringLiteral("clusterScheduleView"));
    m_runner = new ScheduleRunner(this);
    m_gantt = new ClusterGanttPlot(this);
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("clusterMetricsTable"));
    m_table->setHorizontalHeaderLabels(
        {tr("Policy"), tr("Deadlines met"), tr("Average JCT"), tr("Makespan"), tr("GPU utilisation"), tr("Cluster MFU"), tr("Restarts")});
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(ColPolicy, QHeaderView::ResizeToContents);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setFixedHeight(m_table->horizontalHeader()->sizeHint().height() + 3 * m_table->verticalHeader()->defaultSectionSize() +
                            2 * m_table->frameWidth());

    m_policy = new QComboBox(this);
    m_policy->setObjectName(QStringLiteral("ganttPolicy"));
    for (SchedulePolicy p : {SchedulePolicy::SimulatorInformed, SchedulePolicy::Fixed, SchedulePolicy::ElasticFlow}) {
        m_policy->addItem(policyTitle(p), static_cast<int>(p));
    }
    auto* ganttBar = new QHBoxLayout;
    ganttBar->addWidget(new QLabel(tr("Schedule of the policy:"), this));
    ganttBar->addWidget(m_policy);
    ganttBar->addStretch(1);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_table);
    rightLayout->addLayout(ganttBar);
    rightLayout->addWidget(m_gantt, 1);

    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildInputs());
    layout->addWidget(right, 1);

    connect(m_policy, &QComboBox::currentIndexChanged, this, &ClusterScheduleView::showGantt);
    connect(m_table, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (m_result && row < static_cast<int>(m_result->study.results.size())) {
            setGanttPolicy(m_result->study.results[static_cast<std::size_t>(row)].policy);
        }
    });
    connect(m_bar, &StudyBar::runRequested, this, &ClusterScheduleView::run);
    connect(m_bar, &StudyBar::exportRequested, this, &ClusterScheduleView::exportDialog);
    connect(m_runner, &ScheduleRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ScheduleRunResult> r) { onFinished(r); });
    connect(m_runner, &StudyRunner::failed, this, [this](std::uint64_t, const Diagnostics& errors) { showErrors(errors); });
    m_bar->setStatus(tr("Set the cluster and the workload; the study runs as you edit."));
    m_bar->exportButton()->setEnabled(false); // nothing to export before the first result
    m_saving = true;
}

QWidget* ClusterScheduleView::buildInputs()
{
    auto* panel = new QWidget(this);
    panel->setObjectName(QStringLiteral("clusterInputs"));
    panel->setFixedWidth(330);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    m_gpu = new QComboBox(panel);
    m_gpu->setObjectName(QStringLiteral("sharedCluster.gpu"));
    m_gpu->addItems(m_catalog->ids());
    const int a100 = m_gpu->findText(QStringLiteral("a100-sxm4-80gb"));
    m_gpu->setCurrentIndex(a100 >= 0 ? a100 : 0);
    m_gpuError = new QLabel(panel);
    m_gpuError->setObjectName(QStringLiteral("sharedCluster.gpu.error"));
    m_gpuError->setStyleSheet(QStringLiteral("color: #c62828;"));
    m_gpuError->setWordWrap(true);
    m_gpuError->setVisible(false);
    auto* gpuBox = new QVBoxLayout;
    gpuBox->setSpacing(1);
    gpuBox->addWidget(m_gpu);
    gpuBox->addWidget(m_gpuError);
    form->addRow(tr("GPU type"), gpuBox);
    m_gpus = new FieldRow(QStringLiteral("sharedCluster.gpus"), tr("e.g. 1024"), tr("GPUs in the shared cluster"), panel);
    form->addRow(tr("GPU count"), m_gpus);
    m_jobs = new FieldRow(QStringLiteral("sharedCluster.jobs"), tr("e.g. 64"), tr("Training jobs the seeded generator submits"), panel);
    form->addRow(tr("Jobs"), m_jobs);
    m_seed = new FieldRow(QStringLiteral("sharedCluster.seed"), tr("e.g. 1"), tr("The generator's seed: the same seed gives the same jobs"), panel);
    form->addRow(tr("Seed"), m_seed);
    m_window = new FieldRow(QStringLiteral("sharedCluster.window_hours"), tr("e.g. 80"), tr("Jobs arrive uniformly over this many hours"), panel);
    form->addRow(tr("Arrivals over (h)"), m_window);
    m_fields = {{QStringLiteral("gpus"), m_gpus},
                {QStringLiteral("jobs"), m_jobs},
                {QStringLiteral("seed"), m_seed},
                {QStringLiteral("window_hours"), m_window}};

    m_bar = new StudyBar(tr("throughput curves"), panel);
    m_bar->setRunner(m_runner);
    m_summary = new QLabel(panel);
    m_summary->setObjectName(QStringLiteral("clusterSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);

    auto* intro = new QLabel(tr("<b>Shared cluster</b><br>Jobs arrive with deadlines at one cluster. Three policies share its GPUs: "
                                "simulator-informed (each job's plan and allocation from its simulated throughput), fixed "
                                "allocations, and ElasticFlow-style (elastic, assuming linear scaling)."),
                             panel);
    intro->setWordWrap(true);
    auto* layout = new QVBoxLayout(panel);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_bar);
    layout->addWidget(m_summary, 1);

    setInputs(m_gpu->currentText(), 1024, 64, 1);
    for (FieldRow* row : {m_gpus, m_jobs, m_seed, m_window}) {
        connect(row, &FieldRow::edited, this, &ClusterScheduleView::onEdited);
    }
    connect(m_gpu, &QComboBox::currentIndexChanged, this, &ClusterScheduleView::onEdited);
    return panel;
}

void ClusterScheduleView::setInputs(const QString& gpu, int gpus, int jobs, std::uint64_t seed, double windowHours)
{
    m_loading = true;
    if (const int i = m_gpu->findText(gpu); i >= 0) {
        m_gpu->setCurrentIndex(i);
    }
    m_gpus->setText(QString::number(gpus));
    m_jobs->setText(QString::number(jobs));
    m_seed->setText(QString::number(seed));
    m_window->setText(QString::number(windowHours, 'g', 10));
    m_loading = false;
    onEdited();
}

void ClusterScheduleView::restoreInputs()
{
    const QVariantMap saved = QSettings().value(QLatin1String(settings_keys::kSharedClusterInputs)).toMap();
    if (saved.isEmpty()) {
        return;
    }
    m_loading = true;
    if (const int i = m_gpu->findText(saved.value(QStringLiteral("gpu")).toString()); i >= 0) {
        m_gpu->setCurrentIndex(i);
    }
    for (auto it = m_fields.cbegin(); it != m_fields.cend(); ++it) {
        it.value()->setText(saved.value(it.key()).toString());
    }
    m_policy->setCurrentIndex(std::max(0, m_policy->findData(saved.value(QStringLiteral("policy")).toInt())));
    m_loading = false;
    onEdited();
}

void ClusterScheduleView::saveInputs() const
{
    if (!m_saving) {
        return;
    }
    QVariantMap saved{{QStringLiteral("gpu"), m_gpu->currentText()}, {QStringLiteral("policy"), m_policy->currentData()}};
    for (auto it = m_fields.cbegin(); it != m_fields.cend(); ++it) {
        saved.insert(it.key(), it.value()->text());
    }
    QSettings().setValue(QLatin1String(settings_keys::kSharedClusterInputs), saved);
}

std::optional<ScheduleInputs> ClusterScheduleView::inputs()
{
    clearErrors();
    Diagnostics bad;
    ScheduleInputs in;
    in.gpu = m_gpu->currentText().toStdString();
    const auto gpus = parseWholeText(m_gpus->text(), std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    const auto jobs = parseWholeText(m_jobs->text(), std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    const auto seed = parseWholeText(m_seed->text(), 0, std::numeric_limits<long long>::max());
    const auto window = parseNumberText(m_window->text());
    if (!gpus) {
        bad.push_back({"gpus", notA(m_gpus->text(), tr("a whole number of GPUs"))});
    }
    if (!jobs) {
        bad.push_back({"jobs", notA(m_jobs->text(), tr("a whole number of jobs"))});
    }
    if (!seed) {
        bad.push_back({"seed", notA(m_seed->text(), tr("a whole number >= 0"))});
    }
    if (!window) {
        bad.push_back({"window_hours", notA(m_window->text(), tr("a number of hours"))});
    }
    QString error;
    std::shared_ptr<const GpuProfile> profile = in.gpu.empty() ? nullptr : m_catalog->profile(in.gpu, &error);
    if (!profile) {
        bad.push_back({"gpu", in.gpu.empty() ? std::string("no GPU profile was found (see vtrain profiles)") : error.toStdString()});
    }
    if (bad.empty()) {
        in.num_gpus = static_cast<int>(*gpus);
        in.workload.jobs = static_cast<int>(*jobs);
        in.workload.seed = static_cast<std::uint64_t>(*seed);
        in.workload.window_hours = *window;
        bad = check_schedule_inputs(in, profile->peak_flops("bf16") / 1e12);
    }
    if (!bad.empty()) {
        showErrors(bad);
        return std::nullopt;
    }
    return in;
}

bool ClusterScheduleView::run()
{
    m_runner->cancelScheduled();
    const auto in = inputs();
    if (!in) {
        return false;
    }
    m_runner->start(*in, m_catalog->profile(in->gpu));
    return true;
}

void ClusterScheduleView::cancel()
{
    m_runner->cancel();
}

void ClusterScheduleView::onEdited()
{
    if (m_loading) {
        return;
    }
    saveInputs();
    const auto in = inputs();
    if (!in) {
        m_runner->cancelScheduled();
        return;
    }
    m_bar->setStatus(m_resultStatus.isEmpty() ? tr("Ready to run.") : m_resultStatus); // any refusal shown before is fixed
    if (m_autoRun && m_shown) {
        m_runner->schedule(*in, m_catalog->profile(in->gpu), kDebounceMs);
    }
}

void ClusterScheduleView::clearErrors()
{
    for (FieldRow* row : m_fields) {
        row->setError({});
    }
    m_gpuError->clear();
    m_gpuError->setVisible(false);
}

void ClusterScheduleView::showErrors(const Diagnostics& errors)
{
    const QHash<QString, QString> labels{{QStringLiteral("gpu"), tr("GPU type")},
                                         {QStringLiteral("gpus"), tr("GPU count")},
                                         {QStringLiteral("jobs"), tr("Jobs")},
                                         {QStringLiteral("seed"), tr("Seed")},
                                         {QStringLiteral("window_hours"), tr("Arrivals over")},
                                         {QStringLiteral("restart_overhead_s"), tr("Restart overhead")}};
    QStringList lines;
    for (const Diagnostic& d : errors) {
        const QString field = QString::fromStdString(d.field);
        const QString message = QString::fromStdString(d.message);
        if (FieldRow* row = m_fields.value(field); row && row->error().isEmpty()) {
            row->setError(message);
        } else if (field == u"gpu") {
            m_gpuError->setText(message);
            m_gpuError->setVisible(true);
        }
        const QString label = labels.value(field, field);
        lines << (label.isEmpty() ? message : label + QStringLiteral(": ") + message);
    }
    m_bar->setStatus(
        QStringLiteral("<span style='color:#c62828'>%1</span>").arg(lines.join(QLatin1Char('\n')).toHtmlEscaped().replace(u'\n', QStringLiteral("<br>"))));
}

QString ClusterScheduleView::fieldError(const QString& field) const
{
    if (field == u"gpu") {
        return m_gpuError->text();
    }
    const FieldRow* row = m_fields.value(field);
    return row ? row->error() : QString();
}

QString ClusterScheduleView::statusText() const
{
    return m_bar->statusText();
}

QString ClusterScheduleView::summaryText() const
{
    return m_summary->text();
}

QCustomPlot* ClusterScheduleView::customPlot() const
{
    return m_gantt->customPlot();
}

void ClusterScheduleView::setGanttPolicy(SchedulePolicy policy)
{
    m_policy->setCurrentIndex(m_policy->findData(static_cast<int>(policy)));
}

SchedulePolicy ClusterScheduleView::ganttPolicy() const
{
    return static_cast<SchedulePolicy>(m_policy->currentData().toInt());
}

void ClusterScheduleView::onFinished(std::shared_ptr<const ScheduleRunResult> result)
{
    m_result = result;
    m_bar->exportButton()->setEnabled(true);
    fillTable(*result);
    fillSummary(*result);
    showGantt();
    const ScheduleStudy& s = result->study;
    if (result->cancelled && s.results.empty()) {
        m_resultStatus = tr("Cancelled while measuring the workload's throughput curves: nothing was scheduled.");
    } else if (result->cancelled) {
        m_resultStatus = tr("Cancelled: the policies after the cancel were not simulated.");
    } else {
        m_resultStatus = tr("%1 throughput curves (%2 plans explored) and %3 policies in %4.")
                             .arg(s.curves.size())
                             .arg(formatCount(static_cast<double>(s.plans_enumerated)))
                             .arg(s.results.size())
                             .arg(formatSeconds(result->elapsed_s));
    }
    m_bar->setStatus(m_resultStatus);
}

void ClusterScheduleView::fillTable(const ScheduleRunResult& result)
{
    const ScheduleStudy& s = result.study;
    const int jobs = static_cast<int>(s.request.jobs.size());
    m_table->setRowCount(static_cast<int>(s.results.size()));
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const PolicyResult& p = s.results[static_cast<std::size_t>(row)];
        const int met = static_cast<int>(std::lround(p.deadline_satisfaction * jobs));
        m_table->setItem(row, ColPolicy, cell(policyTitle(p.policy) + (p.cancelled ? tr(" (cancelled)") : QString()), Qt::AlignLeft | Qt::AlignVCenter));
        m_table->setItem(row, ColDeadlines, cell(tr("%1 of %2 (%3)").arg(met).arg(jobs).arg(formatPercent(p.deadline_satisfaction))));
        m_table->setItem(row, ColJct, cell(hours(p.average_jct_h)));
        m_table->setItem(row, ColMakespan, cell(hours(p.makespan_h)));
        m_table->setItem(row, ColUtilization, cell(formatPercent(p.gpu_utilization)));
        m_table->setItem(row, ColMfu, cell(formatPercent(p.cluster_mfu)));
        m_table->setItem(row, ColRestarts, cell(QString::number(p.restarts)));
    }
    // Exactly as tall as its rows: the Gantt gets the rest.
    int height = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth();
    for (int row = 0; row < m_table->rowCount(); ++row) {
        height += m_table->rowHeight(row);
    }
    m_table->setFixedHeight(height);
}

void ClusterScheduleView::fillSummary(const ScheduleRunResult& result)
{
    const ScheduleStudy& s = result.study;
    if (s.results.empty()) {
        m_summary->clear();
        return;
    }
    QString text = tr("<p>%1 jobs (seed %2, arrivals over %3 h, offered load %4) on %5 × %6.</p>")
                       .arg(s.request.jobs.size())
                       .arg(result.inputs.workload.seed)
                       .arg(QString::number(result.inputs.workload.window_hours, 'g', 4), QString::number(result.offered_load, 'f', 2),
                            formatCount(s.request.num_gpus), QString::fromStdString(s.request.gpu));
    const PolicyResult* ours = nullptr;
    const PolicyResult* elastic = nullptr;
    for (const PolicyResult& p : s.results) {
        ours = p.policy == SchedulePolicy::SimulatorInformed ? &p : ours;
        elastic = p.policy == SchedulePolicy::ElasticFlow ? &p : elastic;
    }
    if (ours && elastic && elastic->deadline_satisfaction > 0 && elastic->average_jct_h > 0 && elastic->makespan_h > 0) {
        text += tr("<p><b>Simulator-informed vs ElasticFlow-style:</b> deadline satisfaction %1×, average JCT %2, makespan %3.</p>")
                    .arg(QString::number(ours->deadline_satisfaction / elastic->deadline_satisfaction, 'f', 2),
                         QString::asprintf("%+.1f %%", 100 * (ours->average_jct_h / elastic->average_jct_h - 1)),
                         QString::asprintf("%+.1f %%", 100 * (ours->makespan_h / elastic->makespan_h - 1)));
    }
    m_summary->setText(text);
}

void ClusterScheduleView::showGantt()
{
    saveInputs();
    if (!m_result) {
        return;
    }
    const ScheduleStudy& s = m_result->study;
    std::set<int> counts;
    for (const PolicyResult& p : s.results) {
        for (const JobOutcome& o : p.jobs) {
            for (const JobSegment& seg : o.segments) {
                counts.insert(seg.gpus);
            }
        }
    }
    const std::vector<int> gpuCounts(counts.begin(), counts.end());
    const SchedulePolicy policy = ganttPolicy();
    for (std::size_t i = 0; i < s.results.size(); ++i) {
        if (s.results[i].policy == policy) {
            m_table->selectRow(static_cast<int>(i));
            m_gantt->setSchedule(s.request.jobs, s.results[i], gpuCounts,
                                 tr("%1 jobs on %2 × %3: %4 policy")
                                     .arg(s.request.jobs.size())
                                     .arg(formatCount(s.request.num_gpus), QString::fromStdString(s.request.gpu), policyTitle(policy)));
            return;
        }
    }
    m_gantt->clear(); // this policy was not simulated (cancelled before it)
}

bool ClusterScheduleView::exportImage(const QString& path, const ExportSize& size, QString* error)
{
    return exportPlot(m_gantt->customPlot(), path, size, tr("Shared cluster schedule"), error);
}

void ClusterScheduleView::exportDialog()
{
    if (const auto path = ExportDialog::exportChart(this, m_gantt->customPlot(), tr("cluster schedule"), QStringLiteral("shared-cluster.png"), tr("Shared cluster schedule"))) {
        m_bar->setStatus(tr("Wrote %1").arg(path->toHtmlEscaped()));
    }
}

void ClusterScheduleView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_shown) {
        m_shown = true;
        if (m_autoRun && !m_result && !m_runner->isRunning()) {
            run();
        }
    }
}

} // namespace vtrain::ui
