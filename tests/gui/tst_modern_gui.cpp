// SPDX-License-Identifier: MIT
// The GUI parts of today's workloads (#14-#17): a pruned sweep's bounded-out plans are counted beside the
// rejected ones, and the window stays responsive (progress, cancel) on the DeepSeek-V3 example and on a
// space of millions of plans around it; a selected row is simulated as the sweep ran it (its precision,
// its GPU type's price), so the details agree with the row; ZeRO-3 / FSDP traffic has legend entries and
// is found by the timeline search; a modeled GPU's band is marked as a prior; the memory chart splits the
// experts out where the core reports them; a sweep over several GPU types colours the chart by GPU type.
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <qcustomplot.h>

#include "details_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "models/format.h"
#include "models/plan_detail_runner.h"
#include "models/plan_dimensions.h"
#include "models/plan_table_model.h"
#include "models/presets.h"
#include "models/profile_catalog.h"
#include "models/prune_policy.h"
#include "models/reject_model.h"
#include "models/scenario_store.h"
#include "models/sweep_runner.h"
#include "models/timeline_data.h"
#include "models/timeline_search.h"
#include "views/check_list.h"
#include "views/compare_view.h"
#include "views/memory_view.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"
#include "views/scenario_editor.h"
#include "views/sweep_bar.h"
#include "views/timeline_painter.h"
#include "vtrain/explorer_space.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

MainWindowOptions optionsFor(const Scenario& s)
{
    MainWindowOptions o;
    o.restoreSession = false;
    o.runOnStart = false;
    o.scenario = s;
    return o;
}

Scenario example(const char* name)
{
    QString error;
    const auto parsed = store::readScenario(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/") + QLatin1String(name), &error);
    if (!parsed) {
        qFatal("cannot read example %s: %s", name, qPrintable(error));
    }
    return *parsed;
}

std::shared_ptr<const ExploreResult> sweep(MainWindow& w)
{
    QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
    w.startSweep();
    if (!finished.wait(300000)) {
        return nullptr;
    }
    return w.sweepRunner()->lastResult();
}

std::uint64_t rejectedOf(const ExploreResult& r)
{
    std::uint64_t n = 0;
    for (std::uint64_t c : r.rejected) {
        n += c;
    }
    return n;
}

// The largest gap between two turns of the event loop while `running` holds (a frozen window shows here).
class LoopWatch : public QObject {
public:
    explicit LoopWatch(QObject* parent = nullptr) : QObject(parent)
    {
        m_timer.setInterval(10);
        connect(&m_timer, &QTimer::timeout, this, [this] { m_worstMs = std::max(m_worstMs, m_clock.restart()); });
        m_clock.start();
        m_timer.start();
    }
    qint64 worstMs() const { return m_worstMs; }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_worstMs = 0;
};

} // namespace

