// SPDX-License-Identifier: MIT
// File > Import… and drag-and-drop (issue 31): a config.json or a launch file becomes the window's scenario,
// as if opened but unsaved, with the importer's notes; a model-only file keeps the window's GPU type and
// count; a vTrain scenario dropped on the window opens; a bad file leaves the scenario as it was.
#include <QAction>
#include <QMenuBar>
#include <QMimeData>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QUrl>
#include <QtTest>

#include "gui_test_support.h"
#include "main_window.h"
#include "models/sweep_runner.h"
#include "views/scenario_editor.h"

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

QString example(const char* name)
{
    return QStringLiteral(VTRAIN_SOURCE_DIR "/examples/import/") + QLatin1String(name);
}

// Drops `path` on the window as a file manager would.
void drop(MainWindow& w, const QString& path)
{
    QMimeData data;
    data.setUrls({QUrl::fromLocalFile(path)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent event(QPointF(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &event);
}

} // namespace

class TestImportAction : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void fileMenuHasImport()
    {
        MainWindow w(smallOptions());
        QAction* action = w.menuBar()->findChild<QAction*>(QStringLiteral("importAction"));
        QVERIFY(action != nullptr);
        QCOMPARE(action->text(), QStringLiteral("&Import…"));
        QVERIFY(w.acceptDrops());
    }

    void aConfigJsonBecomesTheScenarioWithItsNotes()
    {
        MainWindow w(smallOptions());
        const Scenario before = *w.editor()->scenario();
        QString error;
        QStringList notes;
        QSignalSpy started(w.sweepRunner(), &SweepRunner::started);
        QVERIFY2(w.importFile(example("llama3-8b-config.json"), &error, &notes), qPrintable(error));
        const auto s = w.editor()->scenario();
        QVERIFY(s.has_value());
        QCOMPARE(s->model.layers, 32);
        QCOMPARE(s->model.kv_heads, 8);
        QCOMPARE(s->model.name, std::string("Llama-3-8B"));
        // The window's cluster: GPU type and count.
        QCOMPARE(s->cluster.gpu, before.cluster.gpu);
        QCOMPARE(s->cluster.num_gpus, before.cluster.num_gpus);
        QVERIFY(s->plan.has_value());
        QCOMPARE(s->plan->num_gpus(), before.cluster.num_gpus);
        QVERIFY2(notes.front().startsWith(QStringLiteral("Read llama3-8b-config.json as a Hugging Face config.json")), qPrintable(notes.front()));
        QVERIFY(notes.filter(QStringLiteral("assumed: plan: ")).size() == 1);
        QVERIFY(notes.filter(QStringLiteral("assumed: training.global_batch")).size() == 1);
        // Unsaved (Save asks where; quitting asks first), one undo step back to what was there, and swept.
        QVERIFY(!w.undoStack()->isClean());
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("Llama-3-8B")));
        QVERIFY(started.count() >= 1 || started.wait(5000));
        w.undoStack()->undo();
        QCOMPARE(w.editor()->scenario()->model.layers, before.model.layers);
    }

    void aLaunchFileKeepsItsOwnPlan()
    {
        MainWindow w(smallOptions());
        QString error;
        QVERIFY2(w.importFile(example("llama3-8b-megatron.sh"), &error), qPrintable(error));
        const auto s = w.editor()->scenario();
        QCOMPARE(s->plan->tp, 2);
        QCOMPARE(s->plan->pp, 2);
        QCOMPARE(s->cluster.num_gpus, 16); // torchrun's 2 nodes x 8
    }

    void droppingAFileImportsIt()
    {
        MainWindow w(smallOptions());
        w.setDiscardPrompt([](const QString&) { return QMessageBox::Discard; });
        drop(w, example("qwen3-30b-a3b-config.json"));
        QCOMPARE(w.editor()->scenario()->model.moe.experts, 128);
        QMessageBox* notes = w.findChild<QMessageBox*>(QStringLiteral("importNotes"));
        QVERIFY(notes != nullptr);
        QVERIFY(notes->detailedText().contains(QStringLiteral("assumed: search.ep")));
        notes->close();

        // A vTrain scenario dropped on the window opens as a file.
        drop(w, QStringLiteral(VTRAIN_SOURCE_DIR "/examples/gpt-1.3b.json"));
        QCOMPARE(w.editor()->scenario()->model.layers, 24);
        QVERIFY(w.windowTitle().startsWith(QStringLiteral("gpt-1.3b.json")));
    }

    void aBadFileLeavesTheScenario()
    {
        MainWindow w(smallOptions());
        const Scenario before = *w.editor()->scenario();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.sh"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("torchrun --nproc_per_node 6 pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
                "--seq-length 4096 --micro-batch-size 1 --global-batch-size 60 --tensor-model-parallel-size 3\n");
        f.close();
        QString error;
        QVERIFY(!w.importFile(path, &error));
        QVERIFY2(error.startsWith(QStringLiteral("--tensor-model-parallel-size: ")), qPrintable(error));
        QCOMPARE(w.editor()->scenario()->model.layers, before.model.layers);
        QVERIFY(w.undoStack()->isClean());
    }
};

QTEST_MAIN(TestImportAction)
#include "tst_import_action.moc"
