// SPDX-License-Identifier: MIT
#include "views/scenario_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include "models/format.h"
#include "models/presets.h"
#include "models/scenario_fields.h"
#include "views/check_list.h"
#include "views/field_row.h"
#include "vtrain/plan_check.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {

ScenarioEditor::ScenarioEditor(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("scenarioEditor"));
    auto* content = new QWidget;
    auto* column = new QVBoxLayout(content);
    column->setContentsMargins(6, 6, 6, 6);

    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(new QLabel(tr("Preset:"), content));
    m_preset = new QComboBox(content);
    m_preset->setObjectName(QStringLiteral("preset"));
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
    m_presetDescription->setWordWrap(true);
    m_presetDescription->setStyleSheet(QStringLiteral("color: palette(mid);"));
    column->addWidget(m_presetDescription);

    column->addWidget(buildModelGroup());
    column->addWidget(buildClusterGroup());
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
        if (!id.isEmpty()) {
            loadPreset(id);
        }
    });
    for (QComboBox* combo : {m_activation, m_precision, m_attention}) {
        connect(combo, &QComboBox::activated, this, &ScenarioEditor::onEdited);
    }
    connect(m_tied, &QCheckBox::clicked, this, &ScenarioEditor::onEdited);
    setMinimumWidth(300);
}

FieldRow* ScenarioEditor::addField(QFormLayout* form, const QString& label, const QString& name, const QString& placeholder,
                                   const QString& tip)
{
    auto* row = new FieldRow(name, placeholder, tip, form->parentWidget());
    form->addRow(label, row);
    m_fields[name] = row;
    connect(row, &FieldRow::edited, this, &ScenarioEditor::onEdited);
    return row;
}

CheckList* ScenarioEditor::addList(QFormLayout* form, const QString& label, const QString& name, int columns, const QString& tip)
{
    auto* list = new CheckList(name, columns, form->parentWidget());
    list->setToolTip(tip);
    form->addRow(label, list);
    m_lists[name] = list;
    connect(list, &CheckList::edited, this, &ScenarioEditor::onEdited);
    return list;
}

QGroupBox* ScenarioEditor::buildModelGroup()
{
    auto* box = new QGroupBox(tr("Model"));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    addField(form, tr("Name"), QStringLiteral("model.name"), tr("e.g. GPT-3 175B"), tr("A label for charts and files"));
    addField(form, tr("Layers"), QStringLiteral("model.layers"), {}, tr("Transformer layers"));
    addField(form, tr("Hidden size"), QStringLiteral("model.hidden"), {}, tr("Model width (d_model)"));
    addField(form, tr("Attention heads"), QStringLiteral("model.heads"), {}, tr("Must divide the hidden size"));
    addField(form, tr("Key/value heads"), QStringLiteral("model.kv_heads"), tr("= attention heads"),
             tr("Grouped-query attention: key/value heads; empty = multi-head attention"));
    addField(form, tr("FFN width"), QStringLiteral("model.ffn_hidden"), tr("= 4 × hidden"), tr("Feed-forward hidden size; empty = 4 × hidden"));
    addField(form, tr("Sequence length"), QStringLiteral("model.seq_len"), {}, tr("Tokens per sequence"));
    addField(form, tr("Vocabulary"), QStringLiteral("model.vocab"), {}, tr("Vocabulary size"));
    m_activation = new QComboBox(box);
    m_activation->setObjectName(QStringLiteral("model.activation"));
    m_activation->addItem(QStringLiteral("GELU"), QStringLiteral("gelu"));
    m_activation->addItem(QStringLiteral("SwiGLU"), QStringLiteral("swiglu"));
    form->addRow(tr("FFN activation"), m_activation);
    m_tied = new QCheckBox(tr("Tied input/output embedding"), box);
    m_tied->setObjectName(QStringLiteral("model.tied_embeddings"));
    form->addRow(QString(), m_tied);
    return box;
}

