// SPDX-License-Identifier: MIT
#pragma once
// The syntax of Megatron-Bridge's Hydra/OmegaConf overrides as `vtrain import` reads them
// (import_bridge_overrides.cpp): which keys are overrides, their values, and the groups and keys that have
// no bearing on time, memory or cost.
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace vtrain::import_detail {

// Config groups whose keys have no bearing on time, memory or cost.
const std::set<std::string>& quiet_groups();
// Keys of the modeled groups that have no bearing on time, memory or cost.
const std::set<std::string>& quiet_keys();
// A dotted ConfigContainer path ("model.num_layers"): letters, digits, '_' and '.', not starting with a digit.
bool is_override_key(const std::string& key);
std::string strip_quotes(std::string v);
// A Hydra value: null, true/false, a number, a [list], or a string.
nlohmann::json hydra_value(const std::string& raw);

} // namespace vtrain::import_detail
