// SPDX-License-Identifier: MIT
#include "models/presets.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "models/format.h"
#include "models/resources.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {
namespace {

// Display order: small to large dense models, the default first among the big ones; then today's runs
// (as trained or on today's GPUs), then the mixtures of experts by total size.
const char* const kOrder[] = {"small-gpt-350m",      "llama3-8b",           "gpt3-175b",
                              "mt-nlg-530b",         "llama3-70b",          "llama3-405b",
                              "llama3-8b-h100-fsdp", "llama3-70b-b200-fp8", "llama3.1-405b-as-trained",
                              "qwen3-30b-a3b",       "gpt-oss-120b",        "mixtral-8x22b",
                              "qwen3-235b-a22b",     "deepseek-v3-671b"};

int rank(const QString& id)
{
    for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
        if (id == QLatin1String(kOrder[i])) {
            return i;
        }
    }
    return static_cast<int>(std::size(kOrder));
}

} // namespace

QString presetText(const QString& id)
{
    initResources();
    QFile file(QStringLiteral(":/presets/%1.json").arg(id));
    if (!file.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QString::fromUtf8(file.readAll());
}

QList<Preset> presets()
{
    initResources();
    QList<Preset> list;
    const QStringList files = QDir(QStringLiteral(":/presets")).entryList({QStringLiteral("*.json")}, QDir::Files);
    for (const QString& file : files) {
        const QString id = file.chopped(5);
        const QJsonObject o = QJsonDocument::fromJson(presetText(id).toUtf8()).object();
        const QJsonObject cluster = o.value(QLatin1String("cluster")).toObject();
        Preset p;
        p.id = id;
        p.title = QStringLiteral("%1 · %2 × %3")
                      .arg(o.value(QLatin1String("model")).toObject().value(QLatin1String("name")).toString(id),
                           formatCount(cluster.value(QLatin1String("num_gpus")).toDouble()), cluster.value(QLatin1String("gpu")).toString());
        p.description = o.value(QLatin1String("description")).toString();
        list.push_back(p);
    }
    std::stable_sort(list.begin(), list.end(), [](const Preset& a, const Preset& b) { return rank(a.id) < rank(b.id); });
    return list;
}

std::optional<Scenario> presetScenario(const QString& id, QString* error)
{
    const QString text = presetText(id);
    if (text.isEmpty()) {
        if (error) {
            *error = QStringLiteral("no preset \"%1\"").arg(id);
        }
        return std::nullopt;
    }
    auto parsed = scenario_from_text(text.toStdString());
    if (!parsed.ok()) {
        if (error) {
            *error = QString::fromStdString(parsed.first_error());
        }
        return std::nullopt;
    }
    return std::move(parsed).value();
}

Scenario defaultScenario()
{
    if (auto s = presetScenario(QLatin1String(kDefaultPresetId))) {
        return *s;
    }
    // Only reachable if the resource were missing from the build; keep the app usable regardless.
    Scenario s;
    s.model.name = "MT-NLG 530B";
    s.model.layers = 105;
    s.model.hidden = 20480;
    s.model.heads = 128;
    s.model.seq_len = 2048;
    s.model.vocab = 51200;
    s.cluster.gpu = "a100-sxm4-80gb";
    s.cluster.num_gpus = 3360;
    s.training.global_batch = 1920;
    s.training.tokens = 270e9;
    return s;
}

} // namespace vtrain::ui