QGroupBox* ScenarioEditor::buildClusterGroup()
{
    auto* box = new QGroupBox(tr("Cluster and budget"));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    addList(form, tr("GPU types"), QStringLiteral("search.gpu"), 1,
            tr("GPU profiles to compare; the first checked one is the cluster's GPU (its price applies to it, the others use "
               "their profile's price)"));
    addField(form, tr("GPU count"), QStringLiteral("cluster.num_gpus"), tr("3360, or 1024, 2048, or 2240-4480:280"),
             tr("One count, a list, or a range from-to:step"));
    addField(form, tr("GPUs per node"), QStringLiteral("cluster.gpus_per_node"), tr("= the profile's node size"),
             tr("GPUs sharing NVLink; empty = the GPU profile's node size"));
    addField(form, tr("Price per GPU-hour ($)"), QStringLiteral("cluster.price_per_gpu_hour"), tr("= the profile's price"),
             tr("US dollars per GPU-hour; empty = the GPU profile's price"));
    addField(form, tr("Training tokens"), QStringLiteral("training.tokens"), tr("e.g. 270B, 15T or 2.7e11"),
             tr("Tokens to train on: sets the number of iterations, hence days and dollars"));
    addField(form, tr("Global batch"), QStringLiteral("training.global_batch"), {}, tr("Sequences per iteration"));
    m_precision = new QComboBox(box);
    m_precision->setObjectName(QStringLiteral("training.precision"));
    for (const char* p : {"bf16", "fp16", "fp32"}) {
        m_precision->addItem(QString::fromLatin1(p), QString::fromLatin1(p));
    }
    form->addRow(tr("Precision"), m_precision);
    m_attention = new QComboBox(box);
    m_attention->setObjectName(QStringLiteral("training.attention"));
    m_attention->addItem(tr("fused (flash)"), QStringLiteral("flash"));
    m_attention->addItem(tr("unfused"), QStringLiteral("unfused"));
    form->addRow(tr("Attention kernel"), m_attention);
    return box;
}

void ScenarioEditor::setProfiles(const QStringList& ids, const QHash<QString, double>& defaultPrices)
{
    m_prices = defaultPrices;
    QVariantList values;
    for (const QString& id : ids) {
        values << id;
    }
    m_lists.at(QStringLiteral("search.gpu"))->setItems(ids, values);
}

void ScenarioEditor::loadPreset(const QString& id)
{
    QString error;
    const auto scenario = presetScenario(id, &error);
    if (!scenario) {
        m_status->setText(tr("Preset \"%1\" cannot be loaded: %2").arg(id, error));
        return;
    }
    setScenario(*scenario);
    const int index = m_preset->findData(id);
    if (index >= 0) {
        m_preset->setCurrentIndex(index);
        m_presetDescription->setText(m_preset->itemData(index, Qt::ToolTipRole).toString());
    }
    if (m_valid) {
        Q_EMIT scenarioEdited(*m_valid);
    }
}

void ScenarioEditor::setScenario(const Scenario& s)
{
    m_loading = true;
    m_base = s;
    const ModelSpec& m = s.model;
    auto set = [this](const char* name, const QString& text) { m_fields.at(QLatin1String(name))->setText(text); };
    set("model.name", QString::fromStdString(m.name));
    set("model.layers", QString::number(m.layers));
    set("model.hidden", QString::number(m.hidden));
    set("model.heads", QString::number(m.heads));
    set("model.kv_heads", m.kv_heads > 0 ? QString::number(m.kv_heads) : QString());
    set("model.ffn_hidden", m.ffn_hidden > 0 ? QString::number(m.ffn_hidden) : QString());
    set("model.seq_len", QString::number(m.seq_len));
    set("model.vocab", QString::number(m.vocab));
    m_activation->setCurrentIndex(m.activation == FfnActivation::SwiGlu ? 1 : 0);
    m_tied->setChecked(m.tied_embeddings);
    const ClusterSpec& c = s.cluster;
    std::vector<int> counts = s.search && !s.search->num_gpus.empty() ? s.search->num_gpus : std::vector<int>{c.num_gpus};
    set("cluster.num_gpus", fields::formatGpuCounts(counts));
    set("cluster.gpus_per_node", c.gpus_per_node > 0 ? QString::number(c.gpus_per_node) : QString());
    set("cluster.price_per_gpu_hour", c.price_per_gpu_hour ? QString::number(*c.price_per_gpu_hour) : QString());
    set("training.tokens", s.training.tokens > 0 ? formatTokens(s.training.tokens) : QString());
    set("training.global_batch", QString::number(s.training.global_batch));
    m_precision->setCurrentIndex(m_precision->findData(QString::fromLatin1(to_string(s.training.precision))));
    m_attention->setCurrentIndex(m_attention->findData(QString::fromLatin1(to_string(s.training.attention))));
    loadSearch(s);
    m_preset->setCurrentIndex(0);
    m_presetDescription->clear();
    for (int i = 1; i < m_preset->count(); ++i) {
        if (presetScenario(m_preset->itemData(i).toString()).value_or(Scenario{}).model.name == m.name) {
            m_preset->setCurrentIndex(i);
            m_presetDescription->setText(m_preset->itemData(i, Qt::ToolTipRole).toString());
            break;
        }
    }
    m_loading = false;
    validate();
}

