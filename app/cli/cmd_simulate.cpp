// SPDX-License-Identifier: MIT
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "text_report.h"
#include "vtrain/rank_layout.h"
#include "vtrain/result_json.h"
#include "vtrain/simulator.h"

namespace vtrain::cli {

const char* const kSimulateHelp = R"(usage: vtrain simulate SCENARIO.json [--json] [--profile PROFILE.json]

Predicts one training iteration of the scenario's "plan": iteration time, throughput, TFLOP/s and MFU,
pipeline bubble, memory per stage, and the training time and cost for "training.tokens".

options:
  --json               print one JSON object (iteration_time_s, tokens_per_s, mfu, peak_memory_gib, ...)
  --profile FILE       use this GPU profile instead of the one named by cluster.gpu

exit status: 0 on success, 2 on bad input (the message names the field and why).

example:
  vtrain simulate examples/mt-nlg-530b.json
)";

int run_simulate(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"--profile"}, {"--json"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (args->positional.size() != 1) {
        return report_bad_input("simulate takes one scenario file (see vtrain simulate --help)");
    }
    int exit_code = kExitOk;
    const auto loaded = load_scenario_and_profile(args->positional[0], args->value("--profile"), exit_code);
    if (!loaded) {
        return exit_code;
    }
    const Scenario& scenario = loaded->scenario;
    if (!scenario.plan) {
        return report_bad_input("plan: is missing (simulate needs a \"plan\"; a \"search\" block is for vtrain explore)");
    }
    SimulationOptions options;
    options.timeline = false;
    const auto result = simulate(scenario, *scenario.plan, loaded->profile, options);
    if (!result.ok()) {
        return report_bad_input(result.errors());
    }
    SimulationResult shown = *result;
    attach_host_term_range(shown, scenario, *scenario.plan, loaded->profile);
    if (args->flag("--json")) {
        nlohmann::json j = result_to_json(shown);
        // The plan's placement and offload always, defaults included (the file form leaves defaults out).
        const Plan& p = shown.plan;
        nlohmann::json& plan = j["plan"];
        plan["rank_order"] = to_string(p.rank_order);
        plan["overlap_grad_reduce"] = p.overlap_grad_reduce;
        plan["offload_optimizer"] = p.offload_optimizer;
        plan["offload_activations"] = p.offload_activations;
        if (!plan.contains("recompute_modules")) {
            plan["recompute_modules"] = nlohmann::json::array();
        }
        std::cout << output_json(j, 2) << '\n';
    } else {
        print_report(std::cout, scenario, loaded->profile, shown);
    }
    return kExitOk;
}

} // namespace vtrain::cli
