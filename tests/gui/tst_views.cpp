// SPDX-License-Identifier: MIT
// The views on their own: the timeline with 100,000 tasks (structure, hover text, paint time), the
// scenario editor refusing bad input with its reason at the field, the Pareto plot's structure, the
// memory and compare views, and every image export writing a valid file of its format.
#include <cmath>

#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include "gui_test_support.h"
#include "models/plan_dimensions.h"
#include "models/plan_table_model.h"
#include "models/profile_catalog.h"
#include "models/timeline_data.h"
#include "views/check_list.h"
#include "views/compare_view.h"
#include "views/export.h"
#include "views/field_row.h"
#include "views/memory_view.h"
#include "views/pareto_plot.h"
#include "views/scenario_editor.h"
#include "views/timeline_painter.h"
#include "views/timeline_view.h"
#include "vtrain/explorer.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"
#include "vtrain/simulation_result.h"
#include "vtrain/simulator.h"
#include <QCheckBox>
#include <QComboBox>

using namespace vtrain;
using namespace vtrain::ui;

namespace {

// A synthetic iteration: `stages` stages, `perStage` forward/backward tasks each, pipeline sends and a
// gradient reduce, staggered like a pipeline (stage s starts s ms late).
std::shared_ptr<SimulationResult> syntheticResult(int stages, int perStage)
{
    auto r = std::make_shared<SimulationResult>();
    r->plan.pp = stages;
    r->stages.resize(static_cast<std::size_t>(stages));
    double end = 0;
    for (int s = 0; s < stages; ++s) {
        double t = s * 1e-3;
        for (int i = 0; i < perStage; ++i) {
            TimelineTask task;
            task.stage = s;
            task.kind = i % 2 ? TaskKind::Backward : TaskKind::Forward;
            task.micro_batch = i / 2;
            task.layers = 2;
            task.start_s = t;
            task.end_s = t + (i % 2 ? 2e-4 : 1e-4);
            task.tp_comm_s = 1e-5;
            r->timeline.push_back(task);
            TimelineTask send = task;
            send.lane = Lane::Pipeline;
            send.kind = i % 2 ? TaskKind::SendBackward : TaskKind::SendForward;
            send.start_s = task.end_s;
            send.end_s = task.end_s + 2e-5;
            send.tp_comm_s = 0;
            r->timeline.push_back(send);
            t = task.end_s + (i % 10 == 0 ? 5e-4 : 1e-5); // a bubble now and then
        }
        end = std::max(end, t);
    }
    r->iteration_time_s = end;
    r->task_count = r->timeline.size();
    return r;
}

bool fileStartsWith(const QString& path, const QByteArray& prefix)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) && f.read(prefix.size()) == prefix;
}

} // namespace

