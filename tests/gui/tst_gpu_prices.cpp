// SPDX-License-Identifier: MIT
// One visible price per GPU type (#30): the GPU list showed each profile's list price ("$5.12/h" for the
// A100) while the costs used the scenario's 4.10, and an added B200 was costed at its list price with
// nothing saying so. Now each checked GPU type has one price row showing the price its costs use and
// where it comes from (the profile's list price or the scenario's), and editing it re-costs the sweep.
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QtTest>

#include "details_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "models/format.h"
#include "models/plan_detail_runner.h"
#include "models/plan_table_model.h"
#include "models/profile_catalog.h"
#include "models/sweep_runner.h"
#include "views/check_list.h"
#include "views/field_row.h"
#include "views/scenario_editor.h"
#include "views/timeline_view.h"
#include "vtrain/simulation_result.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

const std::string kA100 = "a100-sxm4-80gb";
const std::string kB200 = "b200-sxm-180gb";

Scenario twoGpuTypes()
{
    Scenario s = test::smallScenario();
    s.cluster.gpu = kA100;
    s.cluster.price_per_gpu_hour = 4.10;
    s.search->gpu = {kA100, kB200};
    return s;
}

double listPrice(const std::string& gpu)
{
    ProfileCatalog catalog;
    return catalog.profile(gpu)->price_usd_per_gpu_hour;
}

// The price per GPU-hour each row was costed at, by GPU type (one value each, or -1 when they differ).
std::map<std::string, double> pricesOf(const PlanTableModel* model)
{
    std::map<std::string, double> prices;
    for (const PlanRow& r : model->rows()) {
        const double price = r.cost_usd / (r.training_days * 24 * r.num_gpus);
        const auto [it, added] = prices.emplace(r.gpu, price);
        if (!added && std::abs(it->second - price) > 1e-9 * price) {
            it->second = -1;
        }
    }
    return prices;
}

void typeAndCommit(QLineEdit* edit, const QString& text)
{
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    if (!text.isEmpty()) {
        QTest::keyClicks(edit, text);
    }
    QTest::keyClick(edit, Qt::Key_Return);
}

QString sourceOf(const ScenarioEditor* editor, const QString& field)
{
    const auto* label = editor->findChild<QLabel*>(field + QStringLiteral(".source"));
    return label ? label->text() : QStringLiteral("(no source label)");
}

} // namespace

class TestGpuPrices : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void eachGpuTypeShowsThePriceItsCostsUse()
    {
        MainWindowOptions o;
        o.restoreSession = false;
        o.runOnStart = false;
        o.scenario = twoGpuTypes();
        MainWindow w(o);
        w.show();
        QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
        w.startSweep();
        QVERIFY(finished.wait(120000));
        const ScenarioEditor* editor = w.editor();
        const QString b200Field = QStringLiteral("cluster.gpu_prices.") + QString::fromStdString(kB200);

        // The GPU list names no price; each checked type has one price row, with its source.
        for (QCheckBox* box : editor->checkList(QStringLiteral("search.gpu"))->findChildren<QCheckBox*>()) {
            QVERIFY2(!box->text().contains(QLatin1Char('$')), qPrintable(box->text()));
        }
        QCOMPARE(editor->fieldRow(QStringLiteral("cluster.price_per_gpu_hour"))->text(), QStringLiteral("4.1"));
        QCOMPARE(sourceOf(editor, QStringLiteral("cluster.price_per_gpu_hour")), QStringLiteral("scenario"));
        FieldRow* b200 = editor->fieldRow(b200Field);
        QVERIFY(b200);
        QVERIFY(b200->text().isEmpty());
        QVERIFY2(b200->lineEdit()->placeholderText().contains(formatDollars(listPrice(kB200))), qPrintable(b200->lineEdit()->placeholderText()));
        QCOMPARE(sourceOf(editor, b200Field), QStringLiteral("list price"));
        QVERIFY(!editor->fieldRow(QStringLiteral("cluster.gpu_prices.h100-sxm5-80gb"))); // unchecked: no row
        // ... and those are the prices the sweep costed.
        auto prices = pricesOf(w.planModel());
        QCOMPARE(prices.size(), std::size_t{2});
        QVERIFY(std::abs(prices[kA100] - 4.10) < 1e-9);
        QVERIFY(std::abs(prices[kB200] - listPrice(kB200)) < 1e-9);

        // Typing B200's price re-costs the sweep: its plans at 3.00, the A100's still at 4.10.
        typeAndCommit(b200->lineEdit(), QStringLiteral("3"));
        QVERIFY(finished.wait(120000));
        QCOMPARE(sourceOf(editor, b200Field), QStringLiteral("scenario"));
        QCOMPARE(editor->scenario()->cluster.gpu_prices.at(kB200), 3.0);
        prices = pricesOf(w.planModel());
        QVERIFY(std::abs(prices[kB200] - 3.0) < 1e-9);
        QVERIFY(std::abs(prices[kA100] - 4.10) < 1e-9);
        // A selected B200 plan is simulated at that price too.
        int b200Row = -1;
        for (int row = 0; row < w.planModel()->rowCount() && b200Row < 0; ++row) {
            b200Row = w.planModel()->planRow(row).gpu == kB200 ? row : -1;
        }
        QVERIFY(b200Row >= 0);
        QSignalSpy detail(w.detailRunner(), &PlanDetailRunner::resultReady);
        w.selectPlan(b200Row);
        QVERIFY(detail.wait(120000));
        QCOMPARE(w.details()->timeline()->result()->price_per_gpu_hour, 3.0);

        // Emptying the A100's price: its list price again, said so, and costed so.
        typeAndCommit(editor->fieldRow(QStringLiteral("cluster.price_per_gpu_hour"))->lineEdit(), QString());
        QVERIFY(finished.wait(120000));
        QCOMPARE(sourceOf(editor, QStringLiteral("cluster.price_per_gpu_hour")), QStringLiteral("list price"));
        QVERIFY(std::abs(pricesOf(w.planModel())[kA100] - listPrice(kA100)) < 1e-9);
    }
};

QTEST_MAIN(TestGpuPrices)
#include "tst_gpu_prices.moc"
