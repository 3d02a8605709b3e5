// SPDX-License-Identifier: MIT
// The main window's session: the autosave with the file it belongs to and whether it holds unsaved edits,
// so that a restart after a crash shows the edits as unsaved (the title's "*" and the file name), and
// "Discard" on quit is honoured at the next start instead of bringing the discarded edit back.
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>

#include "main_window.h"
#include "models/scenario_store.h"
#include "models/settings_keys.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {

std::optional<Scenario> MainWindow::restoreSessionScenario()
{
    std::optional<Scenario> start = store::restoreAutosave(&m_restoreProblem);
    if (!m_restoreProblem.isEmpty()) {
        statusBar()->showMessage(m_restoreProblem);
        QTimer::singleShot(0, this, [this] {
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Autosave kept aside"), m_restoreProblem, QMessageBox::Ok, this);
            box->setObjectName(QStringLiteral("restoreProblemBox"));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        });
    }
    if (!start) {
        return std::nullopt;
    }
    const QSettings settings;
    const QString file = settings.value(QLatin1String(settings_keys::kSessionFile)).toString();
    if (!file.isEmpty() && QFileInfo::exists(file)) {
        m_filePath = file;
    }
    if (settings.value(QLatin1String(settings_keys::kSessionModified)).toBool()) {
        m_restoredModified = true;
        const QString clean = settings.value(QLatin1String(settings_keys::kSessionClean)).toString();
        if (!clean.isEmpty() && clean.size() <= 1'000'000) {
            if (auto parsed = scenario_from_text(clean.toStdString()); parsed.ok()) {
                m_cleanScenario = parsed.value();
            }
        }
    }
    return start;
}

void MainWindow::markClean()
{
    m_undo->setClean();
    m_cleanScenario = m_scenario;
    m_cleanPath = m_filePath;
    persistSession();
}

void MainWindow::persistSession() const
{
    if (!m_options.restoreSession) {
        return; // a window that did not restore a session does not write one over the user's
    }
    QSettings settings;
    settings.setValue(QLatin1String(settings_keys::kSessionFile), m_filePath);
    const bool modified = !m_undo->isClean();
    settings.setValue(QLatin1String(settings_keys::kSessionModified), modified);
    if (modified && m_cleanScenario) {
        settings.setValue(QLatin1String(settings_keys::kSessionClean), QString::fromStdString(scenario_to_json(*m_cleanScenario).dump()));
    } else {
        settings.remove(QLatin1String(settings_keys::kSessionClean));
    }
}

void MainWindow::revertAutosaveToClean()
{
    // The next start opens what was last opened or saved, unmodified; with nothing such, the default.
    if (m_cleanScenario) {
        store::autosave(*m_cleanScenario);
    } else {
        QFile::remove(store::autosavePath());
    }
    if (m_options.restoreSession) {
        QSettings settings;
        settings.setValue(QLatin1String(settings_keys::kSessionFile), m_cleanPath); // an import has none; its source had
        settings.setValue(QLatin1String(settings_keys::kSessionModified), false);
        settings.remove(QLatin1String(settings_keys::kSessionClean));
    }
}

} // namespace vtrain::ui
