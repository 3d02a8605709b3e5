// SPDX-License-Identifier: MIT
#pragma once
// Scenario files: strict parsing (every bad field named with its reason) and serialisation.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

Expected<Scenario> scenario_from_json(const nlohmann::json& json);
Expected<Scenario> scenario_from_text(const std::string& text);
Expected<Scenario> load_scenario(const std::filesystem::path& path);

nlohmann::json scenario_to_json(const Scenario& scenario);
nlohmann::json plan_to_json(const Plan& plan);

// Parsing of enum names as they appear in files ("1f1b", "selective", ...).
std::optional<Schedule> schedule_from_string(const std::string& s);
std::optional<Recompute> recompute_from_string(const std::string& s);
std::optional<Precision> precision_from_string(const std::string& s);
std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s);
std::optional<CudaGraphs> cuda_graphs_from_string(const std::string& s);
std::optional<TrainingMode> training_mode_from_string(const std::string& s);       // "pretrain", "sft", "lora"
std::optional<PipelineRuntime> pipeline_runtime_from_string(const std::string& s); // "megatron", "pytorch"
// LoRA target modules: the LoraTarget bit of one name ("qkv", or Megatron-Bridge's "linear_qkv"; 0 for a name
// that is none), and the short names of a set's bits in a fixed order (qkv, proj, fc1, fc2).
unsigned lora_target_bit(const std::string& name);
std::vector<std::string> lora_target_names(unsigned targets);
// The module names of a CUDA-graph scope (Megatron-LM's --cuda-graph-scope values): the CudaGraphScope bit of
// one name (0 for a name that is not one), and the names of a scope's bits in a fixed order.
unsigned cuda_graph_scope_bit(const std::string& name);
std::vector<std::string> cuda_graph_scope_names(unsigned scope);
// The names of Plan::recompute_modules (Megatron-LM's --recompute-modules values): the RecomputeModule bit
// of one name, exactly as spelled (0 for a name that is not one), and the names of a set's bits in a fixed order.
unsigned recompute_module_bit(const std::string& name);
std::vector<std::string> recompute_module_names(unsigned modules);

} // namespace vtrain
