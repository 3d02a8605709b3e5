// SPDX-License-Identifier: MIT
#pragma once
// The scenario editor: a preset picker, every model dimension, cluster and budget (the fields listed in
// models/scenario_form.h), and the parallelism ranges to explore as checkable lists. Every field is
// checked as it is typed: its own rules first, then core's scenario rules (heads divide hidden, ...), each
// reason shown at its field. Only a valid scenario leaves the editor (scenarioEdited), and only when an
// edit is committed: Enter or leaving a text field, a click on a check box or a choice. Partial input
// on the way to a value is checked but never sent.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <QHash>
#include <QWidget>

#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QGroupBox;

namespace vtrain::ui {

class CheckList;
class FieldRow;
class GpuPriceFields;

// A GPU type the editor offers, as its profile describes it.
struct GpuChoice {
    QString id;     // profile id, what the scenario names
    QString name;   // "NVIDIA B200-SXM-180GB (HGX B200)"
    QString vendor; // "NVIDIA", "AMD"; empty = unknown
    double memoryGib = 0;
    double pricePerHour = 0; // the profile's list price, USD per GPU-hour
    LinkSpec links;          // the profile's host and NVLink domain: the default tp widths (default_tp_limit)
};

class ScenarioEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScenarioEditor(QWidget* parent = nullptr);

    // GPU types offered, with their default price (shown as the price field's placeholder).
    void setProfiles(const QStringList& ids, const QHash<QString, double>& defaultPrices);
    // The same with vendor, memory and price: the list is grouped by vendor (NVIDIA, AMD, then others)
    // and each entry says its memory and price.
    void setGpuChoices(QList<GpuChoice> gpus);
    // Fills every field from `scenario` (no scenarioEdited signal).
    void setScenario(const Scenario& scenario);
    // Asked before the preset picker replaces the scenario; returning false keeps it (unsaved edits).
    void setPresetGuard(std::function<bool()> guard) { m_presetGuard = std::move(guard); }

    std::optional<Scenario> scenario() const { return m_valid; }
    bool isValid() const { return m_valid.has_value(); }
    // "field: reason" for every refused entry.
    QStringList errors() const;
    // The reason shown at a field ("model.layers", "search.tp", ...); empty when it is fine.
    QString errorOf(const QString& field) const;
    // The line edit of a field, for tests and focus.
    FieldRow* fieldRow(const QString& field) const;
    CheckList* checkList(const QString& field) const;
    QWidget* choice(const QString& field) const; // a QComboBox or QCheckBox
    QComboBox* presetBox() const { return m_preset; }
    std::uint64_t estimatedPlans() const { return m_estimate; }
    QSize sizeHint() const override { return {400, 800}; }
    // The width that shows every field whole with the vertical scroll bar beside them (no sideways scrolling).
    int minimumContentWidth() const;

public Q_SLOTS:
    void loadPreset(const QString& id);

Q_SIGNALS:
    // After a committed user edit that leaves the scenario valid and different from before.
    void scenarioEdited(const vtrain::Scenario& scenario);
    void validityChanged(bool valid);
    // loadPreset() filled the editor; its scenarioEdited follows.
    void presetLoaded(const QString& id);

private:
    QGroupBox* buildGroup(const QString& title, int group);
    QGroupBox* buildSearchGroup();
    CheckList* addList(QFormLayout* form, const QString& label, const QString& name, int columns, const QString& tip, int row = -1);
    void loadSearch(const Scenario& scenario);
    void readSearch(Scenario& scenario);
    void updatePipelineCandidates();
    void showGpuItems(const QString& extraId);
    void onPipelineListEdited();
    void onTyped();
    void commit();
    void validate();
    void showApplicableFields(const Scenario& scenario);
    void applyCoreDiagnostics(const Scenario& scenario, bool& ok);
    void updateEstimate(const Scenario& scenario);
    void showPresetOf(const Scenario& scenario);

    std::map<QString, FieldRow*> m_fields;
    std::map<QString, QWidget*> m_choices;
    std::map<QString, CheckList*> m_lists;
    QComboBox* m_preset = nullptr;
    QLabel* m_presetDescription = nullptr;
    QLabel* m_status = nullptr;
    QGroupBox* m_planGroup = nullptr; // the scenario's own plan: shown only when it has one
    QString m_planDropped;            // why the loaded plan no longer fits (it is then left out), or empty
    QHash<QString, double> m_prices;  // the profiles' list prices
    GpuPriceFields* m_priceFields = nullptr;
    bool m_reloadPrices = false; // the next validate() fills the price rows from m_base
    QList<GpuChoice> m_gpus;
    Scenario m_base; // what was loaded: keeps the fields the editor does not show (links, plan)
    std::optional<Scenario> m_valid;
    std::string m_committed; // JSON of the last scenario sent or loaded: an unchanged commit sends nothing
    // The user's pipeline-stage choice; empty = every legal value. Kept through Layers edits, including
    // values that no longer divide the layer count (shown marked, left out of the search).
    std::optional<QList<int>> m_ppChoice;
    std::uint64_t m_estimate = 0;
    std::function<bool()> m_presetGuard;
    int m_presetIndex = 0;
    bool m_loading = false;
};

} // namespace vtrain::ui
