// SPDX-License-Identifier: MIT
#pragma once
// A GPU datasheet: the figures a vendor prints (dense peaks per precision, HBM size and bandwidth, compute
// units, scale-up link and domain, NICs per host, a price), each group with its citation. make-profile turns
// one into a HardwareSpec by documented rules (docs/profile-format.md, "Datasheets"), so that a user can add
// a GPU we do not ship, and the shipped modeled profiles are built the same way (profiles/datasheets/).
#include <string>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/json_fields.h"
#include "vtrain/modeled_profile.h"

namespace vtrain {

// Achievable fraction of the per-direction NVLink/xGMI rate that NCCL's bus bandwidth reaches when a
// datasheet does not say: H100's 450 GB/s per direction gives the ~360 GB/s all-reduce bus bandwidth
// quoted for DGX H100 without NVLink SHARP, and H800's 200 GB/s the 160 GB/s DeepSeek-V3 §3.2.2 reports.
constexpr double kDefaultScaleUpBusEfficiency = 0.8;

Expected<HardwareSpec> hardware_spec_from_datasheet(const nlohmann::json& datasheet);

// A "sources"/"figures_sources" block: an object whose values are citations (text, not a number).
// Reports through `r` and returns the block as read.
nlohmann::json read_citations(json_fields::Reader r, const std::vector<std::string>& required);

// Whether text reads as a number ("nan", "1e308", " 42"): such text is no citation.
bool text_is_a_number(const std::string& text);

} // namespace vtrain
