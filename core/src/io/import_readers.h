// SPDX-License-Identifier: MIT
#pragma once
// The four readers behind vtrain::import_scenario_text (internal). Each fills a Draft from its format:
// scenario fields with the key they came from, notes for what it cannot take as written, errors for
// values that cannot be read at all. Defaults and the final checks are import.cpp's.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/import_draft.h"

namespace vtrain::import_detail {

// A Hugging Face config.json (text, or parsed). `model_only`: the shape keys only, for a known model or
// --model, without the name, sequence and precision the file would otherwise suggest.
void read_hf_config(const std::string& text, Draft& d);
void read_hf_json(const nlohmann::json& config, Draft& d, bool model_only = false);

// Megatron-LM / Megatron-Core pretrain_gpt.py arguments: a shell command line or script, or a file of
// arguments; torchrun's and deepspeed's launcher options give the world size.
void read_megatron_args(const std::string& text, Draft& d);

// A torchtitan job config (TOML).
void read_torchtitan_toml(const std::string& text, Draft& d);

// Megatron-Bridge recipe overrides (section.key=value, Hydra style), with --recipe and a launcher line.
void read_bridge_overrides(const std::string& text, Draft& d);

// MoE layer placement from a 0/1 list per layer (--moe-layer-freq "([0]*3+[1]*58)"): first_dense_layers
// and layer_freq, with a note when the list is not of that shape.
void apply_layer_list(const std::vector<int>& list, const std::string& key, Draft& d);

// The model of a known model id into `d`, each field's source `key` (e.g. "--recipe llama3_8b").
void apply_known_model(const KnownModel& known, const std::string& key, Draft& d);

} // namespace vtrain::import_detail
