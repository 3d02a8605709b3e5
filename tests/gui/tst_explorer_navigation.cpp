// SPDX-License-Identifier: MIT
// What users of Perfetto, hotspot and Nsight expect (#18 "Missing"): timeline keys W/S/A/D/F/0, a click
// selects a task and shows it in the side panel, Shift+drag measures a range, search finds B12 / stage 3
// / DP reduce, arrows follow pipeline sends, a right-click menu; Compare stacks A and B on one time axis
// with % deltas and marks A on the Pareto chart, and A/B survive a restart; the table filter filters the
// chart; the memory chart has tooltips; a dark theme; the Help menu. Plus defect 8's timeline details:
// two-digit micro-batch labels, a time axis in s past 1000 ms, a legend entry for every kind of work.
#include <QAction>
#include <QApplication>
#include <QFontMetrics>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QTableWidget>
#include <QtTest>

#include <qcustomplot.h>

#include "details_panel.h"
#include "gui_test_support.h"
#include "help.h"
#include "main_window.h"
#include "models/plan_detail_runner.h"
#include "models/plan_filter_model.h"
#include "models/plan_table_model.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "models/sweep_runner.h"
#include "models/timeline_search.h"
#include "views/compare_view.h"
#include "views/memory_view.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"
#include "views/theme.h"
#include "views/timeline_painter.h"
#include "views/timeline_view.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

MainWindowOptions options(bool restore)
{
    MainWindowOptions o;
    o.restoreSession = restore;
    o.runOnStart = false;
    Scenario s = test::smallScenario();
    s.search->pp = {2, 4};        // stages to navigate and pipeline sends to draw
    s.training.global_batch = 64; // enough micro-batches for two-digit labels
    o.scenario = s;
    return o;
}

// Sweeps and waits for the selected plan's timeline.
bool sweepAndSelect(MainWindow& w)
{
    QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
    QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
    w.startSweep();
    if (!finished.wait(120000)) {
        return false;
    }
    return detail.count() > 0 || detail.wait(120000);
}

// The centre of a task's bar in viewport coordinates (after zooming to it).
QPoint centreOf(TimelineView* view, int row, int bar)
{
    const TimelineBar& b = view->data().rows[std::size_t(row)].bars[std::size_t(bar)];
    const int x = qRound(view->mapping().mapTimeToX((b.start + b.end) / 2));
    for (int y = 0; y < view->viewport()->height(); ++y) {
        if (view->describeAt(QPoint(x, y)) == view->describeTask(row, bar)) {
            return QPoint(x, y);
        }
    }
    return {};
}

} // namespace

