// SPDX-License-Identifier: MIT
// vtrain: simulate LLM training plans from the command line.
#include <algorithm>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/json_fields.h"

#ifndef VTRAIN_VERSION
#define VTRAIN_VERSION "dev"
#endif

namespace {

using vtrain::cli::Command;

const std::vector<Command>& commands()
{
    static const std::vector<Command> list{
        {"simulate", "predict one training iteration of a plan", vtrain::cli::kSimulateHelp, vtrain::cli::run_simulate},
        {"explore", "sweep every plan; Pareto front of training time and cost", vtrain::cli::kExploreHelp, vtrain::cli::run_explore},
        {"timeline", "write the per-stage timeline as a Chrome trace", vtrain::cli::kTimelineHelp, vtrain::cli::run_timeline},
        {"profiles", "list the GPU profiles and where they come from", vtrain::cli::kProfilesHelp, vtrain::cli::run_profiles},
        {"make-profile", "build a modeled GPU profile from datasheet figures", vtrain::cli::kMakeProfileHelp, vtrain::cli::run_make_profile},
        {"validate", "compare predictions with measured training runs", vtrain::cli::kValidateHelp, vtrain::cli::run_validate},
        {"calibrate", "fit a GPU profile's free parameters to measured runs", vtrain::cli::kCalibrateHelp, vtrain::cli::run_calibrate},
        {"optimal-model", "largest model trainable within a budget, simulated vs naive", vtrain::cli::kOptimalModelHelp,
         vtrain::cli::run_optimal_model},
        {"schedule", "a shared cluster under three scheduling policies", vtrain::cli::kScheduleHelp, vtrain::cli::run_schedule},
        {"launch", "a plan as Megatron-LM/Bridge flags, DeepSpeed or torchtitan config", vtrain::cli::kLaunchHelp, vtrain::cli::run_launch},
        {"import", "a scenario from a HF config.json, Megatron/Bridge args, TOML", vtrain::cli::kImportHelp, vtrain::cli::run_import},
    };
    return list;
}

void print_usage(std::ostream& out)
{
    out << "vtrain " << VTRAIN_VERSION << ": which parallelization plan trains a model fastest, and what does it cost?\n\n"
        << "usage: vtrain COMMAND [ARGS]   (vtrain COMMAND --help for details)\n\ncommands:\n";
    for (const auto& c : commands()) {
        out << "  " << c.name << std::string(14 - std::string(c.name).size(), ' ') << c.summary << '\n';
    }
    out << "\nconventions (every command):\n"
        << "  each option at most once; bad input prints its first problem on one line (exit status 2),\n"
        << "  --all-errors lists every problem; an output that cannot be written gives the OS's reason\n"
        << "  (exit status 1); outputs are written as FILE.part, then renamed; missing folders are not created.\n"
        << "\nexample:\n  vtrain simulate examples/mt-nlg-530b.json\n";
}

int run_main(int argc, char** argv)
{
    vtrain::cli::set_executable_path(argv[0]);
    std::vector<std::string> args(argv + 1, argv + argc);
    // --all-errors is common to every subcommand: list every problem of bad input, not only the first.
    const auto all_errors = std::remove(args.begin(), args.end(), std::string("--all-errors"));
    vtrain::cli::set_list_all_errors(all_errors != args.end());
    args.erase(all_errors, args.end());
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(std::cout);
        return args.empty() ? vtrain::cli::kExitBadInput : vtrain::cli::kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "vtrain " << VTRAIN_VERSION << " (built " << __DATE__ << ", "
                  <<
#ifdef NDEBUG
            "release"
#else
            "debug"
#endif
                  << ")\n";
        return vtrain::cli::kExitOk;
    }
    for (const auto& c : commands()) {
        if (args[0] == c.name) {
            std::vector<std::string> rest(args.begin() + 1, args.end());
            for (const auto& a : rest) {
                if (a == "--help" || a == "-h") {
                    std::cout << c.help;
                    return vtrain::cli::kExitOk;
                }
            }
            int status = vtrain::cli::kExitFailure;
            try {
                status = c.run(rest);
            } catch (const std::bad_alloc&) {
                std::cerr << "vtrain: out of memory\n";
                return vtrain::cli::kExitFailure;
            } catch (const std::exception& e) {
                std::cerr << "vtrain: internal error: " << vtrain::json_fields::bounded(e.what(), 1000) << '\n';
                return vtrain::cli::kExitFailure;
            }
            // Whatever went to standard output must have arrived: a full disk is a failure, not exit 0
            // (said once: a command that failed already said why).
            std::string error;
            if (!vtrain::cli::flush_standard_output(error) && status == vtrain::cli::kExitOk) {
                return vtrain::cli::report_write_failure(error);
            }
            return status;
        }
    }
    std::cerr << "vtrain: unknown command \"" << vtrain::json_fields::bounded(args[0]) << "\"\n\n";
    print_usage(std::cerr);
    return vtrain::cli::kExitBadInput;
}

} // namespace

int main(int argc, char** argv)
{
    // Standard output keeps the OS's reason of a failed write (a full disk), for the check at exit.
    vtrain::cli::watch_standard_output();
    // Whatever runs out of memory (a command, reading the arguments) ends with one line, never an abort.
    try {
        return run_main(argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "vtrain: out of memory\n";
    } catch (const std::exception& e) {
        std::cerr << "vtrain: internal error: " << vtrain::json_fields::bounded(e.what(), 1000) << '\n';
    }
    return vtrain::cli::kExitFailure;
}
