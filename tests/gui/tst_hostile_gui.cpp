// SPDX-License-Identifier: MIT
// The explorer under hostile input, round 2 (issue 32): a scenario with 30,000 nested '(' in its
// pipeline layout -- as the file to open, as the autosave, as the Compare/Pinned setting -- crashed the
// window at every start; /dev/zero was read until bad_alloc; the GUI refused nesting above 64 levels while
// the command line allowed 256. Now the window starts, the file is refused with the core's message, and
// the bounds are the core's, one for both.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_support.h"
#include "main_window.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "views/scenario_editor.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

// A valid scenario's text with a layout nested 30,000 deep.
QByteArray deepLayoutScenario()
{
    nlohmann::json j = scenario_to_json(test::smallScenario());
    j["plan"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"micro_batch", 1}};
    j["plan"]["pipeline_layout"] = std::string(30'000, '(') + "EtL" + std::string(30'000, ')');
    const std::string text = j.dump();
    return QByteArray(text.data(), static_cast<qsizetype>(text.size()));
}

QString nested(int depth)
{
    return QStringLiteral("{\"model\": ") + QString(depth - 1, QLatin1Char('[')) + QString(depth - 1, QLatin1Char(']')) + QLatin1Char('}');
}

} // namespace

class TestHostileGui : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private slots:
    void aDeepLayoutIsRefusedWhereverItComesFrom()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("deep.json"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(deepLayoutScenario());
        }
        QString error;
        QVERIFY(!store::readScenario(path, &error));
        QVERIFY2(error.contains(QStringLiteral("nests parentheses more than 32 deep")), qPrintable(error));

        // As the autosave and as the pinned Compare plan: the window starts on the default scenario.
        const QString autosave = store::autosavePath();
        QDir().mkpath(QFileInfo(autosave).absolutePath());
        QFile::remove(autosave);
        QVERIFY(QFile::copy(path, autosave));
        QSettings().setValue(QLatin1String(settings_keys::kComparePinned), QString::fromUtf8(deepLayoutScenario()));
        {
            MainWindowOptions o;
            o.runOnStart = false;
            MainWindow w(o);
            QVERIFY(w.editor()->isValid());
            QCOMPARE(w.editor()->scenario()->model.name, defaultScenario().model.name);
        }
        QSettings().remove(QLatin1String(settings_keys::kComparePinned));
        const QDir data = QFileInfo(autosave).absoluteDir();
        for (const QString& kept : data.entryList({QStringLiteral("autosave.json.unreadable-*")})) {
            QFile::remove(data.filePath(kept));
        }
    }

    void endlessFilesAreRefusedBeforeTheyAreRead()
    {
        QString error;
        QVERIFY(!store::readScenario(QStringLiteral("/dev/zero"), &error));
        QVERIFY2(error.contains(QStringLiteral("32 MiB")), qPrintable(error));
    }

    // One nesting bound for the window and the command line: json_fields::kMaxJsonDepth (256).
    void theNestingBoundIsTheCores()
    {
        QCOMPARE(json_fields::kMaxJsonDepth, std::size_t{256});
        QTemporaryDir dir;
        for (const int depth : {100, 257}) {
            const QString path = dir.filePath(QStringLiteral("n%1.json").arg(depth));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(nested(depth).toUtf8());
            f.close();
            QString error;
            QVERIFY(!store::readScenario(path, &error));
            // 100 levels reach the scenario reader (which names the field); 257 are refused as too deep.
            QVERIFY2(depth <= 256 ? error.contains(QStringLiteral("model")) && !error.contains(QStringLiteral("nest"))
                                  : error.contains(QStringLiteral("JSON input may nest at most 256 arrays and objects")),
                     qPrintable(error));
        }
    }
};

QTEST_MAIN(TestHostileGui)
#include "tst_hostile_gui.moc"
