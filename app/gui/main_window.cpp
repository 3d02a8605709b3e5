// SPDX-License-Identifier: MIT
#include "main_window.h"

#include <cmath>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>
#include <QWindow>

#include "details_panel.h"
#include "help.h"
#include "models/format.h"
#include "models/plan_detail_runner.h"
#include "models/plan_filter_model.h"
#include "models/plan_table_model.h"
#include "models/presets.h"
#include "models/prune_policy.h"
#include "models/reject_model.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "models/settings_values.h"
#include "models/sweep_runner.h"
#include "models/workload.h"
#include "scenario_history.h"
#include "views/cluster_schedule_view.h"
#include "views/compare_view.h"
#include "views/optimal_model_view.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"
#include "views/scenario_editor.h"
#include "views/sweep_bar.h"
#include "views/theme.h"
#include "views/timeline_view.h"
#include "vtrain/explorer_space.h"
#include "vtrain/scenario_json.h"
#include "vtrain/uncertainty.h"
#include "window_geometry.h"

namespace vtrain::ui {

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), m_options(std::move(options)), m_catalog(m_options.profiles ? ProfileCatalog(*m_options.profiles) : ProfileCatalog())
{
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true); // a config.json or launch file dropped on the window is imported (import_action.cpp)
    setWindowIcon(QIcon(QStringLiteral(":/icons/vtrain-explorer.svg")));
    m_planModel = new PlanTableModel(this);
    m_rejectModel = new RejectModel(this);
    m_runner = new SweepRunner(this);
    m_detailRunner = new PlanDetailRunner(this);
    m_undo = new QUndoStack(this);
    connect(m_undo, &QUndoStack::cleanChanged, this, [this](bool clean) {
        setWindowModified(!clean);
        persistSession();
    });

    m_plot = new ParetoPlot(this);
    m_plot->setObjectName(QStringLiteral("paretoPlot"));
    m_plot->setModel(m_planModel);
    buildTabs();
    buildDocks();
    buildMenus();
    connectRunners();

    QList<GpuChoice> gpus;
    std::map<std::string, QString> bandNotes; // GPUs whose band is a prior, not a measured error
    for (const QString& id : m_catalog.ids()) {
        GpuChoice choice{id, id, QString(), 0, 0, LinkSpec{}};
        if (const auto profile = m_catalog.profile(id.toStdString())) {
            if (const auto band = prediction_band(*profile); band && !band->calibrated) {
                bandNotes[id.toStdString()] = QString::fromStdString(band->source);
            }
            QString vendor = QString::fromStdString(profile->vendor);
            const QString name = QString::fromStdString(profile->name);
            if (vendor.isEmpty() && (name.startsWith(QLatin1String("NVIDIA ")) || name.startsWith(QLatin1String("AMD ")))) {
                vendor = name.section(QLatin1Char(' '), 0, 0); // measured profiles predate the vendor field
            }
            choice = {id, name, vendor, profile->memory_gib, profile->price_usd_per_gpu_hour, profile->links};
        }
        gpus.push_back(choice);
    }
    m_editor->setGpuChoices(gpus);
    m_planModel->setBandNotes(std::move(bandNotes));

    if (m_options.restoreSession) {
        // Settings files get edited by hand: every value is range-checked (settings_values.h).
        restoreLayout();
        const int colorDimensions = static_cast<int>(colorDimensionNames().size());
        m_autoColor = !QSettings().contains(QLatin1String(settings_keys::kColorDimension)); // never chosen: follows the sweep
        m_plot->setColorDimension(static_cast<ColorDimension>(settings_values::intIn(settings_keys::kColorDimension, 0, 0, colorDimensions - 1)));
        m_plot->setLogAxes(settings_values::flag(settings_keys::kLogAxes, false));
        m_sweepBar->setAutoRun(settings_values::flag(settings_keys::kAutoRun, true));
        const QString prune =
            settings_values::oneOf(settings_keys::kPrune, toString(PrunePolicy::LargeSweeps),
                                   {toString(PrunePolicy::LargeSweeps), toString(PrunePolicy::Always), toString(PrunePolicy::Never)});
        setPrunePolicy(prunePolicyFromString(prune).value_or(PrunePolicy::LargeSweeps), false);
        const QString savedTheme = settings_values::oneOf(settings_keys::kTheme, QStringLiteral("system"),
                                                          {QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")});
        if (const auto t = theme::fromString(savedTheme); t && *t != theme::current()) {
            setTheme(*t);
        }
        m_optimalModel->restoreInputs();
        m_cluster->restoreInputs();
        restoreComparePlans();
    }
    // Start scenario: the one asked for, else the autosave (a crash loses nothing), else MT-NLG 530B.
    std::optional<Scenario> start = m_options.scenario;
    if (!start && m_options.restoreSession) {
        start = restoreSessionScenario();
    }
    m_editor->setScenario(start.value_or(defaultScenario()));
    m_scenario = m_editor->scenario();
    m_committed = m_scenario;
    if (m_restoredModified) {
        m_undo->resetClean(); // the autosave holds edits its file does not: "*" until saved
    } else {
        m_cleanScenario = m_scenario;
    }
    m_cleanPath = m_filePath;
    m_sweepBar->setRunEnabled(m_editor->isValid());
    m_editor->setPresetGuard([this] { return confirmDiscard(tr("load a preset")); });
    updateTitle();
    if (m_options.runOnStart && m_scenario) {
        startSweep();
    }
}

MainWindow::~MainWindow()
{
    // The undo stack clears itself as it goes, which would record the session as unmodified: a window
    // that goes without closing (a crash, a test) must leave the session as it was.
    m_undo->disconnect(this);
}

void MainWindow::buildDocks()
{
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setDockNestingEnabled(true);

    m_editor = new ScenarioEditor(this);
    m_editorDock = new QDockWidget(tr("Scenario"), this);
    m_editorDock->setObjectName(QStringLiteral("scenarioDock"));
    m_editorDock->setWidget(m_editor);
    addDockWidget(Qt::LeftDockWidgetArea, m_editorDock);

    m_plans = new PlansPanel(m_planModel, m_rejectModel, this);
    m_plansDock = new QDockWidget(tr("Plans"), this);
    m_plansDock->setObjectName(QStringLiteral("plansDock"));
    m_plansDock->setWidget(m_plans);
    addDockWidget(Qt::RightDockWidgetArea, m_plansDock);

    m_details = new DetailsPanel(this);
    m_detailsDock = new QDockWidget(tr("Selected plan"), this);
    m_detailsDock->setObjectName(QStringLiteral("detailsDock"));
    m_detailsDock->setWidget(m_details);
    addDockWidget(Qt::BottomDockWidgetArea, m_detailsDock);

    m_sweepBar = new SweepBar(this);
    m_sweepBar->setRunner(m_runner);
    auto* toolbar = addToolBar(tr("Sweep"));
    toolbar->setObjectName(QStringLiteral("sweepToolbar"));
    toolbar->setMovable(false);
    toolbar->addWidget(m_sweepBar);
}

void MainWindow::applyDefaultDockSizes()
{
    // The plans dock shows its four objective columns whole (a 26% dock cut the Cost column at 1280 pixels).
    const int plansWidth =
        m_plans->objectiveColumnsWidth() + 2 * m_plansDock->style()->pixelMetric(QStyle::PM_DockWidgetFrameWidth, nullptr, m_plansDock);
    // The editor shows its fields whole, without scrolling sideways (its content's width, a scroll bar and frames).
    const int editorWidth =
        m_editor->minimumContentWidth() + 2 * m_editorDock->style()->pixelMetric(QStyle::PM_DockWidgetFrameWidth, nullptr, m_editorDock);
    resizeDocks({m_editorDock, m_plansDock}, {std::max({250, width() * 24 / 100, editorWidth}), std::max({280, width() * 26 / 100, plansWidth})},
                Qt::Horizontal);
    // The selected plan below the chart: a third of the height, so the chart keeps 40 % and more.
    resizeDocks({m_detailsDock}, {std::max(200, height() * 34 / 100)}, Qt::Vertical);
}

void MainWindow::buildTabs()
{
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("mainTabs"));
    m_tabs->setDocumentMode(true);
    m_optimalModel = new OptimalModelView(&m_catalog, m_tabs);
    m_cluster = new ClusterScheduleView(&m_catalog, m_tabs);
    // The case studies get the whole window when shown (the plan docks hide), so their minimum must not
    // become the window's while the Plans tab is up: 1280x720 has to fit.
    m_optimalModel->setMinimumSize(1, 1);
    m_cluster->setMinimumSize(1, 1);
    m_tabs->addTab(m_plot, tr("Plans"));
    m_tabs->addTab(m_optimalModel, tr("Optimal model"));
    m_tabs->addTab(m_cluster, tr("Shared cluster"));
    m_tabs->setTabToolTip(1, tr("The largest model trainable compute-optimally within a budget (vTrain case study 2)"));
    m_tabs->setTabToolTip(2, tr("Training jobs with deadlines sharing one cluster under three policies (vTrain case study 3)"));
    setCentralWidget(m_tabs);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::onTabChanged);
}

