// SPDX-License-Identifier: MIT
#pragma once
// Explorer results as text for files: CSV rows (streamed one at a time), JSON for rows and summaries,
// and a short plan label for tables.
#include <string>

#include <nlohmann/json.hpp>

#include "vtrain/explorer.h"

namespace vtrain {

// "t=8 p=35 d=12 mb=1 1f1b full" with " v=3", " sp", " zero1" when they apply.
// cp, ep, etp (when not tp) and the overlap flags appear when they are not the default.
std::string plan_label(const Plan& plan);
// The plan's label and, when not bf16, the row's precision.
std::string plan_row_label(const PlanRow& row);

// The CSV columns; on_front is the last one.
std::string plan_row_csv_header();
// One CSV line (no newline). Numbers use the C locale with enough digits to round-trip the ranking.
std::string plan_row_to_csv(const PlanRow& row);

nlohmann::json plan_row_to_json(const PlanRow& row);
// Counts by reason (with one example each), the front and the top-k lists; not every row.
nlohmann::json explore_result_to_json(const ExploreResult& result);

} // namespace vtrain
