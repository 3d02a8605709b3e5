// SPDX-License-Identifier: MIT
#include "models/scenario_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>

#include "models/settings_keys.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui::store {

std::optional<Scenario> readScenario(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) {
            *error = file.errorString();
        }
        return std::nullopt;
    }
    auto parsed = scenario_from_text(file.readAll().toStdString());
    if (!parsed.ok()) {
        if (error) {
            QStringList lines;
            for (const Diagnostic& d : parsed.errors()) {
                lines << QString::fromStdString(d.to_string());
            }
            *error = lines.join(QLatin1Char('\n'));
        }
        return std::nullopt;
    }
    return std::move(parsed).value();
}

bool writeScenario(const QString& path, const Scenario& scenario, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error) {
            *error = file.errorString();
        }
        return false;
    }
    const std::string text = scenario_to_json(scenario).dump(2) + "\n";
    file.write(text.data(), static_cast<qint64>(text.size()));
    if (!file.commit()) {
        if (error) {
            *error = file.errorString();
        }
        return false;
    }
    return true;
}

QString autosavePath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/autosave.json");
}

bool autosave(const Scenario& scenario)
{
    const QString path = autosavePath();
    QDir().mkpath(QFileInfo(path).absolutePath());
    return writeScenario(path, scenario, nullptr);
}

std::optional<Scenario> restoreAutosave()
{
    const QString path = autosavePath();
    if (!QFileInfo::exists(path)) {
        return std::nullopt;
    }
    QString error;
    return readScenario(path, &error);
}

QStringList recentFiles()
{
    QStringList files = QSettings().value(QLatin1String(settings_keys::kRecentFiles)).toStringList();
    files.removeAll(QString());
    return files;
}

void addRecentFile(const QString& path)
{
    QStringList files = recentFiles();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > settings_keys::kMaxRecentFiles) {
        files.removeLast();
    }
    QSettings().setValue(QLatin1String(settings_keys::kRecentFiles), files);
}

void removeRecentFile(const QString& path)
{
    QStringList files = recentFiles();
    files.removeAll(path);
    QSettings().setValue(QLatin1String(settings_keys::kRecentFiles), files);
}

} // namespace vtrain::ui::store
