// SPDX-License-Identifier: MIT
// The Pareto chart a planner takes to a meeting (#30): by default its axes frame the front and the plans
// near it, with a count of the plans beyond and one click to show them all; logarithmic axes get 1-2-5
// ticks; no text of the chart touches another, on screen and in 1x and 2x exports of every shipped
// example; the front is drawn above the selection marks; colours are keyed to values, the same filtered
// or not and beside any other GPU type.
#include <cmath>
#include <set>

#include <QCheckBox>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QScreen>
#include <QtTest>

#include <qcustomplot.h>

#include "gui_test_support.h"
#include "main_window.h"
#include "models/format.h"
#include "models/pareto_frame.h"
#include "models/plan_filter_model.h"
#include "models/plan_table_model.h"
#include "models/scenario_store.h"
#include "models/sweep_runner.h"
#include "text_boxes.h"
#include "views/category_palette.h"
#include "views/export.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"

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

bool sweep(MainWindow& w)
{
    QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
    w.startSweep();
    if (!finished.wait(600000)) {
        return false;
    }
    w.paretoPlot()->flush();
    return true;
}

Scenario example(const QString& name)
{
    QString error;
    const auto s = store::readScenario(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/") + name, &error);
    if (!s) {
        qFatal("example %s: %s", qPrintable(name), qPrintable(error));
    }
    return *s;
}

// The shipped scenario examples (the jobs-*.json files are the shared-cluster study's job lists).
QStringList scenarioExamples()
{
    QStringList names;
    for (const QString& name : QDir(QStringLiteral(VTRAIN_SOURCE_DIR "/examples")).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        if (!name.startsWith(QStringLiteral("jobs-"))) {
            names << name;
        }
    }
    return names;
}

// The front's plans as (days, cost), from the model.
std::vector<PlotPoint> frontOf(const MainWindow& w)
{
    std::vector<PlotPoint> front;
    for (int row : w.planModel()->frontRows()) {
        front.push_back({w.planModel()->planRow(row).training_days, w.planModel()->planRow(row).cost_usd});
    }
    return front;
}

int layerIndex(QCustomPlot* plot, const char* name)
{
    return plot->layer(QString::fromLatin1(name))->index();
}

// Every text the chart paints, laid out at the widget's size (what the screen shows).
std::vector<test::TextBox> screenText(QCustomPlot* plot)
{
    const int dpi = qRound(QGuiApplication::primaryScreen()->logicalDotsPerInchY());
    test::TextRecordingDevice device(plot->size(), 1.0, dpi);
    {
        QCPPainter painter(&device);
        plot->toPainter(&painter, plot->width(), plot->height());
    }
    plot->replot();
    return device.boxes();
}

std::vector<test::TextBox> exportText(QCustomPlot* plot, double scale)
{
    const ExportSize size{1600, 900, scale};
    const int dpi = qRound(QGuiApplication::primaryScreen()->logicalDotsPerInchY());
    test::TextRecordingDevice device(QSize(size.width, size.height), scale, dpi);
    paintPlotAsExported(plot, &device, size);
    return device.boxes();
}

// Every tick label of both axes appears among the painted texts (the check is not vacuous).
QString missingTickLabel(QCustomPlot* plot, const std::vector<test::TextBox>& boxes)
{
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        if (axis->tickVectorLabels().size() < 2) {
            return QStringLiteral("fewer than two tick labels on %1").arg(axis->label());
        }
        for (const QString& label : axis->tickVectorLabels()) {
            if (std::none_of(boxes.begin(), boxes.end(), [&](const test::TextBox& b) { return b.text == label; })) {
                return QStringLiteral("tick label %1 not painted").arg(label);
            }
        }
    }
    return {};
}

} // namespace

