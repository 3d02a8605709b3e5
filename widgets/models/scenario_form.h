// SPDX-License-Identifier: MIT
#pragma once
// Every text field and choice of the scenario editor, in one table: its scenario path, label, group,
// help, how it shows a scenario and how it reads a value back (with the reason a value is refused). The
// editor builds its form from this list, so a new scenario field (a MoE expert count, a context-parallel
// width, a precision) is one entry here. The parallelism lists live in views/scenario_editor_search.cpp.
#include <functional>
#include <vector>

#include <QString>
#include <QVariant>

#include "vtrain/scenario.h"

namespace vtrain::ui::form {

// Plan: the scenario's own plan (what `vtrain simulate` runs and `vtrain launch` writes), shown only when it has one.
enum class Group { Model, Experts, Cluster, Plan };

struct TextField {
    QString name; // the scenario path ("model.layers"): object name, error key, core's Diagnostic::field
    Group group;
    QString label;
    QString placeholder; // shown while empty (what empty means, or an example)
    QString tip;
    std::function<QString(const Scenario&)> show;
    // Parses `text` into the scenario; returns why it is refused, or an empty string.
    std::function<QString(const QString& text, Scenario& scenario)> read;
};

struct ChoiceField {
    QString name;
    Group group;
    QString label; // for a yes/no choice: the check box's text
    QString tip;
    QStringList itemLabels; // empty = a check box (values false, true)
    QVariantList itemValues;
    std::function<QVariant(const Scenario&)> show;
    std::function<void(const QVariant& value, Scenario& scenario)> read;
};

const std::vector<TextField>& textFields();
// Rank orders the editor offers (plan and search), Megatron-Core's default first.
QStringList rankOrderChoices();
const std::vector<ChoiceField>& choiceFields();

} // namespace vtrain::ui::form
