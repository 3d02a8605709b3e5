// SPDX-License-Identifier: MIT
// Benchmark, not a test (no timed assertion; label "bench"): the explorer's edit -> front latency, as a
// user feels it. A committed edit (training tokens typed, Enter) to the moment the Pareto chart has
// replotted the new front, in the real window with "Re-run on edit" on: the 50 ms edit coalescing, the
// sweep, the streamed rows and the replot. The median of 20 edits on the MT-NLG 530B preset, then of 5
// edits on a sweep of about a million plans (MT-NLG over 256 GPU counts), unpruned (the default below
// kPruneAbovePlans) and pruned.
#include <algorithm>

#include <QElapsedTimer>
#include <QLineEdit>
#include <QtTest>

#include <qcustomplot.h>

#include "gui_test_support.h"
#include "main_window.h"
#include "models/plan_table_model.h"
#include "models/prune_policy.h"
#include "models/sweep_runner.h"
#include "views/field_row.h"
#include "views/pareto_plot.h"
#include "views/scenario_editor.h"
#include "views/sweep_bar.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

struct Latency {
    double median_ms = 0;
    double min_ms = 0;
    double max_ms = 0;
    std::uint64_t plans = 0;
};

Latency measure(const Scenario& start, int edits, PrunePolicy prune = PrunePolicy::LargeSweeps)
{
    MainWindowOptions o;
    o.restoreSession = false;
    o.runOnStart = false;
    o.scenario = start;
    MainWindow w(o);
    w.setPrunePolicy(prune, false);
    w.resize(1280, 720);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w)) {
        qWarning("bench_edit_latency: the window was not exposed");
    }
    {
        QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
        w.startSweep();
        finished.wait(600000);
    }
    QLineEdit* tokens = w.editor()->fieldRow(QStringLiteral("training.tokens"))->lineEdit();
    std::vector<double> ms;
    for (int i = 0; i < edits; ++i) {
        // The end is the sweep this edit started finishing (its front set) and the chart's next replot;
        // PlanTableModel::frontChanged alone also fires when a sweep starts and clears the table.
        QSignalSpy started(w.sweepRunner(), &SweepRunner::started);
        QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
        QSignalSpy replotted(w.paretoPlot()->customPlot(), &QCustomPlot::afterReplot);
        tokens->setFocus();
        tokens->selectAll();
        tokens->insert(QStringLiteral("%1B").arg(271 + i)); // a new value each time
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(tokens, Qt::Key_Return); // the commit: from here the user waits
        bool done = false;
        while (!done && clock.elapsed() < 600000) {
            if (finished.isEmpty() && !finished.wait(600000)) {
                break;
            }
            done = !started.isEmpty() && finished.last().at(0) == started.last().at(0);
            if (!done) {
                finished.clear();
            }
        }
        if (!done) {
            qWarning("the sweep of edit %d did not finish", i);
            break;
        }
        replotted.clear();
        if (!replotted.wait(5000)) { // the front's queued replot reaches the screen
            qWarning("no replot after edit %d", i);
        }
        if (w.paretoPlot()->frontPointCount() == 0) {
            qWarning("no front on the chart after edit %d", i);
        }
        ms.push_back(static_cast<double>(clock.nsecsElapsed()) / 1e6);
    }
    Latency l;
    if (!ms.empty()) {
        std::sort(ms.begin(), ms.end());
        l.median_ms = ms[ms.size() / 2];
        l.min_ms = ms.front();
        l.max_ms = ms.back();
    }
    l.plans = w.sweepRunner()->lastResult() ? w.sweepRunner()->lastResult()->total : 0;
    return l;
}

} // namespace

class BenchEditLatency : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void mtNlgPreset()
    {
        const Latency l = measure(defaultScenario(), 20);
        qInfo("edit -> front, MT-NLG 530B preset (%llu plans): median %.0f ms over 20 edits (min %.0f, max %.0f)",
              static_cast<unsigned long long>(l.plans), l.median_ms, l.min_ms, l.max_ms);
        QVERIFY(l.plans > 0);
    }

    void millionPlans()
    {
        const Latency l = measure(test::bigScenario(), 5);
        qInfo("edit -> front, %llu-plan sweep: median %.0f ms over 5 edits (min %.0f, max %.0f)", static_cast<unsigned long long>(l.plans),
              l.median_ms, l.min_ms, l.max_ms);
        QVERIFY(l.plans > 900000);
    }

    // The same sweep pruned (Sweep > Prune > Always): same front, fewer plans simulated and drawn.
    void millionPlansPruned()
    {
        const Latency l = measure(test::bigScenario(), 5, PrunePolicy::Always);
        qInfo("edit -> front, %llu-plan sweep, pruned: median %.0f ms over 5 edits (min %.0f, max %.0f)", static_cast<unsigned long long>(l.plans),
              l.median_ms, l.min_ms, l.max_ms);
        QVERIFY(l.plans > 900000);
    }
};

QTEST_MAIN(BenchEditLatency)
#include "bench_edit_latency.moc"