class TestModernGui : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    // #17: the sweep bar and the Rejected tab count the bounded-out plans beside the rejected ones; Sweep >
    // Prune turns pruning on or off; the front is the same either way.
    void pruneCountsBesideRejected()
    {
        initResources();
        MainWindow w(optionsFor(defaultScenario())); // MT-NLG 530B: 40,824 plans
        w.setPrunePolicy(PrunePolicy::Never, false);
        const auto full = sweep(w);
        QVERIFY(full);
        QCOMPARE(full->bounded, std::uint64_t(0));
        QVERIFY2(!w.sweepBar()->statusText().contains(QStringLiteral("bounded")), qPrintable(w.sweepBar()->statusText()));
        QCOMPARE(std::uint64_t(w.planModel()->rowCount()), full->feasible);
        std::vector<std::uint64_t> fullFront;
        for (const PlanRow& r : full->front) {
            fullFront.push_back(r.index);
        }

        w.setPrunePolicy(PrunePolicy::Always, false);
        const auto pruned = sweep(w);
        QVERIFY(pruned);
        QVERIFY(pruned->bounded > 0);
        const QString status = w.sweepBar()->statusText();
        QVERIFY2(status.contains(QStringLiteral("%1 bounded out").arg(formatCount(static_cast<double>(pruned->bounded)))), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("%1 rejected").arg(formatCount(static_cast<double>(rejectedOf(*pruned))))), qPrintable(status));
        QCOMPARE(pruned->feasible + pruned->bounded + rejectedOf(*pruned), pruned->total);
        QCOMPARE(w.rejectModel()->bounded(), pruned->bounded);
        QCOMPARE(w.rejectModel()->data(w.rejectModel()->index(0, RejectModel::ReasonColumn)).toString(),
                 QStringLiteral("bounded out (cannot reach the front)"));
        QCOMPARE(w.rejectModel()->totalRejected(), rejectedOf(*pruned));
        auto* tabs = w.plansPanel()->findChild<QTabWidget*>();
        QVERIFY(tabs);
        QVERIFY2(tabs->tabText(1).contains(QStringLiteral("bounded (%1)").arg(formatCount(static_cast<double>(pruned->bounded)))),
                 qPrintable(tabs->tabText(1)));
        QCOMPARE(std::uint64_t(w.planModel()->rowCount()), pruned->feasible);
        std::vector<std::uint64_t> prunedFront;
        for (const PlanRow& r : pruned->front) {
            prunedFront.push_back(r.index);
        }
        QCOMPARE(prunedFront, fullFront);

        // By default only large spaces are pruned.
        QVERIFY(!shouldPrune(PrunePolicy::LargeSweeps, 40'824));
        QVERIFY(shouldPrune(PrunePolicy::LargeSweeps, kPruneAbovePlans + 1));
        QVERIFY(prunePolicyFromString(QStringLiteral("never")) == PrunePolicy::Never);
        QVERIFY(!prunePolicyFromString(QStringLiteral("sometimes")));
    }

    // #17: on the largest example, and on a space of millions of plans around it (pruned by default), the
    // window keeps turning its event loop, shows progress, and a cancel stops the sweep at once.
    void largestExampleStaysResponsive()
    {
        // Sweeps for up to 3 s; a sweep still running then is cancelled and must stop at once. Either way
        // the event loop never stalls and the bar reports progress and counts.
        auto sweepOrCancel = [](MainWindow& w) {
            w.show();
            QSignalSpy progress(w.sweepRunner(), &SweepRunner::progressChanged);
            QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
            LoopWatch watch;
            w.startSweep();
            QElapsedTimer clock;
            clock.start();
            while (finished.isEmpty() && clock.elapsed() < 3000) {
                QTest::qWait(50);
            }
            QVERIFY(progress.count() >= 2); // the bar moves while it runs
            if (finished.isEmpty()) {
                QVERIFY(w.sweepBar()->statusText().contains(QStringLiteral("plans")));
                QElapsedTimer cancelClock;
                cancelClock.start();
                w.cancelSweep();
                QVERIFY(finished.wait(10000));
                QVERIFY2(cancelClock.elapsed() < 5000, qPrintable(QString::number(cancelClock.elapsed())));
                QVERIFY(w.sweepRunner()->lastResult()->cancelled);
                QVERIFY(w.sweepBar()->statusText().startsWith(QStringLiteral("Cancelled")));
            } else {
                const auto r = w.sweepRunner()->lastResult();
                QVERIFY(r->feasible > 0);
                QVERIFY(w.sweepBar()->statusText().contains(QStringLiteral("rejected")));
                QCOMPARE(r->bounded > 0, w.sweepBar()->statusText().contains(QStringLiteral("bounded out")));
            }
            QVERIFY2(watch.worstMs() < 1000, qPrintable(QString::number(watch.worstMs())));
        };
        Scenario s = example("deepseek-v3-671b-h800.json");
        {
            MainWindow w(optionsFor(s));
            sweepOrCancel(w);
            if (QTest::currentTestFailed()) {
                return;
            }
        }
        // Millions of plans: every GPU count from 512 to 8,192 in steps of 64, three GPU types, four ep, two precisions.
        SearchSpace& q = s.search ? *s.search : s.search.emplace(); // on top of the example's own search block
        q.num_gpus.clear();
        for (int n = 512; n <= 8192; n += 64) {
            q.num_gpus.push_back(n);
        }
        q.gpu = {"h800-sxm5-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"};
        q.ep = {8, 16, 32, 64};
        q.precision = {Precision::Bf16, Precision::Fp8};
        ProfileCatalog catalog;
        QString error;
        const auto space = make_plan_space(s, catalog.profilesFor(s, error), false);
        QVERIFY(space.ok());
        QVERIFY2(space.value().size() > kPruneAbovePlans, qPrintable(QString::number(space.value().size())));
        MainWindow w(optionsFor(s));
        QVERIFY(w.prunePolicy() == PrunePolicy::LargeSweeps); // so this one is pruned
        sweepOrCancel(w);
        if (const auto r = w.sweepRunner()->lastResult(); r && !r->cancelled) {
            QVERIFY(r->bounded > 0);
        }
    }

    // Every shipped example opens in the editor with nothing refused, and the window sweeps the plans the
    // file describes. Qwen3-235B's 94 layers do not divide its stage counts 4, 8 and 16: the editor once
    // refused them all ("none of the checked stage counts divides 94 layers") although the explorer lays
    // such stages out unevenly, so the example could not be swept from the window at all.
    void everyExampleOpensAndSweepsAsWritten()
    {
        const QDir dir(QStringLiteral(VTRAIN_SOURCE_DIR "/examples"));
        int opened = 0;
        for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
            QString why;
            const auto s = store::readScenario(dir.filePath(name), &why);
            if (!s) {
                QVERIFY2(name.startsWith(QStringLiteral("jobs-")), qPrintable(name + QStringLiteral(": ") + why)); // cluster workloads
                continue;
            }
            ++opened;
            MainWindow w(optionsFor(*s));
            QVERIFY2(w.editor()->errors().isEmpty(), qPrintable(name + QStringLiteral(": ") + w.editor()->errors().join(QStringLiteral("; "))));
            QVERIFY2(w.editor()->scenario().has_value(), qPrintable(name));
        }
        QVERIFY2(opened >= 11, qPrintable(QString::number(opened)));

        const Scenario file = example("qwen3-235b-a22b-gb200.json");
        QCOMPARE(file.search->pp, (std::vector<int>{4, 8, 16}));
        MainWindow w(optionsFor(file));
        QCOMPARE(w.editor()->scenario()->search->pp, (std::vector<int>{4, 8, 16}));
        CheckList* pp = w.editor()->checkList(QStringLiteral("search.pp"));
        QVERIFY(pp->markedValues().isEmpty());
        QVERIFY2(pp->box(8)->toolTip().contains(QStringLiteral("uneven stages")), qPrintable(pp->box(8)->toolTip()));
        // The file's own description shows (the Qwen3 preset describes 4,096 H100s, the file 256 GB200s),
        // and a save from the window keeps it.
        const auto* about = w.editor()->findChild<QLabel*>(QStringLiteral("presetDescription"));
        QVERIFY(about);
        QVERIFY(file.description.find("256 GB200") != std::string::npos);
        // Its first lines under the preset box (it runs to 560 characters), the whole text as the tooltip.
        const QString described = QString::fromStdString(file.description);
        QVERIFY2(about->text().endsWith(QStringLiteral(" …")), qPrintable(about->text()));
        QVERIFY(about->text().size() < 340);
        QVERIFY(described.startsWith(about->text().chopped(2)));
        QVERIFY(about->toolTip().contains(described.toHtmlEscaped()));
        QTemporaryDir tmp;
        QString error;
        QVERIFY2(w.saveScenario(tmp.filePath(QStringLiteral("saved.json")), &error), qPrintable(error));
        QString why;
        const auto saved = store::readScenario(tmp.filePath(QStringLiteral("saved.json")), &why);
        QVERIFY2(saved, qPrintable(why));
        QCOMPARE(saved->description, file.description);
        QCOMPARE(saved->search->pp, file.search->pp);

        const auto swept = sweep(w);
        QVERIFY(swept);
        ProfileCatalog catalog;
        RunControl control;
        const auto direct = explore(file, catalog.profilesFor(file, error), ExploreOptions{}, control);
        QVERIFY(direct.ok());
        QVERIFY(direct.value().feasible > 0);
        if (swept->bounded == 0) {
            QCOMPARE(swept->feasible, direct.value().feasible);
        }
        QCOMPARE(swept->front.size(), direct.value().front.size());
        for (std::size_t i = 0; i < swept->front.size(); ++i) {
            QCOMPARE(swept->front[i].plan.pp, direct.value().front[i].plan.pp);
            QCOMPARE(swept->front[i].iteration_time_s, direct.value().front[i].iteration_time_s);
        }
        QVERIFY(std::any_of(swept->rows.begin(), swept->rows.end(), [](const PlanRow& r) { return r.plan.pp == 8; }) ||
                std::any_of(swept->front.begin(), swept->front.end(), [](const PlanRow& r) { return r.plan.pp == 8; }) ||
                swept->fastest.end() != std::find_if(swept->fastest.begin(), swept->fastest.end(), [](const PlanRow& r) { return r.plan.pp == 8; }));
    }

    // The long-context Llama example has no search block and a plan on 16 stages, no divisor of its 126
    // layers: the window offers 16 (checked, swept with the plan's 7-layer end stages) and finds plans.
    void ownPlanIsOfferedAndSwept()
    {
        MainWindow w(optionsFor(example("llama3.1-405b-h100-128k.json")));
        QVERIFY(w.editor()->errors().isEmpty());
        CheckList* pp = w.editor()->checkList(QStringLiteral("search.pp"));
        QVERIFY(pp->box(16));
        QVERIFY(pp->checkedValues().contains(16));
        QVERIFY(pp->markedValues().isEmpty());
        QVERIFY(w.editor()->scenario()->search->pp.empty()); // every legal value, which includes 16
        const auto swept = sweep(w);
        QVERIFY(swept);
        QVERIFY(swept->feasible > 0);
        QVERIFY(!swept->front.empty());
        const std::vector<PlanRow>& table = w.planModel()->rows();
        QVERIFY(std::any_of(table.begin(), table.end(), [](const PlanRow& r) { return r.plan.pp == 16 && r.plan.cp == 16; }));

        // The FSDP example's own ZeRO-3 is checked among the window's defaults (the explorer's 0, 1, 2) and swept.
        MainWindow fsdp(optionsFor(example("llama3-8b-h100-fsdp.json")));
        QCOMPARE(fsdp.editor()->checkList(QStringLiteral("search.zero_stage"))->checkedValues(), (QVariantList{0, 1, 2, 3}));
        QCOMPARE(fsdp.editor()->scenario()->search->zero_stage, (std::vector<int>{0, 1, 2, 3}));
        const auto fsdpSwept = sweep(fsdp);
        QVERIFY(fsdpSwept);
        QVERIFY(std::any_of(fsdpSwept->fastest.begin(), fsdpSwept->fastest.end(), [](const PlanRow& r) { return r.plan.zero_stage == 3; }));
    }

    // An example without a search block sweeps in the window as `vtrain explore` sweeps the file: the
    // window's default lists are the explorer's (its ZeRO list once stopped at ZeRO-1), so the fronts agree.
    void defaultSearchMatchesTheCli_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("onNvl72");
        for (const char* name :
             {"gpt-1.3b.json", "gpt3-175b.json", "llama3-70b-h100.json", "llama3-8b-h100-fsdp.json", "llama3.1-405b-h100-128k.json"}) {
            QTest::newRow(name) << QString::fromLatin1(name) << false;
        }
        // GB200 NVL72 trays of 4 GPUs in a 72-GPU NVLink domain: the explorer's default tp reaches 8; the
        // window's stopped at the tray (4).
        QTest::newRow("llama3-70b-b200-fp8.json on GB200 NVL72 trays, no search block") << QStringLiteral("llama3-70b-b200-fp8.json") << true;
    }
    void defaultSearchMatchesTheCli()
    {
        QFETCH(QString, file);
        QFETCH(bool, onNvl72);
        Scenario s = example(file.toLatin1().constData());
        if (onNvl72) {
            s.search.reset();
            s.cluster.gpu = "gb200-nvl72";
            s.cluster.gpus_per_node = 4;
            s.cluster.price_per_gpu_hour.reset();
        }
        QVERIFY(!s.search);
        MainWindow w(optionsFor(s));
        const auto swept = sweep(w);
        QVERIFY(swept);
        ProfileCatalog catalog;
        QString error;
        RunControl control;
        const auto direct = explore(s, catalog.profilesFor(s, error), ExploreOptions{}, control);
        QVERIFY(direct.ok());
        QVERIFY(!direct->front.empty());
        QCOMPARE(swept->total, direct->total);
        QCOMPARE(swept->front.size(), direct->front.size());
        for (std::size_t i = 0; i < swept->front.size(); ++i) {
            QCOMPARE(swept->front[i].iteration_time_s, direct->front[i].iteration_time_s);
            QCOMPARE(swept->front[i].plan.zero_stage, direct->front[i].plan.zero_stage);
            QCOMPARE(swept->front[i].plan.pp, direct->front[i].plan.pp);
            QCOMPARE(swept->front[i].plan.tp, direct->front[i].plan.tp);
        }
    }

    // A selected row is simulated as the sweep evaluated it: at its own precision (an FP8 row of a BF16/FP8
    // sweep) and with its GPU type's price and links (another GPU type than the scenario's). The details
    // then agree with the row.
    void selectedRowRunsAsSwept_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("precision axis") << QStringLiteral("llama3-70b-b200-fp8.json");
        QTest::newRow("gpu axis") << QStringLiteral("llama3-70b-gpu-choice.json");
    }
    void selectedRowRunsAsSwept()
    {
        QFETCH(QString, file);
        Scenario s = example(file.toLatin1().constData());
        MainWindow w(optionsFor(s));
        w.setPrunePolicy(PrunePolicy::Never, false);
        const auto r = sweep(w);
        QVERIFY(r && r->feasible > 0);
        // Rows that differ from the scenario in precision or GPU type, plus the front.
        std::vector<int> rows = w.planModel()->frontRows();
        for (int id = 0; id < w.planModel()->rowCount() && rows.size() < 8; ++id) {
            const PlanRow& row = w.planModel()->planRow(id);
            if (row.precision != s.training.precision || row.gpu != s.cluster.gpu) {
                rows.push_back(id);
                id += w.planModel()->rowCount() / 8;
            }
        }
        QVERIFY(rows.size() > w.planModel()->frontRows().size());
        for (int id : rows) {
            const PlanRow& row = w.planModel()->planRow(id);
            QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
            w.selectPlan(id);
            QVERIFY(detail.wait(60000));
            const auto result = w.detailRunner()->lastResult();
            const QString what =
                QStringLiteral("%1 %2 %3").arg(QString::fromStdString(row.gpu), QString::fromLatin1(to_string(row.precision)), planSummary(row.plan));
            QVERIFY2(std::abs(result->iteration_time_s - row.iteration_time_s) <= 1e-9 * row.iteration_time_s,
                     qPrintable(what + QStringLiteral(": %1 s vs %2 s").arg(result->iteration_time_s).arg(row.iteration_time_s)));
            QVERIFY2(std::abs(result->cost_usd - row.cost_usd) <= 1e-6 * row.cost_usd,
                     qPrintable(what + QStringLiteral(": $%1 vs $%2").arg(result->cost_usd).arg(row.cost_usd)));
        }
    }

    // #15: ZeRO-3 / FSDP gathers and reduce-scatters have legend entries and answer the timeline search;
    // the FSDP preset's sweep includes full sharding.
    void fsdpTrafficInLegendAndSearch()
    {
        initResources();
        const Scenario s = presetScenario(QStringLiteral("llama3-8b-h100-fsdp")).value();
        QVERIFY(s.plan && s.plan->zero_stage == 3);
        QVERIFY(std::count(s.search->zero_stage.begin(), s.search->zero_stage.end(), 3) == 1);
        ProfileCatalog catalog;
        const auto profile = catalog.profile(s.cluster.gpu);
        QVERIFY(profile);
        SimulationOptions options;
        options.timeline = true;
        const auto simulated = simulate(s, *s.plan, *profile, options);
        QVERIFY2(simulated.ok(), simulated.ok() ? "" : simulated.first_error().c_str());
        const TimelineData data = TimelineData::fromResult(simulated.value());
        QStringList legend;
        for (const LegendEntry& e : timelineLegend(data)) {
            legend << e.name;
        }
        QVERIFY2(legend.contains(QStringLiteral("FSDP parameter all-gather")) && legend.contains(QStringLiteral("FSDP gradient reduce-scatter")),
                 qPrintable(legend.join(u',')));
        for (const char* query : {"fsdp", "fsdp gather", "reduce-scatter"}) {
            QVERIFY2(!findTasks(data, QLatin1String(query)).empty(), query);
        }
        for (const TimelineHit& hit : findTasks(data, QStringLiteral("fsdp gather"))) {
            QVERIFY(data.rows[std::size_t(hit.row)].bars[std::size_t(hit.bar)].kind == TaskKind::FsdpGather);
        }
    }

    // #16: a sweep over several GPU types colours the chart by GPU type until the user picks a colouring;
    // a sweep over one type colours by tensor parallelism.
    void paretoColoursByGpuType()
    {
        Scenario s = test::smallScenario();
        s.search->gpu = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
        MainWindow w(optionsFor(s));
        QVERIFY(w.colorFollowsSweep());
        QVERIFY(sweep(w));
        QVERIFY(w.paretoPlot()->colorDimension() == ColorDimension::GpuType);
        QCOMPARE(w.paretoPlot()->categoryCount(), 2);
        auto* box = w.paretoPlot()->findChild<QComboBox*>();
        QVERIFY(box);
        box->setCurrentIndex(static_cast<int>(ColorDimension::PipelineParallel));
        Q_EMIT box->activated(box->currentIndex()); // as a user's pick in the box
        QVERIFY(!w.colorFollowsSweep());
        QVERIFY(sweep(w));
        QVERIFY(w.paretoPlot()->colorDimension() == ColorDimension::PipelineParallel);

        MainWindow single(optionsFor(test::smallScenario()));
        single.paretoPlot()->setColorDimension(ColorDimension::GpuCount); // not a user's pick
        QVERIFY(sweep(single));
        QVERIFY(single.paretoPlot()->colorDimension() == ColorDimension::TensorParallel);
    }

    // #14/#15: the plans CSV and the Compare tab carry cp, ep and etp (a MoE preset swept over ep).
    void compareAndCsvCarryTodaysAxes()
    {
        initResources();
        MainWindow w(optionsFor(presetScenario(QStringLiteral("qwen3-30b-a3b")).value()));
        QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
        QVERIFY(sweep(w));
        QVERIFY(detail.count() > 0 || detail.wait(60000));
        const PlanRow& selected = w.planModel()->planRow(w.selectedRow());
        QVERIFY(selected.plan.ep > 1);
        QTemporaryDir dir;
        const QString csv = dir.filePath(QStringLiteral("plans.csv"));
        QString error;
        QVERIFY2(w.exportPlans(csv, &error), qPrintable(error));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        const QList<QByteArray> header = lines.front().split(',');
        const qsizetype cp = header.indexOf("cp"), ep = header.indexOf("ep"), etp = header.indexOf("etp");
        QVERIFY(cp > 0 && ep > 0 && etp > 0);
        bool found = false;
        for (const QByteArray& line : lines.mid(1)) {
            const QList<QByteArray> cells = line.split(',');
            if (cells.value(0).toULongLong() == selected.index) {
                found = true;
                QCOMPARE(cells.value(ep).toInt(), selected.plan.ep);
                QCOMPARE(cells.value(cp).toInt(), selected.plan.cp);
                QCOMPARE(cells.value(etp).toInt(), selected.plan.effective_etp()); // etp 0 reads as tp there
            }
        }
        QVERIFY(found);
        CompareView* compare = w.details()->compare();
        compare->pinCurrent();
        const QList<QLabel*> labels = compare->findChildren<QLabel*>();
        const QString ep8 = QStringLiteral("ep %1").arg(selected.plan.ep);
        QVERIFY(std::any_of(labels.begin(), labels.end(), [&](QLabel* l) { return l->text().contains(ep8); }));
        // The expert all-to-all has its own row in the summary.
        bool expertRow = false;
        for (int r = 0; r < compare->summaryTable()->rowCount(); ++r) {
            expertRow = expertRow || compare->summaryTable()->item(r, 0)->text().startsWith(QStringLiteral("Expert all-to-all"));
        }
        QVERIFY(expertRow);
    }

    // #16: a modeled (uncalibrated) GPU's band is an assumed prior: the table marks it with "*" and the
    // table and chart tooltips say so; a calibrated GPU's band is plain.
    void uncalibratedBandIsMarked()
    {
        MainWindow w(optionsFor(test::smallScenario()));
        PlanTableModel* model = w.planModel();
        QVERIFY(model->bandNote("a100-sxm4-80gb").isEmpty()); // calibrated
        const QString note = model->bandNote("mi300x");       // no public runs calibrate it
        QVERIFY2(note.contains(QStringLiteral("uncalibrated")) && note.contains(QStringLiteral("prior")), qPrintable(note));
        PlanRow calibrated;
        calibrated.gpu = "a100-sxm4-80gb";
        calibrated.training_days = 10;
        calibrated.iteration_time_s = 2.0;
        calibrated.iteration_time_low_s = 1.9;
        calibrated.iteration_time_high_s = 2.3;
        PlanRow modeled = calibrated;
        modeled.index = 1;
        modeled.gpu = "mi300x";
        modeled.iteration_time_low_s = 1.5;
        modeled.iteration_time_high_s = 3.0;
        model->appendRows({calibrated, modeled});
        const QModelIndex bandA = model->index(model->modelRowOf(0), PlanTableModel::DaysBandColumn);
        const QModelIndex bandH = model->index(model->modelRowOf(1), PlanTableModel::DaysBandColumn);
        QCOMPARE(bandA.data().toString(), QStringLiteral("9.50–11.50"));
        QCOMPARE(bandH.data().toString(), QStringLiteral("7.50–15.00*"));
        QVERIFY(bandH.data(Qt::ToolTipRole).toString().contains(note));
        QVERIFY(!bandA.data(Qt::ToolTipRole).toString().contains(QStringLiteral("prior")));
        QVERIFY(model->describe(1).contains(note));
        QVERIFY(model->describe(1).contains(QStringLiteral("days*")));
        QVERIFY(model->describe(0).contains(QStringLiteral("80% band 9.50–11.50 days")));
        QVERIFY(model->headerData(PlanTableModel::DaysBandColumn, Qt::Horizontal, Qt::ToolTipRole).toString().contains(QStringLiteral("prior")));
    }

    // #14: a dense model's memory chart has its five parts; where the core reports the experts' share, a
    // MoE stage shows expert weights and expert gradients + optimizer states apart from the dense parts,
    // and the parts still add up to the stage's total.
    void memoryChartSplitsExperts()
    {
        auto result = std::make_shared<SimulationResult>();
        result->usable_memory_gib = 70;
        result->stages.resize(2);
        for (StageResult& st : result->stages) {
            st.memory.weights_bytes = 20e9;
            st.memory.gradients_bytes = 10e9;
            st.memory.optimizer_bytes = 15e9;
            st.memory.activations_bytes = 5e9;
            st.memory.working_bytes = 1e9;
        }
        MemoryView view;
        view.setResult(result);
        QCOMPARE(view.customPlot()->legend->itemCount(), 5);
        QVERIFY(!view.describeStage(0).contains(QStringLiteral("expert")));
        QCOMPARE(view.customPlot()->plottableCount(), int(MemoryView::partNames().size()));
        auto moe = std::make_shared<SimulationResult>(*result);
        StageMemory& expert_stage = moe->stages[1].memory;
        expert_stage.expert_weights_bytes = 12e9;
        expert_stage.expert_gradients_bytes = 6e9;
        expert_stage.expert_optimizer_bytes = 9e9;
        view.setResult(moe);
        // itemCount() counts the cells of the wrapped two-column grid (8); the entries are the filled ones.
        int entries = 0;
        for (int i = 0; i < view.customPlot()->legend->itemCount(); ++i) {
            entries += view.customPlot()->legend->item(i) != nullptr ? 1 : 0;
        }
        QCOMPARE(entries, 7);
        const QString text = view.describeStage(1);
        QVERIFY2(text.contains(QStringLiteral("expert weights: 11.2 GiB")) && text.contains(QStringLiteral("weights: 7.45 GiB")), qPrintable(text));
        double stacked = 0;
        for (int i = 0; i < view.customPlot()->plottableCount(); ++i) {
            auto* bars = qobject_cast<QCPBars*>(view.customPlot()->plottable(i));
            stacked += bars->data()->at(1)->value;
        }
        QVERIFY(std::abs(stacked - moe->stages[1].memory.total_bytes() / (1024.0 * 1024 * 1024)) < 1e-9);
    }
};

QTEST_MAIN(TestModernGui)
#include "tst_modern_gui.moc"
