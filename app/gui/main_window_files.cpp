// SPDX-License-Identifier: MIT
// The main window's file side: scenario open/save with recent files, and every export (chart and
// timeline images, plans as CSV/JSON, the timeline as a Chrome trace), with honest error messages.
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QUndoStack>

#include "details_panel.h"
#include "main_window.h"
#include "models/format.h"
#include "models/plan_detail_runner.h"
#include "models/plan_dimensions.h"
#include "models/plan_export.h"
#include "models/plan_table_model.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "views/cluster_schedule_view.h"
#include "views/export.h"
#include "views/export_dialog.h"
#include "views/memory_view.h"
#include "views/optimal_model_view.h"
#include "views/pareto_plot.h"
#include "views/scenario_editor.h"
#include "views/timeline_view.h"

#include <qcustomplot.h>

namespace vtrain::ui {

bool MainWindow::openScenario(const QString& path, QString* error)
{
    QString why;
    const auto scenario = store::readScenario(path, &why);
    if (!scenario) {
        if (error) {
            *error = why;
        }
        return false;
    }
    m_filePath = QFileInfo(path).absoluteFilePath();
    store::addRecentFile(m_filePath);
    m_editor->setScenario(*scenario);
    m_scenario = m_editor->scenario();
    if (m_scenario) {
        recordStep(tr("Open %1").arg(QFileInfo(path).fileName()), *m_scenario);
        m_committed = m_scenario;
        store::autosave(*m_scenario);
        if (m_sweepBar) {
            startSweep();
        }
    }
    markClean();
    updateTitle();
    updateStale();
    return true;
}

bool MainWindow::saveScenario(const QString& path, QString* error)
{
    if (!m_scenario) {
        if (error) {
            *error = tr("The scenario has refused entries; fix them before saving.");
        }
        return false;
    }
    if (!store::writeScenario(path, *m_scenario, error)) {
        return false;
    }
    m_filePath = QFileInfo(path).absoluteFilePath();
    store::addRecentFile(m_filePath);
    markClean();
    updateTitle();
    return true;
}

QString MainWindow::lastDirectory() const
{
    // The folder last used, else Documents, else home: the first that exists (a missing ~/Documents once
    // made the default export path fail with no reason given).
    for (const QString& dir : {QSettings().value(QLatin1String(settings_keys::kLastDirectory)).toString(),
                               QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation), QDir::homePath()}) {
        if (!dir.isEmpty() && QFileInfo(dir).isDir()) {
            return dir;
        }
    }
    return QDir::currentPath();
}

QString MainWindow::suggestedPath(const QString& fileName) const
{
    return QDir(lastDirectory()).filePath(fileName);
}

void MainWindow::rememberDirectory(const QString& path) const
{
    QSettings().setValue(QLatin1String(settings_keys::kLastDirectory), QFileInfo(path).absolutePath());
}

void MainWindow::openDialog()
{
    if (!confirmDiscard(tr("open another scenario"))) {
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), lastDirectory(), tr("Scenario (*.json);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    rememberDirectory(path);
    QString error;
    if (!openScenario(path, &error)) {
        QMessageBox::warning(this, tr("Open Failed"), tr("%1 cannot be opened:\n\n%2").arg(QFileInfo(path).fileName(), error));
    }
}

void MainWindow::saveOrSaveAs()
{
    if (m_filePath.isEmpty()) {
        saveAsDialog();
        return;
    }
    QString error;
    if (!saveScenario(m_filePath, &error)) {
        QMessageBox::warning(this, tr("Save Failed"), error);
    }
}

void MainWindow::saveAsDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), lastDirectory(), tr("Scenario (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    if (QFileInfo(path).suffix().isEmpty()) {
        path += QStringLiteral(".json");
    }
    rememberDirectory(path);
    QString error;
    if (!saveScenario(path, &error)) {
        QMessageBox::warning(this, tr("Save Failed"), error);
    }
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList files = store::recentFiles();
    for (const QString& path : files) {
        m_recentMenu
            ->addAction(QFileInfo(path).fileName(), this,
                        [this, path] {
                            if (!confirmDiscard(tr("open another scenario"))) {
                                return;
                            }
                            QString error;
                            if (!openScenario(path, &error)) {
                                store::removeRecentFile(path);
                                QMessageBox::warning(this, tr("Open Failed"), tr("%1 cannot be opened:\n\n%2").arg(path, error));
                            }
                        })
            ->setToolTip(path);
    }
    if (files.isEmpty()) {
        m_recentMenu->addAction(tr("(none)"))->setEnabled(false);
    }
}

