// SPDX-License-Identifier: MIT
#pragma once
// Finding tasks in a timeline as Perfetto's search box does: "B12" (backward of micro-batch 12),
// "stage 3", "DP reduce", "optimizer", or several such phrases separated by commas (all must hold).
// Also the pipeline's flows (which send feeds which stage) for the timeline's arrows. Widget-free.
#include <vector>

#include <QString>
#include <QStringList>

#include "models/timeline_data.h"

namespace vtrain::ui {

struct TimelineHit {
    int row = -1;
    int bar = -1;
    double start = 0;
};

// The phrases a task answers to: "stage 3", "compute", "backward", "b12", "micro-batch 12", ...
QStringList taskTerms(const TimelineRow& row, const TimelineBar& bar);
// Every task matching `query` (case-insensitive), ordered by start time; empty for an empty query.
std::vector<TimelineHit> findTasks(const TimelineData& data, const QString& query);

// A pipeline send: from the sender's pipeline lane to the receiving stage's compute lane.
struct PipelineFlow {
    int fromRow = -1; // the send's row (pipeline lane of the sending stage)
    int bar = -1;
    int toRow = -1; // the receiving stage's compute row
    double start = 0;
    double end = 0;
};
std::vector<PipelineFlow> pipelineFlows(const TimelineData& data);

} // namespace vtrain::ui
