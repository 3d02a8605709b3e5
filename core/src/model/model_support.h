// SPDX-License-Identifier: MIT
#pragma once
// What the simulator can express today. A scenario field that parses but whose cost is not modeled yet
// must never be silently approximated: callers (simulate, explore, validate) refuse such a scenario with
// this reason ("Mamba-2 layers are not modeled", "context parallelism is not modeled"). As each feature
// lands, its line here goes away.
#include <optional>
#include <string>

#include "vtrain/scenario.h"

namespace vtrain {

// The first feature of the model, training settings or plan that the simulator does not model, or none.
std::optional<std::string> not_modeled_reason(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

} // namespace vtrain
