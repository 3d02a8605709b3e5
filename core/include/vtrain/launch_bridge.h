// SPDX-License-Identifier: MIT
#pragma once
// A plan as Megatron-Bridge recipe overrides: the torchrun line that runs Megatron-Bridge's
// scripts/training/run_recipe.py on a base recipe, and the ConfigContainer overrides (section.key=value,
// Hydra syntax) that make the recipe the simulated model and plan. What Megatron-Bridge cannot express,
// or what the user must still set, comes back as warnings (as launch_config.h's writers do).
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

// The recipe the overrides start from: a plain GPT whose every model field the overrides set.
constexpr const char* kBridgeBaseRecipe = "vanilla_gpt_pretrain_config";

struct BridgeLaunch {
    std::string launch_command;         // torchrun line that runs run_recipe.py --recipe ...
    std::vector<std::string> overrides; // "model.tensor_model_parallel_size=4", one per override
    std::vector<std::string> warnings;

    // The whole shell command: the launch line, then one override per line, joined by " \".
    std::string command_text() const;
};

// `gpus_per_node` is the node size the plan runs on. A plan the core's check_plan refuses gives its
// diagnostic (field + reason) instead of overrides.
Expected<BridgeLaunch> megatron_bridge_launch(const Scenario& scenario, const Plan& plan, int gpus_per_node);

} // namespace vtrain