void MainWindow::buildExportMenu(QMenu* menu)
{
    menu->addAction(tr("Pareto chart as image…"), this,
                    [this] { exportImageDialog(tr("Pareto chart"), QStringLiteral("pareto"), m_plot->customPlot(), &MainWindow::exportPareto); });
    menu->addAction(tr("Timeline as image…"), this,
                    [this] { exportImageDialog(tr("timeline"), QStringLiteral("timeline"), m_details->timeline(), &MainWindow::exportTimeline); });
    menu->addAction(tr("Memory chart as image…"), this,
                    [this] { exportImageDialog(tr("memory chart"), QStringLiteral("memory"), m_details->memory(), &MainWindow::exportMemory); });
    menu->addAction(tr("Optimal-model chart as image…"), m_optimalModel, &OptimalModelView::exportDialog);
    menu->addAction(tr("Cluster schedule as image…"), m_cluster, &ClusterScheduleView::exportDialog);
    menu->addSeparator();
    menu->addAction(tr("Plans as CSV…"), this,
                    [this] { exportFileDialog(tr("plans"), tr("CSV (*.csv)"), QStringLiteral("plans.csv"), &MainWindow::exportPlans); });
    menu->addAction(tr("Plans as JSON…"), this,
                    [this] { exportFileDialog(tr("plans"), tr("JSON (*.json)"), QStringLiteral("plans.json"), &MainWindow::exportPlans); });
    menu->addAction(tr("Timeline as Chrome trace…"), this, [this] {
        exportFileDialog(tr("timeline"), tr("Chrome trace (*.json)"), QStringLiteral("timeline.trace.json"), &MainWindow::exportChromeTrace);
    });
}

void MainWindow::exportImageDialog(const QString& what, const QString& name, QWidget* view,
                                   bool (MainWindow::*exporter)(const QString&, const ExportSize&, QString*))
{
    const auto request = ExportDialog::ask(this, what, suggestedPath(name + QStringLiteral(".png")), view->size());
    if (!request) {
        return;
    }
    rememberDirectory(request->path);
    QString error;
    if (!(this->*exporter)(request->path, request->size, &error)) {
        QMessageBox::warning(this, tr("Export Failed"), error);
        return;
    }
    statusBar()->showMessage(tr("Wrote %1").arg(request->path), 5000);
}

void MainWindow::exportFileDialog(const QString& what, const QString& filter, const QString& name,
                                  bool (MainWindow::*exporter)(const QString&, QString*))
{
    QString path = QFileDialog::getSaveFileName(this, tr("Export %1").arg(what), suggestedPath(name), filter);
    if (path.isEmpty()) {
        return;
    }
    if (QFileInfo(path).suffix().isEmpty()) {
        path += QFileInfo(name).suffix().prepend(QLatin1Char('.'));
    }
    rememberDirectory(path);
    QString error;
    if (!(this->*exporter)(path, &error)) {
        QMessageBox::warning(this, tr("Export Failed"), error);
        return;
    }
    statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
}

bool MainWindow::exportPareto(const QString& path, const ExportSize& size, QString* error)
{
    m_plot->flush();
    const QString title = m_sweepScenario ? elidedName(m_sweepScenario->model.name) + tr(": training time vs cost") : QString();
    return exportPlot(m_plot->customPlot(), path, size, title, error);
}

bool MainWindow::exportMemory(const QString& path, const ExportSize& size, QString* error)
{
    if (m_details->memory()->stageCount() == 0) {
        if (error) {
            *error = tr("Select a plan first: the memory chart is empty.");
        }
        return false;
    }
    return exportPlot(m_details->memory()->customPlot(), path, size, tr("Memory per stage"), error);
}

bool MainWindow::exportTimeline(const QString& path, const ExportSize& size, QString* error)
{
    TimelineView* view = m_details->timeline();
    if (!view->result()) {
        if (error) {
            *error = tr("Select a plan first: the timeline is empty.");
        }
        return false;
    }
    const SimulationResult& r = *view->result();
    const QString title = tr("%1 × %2 · %3 · iteration %4")
                              .arg(QString::number(r.num_gpus), QString::fromStdString(r.gpu), planSummary(r.plan),
                                   QString::number(r.iteration_time_s, 'f', 3) + QStringLiteral(" s"));
    return exportPainted([view, title](QPainter& painter, const QSize& s) { view->render(painter, s, title); }, path, size, title, error,
                         size.height / view->naturalHeight());
}

bool MainWindow::exportPlans(const QString& path, QString* error)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix != u"csv" && suffix != u"json") {
        if (error) {
            *error = tr("Plans export as .csv or .json, not \"%1\".").arg(suffix);
        }
        return false;
    }
    const auto& rows = m_planModel->rows();
    return writeFile(path, suffix == u"csv" ? plansToCsv(rows) : plansToJson(rows), error);
}

bool MainWindow::exportChromeTrace(const QString& path, QString* error)
{
    const auto result = m_details->timeline()->result();
    if (!result) {
        if (error) {
            *error = tr("Select a plan first: there is no timeline to export.");
        }
        return false;
    }
    return writeFile(path, timelineToChromeTrace(*result), error);
}

} // namespace vtrain::ui
