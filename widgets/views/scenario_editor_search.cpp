// SPDX-License-Identifier: MIT
// The scenario editor's parallelism ranges: candidate values, loading a scenario's "search" block into
// check lists, reading them back, and the size of the resulting plan space.
#include <algorithm>

#include <QCheckBox>

#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>

#include "models/format.h"
#include "models/scenario_fields.h"
#include "models/scenario_form.h"
#include "views/check_list.h"
#include "views/field_row.h"
#include "views/scenario_editor.h"
#include "vtrain/explorer_space.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain::ui {
namespace {

const QList<int> kTpCandidates{1, 2, 4, 8, 16, 32, 64};
const QList<int> kMicroBatchCandidates{1, 2, 4, 8, 16, 32};
const QList<int> kVirtualStageCandidates{2, 3, 4, 5, 6, 7, 8};
const QList<int> kCpCandidates{1, 2, 4, 8, 16};
const QList<int> kEpCandidates{1, 2, 4, 8, 16, 32, 64, 128};
const QList<int> kEtpCandidates{1, 2, 4, 8};
const QList<double> kOffloadActivationCandidates{0.0, 0.25, 0.5, 1.0};

QString offloadShareLabel(double share)
{
    return share <= 0 ? ScenarioEditor::tr("none") : share >= 1 ? ScenarioEditor::tr("all") : QStringLiteral("%1%").arg(share * 100, 0, 'g', 3);
}

void setIntItems(CheckList* list, const QList<int>& values)
{
    QStringList labels;
    QVariantList vs;
    for (int v : values) {
        labels << QString::number(v);
        vs << v;
    }
    list->setItems(labels, vs);
}

// The explorer's default pp list (default_pipeline_depths: the divisors of the layers, the powers of two
// and the plan's own depth) for `layers` layers: the stage counts offered, and what "every legal value"
// means. At most 64.
QList<int> defaultDepths(Scenario s, int layers)
{
    s.model.layers = layers;
    const std::vector<int> all = default_pipeline_depths(s);
    return QList<int>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(all.size(), 64)));
}

template <typename T, typename Fn>
QVariantList toVariants(const std::vector<T>& values, Fn convert)
{
    QVariantList out;
    for (const T& v : values) {
        out << convert(v);
    }
    return out;
}

// Whether the explorer can lay the model's layers out over `pp` stages: an even split, the plan's
// first/last stage layer counts with the rest even (DeepSeek-V3's 61 layers over 16 stages), or one of the
// uneven layouts it tries (uneven_layouts: Qwen3-235B's 94 layers over 8 stages).
bool stagesHoldLayers(const ModelSpec& model, const std::optional<Plan>& plan, int pp)
{
    if (model.layers <= 0 || pp <= 0) {
        return false;
    }
    Plan probe;
    if (plan) {
        probe.first_stage_layers = plan->first_stage_layers;
        probe.last_stage_layers = plan->last_stage_layers;
    }
    probe.pp = pp;
    PipelineLayout layout;
    return !resolve_pipeline_layout(model, probe, layout).has_value() || !uneven_layouts(model.layers, model.mtp_layers, probe, pp, 1).empty();
}

} // namespace

