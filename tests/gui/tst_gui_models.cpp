// SPDX-License-Identifier: MIT
// The Qt-side models and helpers: item models under QAbstractItemModelTester, the plan filter language,
// number formatting, the editor's field parsing, time<->pixel mapping and the timeline's level of detail.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QtTest>

#include "gui_test_support.h"
#include "models/format.h"
#include "models/gantt_mapping.h"
#include "models/plan_dimensions.h"
#include "models/plan_filter_model.h"
#include "models/plan_table_model.h"
#include "models/reject_model.h"
#include "models/scenario_fields.h"
#include "models/scenario_form.h"
#include "models/timeline_data.h"
#include "models/timeline_lod.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

std::vector<PlanRow> sampleRows(int n)
{
    std::vector<PlanRow> rows;
    for (int i = 0; i < n; ++i) {
        PlanRow r;
        r.index = static_cast<std::uint64_t>(3 * i);
        r.plan.tp = 1 << (i % 4);
        r.plan.pp = 1 + i % 3;
        r.plan.dp = 2;
        r.plan.schedule = i % 2 ? Schedule::OneFOneB : Schedule::GPipe;
        r.gpu = i % 5 ? "a100-sxm4-80gb" : "h100-sxm5-80gb";
        r.num_gpus = r.plan.tp * r.plan.pp * r.plan.dp;
        r.training_days = 10.0 + i;
        r.cost_usd = 1e6 * (1 + (i * 7) % 11);
        r.mfu = 0.3 + 0.01 * i;
        rows.push_back(r);
    }
    return rows;
}

} // namespace

