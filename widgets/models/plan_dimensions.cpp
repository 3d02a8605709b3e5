// SPDX-License-Identifier: MIT
#include "models/plan_dimensions.h"

#include <QCoreApplication>

#include "models/format.h"
#include "vtrain/rank_layout.h"

namespace vtrain::ui {

QStringList colorDimensionNames()
{
    QStringList names;
    for (int i = 0; i < static_cast<int>(ColorDimension::Count); ++i) {
        names << colorDimensionName(static_cast<ColorDimension>(i));
    }
    return names;
}

QString colorDimensionName(ColorDimension dimension)
{
    switch (dimension) {
    case ColorDimension::TensorParallel: return QCoreApplication::translate("vtrain", "Tensor parallel");
    case ColorDimension::PipelineParallel: return QCoreApplication::translate("vtrain", "Pipeline parallel");
    case ColorDimension::Schedule: return QCoreApplication::translate("vtrain", "Schedule");
    case ColorDimension::Recompute: return QCoreApplication::translate("vtrain", "Recompute");
    case ColorDimension::GpuCount: return QCoreApplication::translate("vtrain", "GPU count");
    case ColorDimension::GpuType: return QCoreApplication::translate("vtrain", "GPU type");
    case ColorDimension::Precision: return QCoreApplication::translate("vtrain", "Precision");
    case ColorDimension::ContextParallel: return QCoreApplication::translate("vtrain", "Context parallel");
    case ColorDimension::ExpertParallel: return QCoreApplication::translate("vtrain", "Expert parallel");
    case ColorDimension::RankOrder: return QCoreApplication::translate("vtrain", "Rank order");
    case ColorDimension::Offload: return QCoreApplication::translate("vtrain", "Host offload");
    case ColorDimension::Count: break;
    }
    return {};
}

QString scheduleName(Schedule schedule)
{
    switch (schedule) {
    case Schedule::GPipe: return QStringLiteral("GPipe");
    case Schedule::OneFOneB: return QStringLiteral("1F1B");
    case Schedule::Interleaved: return QStringLiteral("interleaved");
    case Schedule::DualPipe: return QStringLiteral("DualPipe");
    }
    return {};
}

QString recomputeName(Recompute recompute)
{
    return QString::fromLatin1(to_string(recompute));
}

QString categoryOf(const PlanRow& row, ColorDimension dimension)
{
    switch (dimension) {
    case ColorDimension::TensorParallel: return QStringLiteral("tp %1").arg(row.plan.tp);
    case ColorDimension::PipelineParallel: return QStringLiteral("pp %1").arg(row.plan.pp);
    case ColorDimension::Schedule: return scheduleName(row.plan.schedule);
    case ColorDimension::Recompute: return recomputeName(row.plan.recompute) + QStringLiteral(" recompute");
    case ColorDimension::GpuCount: return formatCount(row.num_gpus) + QStringLiteral(" GPUs");
    case ColorDimension::GpuType: return QString::fromStdString(row.gpu);
    case ColorDimension::Precision: return QString::fromLatin1(to_string(row.precision)).toUpper();
    case ColorDimension::ContextParallel: return QStringLiteral("cp %1").arg(row.plan.cp);
    case ColorDimension::ExpertParallel: return QStringLiteral("ep %1").arg(row.plan.ep);
    case ColorDimension::RankOrder: return QString::fromStdString(to_string(row.plan.rank_order));
    case ColorDimension::Offload: {
        QStringList parts;
        if (row.plan.offload_optimizer) {
            parts << QStringLiteral("optimizer");
        }
        if (row.plan.offload_activations > 0) {
            parts << QStringLiteral("%1% activations").arg(row.plan.offload_activations * 100, 0, 'g', 3);
        }
        return parts.isEmpty() ? QStringLiteral("no offload") : QStringLiteral("offload ") + parts.join(QStringLiteral(" + "));
    }
    case ColorDimension::Count: break;
    }
    return {};
}

double categoryOrder(const PlanRow& row, ColorDimension dimension)
{
    switch (dimension) {
    case ColorDimension::TensorParallel: return row.plan.tp;
    case ColorDimension::PipelineParallel: return row.plan.pp;
    case ColorDimension::Schedule: return static_cast<double>(row.plan.schedule);
    case ColorDimension::Recompute: return static_cast<double>(row.plan.recompute);
    case ColorDimension::GpuCount: return row.num_gpus;
    case ColorDimension::Precision: return static_cast<double>(row.precision);
    case ColorDimension::ContextParallel: return row.plan.cp;
    case ColorDimension::ExpertParallel: return row.plan.ep;
    case ColorDimension::Offload: return (row.plan.offload_optimizer ? 2 : 0) + row.plan.offload_activations;
    case ColorDimension::RankOrder: // by name; the default order sorts first as "tp-cp-..." does anyway
    case ColorDimension::GpuType:
    case ColorDimension::Count: break;
    }
    return 0;
}

QString planSummary(const Plan& p)
{
    QString s = QStringLiteral("tp %1 · pp %2 · dp %3 · mb %4 · %5").arg(p.tp).arg(p.pp).arg(p.dp).arg(p.micro_batch).arg(scheduleName(p.schedule));
    if (p.schedule == Schedule::Interleaved) {
        s += QStringLiteral(" ×%1").arg(p.virtual_stages);
    }
    if (p.recompute != Recompute::None) {
        s += QStringLiteral(" · %1 recompute").arg(recomputeName(p.recompute));
    }
    if (p.sequence_parallel) {
        s += QStringLiteral(" · SP");
    }
    if (p.zero_stage > 0) {
        s += QStringLiteral(" · ZeRO-%1").arg(p.zero_stage);
    }
    if (p.cp > 1) {
        s += QStringLiteral(" · cp %1").arg(p.cp);
    }
    if (p.ep > 1) {
        s += QStringLiteral(" · ep %1").arg(p.ep);
    }
    if (p.etp > 0 && p.etp != p.tp) {
        s += QStringLiteral(" · etp %1").arg(p.etp);
    }
    if (p.tp_overlap) {
        s += QStringLiteral(" · TP overlap");
    }
    if (p.moe_overlap) {
        s += QStringLiteral(" · MoE overlap");
    }
    if (!p.overlap_grad_reduce) {
        s += QStringLiteral(" · no DP overlap");
    }
    if (p.rank_order != RankOrder{}) {
        s += QStringLiteral(" · ranks %1").arg(QString::fromStdString(to_string(p.rank_order)));
    }
    if (p.offload_optimizer) {
        s += QStringLiteral(" · optimizer offload");
    }
    if (p.offload_activations > 0) {
        s += QStringLiteral(" · %1% activations offloaded").arg(p.offload_activations * 100, 0, 'g', 3);
    }
    if (p.recompute_modules != 0) {
        QStringList modules;
        if ((p.recompute_modules & kRecomputeLayernorm) != 0) {
            modules << QStringLiteral("norms");
        }
        if ((p.recompute_modules & kRecomputeMlaUpProj) != 0) {
            modules << QStringLiteral("MLA up-proj");
        }
        if ((p.recompute_modules & kRecomputeMoeAct) != 0) {
            modules << QStringLiteral("expert act");
        }
        s += QStringLiteral(" · recompute %1").arg(modules.join(QStringLiteral(", ")));
    }
    return s;
}

QString trainingDaysBand(const PlanRow& row)
{
    if (!(row.iteration_time_s > 0) || !(row.iteration_time_high_s > row.iteration_time_low_s)) {
        return {};
    }
    const double per_second = row.training_days / row.iteration_time_s;
    return QStringLiteral("%1–%2").arg(QString::number(row.iteration_time_low_s * per_second, 'f', 2),
                                       QString::number(row.iteration_time_high_s * per_second, 'f', 2));
}

double trainingDaysHigh(const PlanRow& row)
{
    if (!(row.iteration_time_s > 0) || !(row.iteration_time_high_s > 0)) {
        return row.training_days;
    }
    return row.training_days * row.iteration_time_high_s / row.iteration_time_s;
}

QString planDescription(const PlanRow& row, const QString& bandNote)
{
    const QString band = trainingDaysBand(row);
    const QString bandText = band.isEmpty()       ? QString()
                             : bandNote.isEmpty() ? QStringLiteral(" (80% band %1 days)").arg(band)
                                                  : QStringLiteral(" (band %1 days*)").arg(band);
    QString text = QStringLiteral("%1\n%2 × %3 · %11\n%4%5 · %6\niteration %7 · MFU %8\npeak memory %9%10")
                       .arg(planSummary(row.plan), formatCount(row.num_gpus), QString::fromStdString(row.gpu), formatDays(row.training_days),
                            bandText, formatDollars(row.cost_usd), formatSeconds(row.iteration_time_s), formatPercent(row.mfu),
                            formatGiB(row.peak_memory_gib), row.on_front ? QStringLiteral("\non the Pareto front") : QString())
                       .arg(QString::fromLatin1(to_string(row.precision)).toUpper());
    if (!band.isEmpty() && !bandNote.isEmpty()) {
        text += QStringLiteral("\n* ") + bandNote;
    }
    return text;
}

} // namespace vtrain::ui
