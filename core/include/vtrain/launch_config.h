// SPDX-License-Identifier: MIT
#pragma once
// A plan as the launch flags of the frameworks that run it: Megatron-LM's pretrain_gpt.py arguments with
// a torchrun line, and a DeepSpeed ds_config.json with the Megatron-DeepSpeed arguments that go with it.
// What a framework cannot express, or what the user must still supply, comes back as warnings.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct MegatronLaunch {
    std::string launch_command;         // torchrun line (with its environment) that runs pretrain_gpt.py
    std::vector<std::string> arguments; // pretrain_gpt.py arguments, one "--flag value" or "--switch" each
    std::vector<std::string> warnings;  // what Megatron-LM cannot express, what the user must still set

    // The whole shell command: the launch line, then one argument per line, joined by " \".
    std::string command_text() const;
};

struct DeepSpeedLaunch {
    nlohmann::ordered_json config;      // ds_config.json, keys in the order the DeepSpeed docs list them
    std::string launch_command;         // deepspeed launcher line that runs Megatron-DeepSpeed's pretrain_gpt.py
    std::vector<std::string> arguments; // Megatron-DeepSpeed arguments that go with the config
    std::vector<std::string> warnings;

    std::string command_text() const;
};

// A torchtitan job config (TOML) with its torchrun line; dense Llama-style models only.
struct TorchtitanLaunch {
    std::string toml;           // the job config, [model] ... [float8]
    std::string launch_command; // torchrun line that runs torchtitan.train with it
    std::vector<std::string> warnings;

    std::string command_text() const;
};

// `gpus_per_node` is the node size the plan runs on (the scenario's, or its GPU profile's default).
// A plan the core's check_plan refuses gives its diagnostic (field + reason) instead of flags.
Expected<MegatronLaunch> megatron_launch(const Scenario& scenario, const Plan& plan, int gpus_per_node);
Expected<DeepSpeedLaunch> deepspeed_launch(const Scenario& scenario, const Plan& plan, int gpus_per_node);
Expected<TorchtitanLaunch> torchtitan_launch(const Scenario& scenario, const Plan& plan, int gpus_per_node);

// User text in the generated files, escaped per the file's grammar so that it can only ever be that one
// string (a newline in a model name once added [job] and [checkpoint] tables to the TOML):
//  - toml_escaped: the body of a TOML basic string ("..." without the quotes): '\\' and '"' escaped,
//    control characters as \b \t \n \f \r or \uXXXX (DEL too), bytes that are not UTF-8 as \uFFFD.
//    Text without any of these comes back unchanged. Also what a TOML comment quotes: one line, no
//    control character, and the text is recovered by reading it as a basic string's body.
//  - shell_quoted: one POSIX shell word whose value is `text`: in double quotes when nothing in it is
//    special there (letters, digits, spaces and -_.,:/=+*|()[]{}<>;&#%@~^), as every layout is, else in
//    single quotes, each ' written '\''. Command substitution, variables, backticks, globbing and
//    word splitting never apply.
std::string toml_escaped(std::string_view text);
std::string shell_quoted(std::string_view text);

// Gradient elements per data-parallel bucket, as both frameworks size buckets: the plan's MiB over the
// bytes of one gradient (fp32 main gradients, fp16 ones in fp16 training, as the simulator counts them).
long long grad_bucket_elements(const Plan& plan, Precision precision);

} // namespace vtrain