void MainWindow::onTabChanged(int index)
{
    // The scenario, plan and selected-plan docks and the sweep bar belong to the Plans tab: the case
    // studies get the whole window, and the docks come back as they were.
    if (index == 0) {
        for (QWidget* w : std::as_const(m_hiddenForTab)) {
            w->show();
        }
        m_hiddenForTab.clear();
        return;
    }
    for (QWidget* w : {static_cast<QWidget*>(m_editorDock), static_cast<QWidget*>(m_plansDock), static_cast<QWidget*>(m_detailsDock),
                       static_cast<QWidget*>(findChild<QToolBar*>(QStringLiteral("sweepToolbar")))}) {
        if (w && !w->isHidden()) {
            m_hiddenForTab << w;
            w->hide();
        }
    }
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QMenu* presetsMenu = file->addMenu(tr("&New from preset"));
    for (const Preset& p : presets()) {
        presetsMenu->addAction(p.title, this, [this, id = p.id] { loadPreset(id); });
    }
    file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("&Open scenario…"), QKeySequence::Open, this, &MainWindow::openDialog);
    file->addAction(tr("&Import…"), this, &MainWindow::importDialog)->setObjectName(QStringLiteral("importAction"));
    m_recentMenu = file->addMenu(tr("Open &recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(QIcon(QStringLiteral(":/icons/save.svg")), tr("&Save scenario"), QKeySequence::Save, this, &MainWindow::saveOrSaveAs);
    file->addAction(tr("Save scenario &as…"), QKeySequence::SaveAs, this, &MainWindow::saveAsDialog);
    file->addSeparator();
    buildExportMenu(file->addMenu(QIcon(QStringLiteral(":/icons/export.svg")), tr("&Export")));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    buildEditMenu();

    QMenu* sweep = menuBar()->addMenu(tr("&Sweep"));
    m_runAction = sweep->addAction(QIcon(QStringLiteral(":/icons/run.svg")), tr("&Run"), QKeySequence(Qt::Key_F5), this, &MainWindow::startSweep);
    m_cancelAction =
        sweep->addAction(QIcon(QStringLiteral(":/icons/cancel.svg")), tr("&Cancel"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelSweep);
    sweep->addSeparator();
    // Pruning: same front and top lists, fewer plans simulated, drawn and listed (prune_policy.h).
    QMenu* prune = sweep->addMenu(tr("&Prune"));
    prune->setToolTipsVisible(true);
    auto* prunes = new QActionGroup(prune);
    for (const auto& [p, label] :
         {std::pair{PrunePolicy::LargeSweeps, tr("Sweeps of over %1 plans").arg(formatCount(static_cast<double>(kPruneAbovePlans)))},
          std::pair{PrunePolicy::Always, tr("&Always")}, std::pair{PrunePolicy::Never, tr("&Never: simulate and show every feasible plan")}}) {
        QAction* a = prune->addAction(label, this, [this, p = p] { setPrunePolicy(p); });
        a->setObjectName(QStringLiteral("prune-") + toString(p));
        a->setCheckable(true);
        a->setChecked(p == m_prunePolicy);
        a->setToolTip(tr("Skip plans whose lower bounds on time and cost cannot reach the Pareto front: the front is the same, "
                         "the chart and table show only the simulated plans"));
        prunes->addAction(a);
    }

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_editorDock->toggleViewAction());
    view->addAction(m_plansDock->toggleViewAction());
    view->addAction(m_detailsDock->toggleViewAction());
    view->addSeparator();
    QAction* log = view->addAction(QIcon(QStringLiteral(":/icons/log-axes.svg")), tr("&Logarithmic axes"));
    log->setCheckable(true);
    connect(log, &QAction::toggled, m_plot, &ParetoPlot::setLogAxes);
    connect(m_plot, &ParetoPlot::logAxesChanged, log, &QAction::setChecked);
    QMenu* themeMenu = view->addMenu(tr("&Theme"));
    auto* themes = new QActionGroup(themeMenu);
    for (const auto& [t, label] : {std::pair{theme::Theme::System, tr("Follow the &desktop")}, std::pair{theme::Theme::Light, tr("&Light")},
                                   std::pair{theme::Theme::Dark, tr("&Dark")}}) {
        QAction* a = themeMenu->addAction(label, this, [this, t = t] { setTheme(t); });
        a->setObjectName(QStringLiteral("theme-") + theme::toString(t));
        a->setCheckable(true);
        a->setChecked(t == theme::current());
        themes->addAction(a);
    }
    view->addSeparator();
    QMenu* colorBy = view->addMenu(tr("&Colour points by"));
    auto* group = new QActionGroup(colorBy);
    const QStringList names = colorDimensionNames();
    for (int i = 0; i < names.size(); ++i) {
        QAction* a = colorBy->addAction(names[i], this, [this, i] {
            m_autoColor = false;
            m_plot->setColorDimension(static_cast<ColorDimension>(i));
        });
        a->setCheckable(true);
        a->setChecked(i == 0);
        group->addAction(a);
    }
    connect(m_plot, &ParetoPlot::colorDimensionChanged, group, [group](ColorDimension d) {
        const int i = static_cast<int>(d);
        if (i >= 0 && i < group->actions().size()) {
            group->actions().at(i)->setChecked(true);
        }
    });

    buildHelpMenu();
}

void MainWindow::setTheme(theme::Theme t, bool remember)
{
    theme::apply(t);
    if (auto* a = findChild<QAction*>(QStringLiteral("theme-") + theme::toString(t))) {
        a->setChecked(true);
    }
    if (remember) {
        QSettings().setValue(QLatin1String(settings_keys::kTheme), theme::toString(t));
    }
}

void MainWindow::buildEditMenu()
{
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setObjectName(QStringLiteral("undoAction"));
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setObjectName(QStringLiteral("redoAction"));
    redo->setShortcuts(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
}

void MainWindow::buildHelpMenu()
{
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard shortcuts"), QKeySequence::HelpContents, this, [this] { help::showShortcuts(this); });
    help->addAction(tr("&Documentation"), this, [this] { help::openDocumentation(this); });
    help->addSeparator();
    help->addAction(tr("&About vtrain-explorer"), this, [this] { QMessageBox::about(this, tr("About vtrain-explorer"), help::aboutHtml()); });
}

void MainWindow::connectRunners()
{
    connect(m_editor, &ScenarioEditor::scenarioEdited, this, &MainWindow::onScenarioEdited);
    connect(m_editor, &ScenarioEditor::validityChanged, m_sweepBar, &SweepBar::setRunEnabled);
    connect(m_editor, &ScenarioEditor::validityChanged, this, [this](bool valid) {
        if (!valid) {
            m_scenario.reset(); // the shown results no longer match what the editor says
        } else {
            m_scenario = m_editor->scenario();
        }
        updateStale();
    });
    connect(m_editor, &ScenarioEditor::presetLoaded, this, [this](const QString& id) {
        m_pendingStep = tr("Load preset %1").arg(id);
        m_pendingClean = true; // a preset is a clean start, like an opened file
        m_filePath.clear();
    });
    connect(m_sweepBar, &SweepBar::autoRunChanged, this, &MainWindow::updateStale);
    connect(m_sweepBar, &SweepBar::runRequested, this, &MainWindow::startSweep);
    connect(m_sweepBar, &SweepBar::cancelRequested, this, &MainWindow::cancelSweep);
    connect(m_runner, &SweepRunner::started, this, [this](std::uint64_t, const Scenario& s) { onSweepStarted(s); });
    connect(m_runner, &SweepRunner::rowsArrived, m_planModel, &PlanTableModel::appendRows);
    connect(m_runner, &SweepRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ExploreResult> r) { onSweepFinished(r); });
    connect(m_runner, &SweepRunner::failed, this,
            [this](std::uint64_t, const QString& message) { statusBar()->showMessage(tr("The sweep cannot run: %1").arg(message)); });
    connect(m_runner, &SweepRunner::stateChanged, this,
            [this](SweepRunner::State state) { m_cancelAction->setEnabled(state == SweepRunner::State::Running); });
    connect(m_plot, &ParetoPlot::rowClicked, this, &MainWindow::selectPlan);
    connect(m_plot, &ParetoPlot::colorDimensionChosen, this, [this] { m_autoColor = false; });
    // The table's filter filters the chart too.
    connect(m_plans->filterModel(), &PlanFilterModel::criteriaChanged, this, &MainWindow::applyPlanFilter);
    connect(m_details->compare(), &CompareView::pinnedChanged, this, [this] {
        updateCompareContext();
        saveComparePlans();
    });
    connect(m_details->compare(), &CompareView::currentChanged, this, [this] {
        updateCompareContext();
        saveComparePlans();
    });
    connect(m_details->timeline(), &TimelineView::exportVisibleRequested, this,
            [this] { exportImageDialog(tr("timeline"), QStringLiteral("timeline"), m_details->timeline(), &MainWindow::exportTimeline); });
    connect(m_plans, &PlansPanel::rowSelected, this, &MainWindow::selectPlan);
    connect(m_detailRunner, &PlanDetailRunner::resultReady, this, [this](std::uint64_t request, std::shared_ptr<const SimulationResult> r) {
        if (request == m_detailRequest) { // else: asked for before the details were cleared or re-asked
            onDetailReady(r);
        }
    });
    connect(m_detailRunner, &PlanDetailRunner::failed, this, [this](std::uint64_t request, const QString& message) {
        if (request == m_detailRequest) {
            m_details->setBusy(tr("This plan cannot be simulated: %1").arg(message.toHtmlEscaped()));
        }
    });
}

void MainWindow::onScenarioEdited(const Scenario& scenario)
{
    if (!m_applying) {
        recordStep(m_pendingStep.isEmpty() ? tr("Edit scenario") : m_pendingStep, scenario);
    }
    m_pendingStep.clear();
    applyScenario(scenario);
    if (m_pendingClean) {
        m_pendingClean = false;
        markClean();
    }
    updateTitle();
}

void MainWindow::recordStep(const QString& text, const Scenario& after)
{
    if (!m_committed) {
        m_committed = after;
        return;
    }
    m_undo->push(new ScenarioStep(text, *m_committed, after, [this](const Scenario& s) {
        m_applying = true;
        m_editor->setScenario(s);
        m_applying = false;
        applyScenario(s);
    }));
}

void MainWindow::applyScenario(const Scenario& scenario)
{
    m_scenario = scenario;
    m_committed = scenario;
    store::autosave(scenario); // every committed edit: a crash loses nothing
    if (m_sweepBar->autoRun()) {
        QString error;
        auto profiles = m_catalog.profilesFor(scenario, error);
        if (profiles.empty()) {
            statusBar()->showMessage(tr("The sweep cannot run: %1").arg(error));
        } else {
            m_runner->schedule(scenario, std::move(profiles), 50); // several quick clicks: one sweep
        }
    }
    updateTitle();
    updateStale();
}

void MainWindow::loadPreset(const QString& id)
{
    if (confirmDiscard(tr("load a preset"))) {
        m_editor->loadPreset(id);
    }
}

bool MainWindow::confirmDiscard(const QString& action)
{
    m_discarded = false;
    if (m_undo->isClean()) {
        return true;
    }
    const QMessageBox::StandardButton answer =
        m_discardPrompt ? m_discardPrompt(action)
                        : QMessageBox::warning(this, tr("Unsaved scenario"),
                                               tr("The scenario has edits that are not saved in a file. Save them before you %1?").arg(action),
                                               QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save) {
        saveOrSaveAs();
        return m_undo->isClean();
    }
    m_discarded = answer == QMessageBox::Discard;
    return m_discarded;
}

bool MainWindow::resultsStale() const
{
    if (!m_sweepScenario) {
        return false; // nothing shown yet
    }
    return !m_scenario || scenario_to_json(*m_scenario) != scenario_to_json(*m_sweepScenario);
}

QString MainWindow::staleNote() const
{
    if (!resultsStale()) {
        return {};
    }
    const QString shown = elidedName(m_sweepScenario->model.name);
    if (!m_scenario) {
        return tr("These results are for the last valid inputs (%1): fix the refused entries to update them.").arg(shown);
    }
    if (m_sweepBar->autoRun()) {
        return tr("These results are for the inputs before your last edit (%1); the sweep re-runs.").arg(shown);
    }
    return tr("These results are for the inputs before your last edits (%1): press Run (F5) to update them.").arg(shown);
}

void MainWindow::updateStale()
{
    const QString note = staleNote();
    m_plot->setStaleNote(note);
    m_plans->setStaleNote(note);
    if (!note.isEmpty()) {
        m_details->setStaleNote(note);
    } else if (m_details->staleNote().startsWith(tr("These results"))) {
        m_details->setStaleNote({});
    }
}

void MainWindow::startSweep()
{
    if (!m_scenario) {
        statusBar()->showMessage(tr("Fix the refused entries in the scenario first."), 5000);
        return;
    }
    QString error;
    auto profiles = m_catalog.profilesFor(*m_scenario, error);
    if (profiles.empty()) {
        statusBar()->showMessage(tr("The sweep cannot run: %1").arg(error));
        return;
    }
    ExploreOptions options;
    const auto space = make_plan_space(*m_scenario, profiles, options.allow_tp_across_nodes);
    options.prune = space.ok() && shouldPrune(m_prunePolicy, space.value().size());
    m_runner->start(*m_scenario, std::move(profiles), options);
}

void MainWindow::setPrunePolicy(PrunePolicy policy, bool remember)
{
    m_prunePolicy = policy;
    for (QAction* a : findChildren<QAction*>(QStringLiteral("prune-") + toString(policy))) {
        a->setChecked(true);
    }
    if (remember && m_options.restoreSession) {
        QSettings().setValue(QLatin1String(settings_keys::kPrune), toString(policy));
    }
}

void MainWindow::cancelSweep()
{
    m_runner->cancel();
}

void MainWindow::saveComparePlans() const
{
    if (!m_options.restoreSession || m_compareRestoresPending > 0) {
        return; // at start, A can come back before B: saving then would forget B
    }
    QSettings settings;
    auto store = [&](const char* key, const std::shared_ptr<const SimulationResult>& r) {
        const auto it = r ? m_planScenarios.find(r.get()) : m_planScenarios.end();
        if (it == m_planScenarios.end()) {
            settings.remove(QLatin1String(key));
            return;
        }
        settings.setValue(QLatin1String(key), QString::fromStdString(scenario_to_json(it->second).dump()));
    };
    store(settings_keys::kComparePinned, m_details->compare()->pinned());
    store(settings_keys::kCompareCurrent, m_details->compare()->current());
}

void MainWindow::restoreComparePlans()
{
    // A (and B until a plan is selected) come back re-simulated: a saved scenario with its plan each.
    for (const auto& [key, pinned] : {std::pair{settings_keys::kComparePinned, true}, std::pair{settings_keys::kCompareCurrent, false}}) {
        const QString text = QSettings().value(QLatin1String(key)).toString();
        if (text.isEmpty() || text.size() > 1'000'000) {
            continue;
        }
        auto parsed = scenario_from_text(text.toStdString());
        if (!parsed.ok() || !parsed.value().plan) {
            continue; // an old or hand-edited entry: nothing to compare
        }
        const Scenario s = parsed.value();
        auto profile = m_catalog.profile(s.cluster.gpu);
        if (!profile) {
            continue;
        }
        if (!pinned) {
            m_restoredCurrent = s;
            m_keepCompareCurrent = true;
        }
        ++m_compareRestoresPending;
        auto* runner = new PlanDetailRunner(this);
        auto finish = [this, runner] {
            --m_compareRestoresPending;
            runner->deleteLater();
        };
        connect(runner, &PlanDetailRunner::resultReady, this,
                [this, s, pinned = pinned, finish](std::uint64_t, std::shared_ptr<const SimulationResult> r) {
                    m_planScenarios[r.get()] = s;
                    if (pinned) {
                        m_details->compare()->setPinned(r);
                    } else if (m_keepCompareCurrent) { // else the user has selected a plan since
                        m_details->compare()->setCurrent(r);
                    }
                    finish();
                });
        connect(runner, &PlanDetailRunner::failed, this, finish);
        runner->request(s, *s.plan, s.cluster.gpu, s.cluster.num_gpus, std::move(profile));
    }
}

void MainWindow::applyPlanFilter()
{
    const PlanFilterModel* filter = m_plans->filterModel();
    if (filter->isActive()) {
        m_plot->setPlanFilter([filter](const PlanRow& r) { return filter->acceptsPlan(r); });
    } else {
        m_plot->setPlanFilter({});
    }
}

void MainWindow::updateCompareContext()
{
    const CompareView* compare = m_details->compare();
    auto scenarioOf = [this](const std::shared_ptr<const SimulationResult>& r) -> const Scenario* {
        const auto it = r ? m_planScenarios.find(r.get()) : m_planScenarios.end();
        return it != m_planScenarios.end() ? &it->second : nullptr;
    };
    const Scenario* a = scenarioOf(compare->pinned());
    const Scenario* b = scenarioOf(compare->current());
    m_details->compare()->setWorkloadNote(a && b ? workloadDifference(*a, *b) : QString());
    // A point of another model's chart is no point of this one.
    const auto pinned = compare->pinned();
    const bool onChart = pinned && (!a || !m_sweepScenario || sameWorkload(*a, *m_sweepScenario));
    m_plot->setPinned(onChart ? std::optional<QPointF>(QPointF(pinned->training_days, pinned->cost_usd)) : std::nullopt);
}

void MainWindow::onSweepStarted(const Scenario& scenario)
{
    // Another model or token budget: the selected plan, its search and task panel belong to the old one.
    const bool newWorkload = m_sweepScenario && !sameWorkload(*m_sweepScenario, scenario);
    m_sweepScenario = scenario;
    m_selectedRow = -1;
    m_planModel->clear();
    m_rejectModel->clear();
    m_plot->setSelectedRow(-1);
    m_plot->setTitle(tr("%1: training time vs cost").arg(elidedName(scenario.model.name)));
    if (m_autoColor) {
        // Until the user picks a colouring: GPU types apart when the sweep compares several, else tp.
        const bool severalGpus = scenario.search && scenario.search->gpu.size() > 1;
        m_plot->setColorDimension(severalGpus ? ColorDimension::GpuType : ColorDimension::TensorParallel);
    }
    updateStale();
    if (newWorkload) {
        m_detailRequest = 0; // a simulation of the old model still running lands nowhere
        m_details->resetForNewScenario(tr("Sweeping %1: its balanced front plan is selected when the sweep ends.").arg(workloadName(scenario)));
    } else if (m_details->hasPlan()) {
        m_details->setStaleNote(tr("This plan is from the previous sweep; a plan of the new one is selected when it ends."));
    }
    updateCompareContext();
    statusBar()->clearMessage();
}

void MainWindow::onSweepFinished(std::shared_ptr<const ExploreResult> result)
{
    // A cancelled sweep's front is recomputed from the rows actually shown, so plot, table and front agree.
    const std::vector<PlanRow> front = result->cancelled ? pareto_front(m_planModel->rows()) : result->front;
    std::vector<std::uint64_t> indices;
    indices.reserve(front.size());
    for (const PlanRow& r : front) {
        indices.push_back(r.index);
    }
    m_planModel->setFront(indices);
    if (m_plans->filterModel()->frontOnly()) {
        applyPlanFilter(); // rows streamed in before the front was known
    }
    m_rejectModel->setResult(*result);
    m_plot->flush();
    if (m_selectedRow < 0 && !front.empty()) {
        // After a restart the first sweep selects Compare's B again when it is one of its plans; when it is
        // not, B stays in Compare until the user selects a plan.
        const int restored = m_restoredCurrent ? rowOfScenario(*m_restoredCurrent) : -1;
        m_keepCompareCurrent = m_restoredCurrent && restored < 0;
        m_restoredCurrent.reset();
        showPlan(restored >= 0 ? restored : balancedFrontRow());
    } else {
        m_restoredCurrent.reset();
    }
    if (front.empty()) {
        // Nothing of the old selection may stay on screen: it belongs to other inputs.
        m_detailRequest = 0;
        m_details->clear(result->cancelled ? tr("The sweep was cancelled before any plan fit.")
                                           : tr("No plan fits these inputs: see the Rejected tab for why."));
        m_details->setStaleNote({});
    }
    if (result->feasible == 0 && !result->cancelled) {
        statusBar()->showMessage(tr("No plan fits: see the Rejected tab for why."));
    }
}

int MainWindow::balancedFrontRow() const
{
    // The front's knee: the plan closest to both the fastest time and the lowest cost, in relative terms.
    const std::vector<int>& rows = m_planModel->frontRows();
    double minDays = INFINITY, minCost = INFINITY;
    for (int row : rows) {
        minDays = std::min(minDays, m_planModel->planRow(row).training_days);
        minCost = std::min(minCost, m_planModel->planRow(row).cost_usd);
    }
    int best = rows.empty() ? -1 : rows.front();
    double bestScore = INFINITY;
    for (int row : rows) {
        const PlanRow& r = m_planModel->planRow(row);
        const double score = r.training_days / minDays + r.cost_usd / minCost;
        if (score < bestScore) {
            bestScore = score;
            best = row;
        }
    }
    return best;
}

std::optional<Scenario> MainWindow::scenarioOfRow(int row)
{
    if (row < 0 || row >= m_planModel->rowCount() || !m_sweepScenario) {
        return std::nullopt;
    }
    const PlanRow& r = m_planModel->planRow(row);
    const auto profile = m_catalog.profile(r.gpu);
    if (!profile) {
        return std::nullopt;
    }
    // As the plan runs: its GPU, GPU count and node size (for "Launch flags…"), and the precision the
    // sweep gave it (a search axis: a row of an FP8 sweep is simulated at FP8, not the editor's BF16).
    // Its cluster as the sweep priced it: another GPU type than the scenario's has its profile's price and links.
    Scenario selected = *m_sweepScenario;
    selected.cluster = cluster_for_gpu(*m_sweepScenario, r.gpu, r.num_gpus);
    selected.cluster.gpus_per_node = gpus_per_node_for(selected, *profile);
    selected.training.precision = r.precision;
    selected.plan = r.plan;
    return selected;
}

int MainWindow::rowOfScenario(const Scenario& wanted)
{
    if (!wanted.plan) {
        return -1;
    }
    const nlohmann::json json = scenario_to_json(wanted);
    for (int row = 0; row < m_planModel->rowCount(); ++row) {
        const PlanRow& r = m_planModel->planRow(row);
        if (r.plan == *wanted.plan && r.gpu == wanted.cluster.gpu && r.num_gpus == wanted.cluster.num_gpus) {
            const auto candidate = scenarioOfRow(row);
            if (candidate && scenario_to_json(*candidate) == json) {
                return row;
            }
        }
    }
    return -1;
}

void MainWindow::selectPlan(int row)
{
    m_keepCompareCurrent = false; // the user's choice: Compare's B follows it again
    showPlan(row);
}

void MainWindow::showPlan(int row)
{
    if (row < 0 || row >= m_planModel->rowCount() || !m_sweepScenario) {
        return;
    }
    m_selectedRow = row;
    m_plot->setSelectedRow(row);
    m_plans->selectRow(row);
    const PlanRow& r = m_planModel->planRow(row);
    QString error;
    auto profile = m_catalog.profile(r.gpu, &error);
    if (!profile) {
        m_details->setBusy(tr("No profile for %1: %2").arg(QString::fromStdString(r.gpu), error));
        return;
    }
    m_details->setBusy(tr("Simulating %1 × %2 · %3 …").arg(formatCount(r.num_gpus), QString::fromStdString(r.gpu), planSummary(r.plan)));
    const Scenario selected = scenarioOfRow(row).value();
    m_details->setLaunchScenario(selected);
    m_requestedScenario = selected;
    m_detailRequest = m_detailRunner->request(selected, r.plan, r.gpu, r.num_gpus, std::move(profile));
}

void MainWindow::onDetailReady(std::shared_ptr<const SimulationResult> result)
{
    // What each shown plan was simulated from, so the Compare tab's A and B outlive a restart.
    std::erase_if(m_planScenarios, [this](const auto& entry) {
        return entry.first != m_details->compare()->pinned().get() && entry.first != m_details->compare()->current().get();
    });
    if (result && m_requestedScenario) {
        m_planScenarios[result.get()] = *m_requestedScenario;
    }
    m_details->setResult(std::move(result), !m_keepCompareCurrent);
    m_details->setStaleNote(resultsStale() ? staleNote() : QString());
}

void MainWindow::updateTitle()
{
    // Elided: a model name is free text (a 50 MB one once became the window title).
    const QString name =
        m_filePath.isEmpty() ? (m_scenario ? elidedName(m_scenario->model.name) : tr("untitled")) : elidedText(QFileInfo(m_filePath).fileName());
    setWindowTitle(tr("%1[*] — vtrain-explorer").arg(name));
}

void MainWindow::placeOnScreen()
{
    winId(); // the native window: where the platform knows its frame before mapping, setFrame() counts it
    if (const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen()) {
        setFrame(freshWindowFrame(s->availableGeometry()));
    }
    m_refitOnShow = true;
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!m_refitOnShow) {
        return;
    }
    m_refitOnShow = false;
    // A window manager gives its frame only once the window is mapped: fitted again with it.
    QTimer::singleShot(0, this, [this] {
        const QScreen* s = screen();
        if (!s || isMaximized() || isFullScreen()) {
            return;
        }
        const QRect wanted = freshWindowFrame(s->availableGeometry());
        if (frameGeometry().size() != wanted.size()) {
            setFrame(wanted);
        }
    });
}

