// SPDX-License-Identifier: MIT
// "Launch flags…": the selected-plan panel's button opens a dialog whose Megatron-LM tab holds the plan's
// flags and whose DeepSpeed tab holds a ds_config.json; a refused plan shows its reason, not flags.
#include <QClipboard>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QToolButton>
#include <QtTest>

#include "details_panel.h"
#include "gui_test_support.h"
#include "main_window.h"
#include "models/plan_table_model.h"
#include "models/sweep_runner.h"
#include "views/launch_dialog.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

// GPT-3 175B on 512 A100s: t=4, p=16, d=8, interleaved over 2 virtual stages.
Scenario gpt3()
{
    Scenario s;
    s.model.name = "GPT-3 175B";
    s.model.layers = 96;
    s.model.hidden = 12288;
    s.model.heads = 96;
    s.model.seq_len = 2048;
    s.model.vocab = 51200;
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 512;
    s.cluster.gpus_per_node = 8;
    s.training.global_batch = 1536;
    s.training.tokens = 300e9;
    Plan p;
    p.tp = 4;
    p.pp = 16;
    p.dp = 8;
    p.micro_batch = 1;
    p.schedule = Schedule::Interleaved;
    p.virtual_stages = 2;
    p.recompute = Recompute::Full;
    s.plan = p;
    return s;
}

} // namespace

class TestLaunchDialog : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void dialog_shows_megatron_flags_and_a_deepspeed_config()
    {
        const Scenario s = gpt3();
        LaunchDialog dialog(s, *s.plan, 8);
        QCOMPARE(dialog.tabs()->count(), 2);
        QCOMPARE(dialog.tabs()->tabText(0), QStringLiteral("Megatron-LM"));
        QCOMPARE(dialog.tabs()->tabText(1), QStringLiteral("DeepSpeed"));
        QVERIFY2(dialog.megatronText().contains(QStringLiteral("--tensor-model-parallel-size 4")), qPrintable(dialog.megatronText()));
        QVERIFY(dialog.megatronText().contains(QStringLiteral("--num-layers-per-virtual-pipeline-stage 3")));
        QVERIFY(dialog.megatronText().startsWith(QStringLiteral("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 64")));
        const QJsonObject config = QJsonDocument::fromJson(dialog.deepSpeedConfigText().toUtf8()).object();
        QCOMPARE(config.value(QStringLiteral("gradient_accumulation_steps")).toInt(), 1536 / 8);
        QVERIFY(config.contains(QStringLiteral("activation_checkpointing")));
        QVERIFY(dialog.deepSpeedCommandText().contains(QStringLiteral("--deepspeed_config ds_config.json")));
        const auto warnings = dialog.findChildren<QLabel*>(QStringLiteral("launchWarnings"));
        QCOMPARE(warnings.size(), 2);
        QVERIFY(warnings.front()->text().contains(QStringLiteral("tokenizer")));

        auto* copy = dialog.findChild<QPushButton*>(QStringLiteral("megatronTextCopy"));
        QVERIFY(copy && copy->isEnabled());
        copy->click();
        QCOMPARE(QGuiApplication::clipboard()->text(), dialog.megatronText());
    }

    void refused_plan_shows_the_reason()
    {
        const Scenario s = gpt3();
        Plan p = *s.plan;
        p.tp = 5; // does not divide 96 heads
        p.dp = 512 / (5 * 16);
        LaunchDialog dialog(s, p, 8);
        QVERIFY2(dialog.megatronText().contains(QStringLiteral("plan")), qPrintable(dialog.megatronText()));
        QVERIFY(!dialog.megatronText().contains(QStringLiteral("torchrun")));
        auto* copy = dialog.findChild<QPushButton*>(QStringLiteral("megatronTextCopy"));
        QVERIFY(copy && !copy->isEnabled());
    }

    void details_panel_button_opens_the_dialog()
    {
        DetailsPanel panel;
        QToolButton* button = panel.launchButton();
        QVERIFY(button);
        QVERIFY(!button->isEnabled()); // nothing selected yet
        panel.setLaunchScenario(gpt3());
        QVERIFY(button->isEnabled());
        button->click();
        auto* dialog = panel.findChild<LaunchDialog*>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->megatronText().contains(QStringLiteral("--tensor-model-parallel-size 4")));
        dialog->close();
        panel.clear();
        QVERIFY(!button->isEnabled());
    }

    void selected_plan_in_the_window_exports_its_own_flags()
    {
        MainWindowOptions o;
        o.restoreSession = false;
        o.runOnStart = false;
        o.scenario = test::smallScenario();
        MainWindow w(o);
        QSignalSpy finished(w.sweepRunner(), &SweepRunner::finished);
        w.startSweep();
        QVERIFY(finished.wait(60000));
        int row = -1; // a plan with tensor parallelism, so the flag is not the default
        for (int r = 0; r < w.planModel()->rowCount(); ++r) {
            if (w.planModel()->planRow(r).plan.tp == 2 && w.planModel()->planRow(r).num_gpus == 16) {
                row = r;
            }
        }
        QVERIFY(row >= 0);
        w.selectPlan(row);
        auto* button = w.findChild<QToolButton*>(QStringLiteral("launchFlagsButton"));
        QVERIFY(button && button->isEnabled());
        button->click();
        auto* dialog = w.findChild<LaunchDialog*>();
        QVERIFY(dialog);
        const QString text = dialog->megatronText();
        QVERIFY2(text.contains(QStringLiteral("--tensor-model-parallel-size 2")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("--nproc_per_node 8 --nnodes 2"))); // 16 A100s, 8 per node
        QVERIFY(text.contains(QStringLiteral("--micro-batch-size %1").arg(w.planModel()->planRow(row).plan.micro_batch)));
    }
};

QTEST_MAIN(TestLaunchDialog)
#include "tst_launch_dialog.moc"
