// SPDX-License-Identifier: MIT
#include <cstdint>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/plan_check.h"
#include "vtrain/result_json.h"
#include "vtrain/simulator.h"

namespace vtrain::cli {

// Traces estimated above this are refused unless --force: Perfetto and chrome://tracing load a trace
// into the browser's memory and fail on files of a few GB.
constexpr std::uint64_t kMaxTraceBytes = 1'000'000'000;

const char* const kTimelineHelp = R"(usage: vtrain timeline SCENARIO.json -o TRACE.json [--profile PROFILE.json] [--force]

Simulates the scenario's plan and writes every task of every pipeline stage (forward, backward and
recompute per micro-batch, tensor-parallel collectives, pipeline sends, data-parallel buckets, optimizer
step) in Chrome's trace event format. Open it in https://ui.perfetto.dev or chrome://tracing.

options:
  -o, --output FILE    where to write the trace (required; "-" for standard output)
  --profile FILE       use this GPU profile instead of the one named by cluster.gpu
  --force              write a trace estimated above 1 GB too (refused otherwise: viewers cannot open it)

The trace is streamed to the file (memory does not grow with its length). exit status: 0 on success,
2 on bad input or a trace over the size bound, 1 when the output cannot be written.

example:
  vtrain timeline examples/mt-nlg-530b.json -o mt-nlg.trace.json
)";

int run_timeline(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"-o", "--output", "--profile"}, {"--force"}, error);
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
    // The output first: a refused one (an input, a device) costs no simulation.
    OutputFile out;
    if (!out.open(*output, error, true)) {
        return report_write_failure(error);
    }
    const Plan& plan = *loaded->scenario.plan;
    const auto result = simulate(loaded->scenario, plan, loaded->profile);
    if (!result.ok()) {
        return report_bad_input(result.errors());
    }
    if (const long long passes = iteration_passes(loaded->scenario.training, plan); passes > kMaxTaskGraphPasses) {
        // simulate() computed it in closed form: a timeline has a task per pass and more (about 1 KB each).
        return report_bad_input("training.global_batch: the timeline would hold " + std::to_string(passes) +
                                " forward passes (micro-batches x pipeline stages), more than the " + std::to_string(kMaxTaskGraphPasses) +
                                " a timeline is built for (raise micro_batch or lower global_batch; vtrain simulate gives its figures)");
    }
    const std::uint64_t estimated = chrome_trace_estimated_bytes(*result);
    if (estimated > kMaxTraceBytes && !args->flag("--force")) {
        return report_bad_input("the trace would hold " + std::to_string(chrome_trace_event_count(*result)) + " events, about " +
                                std::to_string(estimated / 1'000'000) + " MB (more than the " + std::to_string(kMaxTraceBytes / 1'000'000) +
                                " MB bound; --force writes it anyway)");
    }
    write_chrome_trace(out.stream(), *result);
    out.stream() << '\n';
    if (!out.commit(error)) {
        return report_write_failure(error);
    }
    if (out.is_standard_output()) {
        return kExitOk;
    }
    std::cerr << "wrote " << result->timeline.size() << " tasks over " << result->stages.size() << " stages to " << *output << '\n';
    return kExitOk;
}

} // namespace vtrain::cli
