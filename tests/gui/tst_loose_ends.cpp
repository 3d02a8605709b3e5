// SPDX-License-Identifier: MIT
// The smaller defects of #30 (point 6 of "What was seen"), a test each: Discard on quit is honoured at the
// next start, and edits a crash left in the autosave come back marked unsaved with their file's name; the
// default export folder exists and a failed export says why; a sweep preparing 10^8 plans shows a busy
// bar, not "0 of 130,056,192"; no "-0.0 %"; a job list opened as a scenario says in one line what it is;
// Help > Documentation shows the README when no browser answers; unchecked boxes show in the dark theme;
// the README gives the plan count `vtrain explore` prints for MT-NLG.
#include <cmath>

#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include "gui_test_support.h"
#include "help.h"
#include "main_window.h"
#include "models/format.h"
#include "models/profile_catalog.h"
#include "models/scenario_store.h"
#include "models/schedule_runner.h"
#include "models/settings_keys.h"
#include "models/sweep_runner.h"
#include "views/cluster_schedule_view.h"
#include "views/compare_view.h"
#include "views/export.h"
#include "views/field_row.h"
#include "views/scenario_editor.h"
#include "views/sweep_bar.h"
#include "views/theme.h"
#include "vtrain/explorer.h"
#include "vtrain/scenario_json.h"

using namespace vtrain;
using namespace vtrain::ui;

namespace {

MainWindowOptions sessionOptions()
{
    MainWindowOptions o;
    o.restoreSession = true;
    o.runOnStart = false;
    return o;
}

void typeAndCommit(QLineEdit* edit, const QString& text)
{
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return);
}

// WCAG's relative luminance and contrast ratio.
double luminance(const QColor& c)
{
    auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
}

