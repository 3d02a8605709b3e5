// SPDX-License-Identifier: MIT
#pragma once
// The human-readable report of `vtrain simulate`.
#include <ostream>

#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"
#include "vtrain/simulation_result.h"

namespace vtrain::cli {

void print_report(std::ostream& out, const Scenario& scenario, const GpuProfile& profile, const SimulationResult& result);

} // namespace vtrain::cli
