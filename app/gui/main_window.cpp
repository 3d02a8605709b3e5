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
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>

#include "details_panel.h"
#include "models/format.h"
#include "models/plan_detail_runner.h"
#include "models/plan_table_model.h"
#include "models/presets.h"
#include "models/reject_model.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "models/sweep_runner.h"
#include "views/cluster_schedule_view.h"
#include "views/optimal_model_view.h"
#include "views/pareto_plot.h"
#include "views/plans_panel.h"
#include "views/scenario_editor.h"
#include "views/sweep_bar.h"
#include "vtrain/explorer_space.h"

namespace vtrain::ui {

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(std::move(options))
    , m_catalog(m_options.profiles ? ProfileCatalog(*m_options.profiles) : ProfileCatalog())
{
    setObjectName(QStringLiteral("mainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/vtrain-explorer.svg")));
    m_planModel = new PlanTableModel(this);
    m_rejectModel = new RejectModel(this);
    m_runner = new SweepRunner(this);
    m_detailRunner = new PlanDetailRunner(this);

    m_plot = new ParetoPlot(this);
    m_plot->setObjectName(QStringLiteral("paretoPlot"));
    m_plot->setModel(m_planModel);
    buildTabs();
    buildDocks();
    buildMenus();
    connectRunners();

    QHash<QString, double> prices;
    for (const QString& id : m_catalog.ids()) {
        if (const auto profile = m_catalog.profile(id.toStdString())) {
            prices.insert(id, profile->price_usd_per_gpu_hour);
        }
    }
    m_editor->setProfiles(m_catalog.ids(), prices);

    const QSettings settings;
    if (m_options.restoreSession) {
        restoreLayout();
        m_plot->setColorDimension(static_cast<ColorDimension>(settings.value(QLatin1String(settings_keys::kColorDimension), 0).toInt()));
        m_plot->setLogAxes(settings.value(QLatin1String(settings_keys::kLogAxes), false).toBool());
        m_sweepBar->setAutoRun(settings.value(QLatin1String(settings_keys::kAutoRun), true).toBool());
        m_optimalModel->restoreInputs();
        m_cluster->restoreInputs();
    }
    // Start scenario: the one asked for, else the autosave (a crash loses nothing), else MT-NLG 530B.
    std::optional<Scenario> start = m_options.scenario;
    if (!start && m_options.restoreSession) {
        start = store::restoreAutosave();
    }
    m_editor->setScenario(start.value_or(defaultScenario()));
    m_scenario = m_editor->scenario();
    m_sweepBar->setRunEnabled(m_editor->isValid());
    updateTitle();
    if (m_options.runOnStart && m_scenario) {
        startSweep();
    }
}

MainWindow::~MainWindow() = default;

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

void MainWindow::buildTabs()
{
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("mainTabs"));
    m_tabs->setDocumentMode(true);
    m_optimalModel = new OptimalModelView(&m_catalog, m_tabs);
    m_cluster = new ClusterScheduleView(&m_catalog, m_tabs);
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
        presetsMenu->addAction(p.title, this, [this, id = p.id] {
            m_filePath.clear();
            m_editor->loadPreset(id);
            updateTitle();
        });
    }
    file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("&Open scenario…"), QKeySequence::Open, this, &MainWindow::openDialog);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addAction(QIcon(QStringLiteral(":/icons/save.svg")), tr("&Save scenario"), QKeySequence::Save, this, &MainWindow::saveOrSaveAs);
    file->addAction(tr("Save scenario &as…"), QKeySequence::SaveAs, this, &MainWindow::saveAsDialog);
    file->addSeparator();
    buildExportMenu(file->addMenu(QIcon(QStringLiteral(":/icons/export.svg")), tr("&Export")));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* sweep = menuBar()->addMenu(tr("&Sweep"));
    m_runAction = sweep->addAction(QIcon(QStringLiteral(":/icons/run.svg")), tr("&Run"), QKeySequence(Qt::Key_F5), this, &MainWindow::startSweep);
    m_cancelAction = sweep->addAction(QIcon(QStringLiteral(":/icons/cancel.svg")), tr("&Cancel"), QKeySequence(Qt::Key_Escape), this,
                                      &MainWindow::cancelSweep);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_editorDock->toggleViewAction());
    view->addAction(m_plansDock->toggleViewAction());
    view->addAction(m_detailsDock->toggleViewAction());
    view->addSeparator();
    QAction* log = view->addAction(QIcon(QStringLiteral(":/icons/log-axes.svg")), tr("&Logarithmic axes"));
    log->setCheckable(true);
    connect(log, &QAction::toggled, m_plot, &ParetoPlot::setLogAxes);
    connect(m_plot, &ParetoPlot::logAxesChanged, log, &QAction::setChecked);
    QMenu* colorBy = view->addMenu(tr("&Colour points by"));
    auto* group = new QActionGroup(colorBy);
    const QStringList names = colorDimensionNames();
    for (int i = 0; i < names.size(); ++i) {
        QAction* a = colorBy->addAction(names[i], this, [this, i] { m_plot->setColorDimension(static_cast<ColorDimension>(i)); });
        a->setCheckable(true);
        a->setChecked(i == 0);
        group->addAction(a);
    }
    connect(m_plot, &ParetoPlot::colorDimensionChanged, group, [group](ColorDimension d) {
        group->actions().at(static_cast<int>(d))->setChecked(true);
    });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About vtrain-explorer"), this, [this] {
        QMessageBox::about(this, tr("About vtrain-explorer"),
                           tr("<b>vtrain-explorer %1</b><p>Simulate, explore and cost parallelization plans for training large "
                              "language models: every plan of a search space on the Pareto front of training time and cost, "
                              "with the pipeline timeline and memory of any plan.</p>")
                               .arg(QStringLiteral(VTRAIN_VERSION)));
    });
}

