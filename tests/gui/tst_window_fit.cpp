// SPDX-License-Identifier: MIT
// The window on a laptop screen (#30): a fresh start takes at most 90 % of the screen (it once opened at
// 1600x1000 whatever the screen), a geometry saved on a bigger screen comes back inside this one, the
// chart keeps at least 40 % of the window's height, nothing is cut off, and Compare shows A's and B's
// timelines together with no scroll area around them. Runs on an offscreen screen of 1280x720
// (tst_window_fit_1280x720) and of 1920x1080 at 150 % (tst_window_fit_1920x1080_150): the same 1280x720
// logical pixels, the second at 1.5 device pixels each.
#include <QAbstractScrollArea>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLabel>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include <qcustomplot.h>

#include "details_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "models/plan_detail_runner.h"
#include "models/plan_table_model.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "models/sweep_runner.h"
#include "views/compare_view.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"
#include "views/scenario_editor.h"
#include "views/timeline_view.h"
#include "window_geometry.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

QRect available()
{
    return QGuiApplication::primaryScreen()->availableGeometry();
}

MainWindowOptions freshOptions()
{
    MainWindowOptions o;
    o.restoreSession = false;
    o.runOnStart = false;
    o.scenario = test::smallScenario();
    return o;
}

QString rectText(const QRect& r)
{
    return QStringLiteral("%1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

// `w` lies whole inside `outer` (both visible), else a message naming it.
QString clipped(const QWidget* w, const QWidget* outer)
{
    if (!w->isVisible()) {
        return QStringLiteral("%1 is not visible").arg(w->objectName());
    }
    const QRect r(w->mapTo(outer, QPoint(0, 0)), w->size());
    if (!outer->rect().contains(r)) {
        return QStringLiteral("%1 at %2 outside %3 %4").arg(w->objectName(), rectText(r), outer->objectName(), rectText(outer->rect()));
    }
    return {};
}

} // namespace

class TestWindowFit : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void init()
    {
        QSettings().clear();
        QFile::remove(store::autosavePath());
        // Both runs see a 1280x720 logical screen (else the offscreen screen configuration was not applied).
        QCOMPARE(QGuiApplication::primaryScreen()->geometry().size(), QSize(1280, 720));
    }

    void freshStartTakesAtMostNinetyPercent()
    {
        QCOMPARE(freshWindowFrame(QRect(0, 0, 3840, 2160)).size(), kPreferredWindowSize); // a big screen: the preferred size
        MainWindow w(freshOptions());
        w.placeOnScreen();
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QRect frame = w.frameGeometry();
        QVERIFY2(available().contains(frame), qPrintable(rectText(frame) + QStringLiteral(" on ") + rectText(available())));
        QVERIFY2(frame.width() <= qCeil(available().width() * kScreenShare) + 1 && frame.height() <= qCeil(available().height() * kScreenShare) + 1,
                 qPrintable(rectText(frame)));
        // ... and uses that room: not a small window in a corner.
        QVERIFY2(frame.width() >= available().width() * 0.85 && frame.height() >= available().height() * 0.85, qPrintable(rectText(frame)));
        QVERIFY(qAbs(frame.center().x() - available().center().x()) <= 2);
    }

    // A layout saved on a 2400x1500 screen comes back inside this one.
    void savedGeometryIsClampedToThisScreen()
    {
        {
            MainWindow big(freshOptions());
            big.setGeometry(300, 200, 2400, 1500);
            QSettings().setValue(QLatin1String(settings_keys::kMainWindowGeometry), big.saveGeometry());
        }
        MainWindowOptions o = freshOptions();
        o.restoreSession = true;
        MainWindow w(o);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY2(available().contains(w.frameGeometry()), qPrintable(rectText(w.frameGeometry()) + QStringLiteral(" on ") + rectText(available())));
        // A smaller saved window only moves, keeping its size.
        const QRect moved = clampedWindowFrame(QRect(1000, 600, 800, 500), available());
        QCOMPARE(moved.size(), QSize(800, 500));
        QVERIFY(available().contains(moved));
    }

    // The chart keeps 40 % of the window's height; every dock, the sweep bar, the chart's controls and the
    // selected plan's header lie whole in the window; Compare shows A and B together, nothing scrolling
    // around them.
    void chartKeepsItsShareAndNothingIsCut()
    {
        MainWindow w(freshOptions());
        w.placeOnScreen();
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.applyDefaultDockSizes();
        QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
        QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
        w.startSweep();
        QVERIFY(finished.wait(120000));
        QVERIFY(detail.count() > 0 || detail.wait(120000));
        QCoreApplication::processEvents();

        QCustomPlot* chart = w.paretoPlot()->customPlot();
        QVERIFY2(chart->height() >= 0.4 * w.height(), qPrintable(QStringLiteral("chart %1 of %2 px").arg(chart->height()).arg(w.height())));
        QVERIFY2(w.paretoPlot()->dataRect().height() >= 0.2 * w.height(),
                 qPrintable(QStringLiteral("data area %1 px high").arg(w.paretoPlot()->dataRect().height())));

        QStringList problems;
        for (QDockWidget* dock : w.findChildren<QDockWidget*>()) {
            problems << clipped(dock, &w);
        }
        for (const char* name : {"runButton", "cancelButton", "sweepStatus", "colorBy", "logAxes", "showAllPlans", "detailsHeader",
                                 "launchFlagsButton", "timelineSearch"}) {
            auto* widget = w.findChild<QWidget*>(QLatin1String(name));
            if (!widget) {
                problems << QStringLiteral("no %1").arg(QLatin1String(name));
                continue;
            }
            problems << clipped(widget, &w);
            if (qobject_cast<QAbstractButton*>(widget) || qobject_cast<QComboBox*>(widget)) {
                if (widget->width() < widget->minimumSizeHint().width()) {
                    problems << QStringLiteral("%1 squeezed to %2 px").arg(QLatin1String(name)).arg(widget->width());
                }
            }
        }
        // The editor's fields whole (no sideways scrolling), the plan table's objective columns whole.
        auto* editorArea = w.editor()->findChild<QScrollArea*>();
        if (editorArea->horizontalScrollBar()->isVisible()) {
            problems << QStringLiteral("the editor scrolls sideways: %1 of %2 px")
                            .arg(editorArea->widget()->minimumSizeHint().width())
                            .arg(editorArea->viewport()->width());
        }
        QTableView* table = w.plansPanel()->tableView();
        const int costRight = table->columnViewportPosition(PlanTableModel::CostColumn) + table->columnWidth(PlanTableModel::CostColumn);
        if (costRight > table->viewport()->width()) {
            problems << QStringLiteral("the Cost column ends at %1 of %2 px").arg(costRight).arg(table->viewport()->width());
        }
        problems.removeAll(QString());
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("; "))));

        // Compare: A pinned, B another plan, the timelines page.
        CompareView* compare = w.details()->compare();
        compare->pinCurrent();
        QVERIFY(w.planModel()->rowCount() >= 2);
        w.selectPlan(w.selectedRow() == 0 ? 1 : 0);
        QVERIFY(detail.wait(120000));
        w.details()->tabs()->setCurrentWidget(compare);
        auto* pages = compare->findChild<QTabWidget*>(QStringLiteral("comparePages"));
        QVERIFY(pages);
        pages->setCurrentIndex(1);
        QTest::qWait(50);
        QDockWidget* dock = w.findChild<QDockWidget*>(QStringLiteral("detailsDock"));
        for (QWidget* p = compare; p && p != dock; p = p->parentWidget()) {
            QVERIFY2(!qobject_cast<QAbstractScrollArea*>(p),
                     qPrintable(QStringLiteral("Compare sits in a %1").arg(QLatin1String(p->metaObject()->className()))));
        }
        for (const char* name : {"compareLabelA", "compareLabelB", "pinButton"}) {
            const QString cut = clipped(compare->findChild<QWidget*>(QLatin1String(name)), dock);
            QVERIFY2(cut.isEmpty(), qPrintable(cut));
        }
        for (TimelineView* t : {compare->timelineA(), compare->timelineB()}) {
            const QString cut = clipped(t, dock);
            QVERIFY2(cut.isEmpty(), qPrintable(cut));
            QVERIFY(t->result());
            // At least one stage's compute row under the ruler.
            QVERIFY2(t->viewport()->height() >= 26 + 22, qPrintable(QStringLiteral("%1: %2 px").arg(t->objectName()).arg(t->viewport()->height())));
        }
    }
};

QTEST_MAIN(TestWindowFit)
#include "tst_window_fit.moc"
