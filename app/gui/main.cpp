// SPDX-License-Identifier: MIT
// vtrain-explorer: the desktop explorer. `vtrain-explorer [SCENARIO.json]` opens the window on that
// scenario, else on the autosaved one, else on MT-NLG 530B on A100.
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string_view>

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include "main_window.h"
#include "models/resources.h"
#include "models/settings_keys.h"
#include "screenshot.h"
#include "views/scenario_editor.h"
#include "views/theme.h"
#include "vtrain/json_fields.h"

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

int runExplorer(int argc, char** argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore LLM training plans: time, cost, pipeline timelines and memory.\n\n"
                                                    "example:\n  vtrain-explorer /usr/share/vtrain/examples/llama3-70b-h100.json"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("scenario"), QStringLiteral("A scenario file to open (JSON)."), QStringLiteral("[SCENARIO.json]"));
    const QCommandLineOption fresh(QStringLiteral("fresh"), QStringLiteral("Ignore the saved layout and autosaved scenario."));
    const QCommandLineOption theme(QStringLiteral("theme"), QStringLiteral("Colours: system (follow the desktop), light or dark."),
                                   QStringLiteral("THEME"));
    const QCommandLineOption size(
        QStringLiteral("size"), QStringLiteral("Window size in pixels, e.g. 1280x720 (default: the saved layout, else at most 90 % of the screen)."),
        QStringLiteral("WxH"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Sweep the start scenario, write the documentation's screenshots to DIR "
                                                       "(main window light and dark, timeline, exports, memory, compare, case "
                                                       "studies) and quit. Implies --fresh; use with xvfb-run or QT_QPA_PLATFORM=offscreen."),
                                        QStringLiteral("DIR"));
    parser.addOption(fresh);
    parser.addOption(theme);
    parser.addOption(size);
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
    vtrain::ui::theme::captureSystemPalette();
    std::optional<QSize> windowSize; // default: fitted to the screen (MainWindow::placeOnScreen)
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        bool okW = false, okH = false;
        const int w = wh.value(0).toInt(&okW);
        const int h = wh.value(1).toInt(&okH);
        if (wh.size() != 2 || !okW || !okH || w < 320 || h < 240 || w > 16384 || h > 16384) {
            std::fprintf(stderr, "vtrain-explorer: --size: expected WIDTHxHEIGHT between 320x240 and 16384x16384, not \"%s\"\n",
                         qPrintable(parser.value(size)));
            return 2;
        }
        windowSize = QSize(w, h);
    }
    std::optional<vtrain::ui::theme::Theme> chosenTheme;
    if (parser.isSet(theme)) {
        chosenTheme = vtrain::ui::theme::fromString(parser.value(theme));
        if (!chosenTheme) {
            std::fprintf(stderr, "vtrain-explorer: --theme: expected system, light or dark, not \"%s\"\n", qPrintable(parser.value(theme)));
            return 2;
        }
    }

    vtrain::ui::MainWindowOptions options;
    options.restoreSession = !parser.isSet(fresh) && !parser.isSet(screenshot);
    const QString path = parser.positionalArguments().value(0);
    options.runOnStart = path.isEmpty(); // a file on the command line runs once it is open
    vtrain::ui::MainWindow window(options);
    if (chosenTheme) {
        window.setTheme(*chosenTheme, false);
    } else if (parser.isSet(screenshot)) {
        window.setTheme(vtrain::ui::theme::Theme::Light, false); // the docs' pictures do not depend on the desktop
    }
    if (!path.isEmpty()) {
        QString error;
        if (!window.openScenario(path, &error)) {
            std::fprintf(stderr, "vtrain-explorer: %s: %s\n", qPrintable(path), qPrintable(error));
            return 2;
        }
    }
    const bool defaultLayout =
        parser.isSet(size) || !options.restoreSession || !QSettings().contains(QLatin1String(vtrain::ui::settings_keys::kMainWindowGeometry));
    if (windowSize) {
        window.resize(*windowSize);
    } else if (defaultLayout) {
        window.placeOnScreen();
    }
    window.show();
    if (defaultLayout) {
        window.applyDefaultDockSizes(); // once shown: the dock layout exists
    }

    if (parser.isSet(screenshot)) {
        // A refused entry leaves nothing to sweep: say which instead of waiting for a plan that never comes.
        const QStringList refused = window.editor()->errors();
        if (!refused.isEmpty()) {
            std::fprintf(stderr, "vtrain-explorer: --screenshot: the scenario has refused entries: %s\n",
                         qPrintable(refused.join(QStringLiteral("; "))));
            return 2;
        }
        auto* session = new vtrain::ui::ScreenshotSession(&window, parser.value(screenshot), &app);
        QObject::connect(session, &vtrain::ui::ScreenshotSession::done, &app, [](int code) { QApplication::exit(code); });
    }
    return app.exec();
}

int main(int argc, char** argv)
{
    // Running out of memory anywhere (reading a file, an event handler) ends with one line, never with an
    // abort on an uncaught std::bad_alloc.
    try {
        return runExplorer(argc, argv);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "vtrain-explorer: out of memory\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vtrain-explorer: internal error: %s\n", vtrain::json_fields::bounded(e.what(), 1000).c_str());
    }
    return 1;
}