class TestExplorerNavigation : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void init() { QSettings().clear(); }

    void timelinePureParts()
    {
        // Defect 8: "4000 ms" reads "4.0 s"; zoomed in, "4.001 s"; short spans stay in ms.
        QCOMPARE(timeTickLabel(4.0, 0.5), QStringLiteral("4.0 s"));
        QCOMPARE(timeTickLabel(4.5, 0.5), QStringLiteral("4.5 s"));
        QCOMPARE(timeTickLabel(0.25, 0.05), QStringLiteral("250 ms"));
        QCOMPARE(timeTickLabel(4.001, 0.001), QStringLiteral("4.001 s"));
        QCOMPARE(timeTickLabel(0.0012, 0.0002), QStringLiteral("1.2 ms"));
        // Defect 8: labels go on past micro-batch 9: the number alone when "F12" does not fit.
        const QFontMetrics fm(QApplication::font());
        TimelineBar f9;
        f9.kind = TaskKind::Forward;
        f9.micro_batch = 9;
        const double width = fm.horizontalAdvance(QStringLiteral("F9")) + 4;
        QCOMPARE(fittingBarLabel(f9, false, width, fm), QStringLiteral("F9"));
        TimelineBar f12 = f9;
        f12.micro_batch = 12;
        QCOMPARE(fittingBarLabel(f12, false, width, fm), QStringLiteral("12"));
        QCOMPARE(fittingBarLabel(f12, false, 400, fm), QStringLiteral("F12"));
        QCOMPARE(fittingBarLabel(f12, false, 3, fm), QString());
        // Defect 8: every kind of work present has a legend entry, parameter gather included.
        TimelineData data;
        data.stages = 1;
        TimelineRow compute;
        compute.bars.push_back({0, 1, TaskKind::Forward, 0});
        compute.bars.push_back({1, 2, TaskKind::ParamGather, -1});
        compute.bars.push_back({2, 3, TaskKind::OptimizerStep, -1});
        data.rows.push_back(compute);
        QStringList names;
        for (const LegendEntry& e : timelineLegend(data)) {
            names << e.name;
        }
        QVERIFY2(names.contains(QStringLiteral("parameter gather")), qPrintable(names.join(QLatin1Char(','))));
        QVERIFY(names.contains(QStringLiteral("optimizer step")));
        QVERIFY(!names.contains(QStringLiteral("recompute")));
    }

    void timelineKeyboardClickRangeSearchFlowsMenu()
    {
        MainWindow w(options(false));
        w.resize(1400, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(sweepAndSelect(w));
        TimelineView* view = w.details()->timeline();
        QTRY_VERIFY(view->result() != nullptr);
        QVERIFY(view->stageCount() >= 2);
        view->setFocus();
        const double full = view->mapping().span();
        QTest::keyClick(view, Qt::Key_W);
        QVERIFY(std::abs(view->mapping().span() - full / 1.5) < full * 1e-6);
        const double start = view->mapping().windowStart();
        QTest::keyClick(view, Qt::Key_D);
        QVERIFY(view->mapping().windowStart() > start);
        QTest::keyClick(view, Qt::Key_A);
        QVERIFY(std::abs(view->mapping().windowStart() - start) < full * 1e-6);
        QTest::keyClick(view, Qt::Key_S);
        QVERIFY(std::abs(view->mapping().span() - full) < full * 1e-6);

        // Search: B1 = backward passes of micro-batch 1, one per stage; "stage 1" only stage 1's tasks.
        QCOMPARE(view->setSearch(QStringLiteral("B1")), view->stageCount());
        QVERIFY(w.details()->findChild<QLabel*>(QStringLiteral("timelineMatches")));
        for (const TimelineHit& h : findTasks(view->data(), QStringLiteral("b1"))) {
            const TimelineBar& b = view->data().rows[std::size_t(h.row)].bars[std::size_t(h.bar)];
            QCOMPARE(b.kind, TaskKind::Backward);
            QCOMPARE(b.micro_batch, 1);
        }
        QVERIFY(view->selectedRow() >= 0); // the first match is selected and shown
        const auto stage1 = findTasks(view->data(), QStringLiteral("stage 1"));
        QVERIFY(!stage1.empty());
        for (const TimelineHit& h : stage1) {
            QCOMPARE(view->data().rows[std::size_t(h.row)].stage, 1);
        }
        QVERIFY(!findTasks(view->data(), QStringLiteral("DP reduce")).empty() || !findTasks(view->data(), QStringLiteral("send")).empty());
        QCOMPARE(view->setSearch(QStringLiteral("stage 1, forward, mb 3")), 1);
        // Typing in the panel's search box searches too.
        w.details()->searchBox()->setText(QStringLiteral("F2"));
        QCOMPARE(view->matchCount(), view->stageCount());

        // Click: the task under the pointer is selected and described in the side panel.
        view->clearSelection();
        const auto hit = findTasks(view->data(), QStringLiteral("stage 0, f2")).front();
        view->zoomTo(view->data().rows[std::size_t(hit.row)].bars[std::size_t(hit.bar)].start - 0.001,
                     view->data().rows[std::size_t(hit.row)].bars[std::size_t(hit.bar)].end + 0.001);
        const QPoint at = centreOf(view, hit.row, hit.bar);
        QVERIFY(!at.isNull());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, at);
        QCOMPARE(view->selectedRow(), hit.row);
        QCOMPARE(view->selectedBar(), hit.bar);
        QVERIFY(w.details()->taskPanelText().contains(QStringLiteral("Selected task")));
        QVERIFY(w.details()->taskPanelText().contains(QStringLiteral("micro-batch 2")));
        // F fits the selected task.
        view->resetZoom();
        QTest::keyClick(view, Qt::Key_F);
        const TimelineBar& b = view->data().rows[std::size_t(hit.row)].bars[std::size_t(hit.bar)];
        QVERIFY(view->mapping().windowStart() <= b.start && view->mapping().windowEnd() >= b.end);
        QVERIFY(view->mapping().span() < 2 * (b.end - b.start));
        QTest::keyClick(view, Qt::Key_0);
        QVERIFY(!view->mapping().isZoomed());

        // Shift+drag: a time range, its duration in the side panel.
        view->clearSelection();
        const int y = view->viewport()->height() / 2;
        const QPoint from(view->viewport()->width() / 3, y), to(view->viewport()->width() / 2, y);
        QTest::mousePress(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, from);
        QMouseEvent move(QEvent::MouseMove, QPointF(to), view->viewport()->mapToGlobal(QPointF(to)), Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
        QApplication::sendEvent(view->viewport(), &move);
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, to);
        const double expected = view->mapping().mapXToTime(to.x()) - view->mapping().mapXToTime(from.x());
        QVERIFY(std::abs((view->rangeEnd() - view->rangeStart()) - expected) < expected * 1e-6);
        QVERIFY2(w.details()->taskPanelText().contains(QStringLiteral("duration")), qPrintable(w.details()->taskPanelText()));
        QTest::keyClick(view, Qt::Key_F); // F fits the range when no task is selected
        QVERIFY(std::abs(view->mapping().span() - expected) < expected * 1e-3);

        // Flow arrows: one per pipeline send, each into the neighbouring stage's compute lane.
        const auto flows = pipelineFlows(view->data());
        QVERIFY(!flows.empty());
        QCOMPARE(view->flowCount(), int(flows.size()));
        for (const PipelineFlow& f : flows) {
            const int fromStage = view->data().rows[std::size_t(f.fromRow)].stage;
            QVERIFY(f.toRow >= 0);
            QCOMPARE(view->data().rows[std::size_t(f.toRow)].lane, TimelineLane::Compute);
            QCOMPARE(std::abs(view->data().rows[std::size_t(f.toRow)].stage - fromStage) % (view->stageCount() - 1), 1 % (view->stageCount() - 1));
        }

        // Right-click menu: copy and export.
        std::unique_ptr<QMenu> menu(view->buildContextMenu(at));
        QStringList items;
        for (QAction* a : menu->actions()) {
            items << a->text();
        }
        QVERIFY(items.contains(QStringLiteral("Copy task details")));
        QVERIFY(items.contains(QStringLiteral("Copy visible range")));
        QVERIFY(items.contains(QStringLiteral("Export visible range as image…")));
    }

    void compareStacksTimelinesAndMarksA()
    {
        MainWindow w(options(true));
        w.resize(1400, 900);
        w.show();
        QVERIFY(sweepAndSelect(w));
        CompareView* compare = w.details()->compare();
        QTRY_VERIFY(compare->current() != nullptr);
        compare->pinCurrent();
        QVERIFY(w.paretoPlot()->pinned().has_value());
        QCOMPARE(w.paretoPlot()->pinned()->x(), compare->pinned()->training_days);
        const std::vector<int>& front = w.planModel()->frontRows();
        const int other = front.front() == w.selectedRow() ? front.back() : front.front();
        QVERIFY(other != w.selectedRow());
        QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
        w.selectPlan(other);
        QVERIFY(detail.wait(60000));
        QVERIFY(compare->pinned() != compare->current());
        // Deltas in % beside absolute values.
        const QString delta = compare->summaryTable()->item(0, 3)->text();
        QVERIFY2(delta.contains(QStringLiteral("%")), qPrintable(delta));
        QCOMPARE(deltaText(2.0, 3.0, [](double v) { return QString::number(v); }), QStringLiteral("+1 (+50 %)"));
        QCOMPARE(deltaText(2.0, 2.1, [](double v) { return QString::number(v); }), QStringLiteral("+0.1 (+5.0 %)"));
        // One time axis: both span the longer iteration; zooming A moves B.
        const double end = std::max(compare->pinned()->iteration_time_s, compare->current()->iteration_time_s);
        QCOMPARE(compare->timelineA()->mapping().windowEnd(), end);
        QCOMPARE(compare->timelineB()->mapping().windowEnd(), end);
        compare->timelineA()->zoomTo(end * 0.2, end * 0.4);
        QCOMPARE(compare->timelineB()->mapping().windowStart(), end * 0.2);
        QCOMPARE(compare->timelineB()->mapping().windowEnd(), end * 0.4);

        // A and B come back after a restart.
        const Plan pinnedPlan = compare->pinned()->plan;
        const Plan currentPlan = compare->current()->plan;
        w.close();
        MainWindow again(options(true));
        QTRY_VERIFY_WITH_TIMEOUT(again.details()->compare()->pinned() != nullptr, 60000);
        QTRY_VERIFY_WITH_TIMEOUT(again.details()->compare()->current() != nullptr, 60000);
        QVERIFY(again.details()->compare()->pinned()->plan == pinnedPlan);
        QVERIFY(again.details()->compare()->current()->plan == currentPlan);
        QVERIFY(again.paretoPlot()->pinned().has_value());
        again.close();

        // As the application starts (it sweeps at once and selects a plan): the selection is B again, not
        // the front's knee, so B is still B (it was lost here once).
        MainWindowOptions sweeping = options(true);
        sweeping.runOnStart = true;
        {
            MainWindow third(sweeping);
            QSignalSpy finished(third.sweepRunner(), &SweepRunner::finished);
            QVERIFY(finished.wait(120000));
            QTRY_VERIFY_WITH_TIMEOUT(third.details()->hasPlan(), 60000);
            QTRY_VERIFY_WITH_TIMEOUT(third.details()->compare()->pinned() != nullptr, 60000);
            QVERIFY(third.selectedRow() >= 0);
            QVERIFY(third.planModel()->planRow(third.selectedRow()).plan == currentPlan);
            QVERIFY(third.details()->compare()->current()->plan == currentPlan);
            QVERIFY(third.details()->compare()->pinned()->plan == pinnedPlan);
            QCOMPARE(third.details()->timeline()->result(), third.details()->compare()->current());
            third.close();
        }
        QVERIFY(!QSettings().value(QLatin1String(settings_keys::kCompareCurrent)).toString().isEmpty());

        // Other inputs, where B is not one of the plans: the start sweep selects its own plan, Compare keeps
        // B until the user selects one.
        sweeping.scenario->search->micro_batch = {4};
        MainWindow fourth(sweeping);
        QSignalSpy fourthFinished(fourth.sweepRunner(), &SweepRunner::finished);
        QVERIFY(fourthFinished.wait(120000));
        QTRY_VERIFY_WITH_TIMEOUT(fourth.details()->hasPlan(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(fourth.details()->compare()->current() != nullptr, 60000);
        QVERIFY(fourth.details()->compare()->current()->plan == currentPlan);
        QVERIFY(fourth.details()->timeline()->result()->plan.micro_batch == 4);
        QSignalSpy fourthDetail(fourth.detailRunner(), &PlanDetailRunner::resultReady);
        fourth.selectPlan(fourth.planModel()->frontRows().front());
        QVERIFY(fourthDetail.wait(60000));
        QCOMPARE(fourth.details()->compare()->current(), fourth.details()->timeline()->result());
    }

    void tableFilterFiltersThePlot()
    {
        MainWindow w(options(false));
        w.show();
        QVERIFY(sweepAndSelect(w));
        const int all = w.paretoPlot()->pointCount();
        w.plansPanel()->setFilterText(QStringLiteral("tp=1"));
        const int shown = w.plansPanel()->tableView()->model()->rowCount();
        QVERIFY(shown > 0 && shown < all);
        QCOMPARE(w.paretoPlot()->pointCount(), shown);
        w.plansPanel()->setFilterText(QString());
        QCOMPARE(w.paretoPlot()->pointCount(), all);
    }

    void memoryChartTooltips()
    {
        MainWindow w(options(false));
        w.resize(1400, 900);
        w.show();
        QVERIFY(sweepAndSelect(w));
        MemoryView* memory = w.details()->memory();
        QTRY_VERIFY(memory->stageCount() > 0);
        const QString text = memory->describeStage(0);
        QVERIFY(text.contains(QStringLiteral("weights")) && text.contains(QStringLiteral("activations")) && text.contains(QStringLiteral("GiB")));
        w.details()->tabs()->setCurrentIndex(1);
        memory->customPlot()->replot();
        QCustomPlot* plot = memory->customPlot();
        const double peak = memory->customPlot()->yAxis->range().upper / 2;
        const QPoint barCentre(qRound(plot->xAxis->coordToPixel(0)), qRound(plot->yAxis->coordToPixel(std::min(peak, 0.5))));
        QCOMPARE(memory->stageAt(barCentre), 0);
    }

    void darkThemeAndHelpMenu()
    {
        MainWindow w(options(false));
        w.show();
        QVERIFY(!theme::isDark() || theme::systemIsDark());
        w.setTheme(theme::Theme::Dark);
        QVERIFY(theme::isDark());
        QCOMPARE(QSettings().value(QLatin1String("View/Theme")).toString(), QStringLiteral("dark"));
        QCoreApplication::processEvents();
        auto corner = [&w] {
            QCoreApplication::processEvents(); // the palette change reaches every widget
            QCustomPlot* plot = w.paretoPlot()->customPlot();
            plot->replot();
            return plot->grab().toImage().pixelColor(plot->width() - 3, plot->height() - 3).lightness();
        };
        QVERIFY(corner() < 128);
        QVERIFY(w.findChild<QAction*>(QStringLiteral("theme-dark"))->isChecked());
        w.setTheme(theme::Theme::Light);
        QVERIFY(!theme::isDark());
        QVERIFY(corner() > 128);

        QStringList help;
        for (QAction* menu : w.menuBar()->actions()) {
            if (menu->text().contains(QStringLiteral("Help"))) {
                for (QAction* a : menu->menu()->actions()) {
                    help << a->text();
                }
            }
        }
        QVERIFY(help.contains(QStringLiteral("&Keyboard shortcuts")));
        QVERIFY(help.contains(QStringLiteral("&Documentation")));
        QVERIFY(help.contains(QStringLiteral("&About vtrain-explorer")));
        QVERIFY(help::shortcutsHtml().contains(QStringLiteral("W / S")));
        QVERIFY(help::documentationUrl().isLocalFile());
        QVERIFY(help::aboutHtml().contains(QCoreApplication::applicationVersion()));
    }
};

QTEST_MAIN(TestExplorerNavigation)
#include "tst_explorer_navigation.moc"