class TestViews : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void timelineWithAHundredThousandTasks()
    {
        auto result = syntheticResult(8, 6250); // 8 x 6,250 compute tasks + as many sends = 100,000 tasks
        QCOMPARE(result->timeline.size(), std::size_t(100000));
        TimelineView view;
        view.resize(1400, 700);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result);
        QCOMPARE(view.stageCount(), 8);
        // Per stage a compute, a tensor-parallel and a pipeline lane (no data-parallel tasks here).
        QCOMPARE(view.data().rows.size(), std::size_t(24));
        for (const TimelineRow& row : view.data().rows) {
            QVERIFY(std::is_sorted(row.bars.begin(), row.bars.end(), [](const TimelineBar& a, const TimelineBar& b) { return a.start < b.start; }));
            if (row.lane == TimelineLane::Compute) {
                QVERIFY(!row.idle.empty()); // the bubbles
            }
        }
        // Painting the whole iteration, and zoomed in, stays well inside a frame budget.
        QImage image(1400, 700, QImage::Format_ARGB32_Premultiplied);
        QElapsedTimer clock;
        for (double zoom : {1.0, 50.0, 2000.0}) {
            view.resetZoom();
            view.zoomBy(zoom);
            clock.start();
            QPainter painter(&image);
            view.render(painter, image.size(), QStringLiteral("test"));
            painter.end();
            const qint64 ms = clock.elapsed();
            qInfo("zoom %gx: %lld ms", zoom, ms);
            QVERIFY2(ms < 250, qPrintable(QStringLiteral("%1 ms at zoom %2").arg(ms).arg(zoom)));
        }
        // Wheel zoom and drag pan change the visible window.
        view.resetZoom();
        const double span = view.mapping().span();
        QWheelEvent wheel(QPointF(700, 100), view.viewport()->mapToGlobal(QPointF(700, 100)), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        QVERIFY(view.mapping().span() < span * 0.7);
        const double start = view.mapping().windowStart();
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, QPoint(700, 100));
        QTest::mouseMove(view.viewport(), QPoint(500, 100));
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, QPoint(500, 100));
        QVERIFY(view.mapping().windowStart() > start); // dragged left: later times come into view
    }

    void timelineHoverDescribesTasks()
    {
        auto result = syntheticResult(2, 10);
        TimelineView view;
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setResult(result);
        // Find stage 0's first forward task on screen.
        const TimelineBar& first = view.data().rows.front().bars.front();
        const int x = qRound(view.mapping().mapTimeToX((first.start + first.end) / 2));
        const QString text = view.describeAt(QPoint(x, 26 + 5)); // 26 px ruler, then stage 0's compute lane
        QVERIFY2(text.contains(QStringLiteral("forward")) && text.contains(QStringLiteral("micro-batch 0")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("→")));
        // In a bubble the hover says so.
        const auto& [idleStart, idleEnd] = view.data().rows.front().idle.front();
        const QString idle = view.describeAt(QPoint(qRound(view.mapping().mapTimeToX((idleStart + idleEnd) / 2)), 31));
        QVERIFY2(idle.contains(QStringLiteral("bubble")), qPrintable(idle));
    }

    void editorRefusesBadInputWithItsReason_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("reason");
        QTest::newRow("layers not a number") << QStringLiteral("model.layers") << QStringLiteral("abc") << QStringLiteral("must be a whole number");
        QTest::newRow("layers zero") << QStringLiteral("model.layers") << QStringLiteral("0") << QStringLiteral("must be at least 1");
        QTest::newRow("heads not dividing hidden") << QStringLiteral("model.heads") << QStringLiteral("100") << QStringLiteral("must divide hidden");
        QTest::newRow("kv heads not dividing heads")
            << QStringLiteral("model.kv_heads") << QStringLiteral("7") << QStringLiteral("must divide heads");
        QTest::newRow("range without step") << QStringLiteral("cluster.num_gpus") << QStringLiteral("8-64") << QStringLiteral("needs a step");
        QTest::newRow("tokens") << QStringLiteral("training.tokens") << QStringLiteral("many") << QStringLiteral("such as 270B");
        QTest::newRow("negative price") << QStringLiteral("cluster.price_per_gpu_hour") << QStringLiteral("-3") << QStringLiteral("more than 0");
        QTest::newRow("empty batch") << QStringLiteral("training.global_batch") << QString() << QStringLiteral("is required");
    }
    void editorRefusesBadInputWithItsReason()
    {
        QFETCH(QString, field);
        QFETCH(QString, input);
        QFETCH(QString, reason);
        ScenarioEditor editor;
        editor.setProfiles({QStringLiteral("a100-sxm4-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        editor.setScenario(test::smallScenario());
        editor.show();
        QVERIFY(editor.isValid());
        QSignalSpy edited(&editor, &ScenarioEditor::scenarioEdited);
        QSignalSpy validity(&editor, &ScenarioEditor::validityChanged);
        QLineEdit* edit = editor.fieldRow(field)->lineEdit();
        QVERIFY(edit);
        edit->selectAll();
        if (input.isEmpty()) {
            QTest::keyClick(edit, Qt::Key_Delete);
        } else {
            // Typing goes through valid prefixes ("1" of "100"); what counts is the last keystroke.
            QTest::keyClicks(edit, input.chopped(1));
            edited.clear();
            QTest::keyClick(edit, input.back().toLatin1());
        }
        QCOMPARE(edit->text(), input);
        QVERIFY(!editor.isValid());
        QVERIFY(!editor.scenario());
        QCOMPARE(edited.count(), 0); // nothing invalid leaves the editor
        QVERIFY(!validity.isEmpty() && !validity.last().at(0).toBool());
        QVERIFY2(editor.errorOf(field).contains(reason), qPrintable(editor.errorOf(field)));
        // The reason is on screen, under the field.
        auto* label = editor.findChild<QLabel*>(field + QStringLiteral(".error"));
        QVERIFY(label && label->isVisible() && label->text().contains(reason));
        // Fixing it makes the scenario valid again and sends it.
        edit->selectAll();
        QTest::keyClick(edit, Qt::Key_Delete);
        const Scenario s = test::smallScenario();
        const QString good = field == u"model.layers"            ? QString::number(s.model.layers)
                             : field == u"model.heads"           ? QString::number(s.model.heads)
                             : field == u"model.kv_heads"        ? QString()
                             : field == u"cluster.num_gpus"      ? QStringLiteral("8-64:8")
                             : field == u"training.tokens"       ? QStringLiteral("7B")
                             : field == u"training.global_batch" ? QStringLiteral("256")
                                                                 : QStringLiteral("2.5");
        QTest::keyClicks(edit, good);
        QCOMPARE(edited.count(), 0);           // typed, not yet committed: nothing leaves the editor
        QTest::keyClick(edit, Qt::Key_Return); // Enter commits (as leaving the field does)
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QVERIFY(editor.errorOf(field).isEmpty());
        // Sent once if it differs from what was loaded; a commit that changes nothing sends nothing.
        ScenarioEditor loaded;
        loaded.setProfiles({QStringLiteral("a100-sxm4-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        loaded.setScenario(test::smallScenario());
        const bool changed = scenario_to_json(*loaded.scenario()) != scenario_to_json(*editor.scenario());
        QCOMPARE(edited.count(), changed ? 1 : 0);
    }

    void editorReadsAndWritesTheSearch()
    {
        ScenarioEditor editor;
        editor.setProfiles({QStringLiteral("a100-sxm4-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        editor.setScenario(test::smallScenario());
        const Scenario s = *editor.scenario();
        QCOMPARE(s.search->tp, (std::vector<int>{1, 2}));
        QCOMPARE(s.search->num_gpus, (std::vector<int>{8, 16}));
        QCOMPARE(editor.estimatedPlans(), std::uint64_t(16));
        // Unchecking every tensor-parallel width is refused at that list.
        CheckList* tp = editor.checkList(QStringLiteral("search.tp"));
        QSignalSpy edited(&editor, &ScenarioEditor::scenarioEdited);
        for (QCheckBox* box : tp->findChildren<QCheckBox*>()) {
            if (box->isChecked()) {
                box->click();
            }
        }
        QVERIFY(!editor.isValid());
        QCOMPARE(editor.errorOf(QStringLiteral("search.tp")), QStringLiteral("check at least one"));
        // Presets load whole scenarios.
        editor.loadPreset(QStringLiteral("llama3-70b"));
        QVERIFY(editor.isValid());
        QCOMPARE(editor.scenario()->model.kv_heads, 8);
        QCOMPARE(editor.scenario()->model.activation, FfnActivation::SwiGlu);
        QCOMPARE(editor.scenario()->cluster.gpu, std::string("h100-sxm5-80gb"));
    }

    // The MoE group, attention kind, precision and FP8 recipe, and the new search lists: each edit reaches
    // the scenario the editor sends, and bad values are refused with their reason.
    void editorEditsTodaysFields()
    {
        ScenarioEditor editor;
        editor.setProfiles({QStringLiteral("a100-sxm4-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        editor.setScenario(test::smallScenario());
        editor.show();
        QVERIFY(editor.isValid());
        QCOMPARE(editor.scenario()->model.moe.experts, 0);
        QSignalSpy edited(&editor, &ScenarioEditor::scenarioEdited);
        auto type = [&editor](const char* field, const QString& text) {
            QLineEdit* edit = editor.fieldRow(QLatin1String(field))->lineEdit();
            edit->selectAll();
            QTest::keyClick(edit, Qt::Key_Delete);
            QTest::keyClicks(edit, text);
            QTest::keyClick(edit, Qt::Key_Return);
        };
        type("model.moe.experts", QStringLiteral("8"));
        type("model.moe.top_k", QStringLiteral("2"));
        type("model.moe.expert_ffn_hidden", QStringLiteral("1024"));
        type("model.moe.shared_experts", QStringLiteral("1"));
        type("model.moe.first_dense_layers", QStringLiteral("2"));
        type("model.moe.load_imbalance", QStringLiteral("1.2"));
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QVERIFY(edited.count() >= 6);
        Scenario s = *editor.scenario();
        QCOMPARE(s.model.moe.experts, 8);
        QCOMPARE(s.model.moe.top_k, 2);
        QCOMPARE(s.model.moe.expert_ffn_hidden, 1024);
        QCOMPARE(s.model.moe.shared_experts, 1);
        QCOMPARE(s.model.moe.first_dense_layers, 2);
        QCOMPARE(s.model.moe.load_imbalance, 1.2);

        // Refused with the reason at the field: below-mean imbalance (ours), top-k above experts (core's rule).
        type("model.moe.load_imbalance", QStringLiteral("0.5"));
        QVERIFY(!editor.isValid());
        QVERIFY2(editor.errorOf(QStringLiteral("model.moe.load_imbalance")).contains(QStringLiteral("at least 1")),
                 qPrintable(editor.errorOf(QStringLiteral("model.moe.load_imbalance"))));
        type("model.moe.load_imbalance", QString());
        type("model.moe.top_k", QStringLiteral("9"));
        QVERIFY(!editor.isValid());
        QVERIFY2(editor.errorOf(QStringLiteral("model.moe.top_k")).contains(QStringLiteral("must not exceed experts")),
                 qPrintable(editor.errors().join(QLatin1Char('\n'))));
        type("model.moe.top_k", QStringLiteral("2"));
        QVERIFY(editor.isValid());

        // Token dropping: a capacity factor, then padding to it (the box shows with a capacity factor only).
        auto* pad = qobject_cast<QCheckBox*>(editor.choice(QStringLiteral("model.moe.pad_to_capacity")));
        QVERIFY(pad);
        QVERIFY(!pad->isChecked());
        QVERIFY(!pad->isVisibleTo(&editor));
        type("model.moe.capacity_factor", QStringLiteral("1.25"));
        QVERIFY(pad->isVisibleTo(&editor));
        pad->click();
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QVERIFY(!editor.scenario()->model.moe.dropless);
        QCOMPARE(editor.scenario()->model.moe.capacity_factor, 1.25);
        QVERIFY(editor.scenario()->model.moe.pad_to_capacity);
        // Back to dropless: nothing to pad to, so the box hides and is not used (as the MLA ranks without MLA).
        type("model.moe.capacity_factor", QString());
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QVERIFY(editor.scenario()->model.moe.dropless);
        QVERIFY(!editor.scenario()->model.moe.pad_to_capacity);
        QVERIFY(!pad->isVisibleTo(&editor));
        pad->click();

        // Attention kind and MLA ranks, precision and FP8 recipe (combo boxes commit on activation).
        auto choose = [&editor](const char* field, const QString& value) {
            auto* combo = qobject_cast<QComboBox*>(editor.choice(QLatin1String(field)));
            QVERIFY(combo);
            const int index = combo->findData(value);
            QVERIFY(index >= 0);
            combo->setCurrentIndex(index);
            Q_EMIT combo->activated(index);
        };
        choose("model.attention", QStringLiteral("mla"));
        type("model.mla.kv_lora_rank", QStringLiteral("256"));
        choose("training.precision", QStringLiteral("fp8"));
        choose("training.fp8_recipe", QStringLiteral("blockwise"));
        choose("training.cuda_graphs", QStringLiteral("full_iteration"));
        choose("training.pipeline_runtime", QStringLiteral("pytorch"));
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        s = *editor.scenario();
        QCOMPARE(s.model.attention, AttentionKind::Mla);
        QCOMPARE(s.model.mla.kv_lora_rank, 256);
        QCOMPARE(s.training.precision, Precision::Fp8);
        QCOMPARE(s.training.fp8_recipe, Fp8Recipe::Blockwise);
        QCOMPARE(s.training.cuda_graphs, CudaGraphs::FullIteration);
        QVERIFY(s.training.pipeline_runtime == PipelineRuntime::PyTorch);
        QCOMPARE(s.search->precision, std::vector<Precision>{Precision::Fp8}); // a single precision to explore follows the choice

        // The new search axes: checked values reach the search block (and count in the estimate).
        const std::uint64_t before = editor.estimatedPlans();
        const int sent = static_cast<int>(edited.count());
        editor.checkList(QStringLiteral("search.cp"))->box(2)->click();
        editor.checkList(QStringLiteral("search.ep"))->box(8)->click();
        editor.checkList(QStringLiteral("search.precision"))->box(QStringLiteral("bf16"))->click(); // fp8 followed the choice above
        editor.checkList(QStringLiteral("search.moe_overlap"))->box(true)->click();
        editor.checkList(QStringLiteral("search.tp_overlap"))->box(true)->click();
        editor.checkList(QStringLiteral("search.etp"))->box(1)->click();
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QCOMPARE(static_cast<int>(edited.count()), sent + 6); // every click is an edit, though the file form may not show it
        s = *editor.scenario();
        QCOMPARE(s.search->cp, (std::vector<int>{1, 2}));
        QCOMPARE(s.search->ep, (std::vector<int>{1, 8}));
        QCOMPARE(s.search->etp, (std::vector<int>{0, 1}));
        QCOMPARE(s.search->precision, (std::vector<Precision>{Precision::Bf16, Precision::Fp8}));
        QCOMPARE(s.search->moe_overlap, (std::vector<bool>{false, true}));
        QCOMPARE(s.search->tp_overlap, (std::vector<bool>{false, true}));
        QCOMPARE(editor.estimatedPlans(), before * 64);
        // ZeRO-3 is offered beside 0-2.
        QVERIFY(editor.checkList(QStringLiteral("search.zero_stage"))->box(3));

        // Back to a dense model: expert parallelism above 1 is refused at its list.
        type("model.moe.experts", QString());
        QVERIFY(!editor.isValid());
        QVERIFY(editor.errorOf(QStringLiteral("search.ep")).contains(QStringLiteral("routed experts")));
    }

    // #14, #15, #17: the plan's schedule (DualPipe included), rank order, offload and recompute modules, the
    // LatentMoE width, and the search's rank order, DP overlap and offload lists are editable; what is
    // edited is in the scenario the editor sends, survives a trip through the scenario JSON, and a fresh
    // editor loading that JSON shows the same choices.
    void editorEditsPlanAndNewAxesRoundTrip()
    {
        const auto loaded = load_scenario(VTRAIN_SOURCE_DIR "/examples/deepseek-v3-671b-h800.json");
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.first_error().c_str());
        ScenarioEditor editor;
        editor.setProfiles({QStringLiteral("h800-sxm5-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        editor.setScenario(loaded.value());
        editor.show();
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        // The file's plan shows: DualPipe, the three recompute modules.
        QVERIFY(editor.findChild<QWidget*>(QStringLiteral("planGroup"))->isVisible());
        auto* schedule = qobject_cast<QComboBox*>(editor.choice(QStringLiteral("plan.schedule")));
        QVERIFY(schedule);
        QCOMPARE(schedule->currentData().toString(), QStringLiteral("dualpipe"));
        auto box = [&editor](const char* name) { return qobject_cast<QCheckBox*>(editor.choice(QLatin1String(name))); };
        QVERIFY(box("plan.recompute_modules.layernorm")->isChecked());
        QVERIFY(box("plan.recompute_modules.mla_up_proj")->isChecked());
        QVERIFY(box("plan.recompute_modules.moe_act")->isChecked());
        QVERIFY(box("plan.overlap_grad_reduce")->isChecked());
        QVERIFY(!box("plan.offload_optimizer")->isChecked());

        QSignalSpy edited(&editor, &ScenarioEditor::scenarioEdited);
        auto type = [&editor](const char* field, const QString& text) {
            QLineEdit* edit = editor.fieldRow(QLatin1String(field))->lineEdit();
            edit->selectAll();
            QTest::keyClick(edit, Qt::Key_Delete);
            QTest::keyClicks(edit, text);
            QTest::keyClick(edit, Qt::Key_Return);
        };
        auto choose = [&editor](const char* field, const QString& value) {
            auto* combo = qobject_cast<QComboBox*>(editor.choice(QLatin1String(field)));
            QVERIFY(combo);
            const int index = combo->findData(value);
            QVERIFY2(index >= 0, qPrintable(value));
            combo->setCurrentIndex(index);
            Q_EMIT combo->activated(index);
        };
        // A rank order the plan cannot use (pipeline neighbours 64 apart in expert layers) leaves the plan out,
        // and the editor says why; a legal one brings it back.
        choose("plan.rank_order", QStringLiteral("tp-cp-ep-pp-dp"));
        QVERIFY(editor.isValid());
        QVERIFY(!editor.scenario()->plan.has_value());
        const QString status = editor.findChild<QLabel*>(QStringLiteral("editorStatus"))->text();
        QVERIFY2(status.contains(QStringLiteral("no longer fits")) && status.contains(QStringLiteral("pipeline group")), qPrintable(status));
        choose("plan.rank_order", QStringLiteral("tp-dp-cp-ep-pp"));
        // Edits keep the cluster at the plan's 2,048 GPUs although the search lists 512 first.
        QCOMPARE(editor.scenario()->cluster.num_gpus, 2048);
        QVERIFY(editor.scenario()->plan.has_value());
        box("plan.recompute_modules.layernorm")->click();
        box("plan.offload_optimizer")->click();
        type("plan.offload_activations", QStringLiteral("0.5"));
        type("model.moe.latent_size", QStringLiteral("1024"));
        // The search: DualPipe beside 1F1B, both rank orders, DP overlap off and on, both offloads.
        editor.checkList(QStringLiteral("search.schedule"))->setChecked({QStringLiteral("1f1b"), QStringLiteral("dualpipe")});
        Q_EMIT editor.checkList(QStringLiteral("search.schedule"))->edited();
        editor.checkList(QStringLiteral("search.rank_order"))->box(QStringLiteral("tp-cp-ep-pp-dp"))->click();
        editor.checkList(QStringLiteral("search.overlap_grad_reduce"))->box(false)->click();
        editor.checkList(QStringLiteral("search.offload_optimizer"))->box(true)->click();
        editor.checkList(QStringLiteral("search.offload_activations"))->box(0.5)->click();
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        QCOMPARE(static_cast<int>(edited.count()), 11); // every edit sent

        const Scenario s = *editor.scenario();
        QVERIFY2(s.plan.has_value(), "the edited plan still fits and is kept");
        QCOMPARE(s.plan->schedule, Schedule::DualPipe);
        QCOMPARE(QString::fromStdString(to_string(s.plan->rank_order)), QStringLiteral("tp-dp-cp-ep-pp"));
        QCOMPARE(s.plan->recompute_modules, unsigned(kRecomputeMlaUpProj | kRecomputeMoeAct));
        QVERIFY(s.plan->offload_optimizer);
        QCOMPARE(s.plan->offload_activations, 0.5);
        QCOMPARE(s.model.moe.latent_size, 1024);
        QCOMPARE(s.search->schedule, (std::vector<Schedule>{Schedule::OneFOneB, Schedule::DualPipe}));
        QCOMPARE(s.search->rank_order.size(), std::size_t(2)); // the loaded plan's order (checked on load) and the clicked one
        QCOMPARE(QString::fromStdString(to_string(s.search->rank_order[0])), QStringLiteral("tp-cp-ep-dp-pp"));
        QCOMPARE(QString::fromStdString(to_string(s.search->rank_order[1])), QStringLiteral("tp-cp-ep-pp-dp"));
        QCOMPARE(s.search->overlap_grad_reduce, (std::vector<bool>{false, true}));
        QCOMPARE(s.search->offload_optimizer, (std::vector<bool>{false, true}));
        QCOMPARE(s.search->offload_activations, (std::vector<double>{0.0, 0.5}));

        // Saved and read back: the same scenario, and a fresh editor shows the same choices.
        const nlohmann::json saved = scenario_to_json(s);
        const auto reread = scenario_from_json(nlohmann::json::parse(saved.dump()));
        QVERIFY2(reread.ok(), reread.ok() ? "" : reread.first_error().c_str());
        QCOMPARE(QString::fromStdString(scenario_to_json(reread.value()).dump()), QString::fromStdString(saved.dump()));
        QCOMPARE(reread.value().plan->rank_order, s.plan->rank_order);
        QCOMPARE(reread.value().search->rank_order, s.search->rank_order);
        QCOMPARE(reread.value().search->offload_activations, s.search->offload_activations);
        ScenarioEditor again;
        again.setProfiles({QStringLiteral("h800-sxm5-80gb"), QStringLiteral("h100-sxm5-80gb")}, {});
        again.setScenario(reread.value());
        QVERIFY(again.isValid());
        QCOMPARE(qobject_cast<QComboBox*>(again.choice(QStringLiteral("plan.rank_order")))->currentData().toString(),
                 QStringLiteral("tp-dp-cp-ep-pp"));
        QCOMPARE(qobject_cast<QComboBox*>(again.choice(QStringLiteral("plan.schedule")))->currentData().toString(), QStringLiteral("dualpipe"));
        QVERIFY(!qobject_cast<QCheckBox*>(again.choice(QStringLiteral("plan.recompute_modules.layernorm")))->isChecked());
        QCOMPARE(again.fieldRow(QStringLiteral("plan.offload_activations"))->text(), QStringLiteral("0.5"));
        QCOMPARE(again.fieldRow(QStringLiteral("model.moe.latent_size"))->text(), QStringLiteral("1024"));
        QCOMPARE(again.checkList(QStringLiteral("search.offload_activations"))->checkedValues(), (QVariantList{0.0, 0.5}));
        QCOMPARE(again.checkList(QStringLiteral("search.schedule"))->checkedValues(),
                 (QVariantList{QStringLiteral("1f1b"), QStringLiteral("dualpipe")}));
        QCOMPARE(QString::fromStdString(scenario_to_json(*again.scenario()).dump()), QString::fromStdString(saved.dump()));
        // The plan summary the table, tooltips and details show names them.
        const QString summary = planSummary(*s.plan);
        QVERIFY2(summary.contains(QStringLiteral("DualPipe")) && summary.contains(QStringLiteral("ranks tp-dp-cp-ep-pp")) &&
                     summary.contains(QStringLiteral("optimizer offload")) && summary.contains(QStringLiteral("50% activations offloaded")) &&
                     summary.contains(QStringLiteral("recompute MLA up-proj, expert act")),
                 qPrintable(summary));

        // Refused with the reason: a share above 1, a latent wider than the model.
        type("plan.offload_activations", QStringLiteral("2"));
        QVERIFY(!editor.isValid());
        QVERIFY(editor.errorOf(QStringLiteral("plan.offload_activations")).contains(QStringLiteral("at most 1")));
        type("plan.offload_activations", QString());
        type("model.moe.latent_size", QStringLiteral("9000"));
        QVERIFY(!editor.isValid());
        QVERIFY2(editor.errorOf(QStringLiteral("model.moe.latent_size")).contains(QStringLiteral("must not exceed hidden")),
                 qPrintable(editor.errors().join(QLatin1Char('\n'))));
        // A scenario without a plan hides the plan group.
        Scenario noPlan = test::smallScenario();
        noPlan.plan.reset();
        again.setScenario(noPlan);
        QVERIFY(again.findChild<QWidget*>(QStringLiteral("planGroup"))->isHidden());
    }

    // Every preset of today's workloads loads into the editor as a valid scenario and its sweep finds
    // plans that fit; the MoE ones keep their experts.
    void todaysPresetsLoadAndSweep_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<int>("experts");
        for (const auto& [id, experts] : std::vector<std::pair<const char*, int>>{{"deepseek-v3-671b", 256},
                                                                                  {"qwen3-235b-a22b", 128},
                                                                                  {"qwen3-30b-a3b", 128},
                                                                                  {"gpt-oss-120b", 128},
                                                                                  {"mixtral-8x22b", 8},
                                                                                  {"nemotron-3-nano-30b-a3b", 128},
                                                                                  {"llama3.1-405b-as-trained", 0},
                                                                                  {"llama3-70b-b200-fp8", 0},
                                                                                  {"llama3-8b-h100-fsdp", 0}}) {
            QTest::newRow(id) << QString::fromLatin1(id) << experts;
        }
    }
    void todaysPresetsLoadAndSweep()
    {
        QFETCH(QString, id);
        QFETCH(int, experts);
        ProfileCatalog catalog;
        ScenarioEditor editor;
        editor.setProfiles(catalog.ids(), {});
        QVERIFY(editor.presetBox()->findData(id) > 0);
        editor.loadPreset(id);
        QVERIFY2(editor.isValid(), qPrintable(editor.errors().join(QLatin1Char('\n'))));
        const Scenario s = *editor.scenario();
        QCOMPARE(s.model.moe.experts, experts);
        QVERIFY(s.model.name.size() > 0);
        QString error;
        const auto profiles = catalog.profilesFor(s, error);
        QVERIFY2(!profiles.empty(), qPrintable(error));
        RunControl control;
        const auto result = explore(s, profiles, ExploreOptions{}, control);
        QVERIFY2(result.ok(), result.ok() ? "" : result.first_error().c_str());
        QVERIFY2(result.value().feasible > 0,
                 qPrintable(QStringLiteral("%1 of %2 plans feasible").arg(result.value().feasible).arg(result.value().total)));
        QVERIFY(!result.value().front.empty());
    }

    // Expert all-to-all and context-parallel traffic get lanes of their own, one slice per layer, with
    // legend entries; a real MoE simulation (Qwen3 30B-A3B at ep 8) reports expert traffic that lands there.
    void timelineDrawsExpertAndContextLanes()
    {
        auto r = syntheticResult(2, 4);
        for (TimelineTask& t : r->timeline) {
            if (t.lane == Lane::Compute) {
                t.ep_comm_s = 4e-5;
                t.cp_comm_s = 2e-5;
            }
        }
        const TimelineData data = TimelineData::fromResult(*r);
        std::size_t expertBars = 0;
        std::size_t contextBars = 0;
        for (const TimelineRow& row : data.rows) {
            for (const TimelineBar& b : row.bars) {
                if (row.lane == TimelineLane::Expert) {
                    ++expertBars;
                    QCOMPARE_LE(std::abs((b.end - b.start) - 2e-5), 1e-12); // 4e-5 over the task's 2 layers
                } else if (row.lane == TimelineLane::Context) {
                    ++contextBars;
                }
            }
        }
        QCOMPARE(expertBars, std::size_t(2 * 4 * 2)); // stages x tasks x layers
        QCOMPARE(contextBars, std::size_t(2 * 4 * 2));
        QStringList legend;
        for (const LegendEntry& e : timelineLegend(data)) {
            legend << e.name;
        }
        QVERIFY2(legend.contains(QStringLiteral("EP all-to-all")) && legend.contains(QStringLiteral("CP comm")), qPrintable(legend.join(u',')));

        const Scenario moe = presetScenario(QStringLiteral("qwen3-30b-a3b")).value();
        ProfileCatalog catalog;
        const auto profile = catalog.profile(moe.cluster.gpu);
        QVERIFY(profile);
        const auto simulated = simulate(moe, *moe.plan, *profile);
        QVERIFY2(simulated.ok(), simulated.ok() ? "" : simulated.first_error().c_str());
        double ep = 0;
        for (const TimelineTask& t : simulated.value().timeline) {
            ep += t.ep_comm_s;
        }
        QVERIFY(ep > 0);
        const TimelineData real = TimelineData::fromResult(simulated.value());
        QVERIFY(std::any_of(real.rows.begin(), real.rows.end(),
                            [](const TimelineRow& row) { return row.lane == TimelineLane::Expert && !row.bars.empty(); }));
    }

    void paretoPlotStructure()
    {
        PlanTableModel model;
        ParetoPlot plot;
        plot.resize(800, 500);
        plot.setModel(&model);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        std::vector<PlanRow> rows;
        for (int i = 0; i < 50; ++i) {
            PlanRow r;
            r.index = static_cast<std::uint64_t>(i);
            r.plan.tp = 1 << (i % 3);
            r.training_days = 10 + i;
            r.cost_usd = 1e6 * (60 - i) + 1e5 * (i % 7);
            rows.push_back(r);
        }
        model.appendRows(rows);
        plot.flush();
        QCOMPARE(plot.pointCount(), 50);
        QCOMPARE(plot.categoryCount(), 3); // tp 1, 2, 4
        model.setFront({0, 10, 20});
        QCOMPARE(plot.frontPointCount(), 3);
        plot.setColorDimension(ColorDimension::GpuCount);
        QCOMPARE(plot.categoryCount(), 1);
        QCOMPARE(plot.pointCount(), 50);
        plot.setLogAxes(true);
        QCOMPARE(plot.customPlot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        // Clicking a point reports its row.
        QSignalSpy clicked(&plot, &ParetoPlot::rowClicked);
        const QPoint at = plot.pixelOfRow(20);
        QTest::mouseClick(plot.customPlot(), Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.at(0).at(0).toInt(), 20);
        QCOMPARE(plot.selectedRow(), 20);
        QVERIFY(plot.selectedBand().isEmpty()); // these rows carry no uncertainty band
        // A row with a band: its segment spans the band's days and costs (both scale with the iteration).
        PlanRow banded = rows[5];
        banded.index = 50;
        banded.iteration_time_s = 10;
        banded.iteration_time_low_s = 9;
        banded.iteration_time_high_s = 12;
        model.appendRows({banded});
        plot.flush();
        plot.setSelectedRow(50);
        const QVector<QPointF> band = plot.selectedBand();
        QCOMPARE(band.size(), 2);
        QCOMPARE(band[0].x(), banded.training_days * 0.9);
        QCOMPARE(band[1].x(), banded.training_days * 1.2);
        QCOMPARE(band[1].y(), banded.cost_usd * 1.2);
        plot.setSelectedRow(-1);
        QVERIFY(plot.selectedBand().isEmpty());
        model.clear();
        QCOMPARE(plot.pointCount(), 0);
        QCOMPARE(plot.frontPointCount(), 0);
    }

    void memoryAndCompareViews()
    {
        auto a = syntheticResult(4, 10);
        for (std::size_t s = 0; s < a->stages.size(); ++s) {
            a->stages[s].memory.weights_bytes = 10e9;
            a->stages[s].memory.activations_bytes = 5e9 * static_cast<double>(4 - s);
            a->stages[s].peak_memory_gib = (10e9 + 5e9 * static_cast<double>(4 - s)) / (1 << 30);
            a->stages[s].breakdown.bubble_s = 0.1 * static_cast<double>(s);
        }
        a->usable_memory_gib = 76;
        auto b = syntheticResult(2, 10);
        MemoryView memory;
        memory.setResult(a);
        QCOMPARE(memory.stageCount(), 4);
        QCOMPARE(memory.customPlot()->plottableCount(), int(MemoryView::partNames().size()));
        QCOMPARE(memory.customPlot()->legend->itemCount(), 5); // weights, gradients, optimizer, activations, working: no experts
        CompareView compare;
        compare.setCurrent(a);
        compare.pinCurrent();
        compare.setCurrent(b);
        QCOMPARE(compare.pinned(), std::shared_ptr<const SimulationResult>(a));
        QCOMPARE(compare.stageRowCount(), 4); // the deeper of the two pipelines
        compare.swap();
        QCOMPARE(compare.current(), std::shared_ptr<const SimulationResult>(a));
    }

    void imageExportsWriteValidFiles_data()
    {
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QByteArray>("magic");
        QTest::newRow("png") << QStringLiteral("png") << QByteArray("\x89PNG\r\n\x1a\n", 8);
        QTest::newRow("svg") << QStringLiteral("svg") << QByteArray("<?xml");
        QTest::newRow("pdf") << QStringLiteral("pdf") << QByteArray("%PDF");
    }
    void imageExportsWriteValidFiles()
    {
        QFETCH(QString, suffix);
        QFETCH(QByteArray, magic);
        QTemporaryDir dir;
        QCustomPlot plot;
        plot.addGraph()->setData({1, 2, 3}, {3, 1, 2});
        plot.rescaleAxes();
        const QString chart = dir.filePath(QStringLiteral("chart.") + suffix);
        QString error;
        QVERIFY2(exportPlot(&plot, chart, ExportSize{1600, 900, 2.0}, QStringLiteral("title"), &error), qPrintable(error));
        QVERIFY(fileStartsWith(chart, magic));

        TimelineView view;
        view.setResult(syntheticResult(3, 20));
        const QString timeline = dir.filePath(QStringLiteral("timeline.") + suffix);
        QVERIFY2(exportPainted([&](QPainter& p, const QSize& s) { view.render(p, s, QStringLiteral("t")); }, timeline, ExportSize{1200, 600, 1.0},
                               QStringLiteral("t"), &error),
                 qPrintable(error));
        QVERIFY(fileStartsWith(timeline, magic));
        if (suffix == u"png") {
            // The chosen size and resolution: 1600 x 900 at 2x.
            QCOMPARE(QImage(chart).size(), QSize(3200, 1800));
            QCOMPARE(QImage(timeline).size(), QSize(1200, 600));
        }
        if (suffix == u"svg") {
            QFile f(chart);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY(f.readAll().contains("<svg"));
        }
    }

    void exportRefusesUnknownTypes()
    {
        QCustomPlot plot;
        QString error;
        QVERIFY(!exportPlot(&plot, QStringLiteral("/tmp/chart.bmpx"), ExportSize{}, QString(), &error));
        QVERIFY(error.contains(QStringLiteral(".png, .svg or .pdf")));
        QCOMPARE(withImageSuffix(QStringLiteral("/tmp/a"), QStringLiteral("PDF document (*.pdf)")), QStringLiteral("/tmp/a.pdf"));
    }
};

QTEST_MAIN(TestViews)
#include "tst_views.moc"
