// SPDX-License-Identifier: MIT
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/json_fields.h"
#include "vtrain/launch_bridge.h"
#include "vtrain/launch_config.h"
#include "vtrain/launch_plan_json.h"
#include "vtrain/scenario_json.h"

namespace vtrain::cli {

const char* const kLaunchHelp = R"(usage: vtrain launch SCENARIO.json [--framework megatron|megatron-bridge|deepspeed|torchtitan] [--plan PLAN.json]
                     [-o FILE]

Writes the scenario's "plan" as the launch flags of the framework that runs it:
  megatron         a torchrun line and the pretrain_gpt.py arguments of Megatron-LM (the default)
  megatron-bridge  a torchrun line that runs Megatron-Bridge's run_recipe.py with recipe overrides
                   (model.tensor_model_parallel_size=4 ...); `vtrain import` reads them back
  deepspeed        a ds_config.json; the deepspeed launcher line with the Megatron-DeepSpeed arguments
                   that go with it is printed on standard error
What the framework cannot express, and what you must still set (data, tokenizer, optimizer), is
printed on standard error as "warning:" lines.

options:
  --framework NAME     megatron (default), megatron-bridge, deepspeed, or torchtitan (a job TOML
                       for dense Llama-style models; the torchrun line goes to standard error)
  --plan FILE          export this plan instead of the scenario's: a JSON object like a scenario's
                       "plan" block, or a row of `vtrain explore --json` (its "gpu" and "num_gpus" apply)
  --profile FILE       GPU profile that gives the node size when cluster.gpus_per_node is not set
  -o, --output FILE    write the flags or the JSON to FILE instead of standard output ("-": standard output)

exit status: 0 on success, 2 on bad input (the message names the field and why).

example:
  vtrain launch examples/gpt3-175b.json
  vtrain launch examples/gpt3-175b.json --framework deepspeed -o ds_config.json
  vtrain launch examples/llama3-8b-h100-fsdp.json --framework torchtitan -o llama3_8b.toml
  vtrain launch examples/qwen3-235b-a22b-gb200.json --framework megatron-bridge
)";

namespace {

// Reads --plan FILE into the scenario (see launch_plan_json.h); errors name the file and the field.
bool apply_plan_file(Scenario& scenario, const std::string& path, int& exit_code)
{
    const auto read = json_fields::read_json_file(path);
    if (!read.ok()) {
        exit_code = report_bad_input(read.errors());
        return false;
    }
    auto parsed = scenario_with_plan_file(scenario, *read);
    if (!parsed.ok()) {
        exit_code = report_bad_file(path, parsed.errors());
        return false;
    }
    scenario = std::move(parsed).value();
    return true;
}

// The node size: the scenario's, else the GPU profile's. A --profile given is read either way: a file that
// cannot be read is refused, not ignored.
std::optional<int> gpus_per_node(const Scenario& scenario, const std::optional<std::string>& profile_file, int& exit_code)
{
    if (scenario.cluster.gpus_per_node > 0 && !profile_file) {
        return scenario.cluster.gpus_per_node;
    }
    const auto profile = profile_file ? load_profile(*profile_file) : profile_library().load(scenario.cluster.gpu);
    if (!profile.ok()) {
        exit_code = report_bad_input(profile.errors());
        return std::nullopt;
    }
    return scenario.cluster.gpus_per_node > 0 ? scenario.cluster.gpus_per_node : profile->links.gpus_per_node;
}

void print_warnings(const std::vector<std::string>& warnings)
{
    for (const std::string& w : warnings) {
        std::cerr << "warning: " << w << '\n';
    }
}

} // namespace

int run_launch(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"--framework", "--plan", "--profile", "-o", "--output"}, {}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (args->positional.size() != 1) {
        return report_bad_input("launch takes one scenario file (see vtrain launch --help)");
    }
    const std::string framework = args->value("--framework").value_or("megatron");
    if (framework != "megatron" && framework != "megatron-bridge" && framework != "deepspeed" && framework != "torchtitan") {
        return report_bad_input("--framework: must be \"megatron\", \"megatron-bridge\", \"deepspeed\" or \"torchtitan\", not \"" +
                                json_fields::bounded(framework, 40) + "\"");
    }
    const std::string& path = args->positional[0];
    note_input(path);
    for (const char* option : {"--plan", "--profile"}) {
        if (const auto file = args->value(option)) {
            note_input(*file);
        }
    }
    auto loaded = load_scenario(path);
    if (!loaded.ok()) {
        return report_bad_file(path, loaded.errors());
    }
    Scenario scenario = std::move(loaded).value();
    int exit_code = kExitOk;
    if (const auto plan_file = args->value("--plan")) {
        if (!apply_plan_file(scenario, *plan_file, exit_code)) {
            return exit_code;
        }
    } else if (!scenario.plan) {
        return report_bad_input("plan: is missing (launch exports the scenario's \"plan\", or give one with --plan)");
    }
    const auto node_size = gpus_per_node(scenario, args->value("--profile"), exit_code);
    if (!node_size) {
        return exit_code;
    }

    std::string text;
    std::vector<std::string> warnings;
    std::string launch_note; // how to start the framework with a config file that was written
    if (framework == "megatron") {
        const auto launch = megatron_launch(scenario, *scenario.plan, *node_size);
        if (!launch.ok()) {
            return report_bad_input(launch.errors());
        }
        text = launch->command_text();
        warnings = launch->warnings;
    } else if (framework == "megatron-bridge") {
        const auto launch = megatron_bridge_launch(scenario, *scenario.plan, *node_size);
        if (!launch.ok()) {
            return report_bad_input(launch.errors());
        }
        text = launch->command_text();
        warnings = launch->warnings;
    } else if (framework == "torchtitan") {
        const auto launch = torchtitan_launch(scenario, *scenario.plan, *node_size);
        if (!launch.ok()) {
            return report_bad_input(launch.errors());
        }
        text = launch->toml;
        launch_note = "note: launch torchtitan with the TOML written:\n" + launch->command_text();
        warnings = launch->warnings;
    } else {
        const auto launch = deepspeed_launch(scenario, *scenario.plan, *node_size);
        if (!launch.ok()) {
            return report_bad_input(launch.errors());
        }
        text = output_json(launch->config, 2) + '\n';
        launch_note = "note: launch with Megatron-DeepSpeed, ds_config.json being the JSON written:\n" + launch->command_text();
        warnings = launch->warnings;
    }

    const auto output = output_option(*args);
    if (output && *output != "-") {
        if (!write_text_file(*output, text, error)) {
            return report_write_failure(error);
        }
        const char* what = framework == "megatron"          ? "Megatron-LM launch flags"
                           : framework == "megatron-bridge" ? "Megatron-Bridge launch line and overrides"
                           : framework == "torchtitan"      ? "torchtitan job TOML"
                                                            : "DeepSpeed config";
        std::cerr << "wrote " << what << " to " << *output << '\n';
    } else {
        std::cout << text;
    }
    if (!launch_note.empty()) {
        std::cerr << launch_note;
    }
    print_warnings(warnings);
    return kExitOk;
}

} // namespace vtrain::cli
