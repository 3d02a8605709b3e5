// SPDX-License-Identifier: MIT
#include "views/scenario_editor.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/presets.h"
#include "models/scenario_form.h"
#include "views/check_list.h"
#include "views/field_row.h"
#include "views/gpu_price_fields.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {
namespace {

// A scenario's description under the preset box: the first few lines (a file's description can run to a
// page, which would push the fields out of the dock), the whole text as the tooltip.
void showDescription(QLabel* label, const QString& text)
{
    constexpr int kShownChars = 320;
    QString shown = text;
    if (text.size() > kShownChars) {
        const int cut = text.lastIndexOf(QLatin1Char(' '), kShownChars);
        shown = text.left(cut > kShownChars / 2 ? cut : kShownChars) + QStringLiteral(" …");
    }
    label->setText(shown);
    label->setToolTip(shown == text ? QString() : QStringLiteral("<p>%1</p>").arg(text.toHtmlEscaped()));
}

// What makes two committed scenarios different: their file form, plus the newer search axes spelled out
// (a core whose file form lacks them must still see a click on "cp 2" as an edit).
std::string editKey(const Scenario& s)
{
    nlohmann::json j = scenario_to_json(s);
    if (s.search) {
        nlohmann::json axes;
        axes["cp"] = s.search->cp;
        axes["ep"] = s.search->ep;
        axes["etp"] = s.search->etp;
        std::vector<std::string> precisions;
        for (Precision p : s.search->precision) {
            precisions.emplace_back(to_string(p));
        }
        axes["precision"] = precisions;
        axes["tp_overlap"] = s.search->tp_overlap;
        axes["moe_overlap"] = s.search->moe_overlap;
        axes["overlap_grad_reduce"] = s.search->overlap_grad_reduce;
        axes["offload_optimizer"] = s.search->offload_optimizer;
        axes["offload_activations"] = s.search->offload_activations;
        std::vector<std::string> orders;
        for (const RankOrder& o : s.search->rank_order) {
            orders.push_back(to_string(o));
        }
        axes["rank_order"] = orders;
        j["__axes"] = std::move(axes);
    }
    return j.dump();
}

} // namespace

ScenarioEditor::ScenarioEditor(QWidget* parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("scenarioEditor"));
    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    column->setContentsMargins(6, 6, 6, 6);

    auto* presetRow = new QHBoxLayout;
    auto* presetLabel = new QLabel(tr("&Preset:"), content);
    presetRow->addWidget(presetLabel);
    m_preset = new QComboBox(content);
    m_preset->setObjectName(QStringLiteral("preset"));
    presetLabel->setBuddy(m_preset);
    m_preset->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon); // long titles must not widen the dock
    m_preset->setMinimumContentsLength(16);
    m_preset->addItem(tr("(choose a model to start from)"), QString());
    for (const Preset& p : presets()) {
        m_preset->addItem(p.title, p.id);
        m_preset->setItemData(m_preset->count() - 1, p.description, Qt::ToolTipRole);
    }
    presetRow->addWidget(m_preset, 1);
    column->addLayout(presetRow);
    m_presetDescription = new QLabel(content);
    m_presetDescription->setObjectName(QStringLiteral("presetDescription"));
    m_presetDescription->setWordWrap(true);
    m_presetDescription->setTextFormat(Qt::PlainText); // a file's words, never markup
    m_presetDescription->setForegroundRole(QPalette::PlaceholderText);
    column->addWidget(m_presetDescription);

    column->addWidget(buildGroup(tr("Model"), static_cast<int>(form::Group::Model)));
    column->addWidget(buildGroup(tr("Mixture of experts"), static_cast<int>(form::Group::Experts)));
    column->addWidget(buildGroup(tr("Cluster and budget"), static_cast<int>(form::Group::Cluster)));
    m_planGroup = buildGroup(tr("Plan to simulate"), static_cast<int>(form::Group::Plan));
    m_planGroup->setObjectName(QStringLiteral("planGroup"));
    m_planGroup->setToolTip(tr("The scenario's own plan: what vtrain simulate runs and vtrain launch writes"));
    column->addWidget(m_planGroup);
    column->addWidget(buildSearchGroup());
    m_status = new QLabel(content);
    m_status->setObjectName(QStringLiteral("editorStatus"));
    m_status->setWordWrap(true);
    column->addWidget(m_status);
    column->addStretch();

    auto* scroll = new QScrollArea(this);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);

    connect(m_preset, &QComboBox::activated, this, [this](int index) {
        const QString id = m_preset->itemData(index).toString();
        if (id.isEmpty() || (m_presetGuard && !m_presetGuard())) {
            m_preset->setCurrentIndex(m_presetIndex); // kept: nothing was loaded
            return;
        }
        loadPreset(id);
    });
    setMinimumWidth(260);
}

