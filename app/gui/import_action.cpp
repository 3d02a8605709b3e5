// SPDX-License-Identifier: MIT
// File > Import… and a file dropped on the window: `vtrain import` in the explorer. The core reads the file
// (vtrain/import.h); the scenario is then loaded as if opened (editor, undo step, autosave, sweep) but has
// no file yet, so Save asks where; what the importer assumed is shown beside it.
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QUndoStack>
#include <QUrl>

#include "main_window.h"
#include "models/scenario_store.h"
#include "views/scenario_editor.h"
#include "vtrain/import.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {
namespace {

// The one local file a drag carries, or an empty string.
QString droppedFile(const QMimeData* data)
{
    if (data == nullptr || !data->hasUrls() || data->urls().size() != 1 || !data->urls().front().isLocalFile()) {
        return {};
    }
    const QString path = data->urls().front().toLocalFile();
    return QFileInfo(path).isFile() ? path : QString();
}

QStringList notesOf(const ImportResult& r)
{
    QStringList out;
    for (const Diagnostic& n : r.notes) {
        out << QStringLiteral("note: ") + QString::fromStdString(n.to_string());
    }
    for (const std::string& d : r.defaults) {
        out << QStringLiteral("assumed: ") + QString::fromStdString(d);
    }
    if (!r.ignored.empty()) {
        QStringList keys;
        for (const std::string& k : r.ignored) {
            keys << QString::fromStdString(k);
        }
        out << QStringLiteral("ignored (no bearing on time, memory or cost): ") + keys.join(QStringLiteral(", "));
    }
    return out;
}

} // namespace

bool MainWindow::importFile(const QString& path, QString* error, QStringList* notes)
{
    ImportOptions options;
    if (m_scenario) {
        // The file never names a GPU: the window's. Its memory sizes the starting plan of a model-only file.
        options.gpu = m_scenario->cluster.gpu;
        if (const auto profile = m_catalog.profile(options.gpu)) {
            options.gpu_memory_gib = profile->memory_gib - profile->memory_reserve_gib;
        }
    }
    auto result = import_scenario_file(path.toStdString(), options);
    if (result.ok() && !result->plan_from_file && m_scenario) {
        // A model-only file keeps the window's GPU count too.
        options.num_gpus = m_scenario->cluster.num_gpus;
        result = import_scenario_file(path.toStdString(), options);
    }
    if (!result.ok()) {
        if (error) {
            *error = QString::fromStdString(result.first_error());
        }
        return false;
    }
    m_editor->setScenario(result->scenario);
    m_scenario = m_editor->scenario();
    if (!m_scenario) {
        if (error) {
            *error = tr("The editor refused the imported scenario.");
        }
        return false;
    }
    m_filePath.clear(); // not saved anywhere yet: Save asks for a file
    recordStep(tr("Import %1").arg(QFileInfo(path).fileName()), *m_scenario);
    m_committed = m_scenario;
    store::autosave(*m_scenario);
    persistSession(); // no file now: a restart shows the import as unsaved, and Discard goes back
    if (m_sweepBar) {
        startSweep();
    }
    updateTitle();
    updateStale();
    if (notes) {
        *notes = QStringList{tr("Read %1 as %2.").arg(QFileInfo(path).fileName(), QString::fromLatin1(describe(result->format)))} + notesOf(*result);
    }
    return true;
}

void MainWindow::importDialog()
{
    if (!confirmDiscard(tr("import a file"))) {
        return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Import"), lastDirectory(),
                                                      tr("Model configs and launch files (*.json *.toml *.sh *.txt *.args *.slurm);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    rememberDirectory(path);
    QString error;
    QStringList notes;
    if (!importFile(path, &error, &notes)) {
        QMessageBox::warning(this, tr("Import Failed"), tr("%1 cannot be imported:\n\n%2").arg(QFileInfo(path).fileName(), error));
        return;
    }
    showImportNotes(path, notes);
}

void MainWindow::showImportNotes(const QString& path, const QStringList& notes)
{
    statusBar()->showMessage(tr("Imported %1").arg(QFileInfo(path).fileName()), 8000);
    // Not modal: the sweep of the imported scenario is already running behind it.
    auto* box = new QMessageBox(QMessageBox::Information, tr("Imported %1").arg(QFileInfo(path).fileName()),
                                notes.isEmpty() ? tr("Imported.") : notes.front(), QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("importNotes"));
    box->setInformativeText(tr("What the file did not say was assumed; see the details. Save the scenario to keep it."));
    box->setDetailedText(notes.mid(1).join(QLatin1Char('\n')));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!droppedFile(event->mimeData()).isEmpty()) {
        event->acceptProposedAction();
    }
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = droppedFile(event->mimeData());
    if (path.isEmpty()) {
        return;
    }
    event->acceptProposedAction();
    if (!confirmDiscard(tr("open %1").arg(QFileInfo(path).fileName()))) {
        return;
    }
    QString error;
    // A vTrain scenario opens; anything else is imported.
    if (load_scenario(path.toStdString()).ok()) {
        if (!openScenario(path, &error)) {
            QMessageBox::warning(this, tr("Open Failed"), tr("%1 cannot be opened:\n\n%2").arg(QFileInfo(path).fileName(), error));
        }
        return;
    }
    QStringList notes;
    if (!importFile(path, &error, &notes)) {
        QMessageBox::warning(this, tr("Import Failed"), tr("%1 cannot be imported:\n\n%2").arg(QFileInfo(path).fileName(), error));
        return;
    }
    showImportNotes(path, notes);
}

} // namespace vtrain::ui
