// SPDX-License-Identifier: MIT
#include "models/plan_export.h"

#include <QSaveFile>

#include <nlohmann/json.hpp>

#include "vtrain/explorer_io.h"
#include "vtrain/result_json.h"

namespace vtrain::ui {
namespace {

QByteArray fromStd(const std::string& s)
{
    return QByteArray(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

// Same columns and number formatting as `vtrain explore --csv` (core's explorer_io), so files from the
// app and the CLI can be compared or concatenated.
QByteArray plansToCsv(const std::vector<PlanRow>& rows)
{
    QByteArray out = fromStd(plan_row_csv_header()) + '\n';
    out.reserve(static_cast<qsizetype>(rows.size()) * 160);
    for (const PlanRow& r : rows) {
        out += fromStd(plan_row_to_csv(r));
        out += '\n';
    }
    return out;
}

QByteArray plansToJson(const std::vector<PlanRow>& rows)
{
    nlohmann::json list = nlohmann::json::array();
    for (const PlanRow& r : rows) {
        list.push_back(plan_row_to_json(r));
    }
    return fromStd(nlohmann::json{{"plans", list}}.dump(1) + "\n");
}

QByteArray timelineToChromeTrace(const SimulationResult& result)
{
    return fromStd(timeline_to_chrome_trace(result).dump());
}

bool writeFile(const QString& path, const QByteArray& data, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit()) {
        if (error) {
            *error = file.errorString();
        }
        return false;
    }
    return true;
}

} // namespace vtrain::ui