void MainWindow::connectRunners()
{
    connect(m_editor, &ScenarioEditor::scenarioEdited, this, &MainWindow::onScenarioEdited);
    connect(m_editor, &ScenarioEditor::validityChanged, m_sweepBar, &SweepBar::setRunEnabled);
    connect(m_sweepBar, &SweepBar::runRequested, this, &MainWindow::startSweep);
    connect(m_sweepBar, &SweepBar::cancelRequested, this, &MainWindow::cancelSweep);
    connect(m_runner, &SweepRunner::started, this, [this](std::uint64_t, const Scenario& s) { onSweepStarted(s); });
    connect(m_runner, &SweepRunner::rowsArrived, m_planModel, &PlanTableModel::appendRows);
    connect(m_runner, &SweepRunner::finished, this, [this](std::uint64_t, std::shared_ptr<const ExploreResult> r) { onSweepFinished(r); });
    connect(m_runner, &SweepRunner::failed, this, [this](std::uint64_t, const QString& message) {
        statusBar()->showMessage(tr("The sweep cannot run: %1").arg(message));
    });
    connect(m_runner, &SweepRunner::stateChanged, this, [this](SweepRunner::State state) {
        m_cancelAction->setEnabled(state == SweepRunner::State::Running);
    });
    connect(m_plot, &ParetoPlot::rowClicked, this, &MainWindow::selectPlan);
    connect(m_plans, &PlansPanel::rowSelected, this, &MainWindow::selectPlan);
    connect(m_detailRunner, &PlanDetailRunner::resultReady, this,
            [this](std::uint64_t, std::shared_ptr<const SimulationResult> r) { onDetailReady(r); });
    connect(m_detailRunner, &PlanDetailRunner::failed, this, [this](std::uint64_t, const QString& message) {
        m_details->setBusy(tr("This plan cannot be simulated: %1").arg(message.toHtmlEscaped()));
    });
}

void MainWindow::onScenarioEdited(const Scenario& scenario)
{
    m_scenario = scenario;
    store::autosave(scenario); // every valid edit: a crash loses nothing
    setWindowModified(true);
    if (m_sweepBar->autoRun()) {
        QString error;
        auto profiles = m_catalog.profilesFor(scenario, error);
        if (profiles.empty()) {
            statusBar()->showMessage(tr("The sweep cannot run: %1").arg(error));
            return;
        }
        m_runner->schedule(scenario, std::move(profiles), 600); // debounce: typing "4096" is one sweep, not four
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
    m_runner->start(*m_scenario, std::move(profiles));
}

void MainWindow::cancelSweep()
{
    m_runner->cancel();
}

void MainWindow::onSweepStarted(const Scenario& scenario)
{
    m_sweepScenario = scenario;
    m_selectedRow = -1;
    m_planModel->clear();
    m_rejectModel->clear();
    m_plot->setSelectedRow(-1);
    m_plot->setTitle(tr("%1: training time vs cost").arg(QString::fromStdString(scenario.model.name)));
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
    m_rejectModel->setResult(*result);
    m_plot->flush();
    if (m_selectedRow < 0 && !front.empty()) {
        selectPlan(balancedFrontRow());
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

void MainWindow::selectPlan(int row)
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
    Scenario selected = *m_sweepScenario; // as the plan runs: its GPU, GPU count and node size (for "Launch flags…")
    selected.cluster.gpu = r.gpu;
    selected.cluster.num_gpus = r.num_gpus;
    selected.cluster.gpus_per_node = gpus_per_node_for(selected, *profile);
    selected.plan = r.plan;
    m_details->setLaunchScenario(selected);
    m_detailRunner->request(*m_sweepScenario, r.plan, r.gpu, r.num_gpus, std::move(profile));
}

void MainWindow::onDetailReady(std::shared_ptr<const SimulationResult> result)
{
    m_details->setResult(std::move(result));
}

void MainWindow::updateTitle()
{
    const QString name = m_filePath.isEmpty() ? (m_scenario ? QString::fromStdString(m_scenario->model.name) : tr("untitled"))
                                              : QFileInfo(m_filePath).fileName();
    setWindowTitle(tr("%1[*] — vtrain-explorer").arg(name));
}

void MainWindow::restoreLayout()
{
    const QSettings settings;
    restoreGeometry(settings.value(QLatin1String(settings_keys::kMainWindowGeometry)).toByteArray());
    restoreState(settings.value(QLatin1String(settings_keys::kMainWindowState)).toByteArray(), settings_keys::kMainWindowStateVersion);
}

void MainWindow::saveLayout() const
{
    QSettings settings;
    settings.setValue(QLatin1String(settings_keys::kMainWindowGeometry), saveGeometry());
    settings.setValue(QLatin1String(settings_keys::kMainWindowState), saveState(settings_keys::kMainWindowStateVersion));
    settings.setValue(QLatin1String(settings_keys::kColorDimension), static_cast<int>(m_plot->colorDimension()));
    settings.setValue(QLatin1String(settings_keys::kLogAxes), m_plot->logAxes());
    settings.setValue(QLatin1String(settings_keys::kAutoRun), m_sweepBar->autoRun());
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    if (m_options.restoreSession) {
        m_tabs->setCurrentIndex(0); // the docks back, so the saved layout is the Plans tab's
        saveLayout();
    }
    m_runner->cancel();
    QMainWindow::closeEvent(event);
}

} // namespace vtrain::ui
