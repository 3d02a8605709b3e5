// SPDX-License-Identifier: MIT
#pragma once
// Scenario files on disk: open and save (atomically, so a crash mid-write keeps the old file), the
// autosave that lets a crash lose nothing, and the recent-files list.
#include <optional>

#include <QString>
#include <QStringList>

#include "vtrain/scenario.h"

namespace vtrain::ui::store {

std::optional<Scenario> readScenario(const QString& path, QString* error);
bool writeScenario(const QString& path, const Scenario& scenario, QString* error);

// <AppDataLocation>/autosave.json
QString autosavePath();
bool autosave(const Scenario& scenario);
std::optional<Scenario> restoreAutosave();

QStringList recentFiles();
void addRecentFile(const QString& path);   // moves it to the front
void removeRecentFile(const QString& path); // e.g. when it no longer opens

} // namespace vtrain::ui::store