void ScenarioEditor::onEdited()
{
    if (m_loading) {
        return;
    }
    if (sender() == m_fields.at(QStringLiteral("model.layers"))) {
        updatePipelineCandidates();
    }
    validate();
    if (m_valid) {
        Q_EMIT scenarioEdited(*m_valid);
    }
}

void ScenarioEditor::validate()
{
    const bool wasValid = m_valid.has_value();
    Scenario s = m_base;
    bool ok = true;
    auto take = [&ok](FieldRow* row, const auto& parsed, auto& target) {
        row->setError(parsed.error);
        if (parsed.ok()) {
            target = *parsed.value;
        } else {
            ok = false;
        }
    };
    auto field = [this](const char* name) { return m_fields.at(QLatin1String(name)); };

    const QString name = field("model.name")->text().trimmed();
    field("model.name")->setError(name.isEmpty() ? tr("is required") : QString());
    ok = ok && !name.isEmpty();
    s.model.name = name.toStdString();
    take(field("model.layers"), fields::parseInt(field("model.layers")->text(), 1, 100000), s.model.layers);
    take(field("model.hidden"), fields::parseInt(field("model.hidden")->text(), 1, 1 << 20), s.model.hidden);
    take(field("model.heads"), fields::parseInt(field("model.heads")->text(), 1, 1 << 16), s.model.heads);
    take(field("model.kv_heads"), fields::parseOptionalInt(field("model.kv_heads")->text(), 1, 1 << 16), s.model.kv_heads);
    take(field("model.ffn_hidden"), fields::parseOptionalInt(field("model.ffn_hidden")->text(), 1, 1 << 24), s.model.ffn_hidden);
    take(field("model.seq_len"), fields::parseInt(field("model.seq_len")->text(), 1, 1 << 24), s.model.seq_len);
    take(field("model.vocab"), fields::parseInt(field("model.vocab")->text(), 1, 1 << 26), s.model.vocab);
    s.model.activation = m_activation->currentIndex() == 1 ? FfnActivation::SwiGlu : FfnActivation::Gelu;
    s.model.tied_embeddings = m_tied->isChecked();

    std::vector<int> counts;
    take(field("cluster.num_gpus"), fields::parseGpuCounts(field("cluster.num_gpus")->text()), counts);
    take(field("cluster.gpus_per_node"), fields::parseOptionalInt(field("cluster.gpus_per_node")->text(), 1, 1024), s.cluster.gpus_per_node);
    const auto price = fields::parseOptionalPositive(field("cluster.price_per_gpu_hour")->text(), 1000);
    field("cluster.price_per_gpu_hour")->setError(price.error);
    ok = ok && price.ok();
    s.cluster.price_per_gpu_hour = price.value;
    take(field("training.tokens"), fields::parseTokens(field("training.tokens")->text()), s.training.tokens);
    take(field("training.global_batch"), fields::parseInt(field("training.global_batch")->text(), 1, 1'000'000'000), s.training.global_batch);
    s.training.precision = m_precision->currentIndex() == 1 ? Precision::Fp16 : m_precision->currentIndex() == 2 ? Precision::Fp32 : Precision::Bf16;
    s.training.attention = m_attention->currentIndex() == 1 ? AttentionKernel::Unfused : AttentionKernel::Flash;

    if (!counts.empty()) {
        s.cluster.num_gpus = counts.front();
    }
    if (!s.search) {
        s.search = SearchSpace{};
    }
    s.search->num_gpus = counts;
    readSearch(s);
    for (const auto& [listName, list] : m_lists) {
        ok = ok && list->error().isEmpty();
    }
    if (ok) {
        applyCoreDiagnostics(s, ok);
    }
    // The loaded plan stays only while it still fits the scenario (it is what `vtrain simulate` runs).
    if (ok && s.plan && check_plan(s.model, s.training, *s.plan, s.cluster.num_gpus)) {
        s.plan.reset();
    }
    m_valid = ok ? std::optional<Scenario>(s) : std::nullopt;
    updateEstimate(s);
    const QStringList problems = errors();
    m_status->setText(ok ? tr("About %1 plans to evaluate.").arg(formatCount(static_cast<double>(m_estimate)))
                         : tr("<span style='color:#c62828'>%n entry(s) refused; the sweep waits until they are fixed.</span>", nullptr,
                              static_cast<int>(problems.size())));
    if (wasValid != m_valid.has_value()) {
        Q_EMIT validityChanged(m_valid.has_value());
    }
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

} // namespace vtrain::ui
