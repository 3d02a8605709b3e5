// SPDX-License-Identifier: MIT
#pragma once
// The scenario editor: a preset picker, every model dimension, cluster and budget, and the parallelism
// ranges to explore as checkable lists. Every field is checked as it is typed: its own rules first
// (models/scenario_fields.h), then core's scenario rules (heads divide hidden, ...), each reason shown
// at its field. Only a valid scenario leaves the editor (scenarioEdited).
#include <cstdint>
#include <map>
#include <optional>

#include <QHash>
#include <QWidget>

#include "vtrain/scenario.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QGroupBox;

namespace vtrain::ui {

class CheckList;
class FieldRow;

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioEditor(QWidget* parent = nullptr);

    // GPU types offered, with their default price (shown as the price field's placeholder).
    void setProfiles(const QStringList& ids, const QHash<QString, double>& defaultPrices);
    // Fills every field from `scenario` (no scenarioEdited signal).
    void setScenario(const Scenario& scenario);

    std::optional<Scenario> scenario() const { return m_valid; }
    bool isValid() const { return m_valid.has_value(); }
    // "field: reason" for every refused entry.
    QStringList errors() const;
    // The reason shown at a field ("model.layers", "search.tp", ...); empty when it is fine.
    QString errorOf(const QString& field) const;
    // The line edit of a field, for tests and focus.
    FieldRow* fieldRow(const QString& field) const;
    CheckList* checkList(const QString& field) const;
    std::uint64_t estimatedPlans() const { return m_estimate; }
    QSize sizeHint() const override { return {400, 800}; }

public Q_SLOTS:
    void loadPreset(const QString& id);

Q_SIGNALS:
    // After a user edit that leaves the scenario valid.
    void scenarioEdited(const vtrain::Scenario& scenario);
    void validityChanged(bool valid);

private:
    QGroupBox* buildModelGroup();
    QGroupBox* buildClusterGroup();
    QGroupBox* buildSearchGroup();
    FieldRow* addField(QFormLayout* form, const QString& label, const QString& name, const QString& placeholder, const QString& tip);
    CheckList* addList(QFormLayout* form, const QString& label, const QString& name, int columns, const QString& tip);
    void loadSearch(const Scenario& scenario);
    void readSearch(Scenario& scenario);
    void updatePipelineCandidates();
    void onEdited();
    void validate();
    void applyCoreDiagnostics(const Scenario& scenario, bool& ok);
    void updateEstimate(const Scenario& scenario);

    std::map<QString, FieldRow*> m_fields;
    std::map<QString, CheckList*> m_lists;
    QComboBox* m_preset = nullptr;
    QLabel* m_presetDescription = nullptr;
    QComboBox* m_activation = nullptr;
    QCheckBox* m_tied = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_attention = nullptr;
    QLabel* m_status = nullptr;
    QHash<QString, double> m_prices;
    Scenario m_base;               // what was loaded: keeps the fields the editor does not show (links, plan)
    std::optional<Scenario> m_valid;
    std::uint64_t m_estimate = 0;
    bool m_loading = false;
};

} // namespace vtrain::ui