class TestParetoView : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    // The framing rule itself: a cloud 100x past its front is cut to the front and its neighbourhood.
    void frameCoversTheFrontNotTheCloud()
    {
        std::vector<PlotPoint> points{{10, 100}, {12, 80}, {15, 70}, {14, 95}, {19, 75}, {1000, 500}, {30, 5000}};
        for (const bool log : {false, true}) {
            const PlotRange r = frameFront(points, log);
            for (const PlotPoint& front : {PlotPoint{10, 100}, PlotPoint{12, 80}, PlotPoint{15, 70}}) {
                QVERIFY(r.contains(front));
            }
            QVERIFY(r.contains({19, 75}));     // near the front: shown
            QVERIFY(!r.contains({1000, 500})); // 100x the fastest time: beyond
            QVERIFY(!r.contains({30, 5000}));  // 70x the cheapest cost: beyond
            QVERIFY(r.x1 >= 10 * kTimeReach && r.y1 >= 70 * kCostReach);
            QVERIFY(r.x1 < 10 * kTimeReach * 1.3 && r.y1 < 100 * 1.3);
            QVERIFY(r.x0 > 0 || !log);
            QVERIFY(r.y0 < 70 && r.x0 < 10);
            const PlotRange all = frameAll(points, log);
            for (const PlotPoint& p : points) {
                QVERIFY(all.contains(p));
            }
        }
    }

    // MT-NLG's 5-plan front filled a few pixels of a 0-150-day axis, DeepSeek-V3's 7-plan front was a dot at
    // the origin of 0-5,500 days: now the axes cover the front and its neighbourhood, the note counts the
    // plans beyond, and Show all plans shows every plan.
    void defaultViewFramesTheFront_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("MT-NLG 530B") << QStringLiteral("mt-nlg-530b.json");
        QTest::newRow("DeepSeek-V3") << QStringLiteral("deepseek-v3-671b-h800.json");
    }
    void defaultViewFramesTheFront()
    {
        QFETCH(QString, file);
        MainWindow w(optionsFor(example(file)));
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.applyDefaultDockSizes(); // as a first start lays the window out
        QVERIFY(sweep(w));
        ParetoPlot* plot = w.paretoPlot();
        QCustomPlot* chart = plot->customPlot();
        QVERIFY(!plot->showsAll());
        const std::vector<PlotPoint> front = frontOf(w);
        QVERIFY(front.size() >= 2);
        double fastest = INFINITY, slowest = 0, cheapest = INFINITY, dearest = 0, maxDays = 0, maxCost = 0;
        for (const PlotPoint& p : front) {
            fastest = std::min(fastest, p.days);
            slowest = std::max(slowest, p.days);
            cheapest = std::min(cheapest, p.cost);
            dearest = std::max(dearest, p.cost);
        }
        for (const PlanRow& r : w.planModel()->rows()) {
            maxDays = std::max(maxDays, r.training_days);
            maxCost = std::max(maxCost, r.cost_usd);
        }
        const QCPRange x = chart->xAxis->range();
        const QCPRange y = chart->yAxis->range();
        // The front whole, and the neighbourhood up to kTimeReach x the fastest and kCostReach x the cheapest.
        QVERIFY2(x.lower <= fastest && x.upper >= std::max(slowest, std::min(maxDays, fastest * kTimeReach)),
                 qPrintable(QStringLiteral("x %1..%2, front %3..%4").arg(x.lower).arg(x.upper).arg(fastest).arg(slowest)));
        QVERIFY2(y.lower <= cheapest && y.upper >= std::max(dearest, std::min(maxCost, cheapest * kCostReach)),
                 qPrintable(QStringLiteral("y %1..%2, front %3..%4").arg(y.lower).arg(y.upper).arg(cheapest).arg(dearest)));
        // ... and not much more: the front spans a good part of the chart, not a corner of it.
        QVERIFY(x.upper <= std::max(slowest, fastest * kTimeReach) * 1.25);
        QVERIFY(y.upper <= std::max(dearest, cheapest * kCostReach) * 1.25);
        const QRect data = plot->dataRect();
        for (int row : w.planModel()->frontRows()) {
            QVERIFY(data.contains(plot->pixelOfRow(row)));
        }
        // The clipped plans are counted under the chart, as many as lie outside the axes.
        int beyond = 0;
        for (const PlanRow& r : w.planModel()->rows()) {
            beyond += !x.contains(r.training_days) || !y.contains(r.cost_usd);
        }
        QVERIFY2(beyond > 0, "these examples have plans far from the front");
        QCOMPARE(plot->offChartCount(), beyond);
        QVERIFY2(plot->chartNote().contains(formatCount(beyond) + QStringLiteral(" beyond the axes")), qPrintable(plot->chartNote()));
        QVERIFY2(plot->chartNote().contains(QStringLiteral("%1 on the front").arg(front.size())), qPrintable(plot->chartNote()));
        // One click shows them all; unchecking frames the front again.
        plot->findChild<QCheckBox*>(QStringLiteral("showAllPlans"))->click();
        chart->replot();
        QVERIFY(plot->showsAll());
        for (const PlanRow& r : w.planModel()->rows()) {
            QVERIFY(chart->xAxis->range().contains(r.training_days) && chart->yAxis->range().contains(r.cost_usd));
        }
        QCOMPARE(plot->offChartCount(), 0);
        QVERIFY2(!plot->chartNote().contains(QStringLiteral("beyond")), qPrintable(plot->chartNote()));
        plot->findChild<QCheckBox*>(QStringLiteral("showAllPlans"))->click();
        chart->replot();
        QCOMPARE(chart->xAxis->range().upper, x.upper);
        QCOMPARE(plot->offChartCount(), beyond);
    }

    // Log axes had about one label per decade and none near the front: now 1-2-5 (or finer) steps within a
    // decade, at least two labels on each axis inside the framed front.
    void logAxesTickInOneTwoFiveSteps()
    {
        MainWindow w(optionsFor(example(QStringLiteral("mt-nlg-530b.json"))));
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.applyDefaultDockSizes(); // as a first start lays the window out
        QVERIFY(sweep(w));
        w.paretoPlot()->setLogAxes(true);
        QCustomPlot* chart = w.paretoPlot()->customPlot();
        chart->replot();
        const std::set<double> nice{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9};
        for (QCPAxis* axis : {chart->xAxis, chart->yAxis}) {
            QCOMPARE(axis->scaleType(), QCPAxis::stLogarithmic);
            const QVector<double> ticks = axis->tickVector();
            QVERIFY2(ticks.size() >= 2, qPrintable(axis->label()));
            for (double t : ticks) {
                const double mantissa = t / std::pow(10.0, std::floor(std::log10(t) + 1e-9));
                QVERIFY2(std::any_of(nice.begin(), nice.end(), [&](double m) { return std::abs(m - mantissa) < 1e-6; }),
                         qPrintable(QStringLiteral("%1: tick %2").arg(axis->label()).arg(t)));
                QVERIFY(axis->range().contains(t));
            }
        }
        // The front lies within the labelled span: a label on each side of (or at) its middle.
        const std::vector<PlotPoint> front = frontOf(w);
        const auto [fast, slow] = std::minmax_element(front.begin(), front.end(), [](auto& a, auto& b) { return a.days < b.days; });
        const QVector<double> xt = chart->xAxis->tickVector();
        QVERIFY(xt.front() <= slow->days && xt.back() >= fast->days);
    }

    // No text of the chart touches another (tick labels, axis labels, title, legend, the note under it),
    // for every shipped example, linear and logarithmic, on screen at 1280x720 and exported at 1x and 2x.
    void noLabelTouchesAnother_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString& name : scenarioExamples()) {
            QTest::newRow(qPrintable(name)) << name;
        }
    }
    void noLabelTouchesAnother()
    {
        QFETCH(QString, file);
        MainWindow w(optionsFor(example(file)));
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.applyDefaultDockSizes(); // as a first start lays the window out
        QVERIFY(sweep(w));
        QVERIFY(w.planModel()->rowCount() > 0);
        QCustomPlot* chart = w.paretoPlot()->customPlot();
        for (const bool log : {false, true}) {
            w.paretoPlot()->setLogAxes(log);
            chart->replot();
            const QString mode = log ? QStringLiteral("log") : QStringLiteral("linear");
            const auto screen = screenText(chart);
            QVERIFY2(missingTickLabel(chart, screen).isEmpty(), qPrintable(mode + QStringLiteral(" screen: ") + missingTickLabel(chart, screen)));
            QVERIFY2(test::firstCollision(screen).isEmpty(), qPrintable(mode + QStringLiteral(" screen: ") + test::firstCollision(screen)));
            for (const double scale : {1.0, 2.0}) {
                const auto exported = exportText(chart, scale);
                const QString where = QStringLiteral("%1 export %2x: ").arg(mode).arg(scale);
                QVERIFY2(test::firstCollision(exported).isEmpty(), qPrintable(where + test::firstCollision(exported)));
                // The export's own layout is still in place: its tick labels are among what it painted.
                QVERIFY2(missingTickLabel(chart, exported).isEmpty(), qPrintable(where + missingTickLabel(chart, exported)));
            }
        }
    }

    // The selection's marks (ring, band, pinned diamond) lie on a layer under the front: a front plan
    // pinned as A still shows as a front point, not as the diamond over it.
    void frontIsDrawnAboveTheMarks()
    {
        MainWindow w(optionsFor(example(QStringLiteral("mt-nlg-530b.json"))));
        w.resize(1280, 720);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.applyDefaultDockSizes(); // as a first start lays the window out
        QVERIFY(sweep(w));
        ParetoPlot* plot = w.paretoPlot();
        QCustomPlot* chart = plot->customPlot();
        QVERIFY(layerIndex(chart, "front") > layerIndex(chart, "marks"));
        QVERIFY(layerIndex(chart, "marks") > layerIndex(chart, "main"));
        const std::vector<int>& front = w.planModel()->frontRows();
        const PlanRow& a = w.planModel()->planRow(front.front());
        plot->setPinned(QPointF(a.training_days, a.cost_usd));
        plot->setSelectedRow(front.front());
        chart->replot();
        const QImage image = chart->toPixmap(chart->width(), chart->height(), 1.0).toImage();
        const QColor fill = chart->palette().color(QPalette::Base); // a front point is a ring filled with the base colour
        for (int row : front) {
            const QColor at = image.pixelColor(plot->pixelOfRow(row));
            QVERIFY2(std::abs(at.red() - fill.red()) + std::abs(at.green() - fill.green()) + std::abs(at.blue() - fill.blue()) < 40,
                     qPrintable(QStringLiteral("front row %1 shows %2").arg(row).arg(at.name())));
        }
    }

    // tp 8 was teal unfiltered and blue with the filter tp=8; B200 orange beside A100 and blue beside GB200.
    // Colours now follow the value: the same filtered or not, and in sweeps of other GPU sets.
    void coloursFollowValuesAcrossFiltersAndSweeps()
    {
        Scenario s = test::smallScenario();
        s.search->tp = {1, 2, 4, 8};
        s.search->gpu = {"a100-sxm4-80gb", "b200-sxm-180gb"};
        MainWindow w(optionsFor(s));
        w.resize(1280, 720);
        QVERIFY(sweep(w));
        ParetoPlot* plot = w.paretoPlot();
        plot->setColorDimension(ColorDimension::TensorParallel);
        std::map<QString, QColor> unfiltered;
        for (int tp : {1, 2, 8}) {
            const QString name = QStringLiteral("tp %1").arg(tp);
            unfiltered[name] = plot->categoryColor(name);
            QVERIFY2(unfiltered[name].isValid(), qPrintable(name));
        }
        QCOMPARE(std::set<QRgb>(
                     {unfiltered[QStringLiteral("tp 1")].rgb(), unfiltered[QStringLiteral("tp 2")].rgb(), unfiltered[QStringLiteral("tp 8")].rgb()})
                     .size(),
                 std::size_t{3});
        QCOMPARE(w.plansPanel()->filterModel()->setFilterText(QStringLiteral("tp=8")), QString());
        QCOMPARE(plot->categoryCount(), 1);
        QCOMPARE(plot->categoryColor(QStringLiteral("tp 8")), unfiltered[QStringLiteral("tp 8")]);
        QCOMPARE(w.plansPanel()->filterModel()->setFilterText(QStringLiteral("tp<=2")), QString());
        QCOMPARE(plot->categoryColor(QStringLiteral("tp 2")), unfiltered[QStringLiteral("tp 2")]);
        QCOMPARE(w.plansPanel()->filterModel()->setFilterText(QString()), QString());

        plot->setColorDimension(ColorDimension::GpuType);
        const QColor b200 = plot->categoryColor(QStringLiteral("b200-sxm-180gb"));
        QVERIFY(b200.isValid() && b200 != plot->categoryColor(QStringLiteral("a100-sxm4-80gb")));
        // Another sweep, B200 beside GB200 (which sorts first now): B200 keeps its colour.
        s.search->gpu = {"gb200-nvl72", "b200-sxm-180gb"};
        s.cluster.gpu = "gb200-nvl72";
        MainWindow other(optionsFor(s));
        QVERIFY(sweep(other));
        other.paretoPlot()->setColorDimension(ColorDimension::GpuType);
        QCOMPARE(other.paretoPlot()->categoryColor(QStringLiteral("b200-sxm-180gb")), b200);
        QVERIFY(other.paretoPlot()->categoryColor(QStringLiteral("gb200-nvl72")) != b200);
        other.paretoPlot()->setColorDimension(ColorDimension::TensorParallel);
        QCOMPARE(other.paretoPlot()->categoryColor(QStringLiteral("tp 8")), unfiltered[QStringLiteral("tp 8")]);
    }

    // The palette's rules: tensor-parallel widths and the shipped GPU types each get a colour of their
    // own; counts 9 % or more apart differ; the same value maps alike whatever else is around (no state).
    void paletteKeysValuesApart()
    {
        std::set<int> tp;
        for (int v = 1; v <= 64; v *= 2) {
            tp.insert(palette::indexOfPowerOfTwo(v));
        }
        QCOMPARE(tp.size(), std::size_t{7});
        std::set<int> gpus;
        const QStringList profiles = QDir(QStringLiteral(VTRAIN_SOURCE_DIR "/profiles")).entryList({QStringLiteral("*.json")}, QDir::Files);
        for (const QString& file : profiles) {
            gpus.insert(palette::indexOfGpu(QFileInfo(file).completeBaseName().toStdString()));
        }
        QCOMPARE(gpus.size(), static_cast<std::size_t>(profiles.size()));
        // MT-NLG's pipeline depths (divisors of 105) and its cluster sizes, each apart.
        std::set<int> pp;
        for (int v : {1, 3, 5, 7, 15, 21, 35, 105}) {
            pp.insert(palette::indexOfCount(v));
        }
        QCOMPARE(pp.size(), std::size_t{8});
        QCOMPARE(std::set<int>({palette::indexOfCount(2240), palette::indexOfCount(3360), palette::indexOfCount(4480)}).size(), std::size_t{3});
        PlanRow row;
        row.plan.tp = 8;
        row.gpu = "b200-sxm-180gb";
        QCOMPARE(palette::colorOf(row, ColorDimension::TensorParallel), palette::entry(3));
        QCOMPARE(palette::colorOf(row, ColorDimension::GpuType), palette::entry(palette::indexOfGpu("b200-sxm-180gb")));
        QCOMPARE(palette::indexOfName(QStringLiteral("tp-cp-ep-pp-dp")), palette::indexOfName(QStringLiteral("tp-cp-ep-pp-dp")));
    }
};

QTEST_MAIN(TestParetoView)
#include "tst_pareto_view.moc"
