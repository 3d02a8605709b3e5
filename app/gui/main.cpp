// SPDX-License-Identifier: MIT
// vtrain-explorer: the desktop explorer. `vtrain-explorer [SCENARIO.json]` opens the window on that
// scenario, else on the autosaved one, else on MT-NLG 530B on A100.
#include <cstdio>
#include <string_view>

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include "main_window.h"
#include "models/resources.h"
#include "models/settings_keys.h"
#include "screenshot.h"

namespace {

#ifdef NDEBUG
constexpr const char* kBuildType = "release";
#else
constexpr const char* kBuildType = "debug";
#endif

// A QApplication aborts without a display, so the requests that only print text (--help, --version)
// are answered before one is made. --help-all lists Qt's GUI options, which need the QApplication.
bool asksOnlyForText(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg == "-h" || arg == "--help" || arg == "-v" || arg == "--version") {
            return true;
        }
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore LLM training plans: time, cost, pipeline timelines and memory.\n\n"
                                                    "example:\n  vtrain-explorer /usr/share/vtrain/examples/llama3-70b-h100.json"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("A scenario file to open (JSON)."), QStringLiteral("[SCENARIO.json]"));
    const QCommandLineOption fresh(QStringLiteral("fresh"), QStringLiteral("Ignore the saved layout and autosaved scenario."));
    QCommandLineOption screenshot(QStringLiteral("screenshot"), QStringLiteral("Write screenshots to DIR and quit."), QStringLiteral("DIR"));
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(fresh);
    parser.addOption(screenshot);

    if (asksOnlyForText(argc, argv)) {
        const QCoreApplication textOnly(argc, argv);
        QCoreApplication::setApplicationName(QLatin1String(vtrain::ui::settings_keys::kApplication));
        parser.parse(QCoreApplication::arguments());
        if (parser.isSet(QStringLiteral("version"))) {
            std::printf("vtrain-explorer %s (built %s, %s)\n", VTRAIN_VERSION, __DATE__, kBuildType);
            return 0;
        }
        parser.showHelp(0);
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QLatin1String(vtrain::ui::settings_keys::kOrganization));
    QApplication::setApplicationName(QLatin1String(vtrain::ui::settings_keys::kApplication));
    QApplication::setApplicationVersion(QStringLiteral(VTRAIN_VERSION));
    // Matches the installed desktop entry and icon (packaging/), so Wayland shells show the right icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.vtrain.Explorer"));
    vtrain::ui::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/vtrain-explorer.svg")));
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
