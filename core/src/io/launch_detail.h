// SPDX-License-Identifier: MIT
#pragma once
// Helpers the launch writers share (launch_config.cpp, launch_torchtitan.cpp, launch_deepspeed.cpp).
#include <optional>
#include <string>
#include <vector>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain::launch_detail {

std::string str(long long v);
// A command: its head, then one argument per continued line.
std::string join_lines(const std::string& head, const std::vector<std::string>& lines);

// How the plan's GPUs sit on nodes; launchers start the same number of processes on every node.
struct NodeLayout {
    int nodes = 1;
    int processes_per_node = 1;
};
NodeLayout node_layout(int num_gpus, int gpus_per_node, std::vector<std::string>& warnings);

// Shared refusals: the plan must pass the core's checks, and the node size must be known.
std::optional<Diagnostic> refuse(const Scenario& scenario, const Plan& plan, int gpus_per_node);

// Flags that describe the model, identical in Megatron-LM and Megatron-DeepSpeed.
void add_model_arguments(const ModelSpec& m, std::vector<std::string>& args);
void add_batch_arguments(const Scenario& s, const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings);
void add_recompute_arguments(Recompute recompute, std::vector<std::string>& args);
void add_recompute_arguments(const Plan& p, std::vector<std::string>& args, std::vector<std::string>& warnings);
std::string recompute_modules_flag_value(unsigned modules);
std::string vocabulary_warning(const ModelSpec& m);
std::string environment_prefix(const Plan& p);
extern const char* const kStillToSet;

} // namespace vtrain::launch_detail
