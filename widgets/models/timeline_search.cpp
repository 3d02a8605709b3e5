// SPDX-License-Identifier: MIT
#include "models/timeline_search.h"

#include <algorithm>

namespace vtrain::ui {
namespace {

const char* kindShort(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return "f";
    case TaskKind::Backward: return "b";
    case TaskKind::Recompute: return "r";
    default: return "";
    }
}

QStringList kindNames(TaskKind kind)
{
    switch (kind) {
    case TaskKind::Forward: return {QStringLiteral("forward")};
    case TaskKind::Backward: return {QStringLiteral("backward")};
    case TaskKind::Recompute: return {QStringLiteral("recompute")};
    case TaskKind::SendForward: return {QStringLiteral("send activations"), QStringLiteral("pp send"), QStringLiteral("send")};
    case TaskKind::SendBackward: return {QStringLiteral("send gradients"), QStringLiteral("pp send"), QStringLiteral("send")};
    case TaskKind::GradReduce: return {QStringLiteral("gradient reduce"), QStringLiteral("dp reduce"), QStringLiteral("reduce")};
    case TaskKind::EmbeddingSync: return {QStringLiteral("embedding sync")};
    case TaskKind::OptimizerStep: return {QStringLiteral("optimizer step"), QStringLiteral("optimizer")};
    case TaskKind::ParamGather: return {QStringLiteral("parameter gather"), QStringLiteral("gather")};
    case TaskKind::FsdpGather:
        return {QStringLiteral("fsdp gather"), QStringLiteral("fsdp"), QStringLiteral("parameter gather"), QStringLiteral("gather")};
    case TaskKind::FsdpReduceScatter:
        return {QStringLiteral("fsdp reduce-scatter"), QStringLiteral("fsdp"), QStringLiteral("reduce-scatter"), QStringLiteral("dp reduce")};
    }
    return {};
}

} // namespace

QStringList taskTerms(const TimelineRow& row, const TimelineBar& bar)
{
    QStringList terms{QStringLiteral("stage %1").arg(row.stage), QString::fromLatin1(laneName(row.lane))};
    switch (row.lane) {
    case TimelineLane::Tensor: terms << QStringLiteral("tp") << QStringLiteral("tp comm"); break;
    case TimelineLane::Expert: terms << QStringLiteral("ep") << QStringLiteral("ep comm") << QStringLiteral("all-to-all"); break;
    case TimelineLane::Context: terms << QStringLiteral("cp") << QStringLiteral("cp comm"); break;
    case TimelineLane::Pipeline: terms << QStringLiteral("pp"); break;
    case TimelineLane::DataParallel: terms << QStringLiteral("dp"); break;
    case TimelineLane::Compute: break;
    }
    terms << kindNames(bar.kind);
    if (bar.micro_batch >= 0) {
        const QString mb = QString::number(bar.micro_batch);
        terms << QStringLiteral("micro-batch ") + mb << QStringLiteral("mb ") + mb;
        if (row.lane == TimelineLane::Compute && *kindShort(bar.kind)) {
            terms << QString::fromLatin1(kindShort(bar.kind)) + mb;
            terms << QString::fromLatin1(kindShort(bar.kind)) + mb + QLatin1Char('.') + QString::number(bar.chunk);
        }
    }
    return terms;
}

std::vector<TimelineHit> findTasks(const TimelineData& data, const QString& query)
{
    QStringList phrases;
    for (const QString& p : query.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString phrase = p.simplified().toLower();
        if (!phrase.isEmpty()) {
            phrases << phrase;
        }
    }
    std::vector<TimelineHit> hits;
    if (phrases.isEmpty()) {
        return hits;
    }
    for (std::size_t r = 0; r < data.rows.size(); ++r) {
        const TimelineRow& row = data.rows[r];
        for (std::size_t b = 0; b < row.bars.size(); ++b) {
            const QStringList terms = taskTerms(row, row.bars[b]);
            const bool all = std::all_of(phrases.begin(), phrases.end(), [&](const QString& p) { return terms.contains(p); });
            if (all) {
                hits.push_back({static_cast<int>(r), static_cast<int>(b), row.bars[b].start});
            }
        }
    }
    std::stable_sort(hits.begin(), hits.end(), [](const TimelineHit& a, const TimelineHit& b) { return a.start < b.start; });
    return hits;
}

std::vector<PipelineFlow> pipelineFlows(const TimelineData& data)
{
    // The compute row of each stage.
    std::vector<int> computeRow(static_cast<std::size_t>(std::max(0, data.stages)), -1);
    for (std::size_t r = 0; r < data.rows.size(); ++r) {
        const TimelineRow& row = data.rows[r];
        if (row.lane == TimelineLane::Compute && row.stage >= 0 && row.stage < data.stages) {
            computeRow[static_cast<std::size_t>(row.stage)] = static_cast<int>(r);
        }
    }
    std::vector<PipelineFlow> flows;
    if (data.stages < 2) {
        return flows;
    }
    for (std::size_t r = 0; r < data.rows.size(); ++r) {
        const TimelineRow& row = data.rows[r];
        if (row.lane != TimelineLane::Pipeline) {
            continue;
        }
        for (std::size_t b = 0; b < row.bars.size(); ++b) {
            const TimelineBar& bar = row.bars[b];
            int to = -1;
            if (bar.kind == TaskKind::SendForward) {
                to = (row.stage + 1) % data.stages; // the interleaved schedule's last stage feeds stage 0's next chunk
            } else if (bar.kind == TaskKind::SendBackward) {
                to = (row.stage - 1 + data.stages) % data.stages;
            } else {
                continue;
            }
            flows.push_back({static_cast<int>(r), static_cast<int>(b), computeRow[static_cast<std::size_t>(to)], bar.start, bar.end});
        }
    }
    return flows;
}

} // namespace vtrain::ui
