// SPDX-License-Identifier: MIT
// The case-study tabs (compute-optimal model, shared cluster): their tables and charts agree with direct
// calls of the core API on the same small inputs, refused inputs are named at their field and keep the
// last result, cancel and latest-job-wins hold, the Gantt has a row per job with its deadline mark where
// the deadline is, the charts export, and the main window hosts both as tabs.
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include "gui_test_support.h"
#include "main_window.h"
#include "models/format.h"
#include "models/plan_dimensions.h"
#include "models/profile_catalog.h"
#include "views/cluster_gantt_plot.h"
#include "views/cluster_schedule_view.h"
#include "views/optimal_model_view.h"
#include "vtrain/cluster_schedule_curves.h"

Q_DECLARE_METATYPE(std::shared_ptr<const vtrain::OptimalModelResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const vtrain::ui::ScheduleRunResult>)

using namespace vtrain;
using namespace vtrain::ui;

namespace {

const QString kGpu = QStringLiteral("a100-sxm4-80gb");

// Waits until `runner` is idle again; true when it finished (or was cancelled) rather than failed or hung.
bool waitIdle(StudyRunner* runner, int timeoutMs = 20000)
{
    QElapsedTimer clock;
    clock.start();
    while (runner->isRunning() && clock.elapsed() < timeoutMs) {
        QTest::qWait(10);
    }
    return runner->state() == StudyRunner::State::Finished || runner->state() == StudyRunner::State::Cancelled;
}

// Types into a form field as a user does (textEdited fires), replacing what was there.
void typeInto(QWidget* view, const QString& name, const QString& text)
{
    auto* edit = view->findChild<QLineEdit*>(name);
    QVERIFY2(edit, qPrintable(name));
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
}

bool fileStartsWith(const QString& path, const QByteArray& prefix)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) && f.size() > 100 && f.read(prefix.size()) == prefix;
}

} // namespace