void MainWindow::setFrame(const QRect& frame)
{
    const QMargins margins = windowHandle() ? windowHandle()->frameMargins() : QMargins();
    const QRect client = frame.marginsRemoved(margins);
    resize(client.size());
    move(frame.topLeft()); // a top-level window's pos() is its frame's
}

void MainWindow::restoreLayout()
{
    const QSettings settings;
    if (restoreGeometry(settings.value(QLatin1String(settings_keys::kMainWindowGeometry)).toByteArray()) && !isMaximized() && !isFullScreen()) {
        // Saved on another (bigger) screen: moved and shrunk onto this one.
        const QScreen* s = QGuiApplication::screenAt(frameGeometry().center());
        s = s ? s : QGuiApplication::primaryScreen();
        if (s && !s->availableGeometry().contains(frameGeometry())) {
            setFrame(clampedWindowFrame(frameGeometry(), s->availableGeometry()));
        }
    }
    restoreState(settings.value(QLatin1String(settings_keys::kMainWindowState)).toByteArray(), settings_keys::kMainWindowStateVersion);
}

void MainWindow::saveLayout() const
{
    QSettings settings;
    settings.setValue(QLatin1String(settings_keys::kMainWindowGeometry), saveGeometry());
    settings.setValue(QLatin1String(settings_keys::kMainWindowState), saveState(settings_keys::kMainWindowStateVersion));
    if (m_autoColor) {
        settings.remove(QLatin1String(settings_keys::kColorDimension));
    } else {
        settings.setValue(QLatin1String(settings_keys::kColorDimension), static_cast<int>(m_plot->colorDimension()));
    }
    settings.setValue(QLatin1String(settings_keys::kLogAxes), m_plot->logAxes());
    settings.setValue(QLatin1String(settings_keys::kAutoRun), m_sweepBar->autoRun());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (!confirmDiscard(tr("quit"))) {
        event->ignore();
        return;
    }
    if (m_discarded) {
        revertAutosaveToClean(); // else the next start brings the discarded edit back
    }
    if (m_options.restoreSession) {
        m_tabs->setCurrentIndex(0); // the docks back, so the saved layout is the Plans tab's
        saveLayout();
    }
    m_runner->cancel();
    QMainWindow::closeEvent(event);
}

} // namespace vtrain::ui
