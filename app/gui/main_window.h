// SPDX-License-Identifier: MIT
#pragma once
// The main window assembles the pages: scenario editor (left dock), Pareto chart (centre), plan table
// (right dock), the selected plan's timeline / memory / comparison (bottom dock) and the sweep bar. It
// wires selection between them and owns the sweep and detail runners; views know nothing of each other.
// The centre is a tab widget: the Pareto chart ("Plans"), then the two case studies ("Optimal model",
// "Shared cluster"), which run on their own and hide the plan docks while shown.
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include <QMainWindow>
#include <QMessageBox>

#include "models/profile_catalog.h"
#include "models/prune_policy.h"
#include "views/theme.h"
#include "vtrain/explorer.h"
#include "vtrain/simulation_result.h"

class QAction;
class QDockWidget;
class QMenu;
class QTabWidget;
class QUndoStack;

namespace vtrain::ui {

class DetailsPanel;
class ClusterScheduleView;
class OptimalModelView;
class ParetoPlot;
class PlanDetailRunner;
class PlanTableModel;
class PlansPanel;
class RejectModel;
class ScenarioEditor;
class SweepBar;
class SweepRunner;
struct ExportSize;

struct MainWindowOptions {
    bool restoreSession = true;             // window layout and the autosaved scenario
    bool runOnStart = true;                 // sweep the start scenario right away
    std::optional<Scenario> scenario;       // start with this instead of the autosave or the default
    std::optional<ProfileLibrary> profiles; // default: the standard search path
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    // The pieces, for tests and the screenshot mode.
    ScenarioEditor* editor() const { return m_editor; }
    ParetoPlot* paretoPlot() const { return m_plot; }
    PlansPanel* plansPanel() const { return m_plans; }
    DetailsPanel* details() const { return m_details; }
    SweepRunner* sweepRunner() const { return m_runner; }
    PlanDetailRunner* detailRunner() const { return m_detailRunner; }
    PlanTableModel* planModel() const { return m_planModel; }
    RejectModel* rejectModel() const { return m_rejectModel; }
    SweepBar* sweepBar() const { return m_sweepBar; }
    int selectedRow() const { return m_selectedRow; }
    // The central tabs: Plans (the Pareto chart), Optimal model, Shared cluster.
    QTabWidget* tabs() const { return m_tabs; }
    OptimalModelView* optimalModelView() const { return m_optimalModel; }
    ClusterScheduleView* clusterScheduleView() const { return m_cluster; }

    QUndoStack* undoStack() const { return m_undo; }
    // True while the shown results (chart, table, selected plan) belong to other inputs than the editor's.
    bool resultsStale() const;
    QString staleNote() const;
    // Asked before unsaved scenario edits would be discarded (a preset, opening a file, quitting): Save,
    // Discard or Cancel. The default shows a message box; tests answer for the user.
    using DiscardPrompt = std::function<QMessageBox::StandardButton(const QString& action)>;
    void setDiscardPrompt(DiscardPrompt prompt) { m_discardPrompt = std::move(prompt); }
    // False when the user keeps the unsaved edits (Cancel, or a failed save).
    bool confirmDiscard(const QString& action);
    // Message shown when the session could not be restored as saved (an unreadable autosave); empty if fine.
    QString restoreProblem() const { return m_restoreProblem; }

    void setTheme(theme::Theme theme, bool remember = true); // View > Theme
    bool colorFollowsSweep() const { return m_autoColor; }
    void setPrunePolicy(PrunePolicy policy, bool remember = true); // Sweep > Prune (the next sweep)
    PrunePolicy prunePolicy() const { return m_prunePolicy; }
    // Dock sizes for a first start (no saved layout): the chart gets the most room.
    void applyDefaultDockSizes();
    // A fresh start's size and place: at most 90 % of the screen's available area, centred (window_geometry.h).
    void placeOnScreen();

    // Commands (menus call these; tests too).
    void loadPreset(const QString& id);
    void startSweep();
    void cancelSweep();
    void selectPlan(int row);
    bool openScenario(const QString& path, QString* error = nullptr);
    bool saveScenario(const QString& path, QString* error = nullptr);
    bool exportPareto(const QString& path, const ExportSize& size, QString* error = nullptr);
    bool exportTimeline(const QString& path, const ExportSize& size, QString* error = nullptr);
    bool exportMemory(const QString& path, const ExportSize& size, QString* error = nullptr);
    bool exportPlans(const QString& path, QString* error = nullptr); // .csv or .json by suffix
    bool exportChromeTrace(const QString& path, QString* error = nullptr);
    // Where the export and save dialogs start: `fileName` in the folder last used, else Documents, else
    // home, whichever exists first.
    QString suggestedPath(const QString& fileName) const;

