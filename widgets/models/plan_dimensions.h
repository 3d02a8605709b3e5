// SPDX-License-Identifier: MIT
#pragma once
// The plan dimensions the Pareto plot can colour by, and short plan descriptions for labels and tooltips.
#include <QString>
#include <QStringList>

#include "vtrain/explorer.h"

namespace vtrain::ui {

// New dimensions go before Count (the saved setting is the index).
enum class ColorDimension {
    TensorParallel,
    PipelineParallel,
    Schedule,
    Recompute,
    GpuCount,
    GpuType,
    Precision,
    ContextParallel,
    ExpertParallel,
    RankOrder,
    Offload,
    Count
};

QStringList colorDimensionNames();
QString colorDimensionName(ColorDimension dimension);

// The category a row falls into, e.g. "tp 8" or "1f1b".
QString categoryOf(const PlanRow& row, ColorDimension dimension);
// A number to order categories by (tp 2 before tp 16); categories with equal keys sort by name.
double categoryOrder(const PlanRow& row, ColorDimension dimension);

QString scheduleName(Schedule schedule);    // "1F1B", "GPipe", "interleaved"
QString recomputeName(Recompute recompute); // "none", "selective", "full"

// "tp 8 · pp 35 · dp 12 · mb 1 · 1F1B · full recompute"
QString planSummary(const Plan& plan);
// Several lines: the plan, its GPUs and its figures (tooltips).
// `bandNote` non-empty: the row's band is not a measured error but the default of an uncalibrated (modeled)
// profile, and says so.
QString planDescription(const PlanRow& row, const QString& bandNote = QString());
// The training time's uncertainty band in days ("18.7–22.1"), from the row's iteration-time band; empty
// when the row's GPU profile has none.
QString trainingDaysBand(const PlanRow& row);
// The band's upper end in days (the training time itself when there is no band): what the table sorts by.
double trainingDaysHigh(const PlanRow& row);

} // namespace vtrain::ui
