// SPDX-License-Identifier: MIT
#pragma once
// Explorer results as text for files: CSV rows (streamed one at a time), JSON for rows and summaries,
// and a short plan label for tables.
#include <string>

#include <nlohmann/json.hpp>

#include "vtrain/explorer.h"

namespace vtrain {

// "t=8 p=35 d=12 mb=1 1f1b full" with " v=3", " sp", " zero1" when they apply.
std::string plan_label(const Plan& plan);

// The CSV columns; on_front is the last one.
std::string plan_row_csv_header();
// One CSV line (no newline). Numbers use the C locale with enough digits to round-trip the ranking.
std::string plan_row_to_csv(const PlanRow& row);

nlohmann::json plan_row_to_json(const PlanRow& row);
// Counts by reason (with one example each), the front and the top-k lists; not every row.
nlohmann::json explore_result_to_json(const ExploreResult& result);

} // namespace vtrain
