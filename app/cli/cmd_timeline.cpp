// SPDX-License-Identifier: MIT
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/result_json.h"
#include "vtrain/simulator.h"

namespace vtrain::cli {

const char* const kTimelineHelp = R"(usage: vtrain timeline SCENARIO.json -o TRACE.json [--profile PROFILE.json]

Simulates the scenario's plan and writes every task of every pipeline stage (forward, backward and
recompute per micro-batch, tensor-parallel collectives, pipeline sends, data-parallel buckets, optimizer
step) in Chrome's trace event format. Open it in https://ui.perfetto.dev or chrome://tracing.

options:
  -o, --output FILE    where to write the trace (required; "-" for standard output)
  --profile FILE       use this GPU profile instead of the one named by cluster.gpu

example:
  vtrain timeline examples/mt-nlg-530b.json -o mt-nlg.trace.json
)";

int run_timeline(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"-o", "--output", "--profile"}, {}, error);
    if (!args) {
        return report_bad_input(error);
    }
    const auto output = output_option(*args);
    if (args->positional.size() != 1 || !output) {
        return report_bad_input("timeline takes one scenario file and -o OUTPUT (see vtrain timeline --help)");
    }
    int exit_code = kExitOk;
    const auto loaded = load_scenario_and_profile(args->positional[0], args->value("--profile"), exit_code);
    if (!loaded) {
        return exit_code;
    }
    if (!loaded->scenario.plan) {
        return report_bad_input("plan: is missing (timeline needs a \"plan\")");
    }
    const auto result = simulate(loaded->scenario, *loaded->scenario.plan, loaded->profile);
    if (!result.ok()) {
        return report_bad_input(result.errors());
    }
    const std::string text = timeline_to_chrome_trace(*result).dump();
    if (*output == "-") {
        std::cout << text << '\n';
        return kExitOk;
    }
    if (!write_text_file(*output, text, error)) {
        std::cerr << "vtrain: " << error << '\n';
        return kExitFailure;
    }
    std::cerr << "wrote " << result->timeline.size() << " tasks over " << result->stages.size() << " stages to " << *output << '\n';
    return kExitOk;
}

} // namespace vtrain::cli
