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
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/profile_catalog.h"
#include "models/settings_keys.h"
#include "views/cluster_gantt_plot.h"
#include "views/field_row.h"
#include "views/number_text.h"

namespace vtrain::ui {
namespace {

QString hours(double h)
{
    return QString::number(h, 'f', 1) + QStringLiteral(" h");
}

} // namespace

ClusterScheduleView::ClusterScheduleView(ProfileCatalog* catalog, QWidget* parent)
    : CaseStudyView(catalog,
                    {tr("throughput curves"), settings_keys::kSharedClusterInputs, tr("Shared cluster schedule"), tr("cluster schedule"),
                     QStringLiteral("shared-cluster.png")},
                    parent)
{
    setObjectName(QStringLiteral("clusterScheduleView"));
    m_runner = new ScheduleRunner(this);
    setRunner(m_runner);
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
    connect(m_runner, &ScheduleRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ScheduleRunResult> r) { onFinished(r); });
    finishSetup(tr("Set the cluster and the workload; the study runs as you edit."));
}

QWidget* ClusterScheduleView::buildInputs()
{
    auto* panel = new QWidget(this);
    panel->setObjectName(QStringLiteral("clusterInputs"));
    panel->setFixedWidth(330);
    QFormLayout* form = buildForm(panel, QStringLiteral("sharedCluster.gpu"));
    m_gpus = new FieldRow(QStringLiteral("sharedCluster.gpus"), tr("e.g. 1024"), tr("GPUs in the shared cluster"), panel);
    form->addRow(tr("GPU count"), m_gpus);
    m_jobs = new FieldRow(QStringLiteral("sharedCluster.jobs"), tr("e.g. 64"), tr("Training jobs the seeded generator submits"), panel);
    form->addRow(tr("Jobs"), m_jobs);
    m_seed = new FieldRow(QStringLiteral("sharedCluster.seed"), tr("e.g. 1"), tr("The generator's seed: the same seed gives the same jobs"), panel);
    form->addRow(tr("Seed"), m_seed);
    m_window = new FieldRow(QStringLiteral("sharedCluster.window_hours"), tr("e.g. 80"), tr("Jobs arrive uniformly over this many hours"), panel);
    form->addRow(tr("Arrivals over (h)"), m_window);
    setFields({{QStringLiteral("gpus"), m_gpus},
               {QStringLiteral("jobs"), m_jobs},
               {QStringLiteral("seed"), m_seed},
               {QStringLiteral("window_hours"), m_window}},
              {{QStringLiteral("gpus"), tr("GPU count")},
               {QStringLiteral("jobs"), tr("Jobs")},
               {QStringLiteral("seed"), tr("Seed")},
               {QStringLiteral("window_hours"), tr("Arrivals over")},
               {QStringLiteral("restart_overhead_s"), tr("Restart overhead")}});

    m_summary = finishInputs(panel,
                             tr("<b>Shared cluster</b><br>Jobs arrive with deadlines at one cluster. Three policies share its GPUs: "
                                "simulator-informed (each job's plan and allocation from its simulated throughput), fixed "
                                "allocations, and ElasticFlow-style (elastic, assuming linear scaling)."),
                             form, QStringLiteral("clusterSummary"));

    setInputs(gpuId(), 1024, 64, 1);
    for (FieldRow* row : {m_gpus, m_jobs, m_seed, m_window}) {
        connect(row, &FieldRow::edited, this, &ClusterScheduleView::onEdited);
    }
    return panel;
}

void ClusterScheduleView::setInputs(const QString& gpu, int gpus, int jobs, std::uint64_t seed, double windowHours)
{
    editInputs([&] {
        selectGpu(gpu);
        m_gpus->setText(QString::number(gpus));
        m_jobs->setText(QString::number(jobs));
        m_seed->setText(QString::number(seed));
        m_window->setText(QString::number(windowHours, 'g', 10));
    });
}

void ClusterScheduleView::loadInputs(const QVariantMap& saved)
{
    for (auto it = fields().cbegin(); it != fields().cend(); ++it) {
        it.value()->setText(saved.value(it.key()).toString());
    }
    m_policy->setCurrentIndex(std::max(0, m_policy->findData(saved.value(QStringLiteral("policy")).toInt())));
}

QVariantMap ClusterScheduleView::savedInputs() const
{
    QVariantMap saved{{QStringLiteral("policy"), m_policy->currentData()}};
    for (auto it = fields().cbegin(); it != fields().cend(); ++it) {
        saved.insert(it.key(), it.value()->text());
    }
    return saved;
}

std::optional<ScheduleInputs> ClusterScheduleView::inputs()
{
    clearErrors();
    Diagnostics bad;
    ScheduleInputs in;
    in.gpu = gpuId().toStdString();
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
    std::shared_ptr<const GpuProfile> profile = in.gpu.empty() ? nullptr : catalog()->profile(in.gpu, &error);
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

CaseStudyView::Study ClusterScheduleView::study()
{
    const auto in = inputs();
    if (!in) {
        return {};
    }
    return [this, in = *in](Start start) {
        if (start == Start::Now) {
            m_runner->start(in, catalog()->profile(in.gpu));
        } else {
            m_runner->schedule(in, catalog()->profile(in.gpu), kDebounceMs);
        }
        return true;
    };
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
    fillTable(*result);
    fillSummary(*result);
    showGantt();
    const ScheduleStudy& s = result->study;
    if (result->cancelled && s.results.empty()) {
        showFinished(tr("Cancelled while measuring the workload's throughput curves: nothing was scheduled."));
    } else if (result->cancelled) {
        showFinished(tr("Cancelled: the policies after the cancel were not simulated."));
    } else {
        showFinished(tr("%1 throughput curves (%2 plans explored) and %3 policies in %4.")
                         .arg(s.curves.size())
                         .arg(formatCount(static_cast<double>(s.plans_enumerated)))
                         .arg(s.results.size())
                         .arg(formatSeconds(result->elapsed_s)));
    }
}

void ClusterScheduleView::fillTable(const ScheduleRunResult& result)
{
    const ScheduleStudy& s = result.study;
    const int jobs = static_cast<int>(s.request.jobs.size());
    m_table->setRowCount(static_cast<int>(s.results.size()));
    for (int row = 0; row < m_table->rowCount(); ++row) {
        const PolicyResult& p = s.results[static_cast<std::size_t>(row)];
        const int met = static_cast<int>(std::lround(p.deadline_satisfaction * jobs));
        m_table->setItem(row, ColPolicy,
                         cell(policyTitle(p.policy) + (p.cancelled ? tr(" (cancelled)") : QString()), Qt::AlignLeft | Qt::AlignVCenter));
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
                         formatPercentChange(100 * (ours->average_jct_h / elastic->average_jct_h - 1)),
                         formatPercentChange(100 * (ours->makespan_h / elastic->makespan_h - 1)));
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

} // namespace vtrain::ui