QGroupBox* ScenarioEditor::buildGroup(const QString& title, int group)
{
    auto* box = new QGroupBox(title);
    auto* formLayout = new QFormLayout(box);
    formLayout->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A narrow dock puts labels above their fields instead of cutting the fields off.
    formLayout->setRowWrapPolicy(QFormLayout::WrapLongRows);
    // GPU types belong to the cluster: the list comes first, made first (creation order is Tab order).
    if (group == static_cast<int>(form::Group::Cluster)) {
        addList(formLayout, tr("GPU types"), QStringLiteral("search.gpu"), 1,
                tr("GPU profiles to compare; the first checked one is the cluster's GPU. Each checked type's price per GPU-hour is "
                   "listed below it"));
        m_priceFields = new GpuPriceFields(box);
        m_priceFields->setToolTip(tr("The price per GPU-hour each checked GPU type is costed at, and where it comes from"));
        formLayout->addRow(tr("Price per GPU-hour ($)"), m_priceFields);
        connect(m_priceFields, &GpuPriceFields::edited, this, &ScenarioEditor::onTyped);
        connect(m_priceFields, &GpuPriceFields::committed, this, &ScenarioEditor::commit);
        connect(m_priceFields, &GpuPriceFields::rowsChanged, this, [this] {
            // The price rows are fields like the others (errors(), fieldRow()), under their scenario paths.
            std::erase_if(m_fields, [](const auto& entry) {
                return entry.first == u"cluster.price_per_gpu_hour" || entry.first.startsWith(u"cluster.gpu_prices.");
            });
            for (const auto& [name, row] : m_priceFields->fields()) {
                m_fields[name] = row;
            }
        });
    }
    const auto addTextFields = [&] {
        for (const form::TextField& f : form::textFields()) {
            if (static_cast<int>(f.group) != group) {
                continue;
            }
            auto* row = new FieldRow(f.name, f.placeholder, f.tip, box);
            formLayout->addRow(f.label, row);
            m_fields[f.name] = row;
            connect(row, &FieldRow::edited, this, &ScenarioEditor::onTyped);
            connect(row, &FieldRow::committed, this, &ScenarioEditor::commit);
        }
    };
    // The plan reads schedule and rank order first; its activation offload share (a text field) comes last.
    const bool choicesFirst = group == static_cast<int>(form::Group::Plan);
    if (!choicesFirst) {
        addTextFields();
    }
    for (const form::ChoiceField& f : form::choiceFields()) {
        if (static_cast<int>(f.group) != group) {
            continue;
        }
        if (f.itemLabels.isEmpty()) {
            auto* box2 = new QCheckBox(f.label, box);
            box2->setObjectName(f.name);
            box2->setToolTip(f.tip);
            formLayout->addRow(QString(), box2);
            m_choices[f.name] = box2;
            connect(box2, &QCheckBox::clicked, this, &ScenarioEditor::commit);
        } else {
            auto* combo = new QComboBox(box);
            combo->setObjectName(f.name);
            combo->setToolTip(f.tip);
            for (int i = 0; i < f.itemLabels.size(); ++i) {
                combo->addItem(f.itemLabels[i], f.itemValues.value(i));
            }
            formLayout->addRow(f.label, combo);
            m_choices[f.name] = combo;
            if (f.name == u"training.precision") {
                // A single precision to explore follows the choice (the sweep runs what the list says); a
                // list of several is the user's comparison and stays.
                connect(combo, &QComboBox::activated, this, [this, combo] {
                    if (CheckList* list = checkList(QStringLiteral("search.precision")); list && list->checkedValues().size() <= 1) {
                        list->setChecked({combo->currentData()});
                    }
                    commit();
                });
            } else {
                connect(combo, &QComboBox::activated, this, &ScenarioEditor::commit);
            }
        }
    }
    if (choicesFirst) {
        addTextFields();
    }
    return box;
}

