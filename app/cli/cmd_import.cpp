// SPDX-License-Identifier: MIT
// vtrain import: a scenario from a Hugging Face config.json, Megatron-LM arguments, a torchtitan TOML or
// Megatron-Bridge overrides (the core's import.h does the reading; this prints what it assumed).
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/import.h"
#include "vtrain/json_fields.h"
#include "vtrain/scenario_json.h"

namespace vtrain::cli {

const char* const kImportHelp = R"(usage: vtrain import FILE [--gpu ID] [--gpus N] [-o SCENARIO.json] [--format NAME] [--model CONFIG.json]

Reads a file you already have and writes a scenario that `vtrain simulate` and `vtrain explore` run as it is:
  a Hugging Face config.json        the model (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, DeepSeek-V3,
                                    GPT-OSS, Gemma, GPT-2 keys); cluster, batch, tokens, precision and a
                                    starting plan are chosen and said
  Megatron-LM arguments             a launch script or command line (torchrun ... pretrain_gpt.py --flags),
                                    or a file of arguments: the model, the plan, batch and precision
  a torchtitan job config (TOML)    [parallelism], [training], [activation_checkpoint], [float8]; the model
                                    from [model] name and flavor (llama3 8B/70B/405B) or --model
  Megatron-Bridge overrides         model.tensor_model_parallel_size=4 train.global_batch_size=256 ...
                                    (Hydra style, with or without the run_recipe.py line)
The format is detected from the content (the extension decides between equals). On standard error,
"note:" lines name each key that is unknown or not simulated as written and what was assumed instead,
"assumed:" lines what the file did not give, and one "ignored:" line the keys with no bearing on time,
memory or cost (learning rate, paths, logging).

options:
  --gpu ID             the GPU profile (files never name one; default h100-sxm5-80gb)
  --gpus N             the GPU count (default: the file's world size, else 8)
  --format NAME        hf, megatron, torchtitan or bridge instead of detecting it
  --model FILE         a Hugging Face config.json with the model, for files that name one vTrain does not
                       know (a torchtitan flavor, a Bridge recipe) or give none; the file's own model
                       keys apply on top of it
  -o, --output FILE    write the scenario to FILE instead of standard output

exit status: 0 on success, 2 on a bad file (one line naming the key and the reason).

example:
  vtrain import examples/import/llama3-8b-config.json --gpus 64 -o l8.json && vtrain explore l8.json
  vtrain import examples/import/llama3-8b-megatron.sh -o l8-megatron.json && vtrain launch l8-megatron.json
)";

int run_import(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"--gpu", "--gpus", "--format", "--model", "-o", "--output"}, {}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (args->positional.size() != 1) {
        return report_bad_input("import takes one file (see vtrain import --help)");
    }
    ImportOptions options;
    if (const auto format = args->value("--format")) {
        const auto f = import_format_from_string(*format);
        if (!f) {
            return report_bad_input("--format: must be hf, megatron, torchtitan or bridge, not \"" + json_fields::bounded(*format, 40) + "\"");
        }
        options.format = *f;
    }
    if (const std::string bad = whole_option(*args, "--gpus", 1, 10'000'000, options.num_gpus); !bad.empty()) {
        return report_bad_input(bad);
    }
    // The GPU must be one vTrain has a profile of: its memory sizes the starting plan.
    options.gpu = args->value("--gpu").value_or("h100-sxm5-80gb");
    const auto profile = profile_library().load(options.gpu);
    if (!profile.ok()) {
        return report_bad_input(Diagnostics{{"--gpu", profile.errors().front().message}});
    }
    options.gpu_memory_gib = profile->memory_gib - profile->memory_reserve_gib;
    options.gpus_per_node = 0;
    if (!args->value("--gpu")) {
        options.gpu.clear(); // said as a default by the importer
    }
    if (const auto model_file = args->value("--model")) {
        ImportOptions model_options;
        model_options.format = ImportFormat::HfConfig;
        const auto model = import_scenario_file(*model_file, model_options);
        if (!model.ok()) {
            return report_bad_file(*model_file, model.errors());
        }
        options.model = model->scenario.model;
    }
    const std::string& path = args->positional[0];
    const auto imported = import_scenario_file(path, options);
    if (!imported.ok()) {
        return report_bad_file(path, imported.errors());
    }
    const ImportResult& r = *imported;
    const std::string text = output_json(scenario_to_json(r.scenario), 2) + '\n';
    const auto output = output_option(*args);
    if (output && *output != "-") {
        if (!write_text_file(*output, text, error)) {
            return report_write_failure(error);
        }
    } else {
        std::cout << text;
    }
    std::cerr << "read " << path << " as " << describe(r.format) << (r.plan_from_file ? " (with its parallel plan)" : "") << '\n';
    for (const Diagnostic& n : r.notes) {
        std::cerr << "note: " << json_fields::bounded(n.to_string(), 400) << '\n';
    }
    for (const std::string& d : r.defaults) {
        std::cerr << "assumed: " << json_fields::bounded(d, 400) << '\n';
    }
    if (!r.ignored.empty()) {
        std::string list;
        for (const std::string& k : r.ignored) {
            list += (list.empty() ? "" : ", ") + k;
        }
        std::cerr << "ignored (no bearing on time, memory or cost): " << json_fields::bounded(list, 1000) << '\n';
    }
    if (output && *output != "-") {
        std::cerr << "wrote " << *output << ": vtrain simulate " << *output << " | vtrain explore " << *output << '\n';
    }
    return kExitOk;
}

} // namespace vtrain::cli