    // File > Import… and a dropped file (import_action.cpp): a Hugging Face config.json, Megatron-LM
    // arguments, a torchtitan TOML or Megatron-Bridge overrides becomes the scenario, as if opened but not
    // yet saved; a model-only file keeps the window's GPU type and count. `notes` gets what was assumed.
    bool importFile(const QString& path, QString* error = nullptr, QStringList* notes = nullptr);

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildDocks();
    void buildTabs();
    void onTabChanged(int index);
    void buildMenus();
    void buildExportMenu(QMenu* menu);
    void connectRunners();
    void restoreLayout(); // the saved geometry clamped to this screen, and the dock layout
    void setFrame(const QRect& frame);
    void saveLayout() const;
    void onScenarioEdited(const Scenario& scenario);
    void applyScenario(const Scenario& scenario); // editor, autosave and sweep: an edit, an undo or a redo
    void recordStep(const QString& text, const Scenario& after);
    void updateStale();
    void applyPlanFilter();
    void saveComparePlans() const;
    void restoreComparePlans();
    void buildEditMenu();
    void buildHelpMenu();
    void onSweepStarted(const Scenario& scenario);
    void onSweepFinished(std::shared_ptr<const ExploreResult> result);
    void onDetailReady(std::shared_ptr<const SimulationResult> result);
    int balancedFrontRow() const;
    void showPlan(int row); // selectPlan() without the user's intent: a restored Compare B may stay
    // The selected row as the scenario it runs as (its GPU, count, node size, price, precision and plan).
    std::optional<Scenario> scenarioOfRow(int row);
    // The row whose scenario is `wanted` (a restored Compare B), or -1.
    int rowOfScenario(const Scenario& wanted);
    void updateTitle();
    void rebuildRecentMenu();
    // The session (main_window_session.cpp): the autosave, its file and whether it holds unsaved edits.
    std::optional<Scenario> restoreSessionScenario();
    void markClean(); // the scenario is as in its file (opened, saved) or as a preset loaded it
    void persistSession() const;
    void revertAutosaveToClean(); // Discard on quit
    // Compare's A on the chart only when it trains what the chart shows; a note when A and B differ so.
    void updateCompareContext();
    // Menu actions with file dialogs and error boxes.
    void openDialog();
    void importDialog();
    void showImportNotes(const QString& path, const QStringList& notes);
    void saveAsDialog();
    void saveOrSaveAs();
    void exportImageDialog(const QString& what, const QString& name, QWidget* view,
                           bool (MainWindow::*exporter)(const QString&, const ExportSize&, QString*));
    void exportFileDialog(const QString& what, const QString& filter, const QString& name, bool (MainWindow::*exporter)(const QString&, QString*));
    QString lastDirectory() const;
    void rememberDirectory(const QString& path) const;

    MainWindowOptions m_options;
    ProfileCatalog m_catalog;
    PlanTableModel* m_planModel = nullptr;
    RejectModel* m_rejectModel = nullptr;
    SweepRunner* m_runner = nullptr;
    PlanDetailRunner* m_detailRunner = nullptr;
    ScenarioEditor* m_editor = nullptr;
    ParetoPlot* m_plot = nullptr;
    QTabWidget* m_tabs = nullptr;
    OptimalModelView* m_optimalModel = nullptr;
    ClusterScheduleView* m_cluster = nullptr;
    QList<QWidget*> m_hiddenForTab; // plan docks and toolbar hidden while a case-study tab is shown
    PlansPanel* m_plans = nullptr;
    DetailsPanel* m_details = nullptr;
    SweepBar* m_sweepBar = nullptr;
    QDockWidget* m_editorDock = nullptr;
    QDockWidget* m_plansDock = nullptr;
    QDockWidget* m_detailsDock = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
    PrunePolicy m_prunePolicy = PrunePolicy::LargeSweeps;
    bool m_autoColor = true; // the chart's colouring follows the sweep (GPU type when it has several) until chosen

    std::optional<Scenario> m_scenario;      // the editor's latest valid scenario
    std::optional<Scenario> m_sweepScenario; // what the shown results were computed from
    QUndoStack* m_undo = nullptr;
    DiscardPrompt m_discardPrompt;
    QString m_restoreProblem;
    bool m_applying = false;             // an undo/redo is filling the editor: not a new step
    std::optional<Scenario> m_committed; // the scenario of the last undo step (what an undo returns to)
    QString m_pendingStep;               // the next step's name ("Load preset …")
    bool m_pendingClean = false;
    std::uint64_t m_detailRequest = 0;                           // the selected plan's simulation; 0 = none wanted
    std::optional<Scenario> m_requestedScenario;                 // the selected plan as a scenario with its plan
    std::map<const SimulationResult*, Scenario> m_planScenarios; // Compare's A and B: what they were simulated from
    int m_compareRestoresPending = 0;                            // A and B re-simulating at start: not saved over meanwhile
    std::optional<Scenario> m_restoredCurrent;                   // B as saved: the first sweep selects it again, or leaves it in Compare
    bool m_keepCompareCurrent = false;                           // the automatic selection does not replace a restored B
    QString m_filePath;
    int m_selectedRow = -1;
    std::optional<Scenario> m_cleanScenario; // as last opened, saved or loaded from a preset
    QString m_cleanPath;                     // ... and its file (empty: none, e.g. a preset)
    bool m_restoredModified = false;         // the autosave restored at start held unsaved edits
    bool m_discarded = false;                // the last confirmDiscard() was answered Discard
    bool m_refitOnShow = false;              // placeOnScreen(): fitted again once the frame is known
};

} // namespace vtrain::ui