CheckList* ScenarioEditor::addList(QFormLayout* form, const QString& label, const QString& name, int columns, const QString& tip, int row)
{
    auto* list = new CheckList(name, columns, form->parentWidget());
    list->setToolTip(tip);
    form->insertRow(row, label, list);
    m_lists[name] = list;
    if (name == u"search.pp") {
        connect(list, &CheckList::edited, this, &ScenarioEditor::onPipelineListEdited);
    } else {
        connect(list, &CheckList::edited, this, &ScenarioEditor::commit);
    }
    return list;
}

void ScenarioEditor::setProfiles(const QStringList& ids, const QHash<QString, double>& defaultPrices)
{
    QList<GpuChoice> gpus;
    for (const QString& id : ids) {
        gpus.push_back({id, id, QString(), 0, defaultPrices.value(id, 0), LinkSpec{}});
    }
    setGpuChoices(std::move(gpus));
}

void ScenarioEditor::setGpuChoices(QList<GpuChoice> gpus)
{
    // NVIDIA first (most profiles and most published runs), then AMD, then other vendors by name.
    auto rank = [](const QString& vendor) {
        return vendor.compare(QLatin1String("NVIDIA"), Qt::CaseInsensitive) == 0 ? 0
               : vendor.compare(QLatin1String("AMD"), Qt::CaseInsensitive) == 0  ? 1
               : vendor.isEmpty()                                                ? 3
                                                                                 : 2;
    };
    std::stable_sort(gpus.begin(), gpus.end(), [&rank](const GpuChoice& a, const GpuChoice& b) {
        const int ra = rank(a.vendor);
        const int rb = rank(b.vendor);
        return ra != rb ? ra < rb : (ra == 2 && a.vendor != b.vendor ? a.vendor < b.vendor : false);
    });
    m_gpus = std::move(gpus);
    m_prices.clear();
    for (const GpuChoice& g : m_gpus) {
        m_prices.insert(g.id, g.pricePerHour);
    }
    m_priceFields->setListPrices(m_prices);
    showGpuItems({});
}

void ScenarioEditor::showGpuItems(const QString& extraId)
{
    const bool grouped = std::any_of(m_gpus.begin(), m_gpus.end(), [](const GpuChoice& g) { return !g.vendor.isEmpty(); });
    QStringList labels;
    QVariantList values;
    QStringList groups;
    for (const GpuChoice& g : m_gpus) {
        // No price here: a checked type's price, the one its costs use, is in the price rows below.
        QString label = g.id;
        if (g.memoryGib > 0) {
            label += QStringLiteral(" · %1 GiB").arg(g.memoryGib, 0, 'f', 0);
        }
        labels << label;
        values << g.id;
        groups << (g.vendor.isEmpty() ? tr("Other") : g.vendor);
    }
    if (!extraId.isEmpty() && !values.contains(extraId)) {
        // A GPU without a profile here still shows, so the user sees why the sweep cannot run.
        labels << extraId;
        values << extraId;
        groups << tr("No profile found");
    }
    CheckList* list = m_lists.at(QStringLiteral("search.gpu"));
    list->setItems(labels, values, grouped ? groups : QStringList());
    for (const GpuChoice& g : m_gpus) {
        if (QCheckBox* box = list->box(g.id)) {
            QStringList tip;
            if (g.name != g.id) {
                tip << g.name;
            }
            if (g.pricePerHour > 0) {
                tip << tr("list price %1 per GPU-hour").arg(formatDollars(g.pricePerHour));
            }
            box->setToolTip(tip.join(QStringLiteral(" · ")));
        }
    }
}

void ScenarioEditor::loadPreset(const QString& id)
{
    QString error;
    const auto scenario = presetScenario(id, &error);
    if (!scenario) {
        m_status->setText(tr("Preset \"%1\" cannot be loaded: %2").arg(id, error));
        return;
    }
    m_committed.clear(); // a preset always counts as an edit, even one equal to what is shown
    setScenario(*scenario);
    const int index = m_preset->findData(id);
    if (index >= 0) {
        m_preset->setCurrentIndex(index);
        m_presetIndex = index;
        showDescription(m_presetDescription, m_preset->itemData(index, Qt::ToolTipRole).toString());
    }
    Q_EMIT presetLoaded(id); // first, so a listener knows the edit that follows is this preset
    if (m_valid) {
        Q_EMIT scenarioEdited(*m_valid);
    }
}

