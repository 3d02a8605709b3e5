// SPDX-License-Identifier: MIT
#pragma once
// Machine-readable simulation results (the fields `vtrain simulate --json` promises) and the timeline in
// Chrome's trace event format (opens in Perfetto and chrome://tracing).
#include <nlohmann/json.hpp>

#include "vtrain/simulation_result.h"

namespace vtrain {

nlohmann::json result_to_json(const SimulationResult& result);

// One process per pipeline stage, one thread per lane (compute, tensor, pipeline, data parallel).
// Tensor-parallel collectives run inside compute tasks; they are drawn on the tensor lane at the end of
// each layer's slice of the task.
nlohmann::json timeline_to_chrome_trace(const SimulationResult& result);

} // namespace vtrain
