// SPDX-License-Identifier: MIT
#pragma once
// Reads a scenario's "model" block (scenario_json.cpp reads the rest).
#include "vtrain/json_fields.h"
#include "vtrain/scenario.h"

namespace vtrain {

ModelSpec read_model(json_fields::Reader r);

} // namespace vtrain