void ScenarioEditor::setScenario(const Scenario& s)
{
    m_loading = true;
    m_base = s;
    for (const form::TextField& f : form::textFields()) {
        m_fields.at(f.name)->setText(f.show(s));
    }
    for (const form::ChoiceField& f : form::choiceFields()) {
        const QVariant value = f.show(s);
        if (auto* box = qobject_cast<QCheckBox*>(m_choices.at(f.name))) {
            box->setChecked(value.toBool());
        } else if (auto* combo = qobject_cast<QComboBox*>(m_choices.at(f.name))) {
            if (combo->findData(value) < 0 && value.typeId() == QMetaType::QString && !value.toString().isEmpty()) {
                combo->addItem(value.toString(), value); // a value the file has but the list lacks (a rank order) stays as it is
            }
            combo->setCurrentIndex(std::max(0, combo->findData(value)));
        }
    }
    loadSearch(s);
    showPresetOf(s);
    m_loading = false;
    m_reloadPrices = true; // the price rows take the loaded scenario's prices
    validate();
    m_committed = m_valid ? editKey(*m_valid) : std::string();
}

void ScenarioEditor::showPresetOf(const Scenario& s)
{
    m_preset->setCurrentIndex(0);
    showDescription(m_presetDescription, QString());
    for (int i = 1; i < m_preset->count(); ++i) {
        // The same model on the same cluster: a preset of the model on another cluster or in another training
        // mode would name GPUs and a plan the file does not have.
        const Scenario preset = presetScenario(m_preset->itemData(i).toString()).value_or(Scenario{});
        if (preset.model.name == s.model.name && preset.cluster.gpu == s.cluster.gpu && preset.cluster.num_gpus == s.cluster.num_gpus &&
            preset.training.mode == s.training.mode) {
            m_preset->setCurrentIndex(i);
            showDescription(m_presetDescription, m_preset->itemData(i, Qt::ToolTipRole).toString());
            break;
        }
    }
    if (!s.description.empty()) {
        // The file's own words: a preset of the same model may describe another cluster and plan.
        showDescription(m_presetDescription, QString::fromStdString(s.description));
    }
    m_presetIndex = m_preset->currentIndex();
}

void ScenarioEditor::onTyped()
{
    if (m_loading) {
        return;
    }
    if (sender() == m_fields.at(QStringLiteral("model.layers"))) {
        updatePipelineCandidates();
    }
    validate();
}

void ScenarioEditor::commit()
{
    if (m_loading) {
        return;
    }
    validate();
    if (!m_valid) {
        return;
    }
    std::string json = editKey(*m_valid);
    if (json == m_committed) {
        return; // Enter on an unchanged field, or a focus change: nothing new
    }
    m_committed = std::move(json);
    Q_EMIT scenarioEdited(*m_valid);
}

void ScenarioEditor::validate()
{
    const bool wasValid = m_valid.has_value();
    Scenario s = m_base;
    bool ok = true;
    for (const form::TextField& f : form::textFields()) {
        FieldRow* row = m_fields.at(f.name);
        const QString error = f.read(row->text(), s);
        row->setError(error);
        ok = ok && error.isEmpty();
    }
    for (const form::ChoiceField& f : form::choiceFields()) {
        QWidget* w = m_choices.at(f.name);
        if (auto* box = qobject_cast<QCheckBox*>(w)) {
            f.read(box->isChecked(), s);
        } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            f.read(combo->currentData(), s);
        }
    }
    if (!s.search) {
        s.search = SearchSpace{};
    }
    readSearch(s);
    for (const auto& [listName, list] : m_lists) {
        ok = ok && list->error().isEmpty();
    }
    m_priceFields->setGpus(s.search->gpu.empty() ? std::vector<std::string>{s.cluster.gpu} : s.search->gpu, m_base, m_reloadPrices);
    m_reloadPrices = false;
    ok = m_priceFields->read(s) && ok;
    if (ok) {
        applyCoreDiagnostics(s, ok);
    }
    // The loaded plan stays only while it still fits the scenario (it is what `vtrain simulate` runs).
    m_planDropped.clear();
    if (ok && s.plan) {
        if (const auto rejection = check_plan(s.model, s.training, *s.plan, s.cluster.num_gpus)) {
            m_planDropped = QString::fromStdString(rejection->diagnostic.to_string());
            s.plan.reset();
        }
    }
    m_valid = ok ? std::optional<Scenario>(s) : std::nullopt;
    showApplicableFields(s);
    updateEstimate(s);
    const QStringList problems = errors();
    QString note = tr("About %1 plans to evaluate.").arg(formatCount(static_cast<double>(m_estimate)));
    if (!m_planDropped.isEmpty()) {
        note += QLatin1Char(' ') + tr("The plan to simulate no longer fits (%1): it is left out.").arg(m_planDropped.toHtmlEscaped());
    }
    m_status->setText(ok ? note
                         : tr("<span style='color:#c62828'>%n entry(s) refused; the sweep waits until they are fixed.</span>", nullptr,
                              static_cast<int>(problems.size())));
    if (wasValid != m_valid.has_value()) {
        Q_EMIT validityChanged(m_valid.has_value());
    }
}

