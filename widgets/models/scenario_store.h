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
// The autosaved scenario, or nothing. An autosave that cannot be read is kept aside (renamed to
// autosave.json.unreadable-<time>, never deleted) and `problem` says why and where it went, so the user
// is told instead of silently starting on the default.
std::optional<Scenario> restoreAutosave(QString* problem = nullptr);

// Scenario files are read through the core's bounds, the same as the command line's: at most
// json_fields::kMaxInputBytes (a larger file, or /dev/zero, is refused before it is read whole) and
// json_fields::kMaxJsonDepth levels of nesting (a 100,000-deep autosave once crashed the window at
// every start).

QStringList recentFiles();
void addRecentFile(const QString& path);    // moves it to the front
void removeRecentFile(const QString& path); // e.g. when it no longer opens

} // namespace vtrain::ui::store
