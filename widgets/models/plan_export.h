// SPDX-License-Identifier: MIT
#pragma once
// Data exports: plans as CSV (spreadsheets) and JSON (scripts), a simulated plan's timeline in Chrome's
// trace event format (Perfetto, chrome://tracing). Images are the views' business (views/export.h).
#include <vector>

#include <QByteArray>
#include <QString>

#include "vtrain/explorer.h"
#include "vtrain/simulation_result.h"

namespace vtrain::ui {

QByteArray plansToCsv(const std::vector<PlanRow>& rows);
QByteArray plansToJson(const std::vector<PlanRow>& rows);
QByteArray timelineToChromeTrace(const SimulationResult& result);

// Writes atomically; on failure returns false and says why in `error`.
bool writeFile(const QString& path, const QByteArray& data, QString* error);

} // namespace vtrain::ui