void ScenarioEditor::showApplicableFields(const Scenario& s)
{
    // Fields that only mean something with another choice are shown with it: the MLA ranks with MLA, the
    // expert details once there are experts, the FP8 recipe with FP8, padding to capacity with a capacity factor.
    // A hidden field keeps its value.
    auto show = [](QWidget* w, bool visible) {
        if (!w || !w->parentWidget()) {
            return;
        }
        if (auto* form = qobject_cast<QFormLayout*>(w->parentWidget()->layout())) {
            form->setRowVisible(w, visible);
        }
    };
    const bool mla = s.model.attention == AttentionKind::Mla;
    const bool moe = s.model.moe.enabled() || !m_fields.at(QStringLiteral("model.moe.experts"))->text().trimmed().isEmpty();
    for (const auto& [name, row] : m_fields) {
        if (name.startsWith(u"model.mla.")) {
            show(row, mla || row->hasError());
        } else if (name.startsWith(u"model.moe.") && name != u"model.moe.experts") {
            show(row, moe || row->hasError());
        }
    }
    show(m_choices.at(QStringLiteral("training.fp8_recipe")), s.training.precision == Precision::Fp8);
    show(m_choices.at(QStringLiteral("model.moe.pad_to_capacity")), moe && !s.model.moe.dropless); // padding needs a capacity
    m_planGroup->setVisible(m_base.plan.has_value());
    // MLA's up-projections are recomputed only with MLA, the experts' activation only with experts.
    show(m_choices.at(QStringLiteral("plan.recompute_modules.mla_up_proj")), mla);
    show(m_choices.at(QStringLiteral("plan.recompute_modules.moe_act")), moe);
}

void ScenarioEditor::applyCoreDiagnostics(const Scenario& s, bool& ok)
{
    // Core's own rules (heads divide hidden, key/value heads divide heads, list items in range): the same
    // check a scenario file gets, with each message put at the field it names.
    const auto checked = scenario_from_json(scenario_to_json(s));
    if (checked.ok()) {
        return;
    }
    ok = false;
    for (const Diagnostic& d : checked.errors()) {
        const QString fieldName = QString::fromStdString(d.field);
        const QString message = QString::fromStdString(d.message);
        if (const auto it = m_fields.find(fieldName); it != m_fields.end()) {
            it->second->setError(message);
        } else if (const auto lt = m_lists.find(fieldName); lt != m_lists.end()) {
            lt->second->setError(message);
        } else {
            m_fields.at(QStringLiteral("model.name"))->setError(QString::fromStdString(d.to_string()));
        }
    }
}

QStringList ScenarioEditor::errors() const
{
    QStringList out;
    for (const auto& [name, row] : m_fields) {
        if (row->hasError()) {
            out << name + QStringLiteral(": ") + row->error();
        }
    }
    for (const auto& [name, list] : m_lists) {
        if (!list->error().isEmpty()) {
            out << name + QStringLiteral(": ") + list->error();
        }
    }
    return out;
}

QString ScenarioEditor::errorOf(const QString& field) const
{
    if (const auto it = m_fields.find(field); it != m_fields.end()) {
        return it->second->error();
    }
    if (const auto it = m_lists.find(field); it != m_lists.end()) {
        return it->second->error();
    }
    return {};
}

int ScenarioEditor::minimumContentWidth() const
{
    const auto* scroll = findChild<QScrollArea*>();
    return scroll->widget()->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
}

FieldRow* ScenarioEditor::fieldRow(const QString& field) const
{
    const auto it = m_fields.find(field);
    return it != m_fields.end() ? it->second : nullptr;
}

CheckList* ScenarioEditor::checkList(const QString& field) const
{
    const auto it = m_lists.find(field);
    return it != m_lists.end() ? it->second : nullptr;
}

QWidget* ScenarioEditor::choice(const QString& field) const
{
    const auto it = m_choices.find(field);
    return it != m_choices.end() ? it->second : nullptr;
}

} // namespace vtrain::ui
