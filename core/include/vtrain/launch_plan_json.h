// SPDX-License-Identifier: MIT
#pragma once
// The plan file of `vtrain launch --plan FILE`: a scenario's "plan" block, or a row of
// `vtrain explore --json` carrying "plan", "gpu" and "num_gpus".
#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

// The scenario with its plan (and, for an explored row, GPU and GPU count) replaced by the file's. The
// plan is read by the scenario reader, so errors name fields like "plan.tp".
Expected<Scenario> scenario_with_plan_file(const Scenario& scenario, const nlohmann::json& given);

} // namespace vtrain
