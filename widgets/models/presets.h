// SPDX-License-Identifier: MIT
#pragma once
// Scenario presets shipped as resources (:/presets/*.json): GPT-3 175B, MT-NLG 530B (the default),
// Llama-3-shaped 8B/70B/405B, a small model, Llama 3 runs as trained (405B, 70B FP8 on B200, 8B FSDP) and
// mixtures of experts (DeepSeek-V3, Qwen3 235B-A22B and 30B-A3B, GPT-OSS 120B, Mixtral 8x22B).
#include <optional>

#include <QList>
#include <QString>

#include "vtrain/scenario.h"

namespace vtrain::ui {

struct Preset {
    QString id;          // file stem, e.g. "mt-nlg-530b"
    QString title;       // "MT-NLG 530B · 3,360 × A100 80GB"
    QString description; // the file's "description"
};

QList<Preset> presets();
std::optional<Scenario> presetScenario(const QString& id, QString* error = nullptr);
QString presetText(const QString& id); // the preset's JSON text

inline constexpr auto kDefaultPresetId = "mt-nlg-530b";
// MT-NLG 530B on A100 (examples/mt-nlg-530b.json), what a first start shows.
Scenario defaultScenario();

} // namespace vtrain::ui
