// SPDX-License-Identifier: MIT
#include "models/scenario_store.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>

#include <nlohmann/json.hpp>

#include "models/settings_keys.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui::store {

namespace {

// A job list of the shared-cluster study (examples/jobs-*.json, `vtrain schedule --jobs-file`) has "jobs"
// where a scenario has "model": said in one line instead of a dozen "missing field" errors.
bool isJobList(const QByteArray& text)
{
    // Only the top two levels are kept: the text may be nested as deep as a hostile file likes.
    const auto shallow = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) { return depth <= 2; };
    const auto json = nlohmann::json::parse(text.constData(), text.constData() + text.size(), shallow, false);
    return json.is_object() && json.contains("jobs") && json.at("jobs").is_array() && !json.contains("model");
}

} // namespace

std::optional<Scenario> readScenario(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) {
            *error = file.errorString();
        }
        return std::nullopt;
    }
    // At most the core's bound, read as such: a device has no size (/dev/zero never ends). The nesting
    // bound is the core reader's (json_fields::kMaxJsonDepth), as on the command line.
    const auto limit = static_cast<qint64>(json_fields::kMaxInputBytes);
    if (!file.isSequential() && file.size() > limit) {
        if (error) {
            *error = QCoreApplication::translate("vtrain::ui::store", "%1 bytes, more than the %2 MiB a scenario file may hold")
                         .arg(file.size())
                         .arg(limit >> 20);
        }
        return std::nullopt;
    }
    const QByteArray text = file.read(limit + 1);
    if (text.size() > limit) {
        if (error) {
            *error = QCoreApplication::translate("vtrain::ui::store", "more than the %1 MiB a scenario file may hold").arg(limit >> 20);
        }
        return std::nullopt;
    }
    auto parsed = scenario_from_text(std::string(text.constData(), static_cast<std::size_t>(text.size())));
    if (!parsed.ok()) {
        if (isJobList(text)) {
            if (error) {
                *error = QCoreApplication::translate("vtrain::ui::store", "this is a job list for the shared-cluster study "
                                                                          "(vtrain schedule --jobs-file), not a training scenario");
            }
            return std::nullopt;
        }
        if (error) {
            // One line, as the command line says it: the first problem and how many more.
            const Diagnostics& problems = parsed.errors();
            *error = problems.empty() ? QCoreApplication::translate("vtrain::ui::store", "not a scenario")
                                      : QString::fromStdString(problems.front().to_string());
            if (problems.size() > 1) {
                *error += QCoreApplication::translate("vtrain::ui::store", " (and %n more)", nullptr, static_cast<int>(problems.size() - 1));
            }
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

std::optional<Scenario> restoreAutosave(QString* problem)
{
    const QString path = autosavePath();
    if (!QFileInfo::exists(path)) {
        return std::nullopt;
    }
    QString error;
    auto scenario = readScenario(path, &error);
    if (scenario) {
        return scenario;
    }
    const QString aside = path + QStringLiteral(".unreadable-") + QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
    const bool kept = QFile::rename(path, aside);
    if (problem) {
        const QString reason = error.section(QLatin1Char('\n'), 0, 0).left(300);
        *problem = kept ? QCoreApplication::translate("vtrain::ui::store", "The autosaved scenario could not be read (%1). It was kept as %2; "
                                                                           "the window starts on the default scenario.")
                              .arg(reason, aside)
                        : QCoreApplication::translate("vtrain::ui::store", "The autosaved scenario %1 could not be read (%2), nor moved aside; "
                                                                           "the window starts on the default scenario.")
                              .arg(path, reason);
    }
    return std::nullopt;
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
