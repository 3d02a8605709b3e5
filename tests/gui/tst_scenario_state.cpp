// SPDX-License-Identifier: MIT
// What belongs to a scenario stays with it (#30): after opening another model, an MT-NLG plan pinned in
// Compare was still drawn on the new chart as "A" and compared against it (-80 %) with no word that it
// was another model, and the timeline search and task panel kept the old plan. Now the pinned plan
// leaves a chart of another workload, Compare says when A and B train different models or token budgets,
// and the search and the task panel follow the plan shown.
#include <QLabel>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QtTest>

#include "details_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "models/plan_detail_runner.h"
#include "models/plan_table_model.h"
#include "models/scenario_store.h"
#include "models/sweep_runner.h"
#include "models/workload.h"
#include "views/compare_view.h"
#include "views/pareto_plot.h"
#include "views/timeline_view.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

MainWindowOptions smallOptions()
{
    MainWindowOptions o;
    o.restoreSession = false;
    o.runOnStart = false;
    o.scenario = test::smallScenario();
    return o;
}

// GPT 350M's search on another model: 12 more layers, another name.
Scenario otherModel()
{
    Scenario s = test::smallScenario();
    s.model.name = "GPT 500M";
    s.model.layers += 12;
    return s;
}

// Sweeps and waits for the plan the window then selects.
bool sweepAndSelect(MainWindow& w)
{
    QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
    QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
    w.startSweep();
    return finished.wait(120000) && (detail.count() > 0 || detail.wait(120000));
}

bool openAndSelect(MainWindow& w, const Scenario& s, const QTemporaryDir& dir, const QString& name)
{
    const QString path = dir.filePath(name);
    QString error;
    if (!store::writeScenario(path, s, &error)) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
    QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
    if (!w.openScenario(path, &error)) { // opening sweeps
        qWarning("%s", qPrintable(error));
        return false;
    }
    return finished.wait(120000) && (detail.count() > 0 || detail.wait(120000));
}

} // namespace

class TestScenarioState : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void workloadsCompareByModelAndTokens()
    {
        const Scenario a = test::smallScenario();
        Scenario cluster = a;
        cluster.cluster.num_gpus *= 2;
        cluster.search->gpu = {"h100-sxm5-80gb"};
        QVERIFY(sameWorkload(a, cluster)); // another cluster or plan: the same training
        QVERIFY(workloadDifference(a, cluster).isEmpty());
        Scenario tokens = a;
        tokens.training.tokens *= 2;
        QVERIFY(!sameWorkload(a, tokens));
        QVERIFY2(workloadDifference(a, tokens).contains(QStringLiteral("token budgets")), qPrintable(workloadDifference(a, tokens)));
        const QString models = workloadDifference(a, otherModel());
        QVERIFY2(models.contains(QStringLiteral("different models")) && models.contains(QStringLiteral("GPT 500M")) &&
                     models.contains(QString::fromStdString(a.model.name)),
                 qPrintable(models));
    }

    void pinnedPlanOfAnotherModelLeavesTheChart()
    {
        QTemporaryDir dir;
        MainWindow w(smallOptions());
        QVERIFY(sweepAndSelect(w));
        CompareView* compare = w.details()->compare();
        compare->pinCurrent();
        QVERIFY(w.paretoPlot()->pinned().has_value()); // A is a plan of this chart: drawn
        QVERIFY(compare->workloadNote().isEmpty());

        // The search and the selected task, as a user leaves them.
        w.details()->searchBox()->setText(QStringLiteral("F1"));
        QVERIFY(w.details()->timeline()->matchCount() > 0);
        QVERIFY(w.details()->taskPanelText().contains(QStringLiteral("Selected task")));
        const QString oldHeadline = w.details()->headline();

        QVERIFY(openAndSelect(w, otherModel(), dir, QStringLiteral("other.json")));
        // A stays pinned but is no point of this chart; Compare says the two train different models.
        QVERIFY(compare->pinned());
        QVERIFY2(!w.paretoPlot()->pinned().has_value(), "a plan of another model is drawn on this chart");
        QVERIFY(compare->current());
        QVERIFY2(compare->workloadNote().contains(QStringLiteral("different models")), qPrintable(compare->workloadNote()));
        QVERIFY(compare->findChild<QLabel*>(QStringLiteral("compareWorkloadNote"))->isVisibleTo(compare));
        // The old plan's search went with it; the panel shows the new plan, no old task.
        QVERIFY(w.details()->searchBox()->text().isEmpty());
        QVERIFY2(!w.details()->taskPanelText().contains(QStringLiteral("Selected task")), qPrintable(w.details()->taskPanelText()));
        QVERIFY(w.details()->headline() != oldHeadline);
        QCOMPARE(w.details()->timeline()->result(), compare->current());

        // Back on the first model: A is a point of the chart again and the note goes.
        QVERIFY(openAndSelect(w, test::smallScenario(), dir, QStringLiteral("again.json")));
        QVERIFY(w.paretoPlot()->pinned().has_value());
        QVERIFY2(compare->workloadNote().isEmpty(), qPrintable(compare->workloadNote()));
    }

    void comparingAnotherTokenBudgetSaysSo()
    {
        QTemporaryDir dir;
        MainWindow w(smallOptions());
        QVERIFY(sweepAndSelect(w));
        w.details()->compare()->pinCurrent();
        Scenario longer = test::smallScenario();
        longer.training.tokens *= 3;
        QVERIFY(openAndSelect(w, longer, dir, QStringLiteral("longer.json")));
        QVERIFY2(w.details()->compare()->workloadNote().contains(QStringLiteral("token budgets")),
                 qPrintable(w.details()->compare()->workloadNote()));
        QVERIFY(!w.paretoPlot()->pinned().has_value());
    }

    // Within one scenario, the search follows the selection: a query finds the new plan's tasks, and a
    // task selected in the old plan's timeline is not described for the new one.
    void searchAndTaskPanelFollowTheSelectedPlan()
    {
        MainWindow w(smallOptions());
        QVERIFY(sweepAndSelect(w));
        TimelineView* view = w.details()->timeline();
        view->selectTask(0, 0);
        QVERIFY(w.details()->taskPanelText().contains(QStringLiteral("Selected task")));
        QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
        w.selectPlan(w.selectedRow() == 0 ? 1 : 0);
        QVERIFY(detail.wait(120000));
        QVERIFY2(!w.details()->taskPanelText().contains(QStringLiteral("Selected task")), qPrintable(w.details()->taskPanelText()));

        w.details()->searchBox()->setText(QStringLiteral("B1"));
        const int matches = view->matchCount();
        QCOMPARE(matches, view->stageCount());
        w.selectPlan(w.selectedRow() == 0 ? 1 : 0);
        QVERIFY(detail.wait(120000));
        QCOMPARE(w.details()->searchBox()->text(), QStringLiteral("B1"));
        QCOMPARE(view->matchCount(), view->stageCount()); // found in the plan now shown
        const auto* count = w.details()->findChild<QLabel*>(QStringLiteral("timelineMatches"));
        QVERIFY2(count->text().endsWith(QString::number(view->matchCount())), qPrintable(count->text()));
    }
};

QTEST_MAIN(TestScenarioState)
#include "tst_scenario_state.moc"
