// SPDX-License-Identifier: MIT
// vtrain-explorer: the desktop explorer. `vtrain-explorer [SCENARIO.json]` opens the window on that
// scenario, else on the autosaved one, else on MT-NLG 530B on A100.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include "main_window.h"
#include "models/resources.h"
#include "models/settings_keys.h"
#include "screenshot.h"

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QLatin1String(vtrain::ui::settings_keys::kOrganization));
    QApplication::setApplicationName(QLatin1String(vtrain::ui::settings_keys::kApplication));
    QApplication::setApplicationVersion(QStringLiteral(VTRAIN_VERSION));
    vtrain::ui::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/vtrain-explorer.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore LLM training plans: time, cost, pipeline timelines and memory."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("A scenario file to open (JSON)."), QStringLiteral("[SCENARIO.json]"));
    const QCommandLineOption fresh(QStringLiteral("fresh"), QStringLiteral("Ignore the saved layout and autosaved scenario."));
    QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Write screenshots to DIR and quit."), QStringLiteral("DIR"));
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(fresh);
    parser.addOption(screenshot);
    parser.process(app);

    vtrain::ui::MainWindowOptions options;
    options.restoreSession = !parser.isSet(fresh) && !parser.isSet(screenshot);
    const QString path = parser.positionalArguments().value(0);
    options.runOnStart = path.isEmpty(); // a file on the command line runs once it is open
    vtrain::ui::MainWindow window(options);
    if (!path.isEmpty()) {
        QString error;
        if (!window.openScenario(path, &error)) {
            std::fprintf(stderr, "vtrain-explorer: %s: %s\n", qPrintable(path), qPrintable(error));
            return 2;
        }
    }
    if (!options.restoreSession || !QSettings().contains(QLatin1String(vtrain::ui::settings_keys::kMainWindowGeometry))) {
        window.resize(1600, 1000);
    }
    window.show();

    if (parser.isSet(screenshot)) {
        auto* session = new vtrain::ui::ScreenshotSession(&window, parser.value(screenshot), &app);
        QObject::connect(session, &vtrain::ui::ScreenshotSession::done, &app, [](int code) { QApplication::exit(code); });
    }
    return app.exec();
}