class TestCaseStudyViews : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void initTestCase()
    {
        initResources();
        qRegisterMetaType<std::shared_ptr<const OptimalModelResult>>();
        qRegisterMetaType<std::shared_ptr<const ScheduleRunResult>>();
    }

    void optimalModelTableMatchesTheCore()
    {
        ProfileCatalog catalog;
        OptimalModelView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 64, 30, BudgetUnit::Days);
        QVERIFY(view.run());
        QVERIFY(waitIdle(view.runner()));
        QCOMPARE(view.runner()->state(), StudyRunner::State::Finished);
        const auto shown = view.result();
        QVERIFY(shown);

        OptimalModelRequest request;
        request.gpu = kGpu.toStdString();
        request.num_gpus = 64;
        request.budget_days = 30;
        StudyControl control;
        const auto direct = find_optimal_model(request, *catalog.profile(request.gpu), control);
        QVERIFY(direct.ok());
        QCOMPARE(view.table()->rowCount(), int(direct->candidates.size()));
        for (int row = 0; row < view.table()->rowCount(); ++row) {
            const OptimalCandidate& c = direct->candidates[std::size_t(row)];
            QCOMPARE(view.table()->item(row, OptimalModelView::ColModel)->text(), QString::fromStdString(c.model.name));
            QCOMPARE(view.table()->item(row, OptimalModelView::ColNaiveDays)->text(), formatDays(c.naive_days));
            if (c.has_plan) {
                QCOMPARE(view.table()->item(row, OptimalModelView::ColPlan)->text(), planSummary(c.best.plan));
                QCOMPARE(view.table()->item(row, OptimalModelView::ColDays)->text(), formatDays(c.best.training_days));
                QCOMPARE(view.table()->item(row, OptimalModelView::ColCost)->text(), formatDollars(c.best.cost_usd));
            }
        }
        QVERIFY(direct->feasible_choice && direct->naive_choice);
        QCOMPARE(shown->feasible_choice, direct->feasible_choice);
        QCOMPARE(shown->naive_choice, direct->naive_choice);
        const QString feasible = QString::fromStdString(direct->candidates[*direct->feasible_choice].model.name);
        QVERIFY(view.answerText().contains(feasible.toHtmlEscaped()));
        QVERIFY(view.table()->item(int(*direct->feasible_choice), OptimalModelView::ColFits)->text().contains(QStringLiteral("simulated answer")));

        // The chart: the budget marked at 30 days, and both curves at the budget give the answers.
        QCOMPARE(view.plot()->budgetMark(), 30.0);
        const auto valueAt = [](QCPGraph* g, double x) {
            double v = std::nan("");
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd() && it->key <= x; ++it) {
                v = it->value; // a left step: the last point at or before x holds
            }
            return v;
        };
        QCOMPARE(valueAt(view.plot()->simulatedGraph(), 30.0), direct->candidates[*direct->feasible_choice].params / 1e9);
        QCOMPARE(valueAt(view.plot()->naiveGraph(), 30.0), direct->candidates[*direct->naive_choice].params / 1e9);
    }

    void optimalModelDollarBudgetIsPlottedInDollars()
    {
        ProfileCatalog catalog;
        OptimalModelView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 64, 50000, BudgetUnit::Dollars);
        QVERIFY(view.run());
        QVERIFY(waitIdle(view.runner()));
        const auto shown = view.result();
        QVERIFY(shown && shown->request.budget_usd && !shown->request.budget_days);
        QCOMPARE(view.plot()->budgetMark(), 50000.0);
        QVERIFY(view.customPlot()->xAxis->label().contains(QStringLiteral("dollars")));
        QVERIFY(shown->feasible_choice);
        QVERIFY(shown->candidates[*shown->feasible_choice].best.cost_usd <= 50000);

        // Switching the unit converts the budget at the cluster's price (30 days = 30 x 24 x 64 x price).
        const double price = catalog.profile(kGpu.toStdString())->price_usd_per_gpu_hour;
        auto* budget = view.findChild<QLineEdit*>(QStringLiteral("optimalModel.budget"));
        budget->setText(QString::number(30 * 24 * 64 * price, 'g', 10));
        view.findChild<QComboBox*>(QStringLiteral("optimalModel.budgetUnit"))->setCurrentIndex(0);
        QCOMPARE(budget->text(), QStringLiteral("30"));
    }

    void optimalModelRefusesBadInputAtTheField()
    {
        ProfileCatalog catalog;
        OptimalModelView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 64, 30, BudgetUnit::Days);
        QVERIFY(view.run());
        QVERIFY(waitIdle(view.runner()));
        const int rows = view.table()->rowCount();
        QVERIFY(rows > 0);

        typeInto(&view, QStringLiteral("optimalModel.gpus"), QStringLiteral("0"));
        QVERIFY2(view.fieldError(QStringLiteral("gpus")).contains(QStringLiteral("must be a whole number from 1")),
                 qPrintable(view.fieldError(QStringLiteral("gpus"))));
        QVERIFY(view.statusText().contains(QStringLiteral("GPU count")));
        QVERIFY(!view.run());
        typeInto(&view, QStringLiteral("optimalModel.gpus"), QStringLiteral("64"));
        QVERIFY(view.fieldError(QStringLiteral("gpus")).isEmpty());
        QVERIFY2(view.statusText().contains(QStringLiteral("models")), qPrintable(view.statusText())); // the result's line again

        typeInto(&view, QStringLiteral("optimalModel.budget"), QStringLiteral("soon"));
        QVERIFY(view.fieldError(QStringLiteral("days")).contains(QStringLiteral("is not a number")));
        typeInto(&view, QStringLiteral("optimalModel.budget"), QStringLiteral("-3"));
        QVERIFY(view.fieldError(QStringLiteral("days")).contains(QStringLiteral("positive")));
        typeInto(&view, QStringLiteral("optimalModel.budget"), QStringLiteral("30"));
        typeInto(&view, QStringLiteral("optimalModel.naive_utilization"), QStringLiteral("150"));
        QVERIFY(view.fieldError(QStringLiteral("naive_utilization")).contains(QStringLiteral("percentage")));
        QVERIFY(view.statusText().contains(QStringLiteral("Naive utilisation")));
        QVERIFY(!view.run());
        // Refused input keeps the last result on screen.
        QCOMPARE(view.table()->rowCount(), rows);
        QVERIFY(view.result());
    }

    void optimalModelCancelsAndLatestJobWins()
    {
        ProfileCatalog catalog;
        OptimalModelView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 3360, 30, BudgetUnit::Days);
        QSignalSpy finished(view.runner(), &OptimalModelRunner::finished);
        QVERIFY(view.run());
        view.cancel();
        QVERIFY(waitIdle(view.runner()));
        QCOMPARE(view.runner()->state(), StudyRunner::State::Cancelled);
        QCOMPARE(finished.count(), 1);
        QVERIFY(view.result()->cancelled);
        QVERIFY(view.statusText().contains(QStringLiteral("Cancelled")));

        // Two starts in a row: only the second one's result arrives.
        finished.clear();
        QVERIFY(view.run());
        view.setInputs(kGpu, 64, 30, BudgetUnit::Days);
        QVERIFY(view.run());
        const std::uint64_t latest = view.runner()->currentJob();
        QVERIFY(waitIdle(view.runner()));
        QTest::qWait(200); // anything the first job still sent would have arrived by now
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).value<std::uint64_t>(), latest);
        QCOMPARE(view.result()->request.num_gpus, 64);
        QVERIFY(!view.result()->cancelled);
    }

    void clusterMatchesTheCoreAndTheGanttShowsEveryJob()
    {
        ProfileCatalog catalog;
        ClusterScheduleView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 64, 6, 7, 40);
        QVERIFY(view.run());
        QVERIFY(waitIdle(view.runner()));
        QCOMPARE(view.runner()->state(), StudyRunner::State::Finished);
        const auto shown = view.result();
        QVERIFY(shown);

        // The same study straight from the core, as `vtrain schedule` runs it.
        const auto profile = catalog.profile(kGpu.toStdString());
        WorkloadOptions w;
        w.jobs = 6;
        w.seed = 7;
        w.window_hours = 40;
        w.cluster_gpus = 64;
        w.peak_tflops_per_gpu = profile->peak_flops("bf16") / 1e12;
        StudyControl control;
        CurveCache cache;
        std::uint64_t plans = 0;
        ScheduleRequest request;
        request.gpu = kGpu.toStdString();
        request.num_gpus = 64;
        request.jobs = generate_simulated_workload(w, *profile, 0, 0, control, cache, plans);
        const auto direct = run_schedule_study(request, *profile, control, &cache);
        QVERIFY(direct.ok());

        const auto& jobs = shown->study.request.jobs;
        QCOMPARE(jobs.size(), direct->request.jobs.size());
        QCOMPARE(view.table()->rowCount(), int(direct->results.size()));
        QCOMPARE(view.table()->rowCount(), 3);
        for (int row = 0; row < 3; ++row) {
            const PolicyResult& p = direct->results[std::size_t(row)];
            QVERIFY(view.table()->item(row, ClusterScheduleView::ColPolicy)->text().startsWith(policyTitle(p.policy)));
            QCOMPARE(view.table()->item(row, ClusterScheduleView::ColUtilization)->text(), formatPercent(p.gpu_utilization));
            QCOMPARE(view.table()->item(row, ClusterScheduleView::ColMfu)->text(), formatPercent(p.cluster_mfu));
            QCOMPARE(view.table()->item(row, ClusterScheduleView::ColRestarts)->text(), QString::number(p.restarts));
            QVERIFY(view.table()->item(row, ClusterScheduleView::ColDeadlines)->text().contains(formatPercent(p.deadline_satisfaction)));
        }

        // One Gantt row per job, its deadline mark at its deadline, a bar per segment; per policy.
        for (std::size_t i = 0; i < direct->results.size(); ++i) {
            const PolicyResult& p = direct->results[i];
            view.setGanttPolicy(p.policy);
            QCOMPARE(view.gantt()->rowCount(), int(jobs.size()));
            const auto marks = view.gantt()->deadlineMarks();
            QCOMPARE(marks.size(), jobs.size());
            int segments = 0;
            for (std::size_t j = 0; j < jobs.size(); ++j) {
                QCOMPARE(marks[j].x(), jobs[j].deadline_h);
                QCOMPARE(marks[j].y(), double(j));
                segments += int(p.jobs[j].segments.size());
            }
            QCOMPARE(view.gantt()->segmentCount(), segments);
        }

        // Hovering the middle of a job's first bar names the job and its GPUs; its deadline mark says met or missed.
        view.resize(1400, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setGanttPolicy(SchedulePolicy::Fixed);
        QCustomPlot* plot = view.customPlot();
        plot->replot();
        const PolicyResult& fixed = direct->results[1];
        QCOMPARE(fixed.policy, SchedulePolicy::Fixed);
        const JobSegment& first = fixed.jobs[0].segments.at(0);
        const QPointF bar(plot->xAxis->coordToPixel((first.start_h + first.end_h) / 2), plot->yAxis->coordToPixel(0));
        const QString tip = view.gantt()->toolTipAt(bar);
        QVERIFY2(tip.contains(QString::fromStdString(jobs[0].name)) && tip.contains(QStringLiteral("%1 GPUs").arg(first.gpus)), qPrintable(tip));
        const QPointF mark(plot->xAxis->coordToPixel(jobs[0].deadline_h), plot->yAxis->coordToPixel(0));
        QVERIFY2(view.gantt()->toolTipAt(mark).contains(fixed.jobs[0].met_deadline ? QStringLiteral("met") : QStringLiteral("missed")),
                 qPrintable(view.gantt()->toolTipAt(mark)));
    }

    void clusterRefusesBadInputAtTheField()
    {
        ProfileCatalog catalog;
        ClusterScheduleView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 64, 4, 1, 40);
        typeInto(&view, QStringLiteral("sharedCluster.jobs"), QStringLiteral("0"));
        QVERIFY2(view.fieldError(QStringLiteral("jobs")).contains(QStringLiteral("from 1 to 100,000")),
                 qPrintable(view.fieldError(QStringLiteral("jobs"))));
        QVERIFY(view.statusText().contains(QStringLiteral("Jobs")));
        QVERIFY(!view.run());
        typeInto(&view, QStringLiteral("sharedCluster.jobs"), QStringLiteral("4"));
        typeInto(&view, QStringLiteral("sharedCluster.gpus"), QStringLiteral("many"));
        QVERIFY(view.fieldError(QStringLiteral("gpus")).contains(QStringLiteral("is not a whole number")));
        typeInto(&view, QStringLiteral("sharedCluster.gpus"), QStringLiteral("-8"));
        QVERIFY(view.fieldError(QStringLiteral("gpus")).contains(QStringLiteral("must be")));
        typeInto(&view, QStringLiteral("sharedCluster.gpus"), QStringLiteral("64"));
        typeInto(&view, QStringLiteral("sharedCluster.window_hours"), QStringLiteral("-1"));
        QVERIFY(view.fieldError(QStringLiteral("window_hours")).contains(QStringLiteral(">= 0")));
        QVERIFY(!view.run());
        typeInto(&view, QStringLiteral("sharedCluster.window_hours"), QStringLiteral("40"));
        QVERIFY(view.run());
        QVERIFY(waitIdle(view.runner()));
        QCOMPARE(view.gantt()->rowCount(), 4);
    }

    void clusterCancels()
    {
        ProfileCatalog catalog;
        ClusterScheduleView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(kGpu, 1024, 64, 1);
        QSignalSpy finished(view.runner(), &ScheduleRunner::finished);
        QVERIFY(view.run());
        view.cancel();
        QVERIFY(waitIdle(view.runner()));
        QCOMPARE(view.runner()->state(), StudyRunner::State::Cancelled);
        QCOMPARE(finished.count(), 1);
        QVERIFY(view.result()->cancelled);
        QVERIFY(view.statusText().contains(QStringLiteral("Cancelled")));
    }

    void typedInputsSurviveANewWindow()
    {
        ProfileCatalog catalog;
        {
            OptimalModelView optimal(&catalog);
            optimal.setAutoRun(false);
            typeInto(&optimal, QStringLiteral("optimalModel.gpus"), QStringLiteral("2048"));
            typeInto(&optimal, QStringLiteral("optimalModel.budget"), QStringLiteral("12x")); // refused, but kept as typed
            ClusterScheduleView cluster(&catalog);
            cluster.setAutoRun(false);
            typeInto(&cluster, QStringLiteral("sharedCluster.seed"), QStringLiteral("42"));
            cluster.setGanttPolicy(SchedulePolicy::Fixed);
        }
        // New views start from their defaults; restoring brings back what was typed (a new view's defaults
        // must not have overwritten it).
        OptimalModelView optimal(&catalog);
        optimal.setAutoRun(false);
        ClusterScheduleView cluster(&catalog);
        cluster.setAutoRun(false);
        optimal.restoreInputs();
        cluster.restoreInputs();
        QCOMPARE(optimal.findChild<QLineEdit*>(QStringLiteral("optimalModel.gpus"))->text(), QStringLiteral("2048"));
        QCOMPARE(optimal.findChild<QLineEdit*>(QStringLiteral("optimalModel.budget"))->text(), QStringLiteral("12x"));
        QVERIFY(optimal.fieldError(QStringLiteral("days")).contains(QStringLiteral("is not a number")));
        QCOMPARE(cluster.findChild<QLineEdit*>(QStringLiteral("sharedCluster.seed"))->text(), QStringLiteral("42"));
        QCOMPARE(cluster.ganttPolicy(), SchedulePolicy::Fixed);
    }

    void chartsExport()
    {
        ProfileCatalog catalog;
        OptimalModelView optimal(&catalog);
        optimal.setAutoRun(false);
        optimal.setInputs(kGpu, 64, 30, BudgetUnit::Days);
        ClusterScheduleView cluster(&catalog);
        cluster.setAutoRun(false);
        cluster.setInputs(kGpu, 64, 4, 1, 40);
        QVERIFY(optimal.run());
        QVERIFY(waitIdle(optimal.runner()));
        QVERIFY(cluster.run());
        QVERIFY(waitIdle(cluster.runner()));
        QTemporaryDir dir;
        QString error;
        for (const QString& suffix : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}) {
            const QString a = dir.filePath(QStringLiteral("optimal.") + suffix);
            const QString b = dir.filePath(QStringLiteral("cluster.") + suffix);
            QVERIFY2(optimal.exportImage(a, ExportSize{1200, 700, 1.0}, &error), qPrintable(error));
            QVERIFY2(cluster.exportImage(b, ExportSize{1200, 700, 1.0}, &error), qPrintable(error));
            const QByteArray magic = suffix == u"png" ? QByteArray("\x89PNG") : suffix == u"pdf" ? QByteArray("%PDF") : QByteArray("<?xml");
            QVERIFY2(fileStartsWith(a, magic), qPrintable(a));
            QVERIFY2(fileStartsWith(b, magic), qPrintable(b));
        }
        QVERIFY(!optimal.exportImage(dir.filePath(QStringLiteral("chart.gif")), ExportSize{}, &error));
        QVERIFY(error.contains(QStringLiteral("gif")));
    }

    void mainWindowHostsTheCaseStudiesAsTabs()
    {
        MainWindowOptions o;
        o.restoreSession = false;
        o.runOnStart = false;
        MainWindow w(o);
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QCOMPARE(w.tabs()->count(), 3);
        QCOMPARE(w.tabs()->widget(1), static_cast<QWidget*>(w.optimalModelView()));
        QCOMPARE(w.tabs()->widget(2), static_cast<QWidget*>(w.clusterScheduleView()));
        auto* scenarioDock = w.findChild<QDockWidget*>(QStringLiteral("scenarioDock"));
        QVERIFY(scenarioDock && scenarioDock->isVisible());

        // A case-study tab hides the plan docks and runs its study when first shown; Plans brings them back.
        w.optimalModelView()->setInputs(kGpu, 64, 30, BudgetUnit::Days);
        w.tabs()->setCurrentWidget(w.optimalModelView());
        QVERIFY(!scenarioDock->isVisible());
        QVERIFY(w.optimalModelView()->runner()->isRunning());
        QVERIFY(waitIdle(w.optimalModelView()->runner()));
        QVERIFY(w.optimalModelView()->result());
        w.tabs()->setCurrentIndex(0);
        QVERIFY(scenarioDock->isVisible());
    }
};

QTEST_MAIN(TestCaseStudyViews)
#include "tst_case_study_views.moc"
