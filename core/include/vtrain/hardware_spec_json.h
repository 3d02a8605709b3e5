// SPDX-License-Identifier: MIT
#pragma once
// Hardware specs and datasheets as files: reading a spec (profiles/specs/) or a datasheet
// (profiles/datasheets/) into a HardwareSpec, the model parameters block, and what `vtrain make-profile`
// builds from one. The roofline itself is modeled_profile.h; the datasheet rules are gpu_datasheet.h.
#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/modeled_profile.h"

namespace vtrain {

// Reads a hardware spec: either the full form (HardwareSpec, modeled_profile.h; as in profiles/specs/) or a datasheet
// (profiles/datasheets/, "datasheet_version": 1: the figures as vendors print them, from which the
// achievable link figures are derived; see docs/profile-format.md). Every number is range-checked, unknown
// keys are refused, and every figure group must cite its source.
Expected<HardwareSpec> hardware_spec_from_json(const nlohmann::json& json);
bool is_datasheet(const nlohmann::json& json);

// What `vtrain make-profile` does with a spec or datasheet: refuses nesting deeper than kMaxSpecDepth
// (checked without recursion, before anything is copied), reads the hardware figures and the model
// parameters, builds the profile, copies a "calibration" block and a "default_band" (free text that reads
// as a number, such as "nan", is refused there), and checks the result with the profile loader, so that
// nothing make-profile writes is refused when it is loaded.
constexpr int kMaxSpecDepth = 32;
Expected<GpuProfile> build_profile_from_spec(const nlohmann::json& spec);

// Whether `json` nests deeper than `limit` levels (a scalar is depth 0); iterative, for hostile input.
bool json_deeper_than(const nlohmann::json& json, int limit);

} // namespace vtrain