class TestGuiModels : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    // Context, expert and expert-tensor parallelism and the precision have columns (display and sort),
    // a colour dimension each, and show in the plan's one-line summary.
    void planColumnsForTodaysAxes()
    {
        PlanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<PlanRow> rows = sampleRows(2);
        rows[0].plan.cp = 2;
        rows[0].plan.ep = 8;
        rows[0].plan.etp = 1;
        rows[0].plan.tp = 4;
        rows[0].plan.moe_overlap = true;
        rows[0].precision = Precision::Fp8;
        model.appendRows(rows);
        const int r0 = model.modelRowOf(0);
        const int r1 = model.modelRowOf(1);
        QCOMPARE(model.headerData(PlanTableModel::CpColumn, Qt::Horizontal).toString(), QStringLiteral("CP"));
        QCOMPARE(model.headerData(PlanTableModel::PrecisionColumn, Qt::Horizontal).toString(), QStringLiteral("Precision"));
        QCOMPARE(model.data(model.index(r0, PlanTableModel::CpColumn)).toInt(), 2);
        QCOMPARE(model.data(model.index(r0, PlanTableModel::EpColumn)).toInt(), 8);
        QCOMPARE(model.data(model.index(r0, PlanTableModel::EtpColumn)).toInt(), 1);
        QCOMPARE(model.data(model.index(r1, PlanTableModel::EtpColumn)).toInt(), rows[1].plan.tp); // etp 0 = tp
        QCOMPARE(model.data(model.index(r0, PlanTableModel::PrecisionColumn)).toString(), QStringLiteral("FP8"));
        QCOMPARE(model.data(model.index(r1, PlanTableModel::PrecisionColumn)).toString(), QStringLiteral("BF16"));
        QVERIFY(model.data(model.index(r0, PlanTableModel::PrecisionColumn), PlanTableModel::SortRole).toInt() >
                model.data(model.index(r1, PlanTableModel::PrecisionColumn), PlanTableModel::SortRole).toInt());
        model.sort(PlanTableModel::EpColumn, Qt::DescendingOrder);
        QCOMPARE(model.idAt(0), 0);
        QCOMPARE(categoryOf(rows[0], ColorDimension::Precision), QStringLiteral("FP8"));
        QCOMPARE(categoryOf(rows[0], ColorDimension::ExpertParallel), QStringLiteral("ep 8"));
        QCOMPARE(categoryOf(rows[0], ColorDimension::ContextParallel), QStringLiteral("cp 2"));
        QCOMPARE(categoryOf(rows[0], ColorDimension::GpuType), QString::fromStdString(rows[0].gpu));
        QVERIFY(colorDimensionNames().contains(QStringLiteral("GPU type")));
        const QString summary = planSummary(rows[0].plan);
        QVERIFY2(summary.contains(QStringLiteral("cp 2")) && summary.contains(QStringLiteral("ep 8")) && summary.contains(QStringLiteral("etp 1")) &&
                     summary.contains(QStringLiteral("MoE overlap")),
                 qPrintable(summary));
        QVERIFY(planDescription(rows[0]).contains(QStringLiteral("FP8")));
        // Rank order and host offload (#17's axes) colour the plot too, and the summary names them.
        QCOMPARE(categoryOf(rows[0], ColorDimension::RankOrder), QStringLiteral("tp-cp-ep-dp-pp"));
        QCOMPARE(categoryOf(rows[0], ColorDimension::Offload), QStringLiteral("no offload"));
        rows[0].plan.rank_order.dims = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp};
        rows[0].plan.offload_optimizer = true;
        rows[0].plan.offload_activations = 0.25;
        QCOMPARE(categoryOf(rows[0], ColorDimension::RankOrder), QStringLiteral("tp-cp-ep-pp-dp"));
        QCOMPARE(categoryOf(rows[0], ColorDimension::Offload), QStringLiteral("offload optimizer + 25% activations"));
        QVERIFY(categoryOrder(rows[0], ColorDimension::Offload) > categoryOrder(rows[1], ColorDimension::Offload));
        QVERIFY(colorDimensionNames().contains(QStringLiteral("Rank order")) && colorDimensionNames().contains(QStringLiteral("Host offload")));
        const QString placed = planSummary(rows[0].plan);
        QVERIFY2(placed.contains(QStringLiteral("ranks tp-cp-ep-pp-dp")) && placed.contains(QStringLiteral("optimizer offload")) &&
                     placed.contains(QStringLiteral("25% activations offloaded")),
                 qPrintable(placed));
    }

    void planTableModel()
    {
        PlanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.appendRows(sampleRows(10));
        model.appendRows(sampleRows(0));
        auto more = sampleRows(15);
        more.erase(more.begin(), more.begin() + 10);
        model.appendRows(more);
        QCOMPARE(model.rowCount(), 15);
        QCOMPARE(model.columnCount(), int(PlanTableModel::ColumnCount));
        QCOMPARE(model.rowOfPlan(12), 4);
        QCOMPARE(model.rowOfPlan(13), -1);
        QSignalSpy frontSpy(&model, &PlanTableModel::frontChanged);
        QCOMPARE(model.setFront({0, 12, 999}), 2);
        QCOMPARE(frontSpy.count(), 1);
        QVERIFY(model.planRow(0).on_front);
        QVERIFY(model.planRow(4).on_front);
        QVERIFY(!model.planRow(1).on_front);
        QCOMPARE(model.data(model.index(4, PlanTableModel::FrontColumn)).toString(), QStringLiteral("★"));
        QCOMPARE(model.data(model.index(4, PlanTableModel::DaysColumn), PlanTableModel::SortRole).toDouble(), 14.0);
        // No band on these rows: the band column says so and sorts by the training time itself.
        QCOMPARE(model.data(model.index(4, PlanTableModel::DaysBandColumn)).toString(), QStringLiteral("no band"));
        QCOMPARE(model.data(model.index(4, PlanTableModel::DaysBandColumn), PlanTableModel::SortRole).toDouble(), 14.0);
        QCOMPARE(model.frontRows().size(), std::size_t(2));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(model.frontRows().empty());
    }

    // A row with an iteration-time band shows it in days: the training time scales with the iteration.
    void daysBandColumn()
    {
        PlanTableModel model;
        auto rows = sampleRows(1);
        rows[0].iteration_time_s = 10.0;
        rows[0].iteration_time_low_s = 9.0;
        rows[0].iteration_time_high_s = 12.0;
        rows[0].training_days = 20.0;
        model.appendRows(rows);
        QCOMPARE(model.data(model.index(0, PlanTableModel::DaysBandColumn)).toString(), QStringLiteral("18.00–24.00"));
        QCOMPARE(model.data(model.index(0, PlanTableModel::DaysBandColumn), PlanTableModel::SortRole).toDouble(), 24.0);
        QVERIFY(
            model.data(model.index(0, PlanTableModel::DaysColumn), Qt::ToolTipRole).toString().contains(QStringLiteral("80% band 18.00–24.00 days")));
    }

    void planFilterModel()
    {
        PlanTableModel model;
        model.appendRows(sampleRows(20));
        PlanFilterModel filter;
        filter.setPlanModel(&model);
        QAbstractItemModelTester tester(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(filter.rowCount(), 20);
        QVERIFY(filter.setFilterText(QStringLiteral("tp=8")).isEmpty());
        QCOMPARE(filter.rowCount(), 5);
        QVERIFY(filter.setFilterText(QStringLiteral("tp = 8 pp<=1")).isEmpty());
        for (int r = 0; r < filter.rowCount(); ++r) {
            const PlanRow& row = model.planRow(model.idAt(filter.mapToSource(filter.index(r, 0)).row()));
            QCOMPARE(row.plan.tp, 8);
            QVERIFY(row.plan.pp <= 1);
        }
        QVERIFY(filter.setFilterText(QStringLiteral("gpipe gpu=h100")).isEmpty());
        QCOMPARE(filter.rowCount(), 2); // i = 0 and 10: even (GPipe) and a multiple of 5 (H100)
        QVERIFY(filter.setFilterText(QStringLiteral("days<15")).isEmpty());
        QCOMPARE(filter.rowCount(), 5);
        // A filter it does not understand is refused with why, and the previous one stays.
        QVERIFY(filter.setFilterText(QStringLiteral("color=red")).contains(QStringLiteral("unknown field")));
        QVERIFY(filter.setFilterText(QStringLiteral("tp<abc")).contains(QStringLiteral("not a number")));
        QCOMPARE(filter.rowCount(), 5);
        QVERIFY(filter.setFilterText(QString()).isEmpty());
        model.setFront({0, 3});
        filter.setFrontOnly(true);
        QCOMPARE(filter.rowCount(), 2);
        filter.setFrontOnly(false);
        QCOMPARE(filter.rowCount(), 20);
        // Sorting by the raw numbers, not the formatted text ("$11.0M" < "$2.0M" as strings).
        filter.sort(PlanTableModel::CostColumn, Qt::AscendingOrder);
        double last = -1;
        for (int r = 0; r < filter.rowCount(); ++r) {
            const double cost = filter.index(r, PlanTableModel::CostColumn).data(PlanTableModel::SortRole).toDouble();
            QVERIFY(cost >= last);
            last = cost;
        }
        // Rows arriving while sorted (and through the proxy) land in order.
        auto more = sampleRows(40);
        more.erase(more.begin(), more.begin() + 20);
        model.appendRows(more);
        QCOMPARE(filter.rowCount(), 40);
        last = -1;
        for (int r = 0; r < filter.rowCount(); ++r) {
            const double cost = filter.index(r, PlanTableModel::CostColumn).data(PlanTableModel::SortRole).toDouble();
            QVERIFY2(cost >= last, qPrintable(QStringLiteral("row %1").arg(r)));
            last = cost;
        }
        // Filtered and sorted at once.
        QVERIFY(filter.setFilterText(QStringLiteral("tp<=2")).isEmpty());
        model.appendRows(sampleRows(0));
        last = -1;
        for (int r = 0; r < filter.rowCount(); ++r) {
            QVERIFY(model.planRow(model.idAt(filter.mapToSource(filter.index(r, 0)).row())).plan.tp <= 2);
            const double cost = filter.index(r, PlanTableModel::CostColumn).data(PlanTableModel::SortRole).toDouble();
            QVERIFY(cost >= last);
            last = cost;
        }
    }

    void sortingWhileRowsStreamIn()
    {
        PlanTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendRows(sampleRows(30));
        // A persistent index (what a view's selection holds) follows its plan through every re-sort.
        const QPersistentModelIndex tracked = model.index(7, PlanTableModel::GpuColumn);
        const int trackedId = model.idAt(7);
        model.sort(PlanTableModel::CostColumn, Qt::DescendingOrder);
        auto checkSorted = [&] {
            for (int r = 1; r < model.rowCount(); ++r) {
                QVERIFY(model.planRow(model.idAt(r - 1)).cost_usd >= model.planRow(model.idAt(r)).cost_usd);
            }
            for (int id = 0; id < model.rowCount(); ++id) {
                QCOMPARE(model.idAt(model.modelRowOf(id)), id);
            }
        };
        checkSorted();
        QCOMPARE(model.idAt(tracked.row()), trackedId);
        auto more = sampleRows(60);
        more.erase(more.begin(), more.begin() + 30);
        model.appendRows(more); // merged into the order as they arrive
        checkSorted();
        QCOMPARE(model.rowCount(), 60);
        QCOMPARE(model.idAt(tracked.row()), trackedId);
        model.sort(PlanTableModel::GpuColumn, Qt::AscendingOrder);
        QVERIFY(model.index(0, PlanTableModel::GpuColumn).data().toString() <= model.index(59, PlanTableModel::GpuColumn).data().toString());
        model.sort(-1); // back to arrival order
        QCOMPARE(model.idAt(0), 0);
        QCOMPARE(model.idAt(59), 59);
    }

    void rejectModel()
    {
        RejectModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ExploreResult result;
        result.rejected[static_cast<std::size_t>(RejectReason::OutOfMemory)] = 1234;
        result.example[static_cast<std::size_t>(RejectReason::OutOfMemory)] = Diagnostic{"plan", "stage 0 needs 90 GiB"};
        result.rejected[static_cast<std::size_t>(RejectReason::TpSpansNodes)] = 5;
        model.setResult(result);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.totalRejected(), std::uint64_t(1239));
        QCOMPARE(model.data(model.index(1, RejectModel::CountColumn)).toString(), QStringLiteral("1,234"));
        QVERIFY(model.data(model.index(1, RejectModel::ExampleColumn)).toString().contains(QStringLiteral("90 GiB")));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void formatting()
    {
        QCOMPARE(formatCount(1234567), QStringLiteral("1,234,567"));
        QCOMPARE(formatDollars(6.3e6), QStringLiteral("$6.3M"));
        QCOMPARE(formatDollars(412500), QStringLiteral("$412.5k"));
        QCOMPARE(formatSeconds(0.0123), QStringLiteral("12.30 ms"));
        QCOMPARE(formatSeconds(4.2), QStringLiteral("4.200 s"));
        QCOMPARE(formatTokens(270e9), QStringLiteral("270B"));
        QCOMPARE(formatTokens(15.6e12), QStringLiteral("15.6T"));
        QCOMPARE(formatDuration(3840), QStringLiteral("1 h 04 min"));
    }

    void fieldParsing_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("ok");
        QTest::addColumn<QString>("error");
        QTest::newRow("number") << QStringLiteral("105") << true << QString();
        QTest::newRow("spaces") << QStringLiteral(" 24 ") << true << QString();
        QTest::newRow("word") << QStringLiteral("abc") << false << QStringLiteral("must be a whole number, not \"abc\"");
        QTest::newRow("fraction") << QStringLiteral("2.5") << false << QStringLiteral("must be a whole number, not \"2.5\"");
        QTest::newRow("zero") << QStringLiteral("0") << false << QStringLiteral("must be at least 1");
        QTest::newRow("empty") << QString() << false << QStringLiteral("is required");
        QTest::newRow("huge") << QStringLiteral("100001") << false << QStringLiteral("must be at most 100000");
    }
    void fieldParsing()
    {
        QFETCH(QString, text);
        QFETCH(bool, ok);
        QFETCH(QString, error);
        const auto parsed = fields::parseInt(text, 1, 100000);
        QCOMPARE(parsed.ok(), ok);
        QCOMPARE(parsed.error, error);
    }

    // The editor's training mode and LoRA rank (issue 29): a choice and a text field of the form table.
    void trainingModeFields()
    {
        Scenario s;
        const auto& choices = form::choiceFields();
        const auto mode = std::find_if(choices.begin(), choices.end(), [](const form::ChoiceField& f) { return f.name == u"training.mode"; });
        QVERIFY(mode != choices.end());
        QCOMPARE(mode->itemValues.size(), qsizetype(3));
        QCOMPARE(mode->show(s).toString(), QStringLiteral("pretrain"));
        mode->read(QStringLiteral("lora"), s);
        QVERIFY(s.training.mode == TrainingMode::Lora);
        const auto& texts = form::textFields();
        const auto rank = std::find_if(texts.begin(), texts.end(), [](const form::TextField& f) { return f.name == u"training.lora_rank"; });
        QVERIFY(rank != texts.end());
        QCOMPARE(rank->show(s), QStringLiteral("32"));
        QVERIFY(rank->read(QStringLiteral("16"), s).isEmpty());
        QCOMPARE(s.training.lora_rank, 16);
        QVERIFY(!rank->read(QStringLiteral("0"), s).isEmpty());
    }

    void tokensAndGpuCounts()
    {
        QCOMPARE(*fields::parseTokens(QStringLiteral("270B")).value, 270e9);
        QCOMPARE(*fields::parseTokens(QStringLiteral("2.7e11")).value, 2.7e11);
        QCOMPARE(*fields::parseTokens(QStringLiteral("15 trillion")).value, 15e12);
        QVERIFY(fields::parseTokens(QStringLiteral("lots")).error.contains(QStringLiteral("270B")));
        QVERIFY(!fields::parseTokens(QStringLiteral("0")).ok());

        QCOMPARE(*fields::parseGpuCounts(QStringLiteral("3360")).value, std::vector<int>{3360});
        QCOMPARE(*fields::parseGpuCounts(QStringLiteral("2048, 1024,1024")).value, (std::vector<int>{1024, 2048}));
        QCOMPARE(fields::parseGpuCounts(QStringLiteral("2240-3080:280")).value->size(), std::size_t(4));
        QVERIFY(fields::parseGpuCounts(QStringLiteral("2240-4480")).error.contains(QStringLiteral("needs a step")));
        QVERIFY(fields::parseGpuCounts(QStringLiteral("1-100000:1")).error.contains(QStringLiteral("more than")));
        QVERIFY(fields::parseGpuCounts(QStringLiteral("8, x")).error.contains(QStringLiteral("\"x\"")));
        QCOMPARE(fields::formatGpuCounts({2240, 2520, 2800}), QStringLiteral("2240-2800:280"));
        QCOMPARE(fields::formatGpuCounts({8, 64}), QStringLiteral("8, 64"));
    }

    void ganttMapping_data()
    {
        QTest::addColumn<double>("factor");
        QTest::addColumn<double>("anchorX");
        QTest::newRow("zoom in at centre") << 4.0 << 600.0;
        QTest::newRow("zoom in at left") << 2.0 << 100.0;
        QTest::newRow("zoom in at right") << 10.0 << 1100.0;
        QTest::newRow("zoom out (clamped)") << 0.25 << 600.0;
    }
    void ganttMapping()
    {
        QFETCH(double, factor);
        QFETCH(double, anchorX);
        GanttMapping m;
        m.setViewport(100, 1000);
        m.setExtent(0, 20);
        m.reset();
        QCOMPARE(m.mapTimeToX(0), 100.0);
        QCOMPARE(m.mapTimeToX(20), 1100.0);
        QCOMPARE(m.mapXToTime(600), 10.0);
        const double before = m.mapXToTime(anchorX);
        m.zoomAt(factor, anchorX);
        if (factor > 1) {
            QVERIFY(qAbs(m.mapXToTime(anchorX) - before) < 1e-9); // the time under the cursor stays put
            QVERIFY(qAbs(m.span() - 20 / factor) < 1e-9);
        } else {
            QVERIFY(m.span() <= 20 * 1.04 + 1e-9); // never further out than the data plus margins
        }
        m.panPixels(-1e6); // far right: clamped to the extent
        QVERIFY(m.windowEnd() <= 20 * 1.02 + 1e-9);
        m.panPixels(1e6);
        QVERIFY(m.windowStart() >= -20 * 0.02 - 1e-9);
    }

    void levelOfDetail()
    {
        // 100,000 back-to-back tasks of 1 ms on one row: the whole view must fold into at most a few
        // items per pixel, cover every visible task exactly once, and be fast.
        TimelineRow row;
        const int n = 100000;
        for (int i = 0; i < n; ++i) {
            TimelineBar b;
            b.start = i * 1e-3;
            b.end = b.start + 0.9e-3;
            b.kind = i % 2 ? TaskKind::Backward : TaskKind::Forward;
            row.bars.push_back(b);
            row.max_end.push_back(b.end);
        }
        GanttMapping m;
        m.setViewport(0, 1200);
        m.setExtent(0, n * 1e-3);
        m.reset();
        QElapsedTimer clock;
        clock.start();
        const std::vector<DrawItem> items = visibleItems(row, m);
        const qint64 ms = clock.elapsed();
        QVERIFY2(items.size() <= 1200 / kMinBarPixels + 2, qPrintable(QString::number(items.size())));
        std::uint64_t covered = 0;
        for (const DrawItem& item : items) {
            covered += item.count;
        }
        QCOMPARE(covered, std::uint64_t(n));
        QVERIFY2(ms < 50, qPrintable(QStringLiteral("%1 ms").arg(ms)));
        QVERIFY(items.front().folded() && items.front().mixed);

        // Zoomed in on 10 ms: ten separate, unfolded bars found by bisection.
        m.setWindow(50.0, 50.010);
        const std::vector<DrawItem> zoomed = visibleItems(row, m);
        QVERIFY(zoomed.size() >= 10 && zoomed.size() <= 11);
        for (const DrawItem& item : zoomed) {
            QCOMPARE(item.count, 1u);
            if (item.x0 > 0 && item.x1 < 1200) { // bars cut by the window's edges may be thin
                QVERIFY(item.x1 - item.x0 >= kMinBarPixels);
            }
        }
        QCOMPARE(barAt(row, m, m.mapTimeToX(50.0045)), 50004);
        QCOMPARE(barAt(row, m, m.mapTimeToX(50.00095)), -1); // in a gap, more than 2 px from a bar
    }
};

QTEST_MAIN(TestGuiModels)
#include "tst_gui_models.moc"