double contrast(const QColor& a, const QColor& b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestLooseEnds : public QObject {
    Q_OBJECT
public:
    static void initMain() { test::initTestEnvironment(); }

private Q_SLOTS:
    void init()
    {
        QSettings().clear();
        QFile::remove(store::autosavePath());
    }

    // Discard on quit: the next start opens the file as saved (it once brought the discarded edit back,
    // with no "*" and no file name).
    void discardOnQuitIsHonouredAtTheNextStart()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("small.json"));
        const Scenario saved = test::smallScenario();
        QVERIFY(store::writeScenario(path, saved, nullptr));
        {
            MainWindow w(sessionOptions());
            QString error;
            QVERIFY2(w.openScenario(path, &error), qPrintable(error));
            typeAndCommit(w.editor()->fieldRow(QStringLiteral("training.global_batch"))->lineEdit(), QStringLiteral("1024"));
            QVERIFY(w.isWindowModified());
            w.setDiscardPrompt([](const QString&) { return QMessageBox::Discard; });
            QVERIFY(w.close());
        }
        MainWindow again(sessionOptions());
        QCOMPARE(again.editor()->scenario()->training.global_batch, saved.training.global_batch);
        QVERIFY(!again.isWindowModified());
        QVERIFY2(again.windowTitle().startsWith(QStringLiteral("small.json")), qPrintable(again.windowTitle()));
    }

    // An import is unsaved and has no file; Discard on quit goes back to the file open before it, by name.
    void discardingAnImportGoesBackToTheFileBefore()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("small.json"));
        const Scenario saved = test::smallScenario();
        QVERIFY(store::writeScenario(path, saved, nullptr));
        {
            MainWindow w(sessionOptions());
            QVERIFY(w.openScenario(path));
            QString error;
            QVERIFY2(w.importFile(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/import/llama3-8b-config.json"), &error), qPrintable(error));
            QVERIFY(w.isWindowModified());
            QVERIFY(w.editor()->scenario()->model.layers != saved.model.layers);
            w.setDiscardPrompt([](const QString&) { return QMessageBox::Discard; });
            QVERIFY(w.close());
        }
        MainWindow again(sessionOptions());
        QCOMPARE(again.editor()->scenario()->model.layers, saved.model.layers);
        QVERIFY(!again.isWindowModified());
        QVERIFY2(again.windowTitle().startsWith(QStringLiteral("small.json")), qPrintable(again.windowTitle()));
    }

    // Edits a crash left unsaved come back as unsaved: "*" and the file's name; a Discard then goes back
    // to the file.
    void editsACrashLeftComeBackUnsaved()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("small.json"));
        QVERIFY(store::writeScenario(path, test::smallScenario(), nullptr));
        {
            MainWindow w(sessionOptions());
            QVERIFY(w.openScenario(path));
            typeAndCommit(w.editor()->fieldRow(QStringLiteral("training.global_batch"))->lineEdit(), QStringLiteral("1024"));
            // No close(): the process ends here as a crash would end it.
        }
        {
            MainWindow again(sessionOptions());
            QCOMPARE(again.editor()->scenario()->training.global_batch, 1024);
            QVERIFY(again.isWindowModified());
            QVERIFY2(again.windowTitle().startsWith(QStringLiteral("small.json[*]")), qPrintable(again.windowTitle()));
            again.setDiscardPrompt([](const QString&) { return QMessageBox::Discard; });
            QVERIFY(again.close());
        }
        MainWindow third(sessionOptions());
        QCOMPARE(third.editor()->scenario()->training.global_batch, test::smallScenario().training.global_batch);
        QVERIFY(!third.isWindowModified());
    }

    // The default export folder exists (a missing ~/Documents made the default path fail), and an export
    // into a folder that does not exist says so.
    void exportsStartInAFolderThatExistsAndSayWhyTheyFail()
    {
        QTemporaryDir home;
        const QByteArray oldHome = qgetenv("HOME");
        qputenv("HOME", home.path().toLocal8Bit()); // a home without Documents
        MainWindowOptions o = sessionOptions();
        o.restoreSession = false;
        o.scenario = test::smallScenario();
        MainWindow w(o);
        const QString suggested = w.suggestedPath(QStringLiteral("pareto.png"));
        qputenv("HOME", oldHome);
        QVERIFY2(QFileInfo(QFileInfo(suggested).absolutePath()).isDir(), qPrintable(suggested));
        QString error;
        QVERIFY(!w.exportPareto(home.filePath(QStringLiteral("missing/pareto.png")), ExportSize{800, 450, 1.0}, &error));
        QVERIFY2(error.contains(QStringLiteral("does not exist")) && error.contains(QStringLiteral("missing")), qPrintable(error));
        QVERIFY(!w.exportPlans(home.filePath(QStringLiteral("missing/plans.csv")), &error));
        QVERIFY(!error.isEmpty());
    }

    // Before its first plan a sweep of 10^8 plans prepares for seconds: a busy bar that says so, not
    // "0 of 130,056,192" on an empty bar.
    void aPreparingSweepShowsABusyBar()
    {
        SweepRunner runner;
        SweepBar bar;
        bar.setRunner(&runner);
        ProfileCatalog catalog;
        QString error;
        const Scenario s = test::hugeScenario();
        auto profiles = catalog.profilesFor(s, error);
        QVERIFY2(!profiles.empty(), qPrintable(error));
        QSignalSpy finished(&runner, &SweepRunner::finished);
        runner.start(s, std::move(profiles));
        SweepProgress preparing;
        preparing.total = 130'056'192;
        preparing.elapsed_s = 2.5;
        Q_EMIT runner.progressChanged(preparing);
        QCOMPARE(bar.progressBar()->maximum(), 0); // busy
        QVERIFY2(bar.statusText().contains(QStringLiteral("Preparing 130,056,192 plans")), qPrintable(bar.statusText()));
        QVERIFY(!bar.statusText().contains(QStringLiteral("0 of")));
        SweepProgress going = preparing;
        going.done = 65'028'096; // half
        Q_EMIT runner.progressChanged(going);
        QCOMPARE(bar.progressBar()->maximum(), 1000);
        QCOMPARE(bar.progressBar()->value(), 500);
        QVERIFY2(bar.statusText().startsWith(QStringLiteral("65,028,096 of 130,056,192")), qPrintable(bar.statusText()));
        runner.cancel();
        QVERIFY(finished.wait(120000));
        QCOMPARE(bar.progressBar()->maximum(), 1000);
    }

    // A change that rounds to zero reads "0.0 %", never "-0.0 %": the helper, Compare's deltas and the
    // shared-cluster study's summary, which use it.
    void noMinusZeroPercent()
    {
        QCOMPARE(formatPercentChange(-0.0004), QStringLiteral("0.0 %"));
        QCOMPARE(formatPercentChange(-0.04), QStringLiteral("0.0 %"));
        QCOMPARE(formatPercentChange(0.06), QStringLiteral("+0.1 %"));
        QCOMPARE(formatPercentChange(-12.3, 0), QStringLiteral("-12 %"));
        QVERIFY(!deltaText(1000.0, 999.9996, [](double v) { return QString::number(v); }).contains(QStringLiteral("-0.0 %")));

        ProfileCatalog catalog;
        ClusterScheduleView view(&catalog);
        view.setAutoRun(false);
        view.setInputs(QStringLiteral("a100-sxm4-80gb"), 64, 6, 7, 40);
        QSignalSpy done(view.runner(), &ScheduleRunner::finished);
        QVERIFY(view.run());
        QVERIFY(done.wait(120000));
        const auto result = view.result();
        QVERIFY(result);
        const PolicyResult* ours = nullptr;
        const PolicyResult* elastic = nullptr;
        for (const PolicyResult& p : result->study.results) {
            ours = p.policy == SchedulePolicy::SimulatorInformed ? &p : ours;
            elastic = p.policy == SchedulePolicy::ElasticFlow ? &p : elastic;
        }
        QVERIFY(ours && elastic);
        const QString jct = formatPercentChange(100 * (ours->average_jct_h / elastic->average_jct_h - 1));
        QVERIFY2(view.summaryText().contains(QStringLiteral("average JCT ") + jct), qPrintable(view.summaryText()));
        QVERIFY(!view.summaryText().contains(QRegularExpression(QStringLiteral("[-\u2212]0\\.0 %"))));
    }

    // A job list (examples/jobs-*.json) opened as a scenario: one line saying what it is, not a dozen
    // "missing field" lines. Another file that is no scenario: its first problem and how many more.
    void aJobListSaysWhatItIsInOneLine()
    {
        MainWindowOptions o = sessionOptions();
        o.restoreSession = false;
        o.scenario = test::smallScenario();
        MainWindow w(o);
        for (const QString& name : QDir(QStringLiteral(VTRAIN_SOURCE_DIR "/examples")).entryList({QStringLiteral("jobs-*.json")})) {
            QString error;
            QVERIFY(!w.openScenario(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/") + name, &error));
            QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable(error));
            QVERIFY2(error.contains(QStringLiteral("job list")) && error.contains(QStringLiteral("shared-cluster")), qPrintable(error));
        }
        QTemporaryDir dir;
        QFile bad(dir.filePath(QStringLiteral("bad.json")));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"model": {"name": "x"}, "cluster": {}, "training": {}})");
        bad.close();
        QString error;
        QVERIFY(!store::readScenario(bad.fileName(), &error));
        QVERIFY2(!error.contains(QLatin1Char('\n')) && error.contains(QStringLiteral("more)")), qPrintable(error));
    }

    // Help > Documentation did nothing when no browser was registered: the README is then shown in a
    // window of ours, with its path.
    void documentationShowsWithoutABrowser()
    {
        QWidget parent;
        QWidget* shown = help::openDocumentation(&parent, [](const QUrl&) { return false; });
        QVERIFY(shown);
        auto* text = shown->findChild<QTextBrowser*>(QStringLiteral("documentationText"));
        QVERIFY(text);
        QVERIFY2(text->toPlainText().contains(QStringLiteral("vTrain Explorer")), qPrintable(text->toPlainText().left(200)));
        QVERIFY(shown->findChild<QLabel*>(QStringLiteral("documentationPath"))->text().contains(QStringLiteral("README.md")));
        QUrl opened;
        const QWidget* none = help::openDocumentation(&parent, [&](const QUrl& url) {
            opened = url;
            return true;
        });
        QVERIFY(none == nullptr); // the desktop opened it: no window of ours
        QCOMPARE(opened, help::documentationUrl());
    }

    // An unchecked box in the dark theme: its outline stands 3:1 against the window (WCAG's contrast for
    // controls); it was the window colour darkened, all but invisible.
    void uncheckedBoxesShowInTheDarkTheme()
    {
        theme::captureSystemPalette();
        theme::apply(theme::Theme::Dark);
        QWidget window;
        auto* box = new QCheckBox(QStringLiteral("Show all plans"), &window);
        box->move(10, 10);
        window.resize(200, 60);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QStyleOptionButton option;
        option.initFrom(box);
        const QRect indicator = box->style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, box);
        const QImage image = box->grab().toImage();
        const QColor background = window.palette().color(QPalette::Window);
        double best = 1;
        for (int y = indicator.top(); y <= indicator.bottom(); ++y) {
            for (int x = indicator.left(); x <= indicator.right(); ++x) {
                best = std::max(best, contrast(image.pixelColor(x, y), background));
            }
        }
        theme::apply(theme::Theme::Light);
        QVERIFY2(best >= 3.0, qPrintable(QStringLiteral("the box stands %1:1 against the window").arg(best, 0, 'f', 2)));
    }

    // The README's walkthrough gives the count `vtrain explore examples/mt-nlg-530b.json` prints (it
    // said 59,049 while the command printed 94,041).
    void readmeGivesTheExploredPlanCount()
    {
        QString error;
        const auto s = store::readScenario(QStringLiteral(VTRAIN_SOURCE_DIR "/examples/mt-nlg-530b.json"), &error);
        QVERIFY2(s, qPrintable(error));
        ProfileCatalog catalog;
        const auto profiles = catalog.profilesFor(*s, error);
        QVERIFY2(!profiles.empty(), qPrintable(error));
        ExploreOptions options;
        options.prune = true; // as the command runs it
        RunControl control;
        const auto result = explore(*s, profiles, options, control, {});
        QVERIFY(result.ok());
        QFile readme(QStringLiteral(VTRAIN_SOURCE_DIR "/README.md"));
        QVERIFY(readme.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(readme.readAll());
        const QString sentence = QStringLiteral("`explore` evaluates the %1 plans").arg(formatCount(static_cast<double>(result.value().total)));
        QVERIFY2(text.contains(sentence), qPrintable(sentence));
    }
};

QTEST_MAIN(TestLooseEnds)
#include "tst_loose_ends.moc"