QGroupBox* ScenarioEditor::buildSearchGroup()
{
    auto* box = new QGroupBox(tr("Parallelism to explore"));
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    setIntItems(addList(form, tr("Tensor parallel"), QStringLiteral("search.tp"), 4, tr("Tensor-parallel widths (tp)")), kTpCandidates);
    addList(form, tr("Pipeline stages"), QStringLiteral("search.pp"), 4,
            tr("Pipeline-parallel depths (pp): the divisors of the layer count; all checked = every legal one"));
    setIntItems(addList(form, tr("Micro-batch"), QStringLiteral("search.micro_batch"), 4, tr("Micro-batch sizes in sequences")),
                kMicroBatchCandidates);
    addList(form, tr("Schedule"), QStringLiteral("search.schedule"), 2,
            tr("Pipeline schedules; DualPipe is DeepSeek-V3's bidirectional pipeline (needs an even stage count)"))
        ->setItems({QStringLiteral("GPipe"), QStringLiteral("1F1B"), tr("interleaved"), QStringLiteral("DualPipe")},
                   {QStringLiteral("gpipe"), QStringLiteral("1f1b"), QStringLiteral("interleaved"), QStringLiteral("dualpipe")});
    setIntItems(addList(form, tr("Virtual stages"), QStringLiteral("search.virtual_stages"), 4,
                        tr("Model chunks per pipeline rank, interleaved schedule only; all checked = every legal one")),
                kVirtualStageCandidates);
    addList(form, tr("Recompute"), QStringLiteral("search.recompute"), 3, tr("Activation recomputation"))
        ->setItems({tr("none"), tr("selective"), tr("full")}, {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full")});
    addList(form, tr("Sequence parallel"), QStringLiteral("search.sequence_parallel"), 3,
            tr("Megatron sequence parallelism (needs tp ≥ 2); both checked = on wherever tp ≥ 2"))
        ->setItems({tr("off"), tr("on")}, {false, true});
    // Two and three columns: four ZeRO labels or five formats in one row widened the dock past a laptop's.
    addList(form, tr("Optimizer sharding"), QStringLiteral("search.zero_stage"), 2,
            tr("ZeRO stage: 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (FSDP full shard)"))
        ->setItems({tr("none"), QStringLiteral("ZeRO-1"), QStringLiteral("ZeRO-2"), QStringLiteral("ZeRO-3")}, {0, 1, 2, 3});
    setIntItems(addList(form, tr("Context parallel"), QStringLiteral("search.cp"), 4,
                        tr("Context-parallel widths (cp): the sequence split across GPUs, for long contexts")),
                kCpCandidates);
    setIntItems(addList(form, tr("Expert parallel"), QStringLiteral("search.ep"), 4,
                        tr("Expert-parallel widths (ep): experts spread over GPUs, tokens sent by all-to-all; MoE models only")),
                kEpCandidates);
    {
        QStringList labels{tr("= tp")};
        QVariantList values{0};
        for (int v : kEtpCandidates) {
            labels << QString::number(v);
            values << v;
        }
        addList(form, tr("Expert tensor parallel"), QStringLiteral("search.etp"), 5,
                tr("Tensor-parallel width inside an expert (etp); \"= tp\" is Megatron's default"))
            ->setItems(labels, values);
    }
    addList(form, tr("Precision"), QStringLiteral("search.precision"), 3, tr("GEMM number formats to compare; FP8 uses the FP8 scaling chosen above"))
        ->setItems({QStringLiteral("BF16"), QStringLiteral("FP16"), QStringLiteral("FP32"), QStringLiteral("FP8"), QStringLiteral("NVFP4")},
                   {QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32"), QStringLiteral("fp8"), QStringLiteral("nvfp4")});
    addList(form, tr("TP comm overlap"), QStringLiteral("search.tp_overlap"), 3,
            tr("Tensor-parallel traffic hidden behind GEMMs (userbuffers, async TP)"))
        ->setItems({tr("off"), tr("on")}, {false, true});
    addList(form, tr("MoE comm overlap"), QStringLiteral("search.moe_overlap"), 3,
            tr("Expert all-to-all overlapped with compute (DualPipe, batch-level overlap); MoE models only"))
        ->setItems({tr("off"), tr("on")}, {false, true});
    addList(form, tr("DP comm overlap"), QStringLiteral("search.overlap_grad_reduce"), 3,
            tr("Data-parallel gradient reduction overlapped with the backward pass (Megatron --overlap-grad-reduce)"))
        ->setItems({tr("off"), tr("on")}, {false, true});
    {
        QStringList labels;
        QVariantList values;
        for (const QString& order : form::rankOrderChoices()) {
            labels << order;
            values << order;
        }
        addList(form, tr("Rank order"), QStringLiteral("search.rank_order"), 1,
                tr("Rank layouts: which dimension gets adjacent ranks, innermost first (tp-cp-ep-dp-pp is Megatron's default; "
                   "tp-cp-ep-pp-dp keeps a pipeline inside a node)"))
            ->setItems(labels, values);
    }
    addList(form, tr("Optimizer offload"), QStringLiteral("search.offload_optimizer"), 3,
            tr("FP32 master weights and optimizer states in host memory, the step on the CPU"))
        ->setItems({tr("off"), tr("on")}, {false, true});
    {
        QStringList labels;
        QVariantList values;
        for (double v : kOffloadActivationCandidates) {
            labels << offloadShareLabel(v);
            values << v;
        }
        addList(form, tr("Activation offload"), QStringLiteral("search.offload_activations"), 4,
                tr("Share of the stashed activations kept in host memory between forward and backward"))
            ->setItems(labels, values);
    }
    return box;
}

void ScenarioEditor::updatePipelineCandidates()
{
    // Candidates: the explorer's default depths (divisors, powers of two, the plan's), plus what the user
    // chose, so a Layers edit (even through "1", "10", "100" while typing 100000) never loses the choice. A
    // value that does not divide is swept with uneven stages where the layers can be laid out on it, else
    // shown marked and left out.
    CheckList* pp = m_lists.at(QStringLiteral("search.pp"));
    const auto layers = fields::parseInt(m_fields.at(QStringLiteral("model.layers"))->text(), 1, 100000);
    if (!layers.ok()) {
        return;
    }
    const QList<int> legal = defaultDepths(m_base, *layers.value);
    QList<int> shown = legal;
    if (m_ppChoice) {
        for (int v : *m_ppChoice) {
            if (!shown.contains(v)) {
                shown << v;
            }
        }
        std::sort(shown.begin(), shown.end());
    }
    setIntItems(pp, shown);
    ModelSpec model = m_base.model;
    model.layers = *layers.value;
    QVariantList checked;
    QVariantList marked;
    QList<int> uneven;
    for (int v : shown) {
        if (!m_ppChoice || m_ppChoice->contains(v)) {
            checked << v;
        }
        if (*layers.value % v != 0) {
            if (stagesHoldLayers(model, m_base.plan, v)) {
                uneven << v;
            } else {
                marked << v;
            }
        }
    }
    pp->setChecked(checked);
    pp->setMarked(marked, tr("cannot hold the model's layers (%1): left out of the sweep").arg(*layers.value));
    for (int v : uneven) {
        pp->box(v)->setToolTip(tr("%1: does not divide %2 layers: swept with uneven stages (Megatron-Bridge's layouts)").arg(v).arg(*layers.value));
    }
}

void ScenarioEditor::onPipelineListEdited()
{
    // The user's own choice: remembered as such unless it is "every legal value".
    CheckList* pp = m_lists.at(QStringLiteral("search.pp"));
    QList<int> chosen;
    for (const QVariant& v : pp->checkedValues()) {
        chosen << v.toInt();
    }
    const auto layers = fields::parseInt(m_fields.at(QStringLiteral("model.layers"))->text(), 1, 100000);
    const QList<int> legal = layers.ok() ? defaultDepths(m_base, *layers.value) : QList<int>{};
    m_ppChoice = (layers.ok() && chosen == legal) ? std::nullopt : std::optional<QList<int>>(chosen);
    commit();
}

void ScenarioEditor::loadSearch(const Scenario& s)
{
    const SearchSpace q = s.search.value_or(SearchSpace{});
    auto ints = [](const std::vector<int>& v) { return toVariants(v, [](int x) { return QVariant(x); }); };
    auto load = [this](const char* name, const QVariantList& values, const QVariantList& fallback) {
        CheckList* list = m_lists.at(QLatin1String(name));
        list->setChecked(values.isEmpty() ? fallback : values);
        list->setError({});
    };
    m_ppChoice.reset();
    if (!q.pp.empty()) {
        m_ppChoice = QList<int>(q.pp.begin(), q.pp.end());
    }
    updatePipelineCandidates();
    m_lists.at(QStringLiteral("search.pp"))->setError({});

    QVariantList gpus = toVariants(q.gpu, [](const std::string& g) { return QVariant(QString::fromStdString(g)); });
    const QVariantList offered = m_lists.at(QStringLiteral("search.gpu"))->values();
    if (!offered.contains(QString::fromStdString(s.cluster.gpu))) {
        showGpuItems(QString::fromStdString(s.cluster.gpu));
    }
    load("search.gpu", gpus, {QString::fromStdString(s.cluster.gpu)});

    // The explorer's default widths: up to default_tp_limit over the searched GPU types (GB200 NVL72's trays
    // of 4 still try 8); a GPU without a profile here counts as an 8-GPU host.
    int widest = 1;
    for (const std::string& id : q.gpu.empty() ? std::vector<std::string>{s.cluster.gpu} : q.gpu) {
        LinkSpec links;
        for (const GpuChoice& g : m_gpus) {
            if (g.id.toStdString() == id) {
                links = g.links;
            }
        }
        widest = std::max(widest, default_tp_limit(s, links));
    }
    // Unlisted axes: the explorer's default lists, which hold the loaded plan's own value (its ZeRO-3, its
    // micro-batch) as the explorer keeps the plan a scenario states in its space.
    load("search.tp", ints(q.tp), ints(default_tp_widths(s, widest)));
    load("search.micro_batch", ints(q.micro_batch), ints(default_micro_batches(s)));
    load("search.schedule", toVariants(q.schedule, [](Schedule v) { return QVariant(QString::fromLatin1(to_string(v))); }),
         {QStringLiteral("gpipe"), QStringLiteral("1f1b"), QStringLiteral("interleaved")});
    load("search.virtual_stages", ints(q.virtual_stages), m_lists.at(QStringLiteral("search.virtual_stages"))->values());
    load("search.recompute", toVariants(q.recompute, [](Recompute v) { return QVariant(QString::fromLatin1(to_string(v))); }),
         {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full")});
    load("search.sequence_parallel", toVariants(q.sequence_parallel, [](bool v) { return QVariant(v); }), {false, true});
    load("search.zero_stage", ints(q.zero_stage), ints(default_zero_stages(s)));
    // Today's axes: unchecked lists default to the loaded plan's value, as the explorer does.
    const Plan given = s.plan.value_or(Plan{});
    // Values a file names beyond the offered ones join the list (sorted by `less`, labelled by `label`), so
    // what the file says stays checked.
    auto widenBy = [this](const char* name, const QVariantList& wanted, auto less, auto label) {
        CheckList* list = m_lists.at(QLatin1String(name));
        QVariantList values = list->values();
        bool grown = false;
        for (const QVariant& v : wanted) {
            if (!values.contains(v)) {
                values << v;
                grown = true;
            }
        }
        if (grown) {
            std::stable_sort(values.begin(), values.end(), less);
            QStringList labels;
            for (const QVariant& v : values) {
                labels << label(v);
            }
            list->setItems(labels, values);
        }
        return wanted;
    };
    // A width the candidates lack (ep 256 in a file) joins them, so what the file says stays checked.
    auto widen = [&widenBy](const char* name, const QVariantList& wanted) {
        return widenBy(
            name, wanted, [](const QVariant& x, const QVariant& y) { return x.toInt() < y.toInt(); },
            [](const QVariant& v) { return v.toInt() == 0 ? tr("= tp") : QString::number(v.toInt()); });
    };
    load("search.cp", widen("search.cp", q.cp.empty() ? QVariantList{given.cp} : ints(q.cp)), {});
    load("search.ep", widen("search.ep", q.ep.empty() ? QVariantList{given.ep} : ints(q.ep)), {});
    load("search.etp", widen("search.etp", q.etp.empty() ? QVariantList{given.etp} : ints(q.etp)), {});
    load("search.precision", toVariants(q.precision, [](Precision v) { return QVariant(QString::fromLatin1(to_string(v))); }),
         {QString::fromLatin1(to_string(s.training.precision))});
    load("search.tp_overlap", toVariants(q.tp_overlap, [](bool v) { return QVariant(v); }), {given.tp_overlap});
    load("search.moe_overlap", toVariants(q.moe_overlap, [](bool v) { return QVariant(v); }), {given.moe_overlap});
    load("search.overlap_grad_reduce", toVariants(q.overlap_grad_reduce, [](bool v) { return QVariant(v); }), {given.overlap_grad_reduce});
    load("search.offload_optimizer", toVariants(q.offload_optimizer, [](bool v) { return QVariant(v); }), {given.offload_optimizer});
    QVariantList orders;
    for (const RankOrder& o : q.rank_order.empty() ? std::vector<RankOrder>{given.rank_order} : q.rank_order) {
        orders << QString::fromStdString(to_string(o));
    }
    load("search.rank_order",
         widenBy(
             "search.rank_order", orders, [](const QVariant&, const QVariant&) { return false; }, [](const QVariant& v) { return v.toString(); }),
         {});
    QVariantList shares = toVariants(q.offload_activations.empty() ? std::vector<double>{given.offload_activations} : q.offload_activations,
                                     [](double v) { return QVariant(v); });
    load("search.offload_activations",
         widenBy(
             "search.offload_activations", shares, [](const QVariant& a, const QVariant& b) { return a.toDouble() < b.toDouble(); },
             [](const QVariant& v) { return offloadShareLabel(v.toDouble()); }),
         {});
}

void ScenarioEditor::readSearch(Scenario& s)
{
    SearchSpace& q = *s.search;
    auto checked = [this](const char* name) {
        CheckList* list = m_lists.at(QLatin1String(name));
        const QVariantList values = list->checkedValues();
        list->setError(values.isEmpty() ? tr("check at least one") : QString());
        return values;
    };
    auto allChecked = [this](const char* name) {
        const CheckList* list = m_lists.at(QLatin1String(name));
        return list->checkedValues().size() == list->count();
    };
    auto ints = [](const QVariantList& values) {
        std::vector<int> out;
        for (const QVariant& v : values) {
            out.push_back(v.toInt());
        }
        return out;
    };

    q.gpu.clear();
    const QVariantList gpus = checked("search.gpu");
    for (const QVariant& v : gpus) {
        q.gpu.push_back(v.toString().toStdString());
    }
    if (!q.gpu.empty()) {
        // Keep the loaded cluster GPU first while it is checked: the scenario's price and links belong to it.
        const auto it = std::find(q.gpu.begin(), q.gpu.end(), m_base.cluster.gpu);
        if (it != q.gpu.end()) {
            std::rotate(q.gpu.begin(), it, it + 1);
        }
        s.cluster.gpu = q.gpu.front();
    }
    q.tp = ints(checked("search.tp"));
    // "Every legal value" lists: all checked is written as empty so the explorer pairs only legal values.
    q.pp.clear();
    CheckList* ppList = m_lists.at(QStringLiteral("search.pp"));
    ppList->setError({});
    if (m_ppChoice) {
        for (int v : *m_ppChoice) {
            if (stagesHoldLayers(s.model, s.plan, v)) {
                q.pp.push_back(v);
            }
        }
        if (m_ppChoice->isEmpty()) {
            ppList->setError(tr("check at least one"));
        } else if (q.pp.empty()) {
            ppList->setError(tr("none of the checked stage counts can hold the model's layers (%1)").arg(s.model.layers));
        }
    }
    q.micro_batch = ints(checked("search.micro_batch"));
    q.schedule.clear();
    for (const QVariant& v : checked("search.schedule")) {
        q.schedule.push_back(schedule_from_string(v.toString().toStdString()).value_or(Schedule::OneFOneB));
    }
    const bool interleaved = std::find(q.schedule.begin(), q.schedule.end(), Schedule::Interleaved) != q.schedule.end();
    q.virtual_stages = allChecked("search.virtual_stages") ? std::vector<int>{} : ints(checked("search.virtual_stages"));
    if (interleaved) {
        checked("search.virtual_stages");
    } else {
        m_lists.at(QStringLiteral("search.virtual_stages"))->setError({}); // unused without the interleaved schedule
    }
    q.recompute.clear();
    for (const QVariant& v : checked("search.recompute")) {
        q.recompute.push_back(recompute_from_string(v.toString().toStdString()).value_or(Recompute::None));
    }
    const QVariantList sp = checked("search.sequence_parallel");
    q.sequence_parallel.clear();
    if (!allChecked("search.sequence_parallel")) {
        for (const QVariant& v : sp) {
            q.sequence_parallel.push_back(v.toBool());
        }
    }
    q.zero_stage = ints(checked("search.zero_stage"));
    q.cp = ints(checked("search.cp"));
    q.ep = ints(checked("search.ep"));
    q.etp = ints(checked("search.etp"));
    q.precision.clear();
    for (const QVariant& v : checked("search.precision")) {
        q.precision.push_back(precision_from_string(v.toString().toStdString()).value_or(Precision::Bf16));
    }
    auto flags = [](const QVariantList& values) {
        std::vector<bool> out;
        for (const QVariant& v : values) {
            out.push_back(v.toBool());
        }
        return out;
    };
    q.tp_overlap = flags(checked("search.tp_overlap"));
    q.moe_overlap = flags(checked("search.moe_overlap"));
    q.overlap_grad_reduce = flags(checked("search.overlap_grad_reduce"));
    q.offload_optimizer = flags(checked("search.offload_optimizer"));
    q.rank_order.clear();
    for (const QVariant& v : checked("search.rank_order")) {
        if (const auto order = parse_rank_order(v.toString().toStdString())) {
            q.rank_order.push_back(*order);
        }
    }
    q.offload_activations.clear();
    for (const QVariant& v : checked("search.offload_activations")) {
        q.offload_activations.push_back(v.toDouble());
    }
    // Expert parallelism needs experts: a dense model with ep > 1 checked would only produce rejections.
    if (!s.model.moe.enabled() && std::any_of(q.ep.begin(), q.ep.end(), [](int v) { return v > 1; })) {
        m_lists.at(QStringLiteral("search.ep"))->setError(tr("expert parallelism needs routed experts (Mixture of experts above)"));
    }
}

void ScenarioEditor::updateEstimate(const Scenario& s)
{
    // Upper bound of the enumerated space (the explorer's exact count pairs virtual stages with legal pp).
    if (!s.search) {
        m_estimate = 0;
        return;
    }
    const SearchSpace& q = *s.search;
    auto n = [](std::size_t size, std::size_t fallback) { return static_cast<std::uint64_t>(size > 0 ? size : fallback); };
    const std::uint64_t pp = n(q.pp.size(), default_pipeline_depths(s).size());
    std::uint64_t schedules = 0;
    for (Schedule sc : q.schedule) {
        schedules += sc == Schedule::Interleaved ? n(q.virtual_stages.size(), 2) : 1;
    }
    m_estimate = n(q.gpu.size(), 1) * n(q.num_gpus.size(), 1) * n(q.tp.size(), 1) * pp * n(q.micro_batch.size(), 1) *
                 std::max<std::uint64_t>(schedules, 1) * n(q.recompute.size(), 1) * n(q.sequence_parallel.size(), 2) * n(q.zero_stage.size(), 1) *
                 n(q.cp.size(), 1) * n(q.ep.size(), 1) * n(q.etp.size(), 1) * n(q.precision.size(), 1) * n(q.tp_overlap.size(), 1) *
                 n(q.moe_overlap.size(), 1) * n(q.overlap_grad_reduce.size(), 1) * n(q.rank_order.size(), 1) * n(q.offload_optimizer.size(), 1) *
                 n(q.offload_activations.size(), 1);
}

} // namespace vtrain::ui
