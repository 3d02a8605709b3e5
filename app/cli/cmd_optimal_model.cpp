// SPDX-License-Identifier: MIT
// vtrain optimal-model: the largest model trainable compute-optimally within a budget, simulated vs naive.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli_common.h"
#include "cmd_study_progress.h"
#include "commands.h"
#include "vtrain/explorer_io.h"
#include "vtrain/optimal_model.h"

namespace vtrain::cli {

const char* const kOptimalModelHelp = R"(usage: vtrain optimal-model --gpu ID --gpus N (--days D | --dollars USD | both)
                            [--tokens-per-param R] [--naive-util U] [--global-batch B] [--family megatron|grid]
                            [--seq-len S] [--vocab V] [--attention flash|unfused] [--price USD_PER_GPU_HOUR]
                            [--gpus-per-node N] [--threads N] [--json]

vTrain's compute-optimal model study. For each model of a family of GPT shapes (heads of 128 dimensions),
trained on R x parameters tokens (Chinchilla: 20), finds its fastest plan on exactly N GPUs with the
explorer and prints parameters, tokens, the best plan, MFU, training days and cost. The answer is the
largest model whose best plan fits the budget; beside it, the naive answer, which assumes every GPU runs
at a fixed fraction U of its peak bf16 FLOP/s (default 1.0, as in the paper) for the model's FLOPs.

Families: megatron = the 10 shapes of Megatron-LM's scaling table (1.7B .. 1T; the paper's answers are
two of them); grid = hidden 2048..32768 in steps of 1024 with Megatron-like depth (31 shapes, slower).
Plan space per model (kept small on purpose): every (tp <= node size, pp dividing the layers) with
tp x pp dividing N; micro-batch 1/2/4/8; 1F1B or interleaved (2 virtual stages); recompute none /
selective / full; sequence parallelism off/on; ZeRO 0/1. The global batch is the multiple of dp nearest
B (default 1536 sequences).

options:
  --gpu ID               GPU profile (see vtrain profiles)
  --gpus N               GPUs in the cluster (every plan uses all of them)
  --days D               wall-clock budget in days
  --dollars USD          cost budget (GPU-hours x price)
  --tokens-per-param R   training tokens per parameter (default 20)
  --naive-util U         utilisation the naive answer assumes, in (0, 1] (default 1.0)
  --global-batch B       target global batch in sequences (default 1536)
  --family NAME          megatron (default) or grid
  --seq-len S, --vocab V sequence length (default 2048) and vocabulary (default 51200)
  --attention KIND       flash (default) or unfused
  --price USD            price per GPU-hour (default: the profile's)
  --gpus-per-node N      node size (default: the profile's)
  --threads N            explorer threads (default: all cores)
  --json                 print the result as JSON instead of the table
Ranges (outside them the option is refused): --days 0.001..36500, --dollars 1..1e12, --price
0.001..10000, --tokens-per-param 0.01..1e6, --naive-util 0.001..1, --threads 1..1024.

Progress goes to stderr when it is a terminal; Ctrl-C stops and prints the models done so far, marked
CANCELLED (exit status 130). exit status: 0 on success, 2 on bad input (the message names the option).

example:
  vtrain optimal-model --gpu a100-sxm4-80gb --gpus 3360 --days 30
)";

namespace {

std::string fixed(double v, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
    return buffer;
}

std::string money(double usd)
{
    std::string text = "$"; // (appending, not "$" + ...: avoids a GCC 12 -Wrestrict false positive)
    text += usd >= 1e6 ? fixed(usd / 1e6, 2) : fixed(usd / 1e3, 1);
    text += usd >= 1e6 ? "M" : "k";
    return text;
}

std::string days(double d)
{
    return fixed(d, d < 10 ? 2 : 1);
}

std::string count(double v) // 76.1B, 1.52T
{
    return v >= 1e12 ? fixed(v / 1e12, 2) + "T" : fixed(v / 1e9, 1) + "B";
}

// Reads the options into a request; returns an error message naming the option, or "". Every number
// has a range, so no figure printed can overflow to inf or run to hundreds of digits.
std::string read_request(const Args& args, OptimalModelRequest& r)
{
    r.gpu = args.value("--gpu").value_or("");
    if (r.gpu.empty()) {
        return "--gpu: a GPU profile id is required (see vtrain profiles)";
    }
    if (!args.value("--gpus")) {
        return "--gpus: the number of GPUs is required";
    }
    double days = 0;
    double dollars = 0;
    double price = 0;
    for (const auto& e :
         {whole_option(args, "--gpus", 1, 1'000'000, r.num_gpus), whole_option(args, "--global-batch", 1, 1'000'000, r.target_global_batch),
          whole_option(args, "--seq-len", 1, 1 << 20, r.seq_len), whole_option(args, "--vocab", 1, 1 << 24, r.vocab),
          whole_option(args, "--gpus-per-node", 1, 1024, r.gpus_per_node),
          whole_option(args, "--threads", 1, static_cast<int>(kMaxThreads), r.threads),
          number_option(args, "--days", 0.001, 36'500, days),                                                       // up to 100 years
          number_option(args, "--dollars", 1, 1e12, dollars), number_option(args, "--price", 0.001, 10'000, price), // USD per GPU-hour
          number_option(args, "--tokens-per-param", 0.01, 1e6, r.tokens_per_param),
          number_option(args, "--naive-util", 0.001, 1, r.naive_utilization)}) {
        if (!e.empty()) {
            return e;
        }
    }
    if (days > 0) {
        r.budget_days = days;
    }
    if (dollars > 0) {
        r.budget_usd = dollars;
    }
    if (price > 0) {
        r.price_per_gpu_hour = price;
    }
    if (!r.budget_days && !r.budget_usd) {
        return "--days: a budget is required (--days, --dollars or both)";
    }
    if (const auto f = args.value("--family")) {
        const auto family = shape_family_from_string(*f);
        if (!family) {
            return "--family: \"" + *f + "\" is not megatron or grid";
        }
        r.family = *family;
    }
    if (const auto a = args.value("--attention")) {
        if (*a != "flash" && *a != "unfused") {
            return "--attention: \"" + *a + "\" is not flash or unfused";
        }
        r.attention = *a == "flash" ? AttentionKernel::Flash : AttentionKernel::Unfused;
    }
    return {};
}

void print_table(std::ostream& out, const OptimalModelResult& result)
{
    char line[400];
    std::snprintf(line, sizeof line, "  %-24s %8s %8s  %-48s %5s %6s %8s %9s %9s  %s\n", "model", "params", "tokens", "best plan", "gb", "MFU",
                  "days", "cost", "naive d", "budget");
    out << line;
    for (const auto& c : result.candidates) {
        if (c.has_plan) {
            std::snprintf(line, sizeof line, "  %-24s %8s %8s  %-48s %5d %5.1f%% %8s %9s %9s  %s\n", c.model.name.c_str(), count(c.params).c_str(),
                          count(c.tokens).c_str(), plan_label(c.best.plan).c_str(), c.global_batch, 100 * c.best.mfu,
                          days(c.best.training_days).c_str(), money(c.best.cost_usd).c_str(), days(c.naive_days).c_str(),
                          c.within_budget ? "fits" : "over");
        } else {
            std::snprintf(line, sizeof line, "  %-24s %8s %8s  %-48s %5s %6s %8s %9s %9s  %s\n", c.model.name.c_str(), count(c.params).c_str(),
                          count(c.tokens).c_str(), c.simulated ? "no plan fits" : "(cancelled)", "-", "-", "-", "-", days(c.naive_days).c_str(),
                          c.simulated ? "-" : "?");
        }
        out << line;
        if (!c.has_plan && c.simulated && !c.note.empty()) {
            out << "      " << c.note << "\n";
        }
    }
}

void print_answers(std::ostream& out, const OptimalModelResult& result)
{
    const auto& r = result.request;
    std::string budget;
    if (r.budget_days) {
        budget = fixed(*r.budget_days, 1) + " days";
    }
    if (r.budget_usd) {
        budget += (budget.empty() ? "" : " and ") + money(*r.budget_usd);
    }
    out << "\nBudget: " << r.num_gpus << " x " << r.gpu << ", " << budget << ", " << fixed(r.tokens_per_param, 0) << " tokens per parameter; price $"
        << fixed(result.price_per_gpu_hour, 2) << " per GPU-hour.\n";
    out << "Naive answer (every GPU at " << fixed(100 * r.naive_utilization, 0) << "% of its " << fixed(result.peak_tflops_per_gpu, 0)
        << " TFLOP/s bf16 peak, model FLOPs = 3 x forward): ";
    if (result.naive_choice) {
        const auto& c = result.candidates[*result.naive_choice];
        out << c.model.name << ", " << count(c.tokens) << " tokens, " << fixed(c.naive_days, 1) << " days naive";
        if (c.has_plan) {
            out << "; its best simulated plan (" << plan_label(c.best.plan) << ", MFU " << fixed(100 * c.best.mfu, 1) << "%) takes "
                << fixed(c.best.training_days, 1) << " days";
        } else if (c.simulated) {
            out << "; no plan of it fits in memory on these GPUs";
        }
        out << ".\n";
    } else {
        out << "none of the family fits.\n";
    }
    out << "Feasible answer (best simulated plan within budget): ";
    if (result.feasible_choice) {
        const auto& c = result.candidates[*result.feasible_choice];
        out << c.model.name << ", " << count(c.tokens) << " tokens, " << plan_label(c.best.plan) << " (gb " << c.global_batch << "), MFU "
            << fixed(100 * c.best.mfu, 1) << "%, " << fixed(c.best.training_days, 1) << " days, " << money(c.best.cost_usd) << ".\n";
    } else {
        out << "none of the family fits.\n";
    }
    if (result.naive_choice && result.feasible_choice) {
        const double naive = result.candidates[*result.naive_choice].params;
        const double feasible = result.candidates[*result.feasible_choice].params;
        out << "The naive answer is " << fixed(naive / feasible, 2) << "x the feasible model (the feasible model is "
            << fixed(100 * (1 - feasible / naive), 0) << "% smaller).\n";
    }
    out << result.candidates.size() << " models, " << result.plans_enumerated << " plans in " << fixed(result.elapsed_s, 1) << " s"
        << (result.cancelled ? "  -- CANCELLED (models after the last one shown were not simulated)" : "") << "\n";
}

} // namespace

int run_optimal_model(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv,
                                 {"--gpu", "--gpus", "--days", "--dollars", "--tokens-per-param", "--naive-util", "--global-batch", "--family",
                                  "--seq-len", "--vocab", "--attention", "--price", "--gpus-per-node", "--threads"},
                                 {"--json"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    if (!args->positional.empty()) {
        return report_bad_input("optimal-model takes no positional arguments (\"" + args->positional[0] + "\"; see vtrain optimal-model --help)");
    }
    OptimalModelRequest request;
    error = read_request(*args, request);
    if (!error.empty()) {
        return report_bad_input(error);
    }
    auto profile = profile_library().load(request.gpu);
    if (!profile.ok()) {
        return report_bad_input(Diagnostics{{"--gpu", profile.errors().front().message}});
    }

    StudyControl control;
    Expected<OptimalModelResult> result = Diagnostic{"", "not run"};
    {
        CancelOnInterrupt interrupt(control);
        StudyProgressBar bar(control, "models");
        result = find_optimal_model(request, profile.value(), control);
    }
    if (!result.ok()) {
        Diagnostics named;
        for (const auto& d : result.errors()) {
            std::string option = d.field == "naive_utilization" ? "naive-util" : d.field;
            std::replace(option.begin(), option.end(), '_', '-');
            named.push_back({option.empty() ? "" : "--" + option, d.message});
        }
        return report_bad_input(named);
    }
    if (args->flag("--json")) {
        std::cout << output_json(optimal_model_to_json(*result), 2) << "\n";
    } else {
        std::cout << "Compute-optimal model on " << request.num_gpus << " x " << request.gpu << " (" << to_string(request.family)
                  << " family, fastest plan per model):\n";
        print_table(std::cout, *result);
        print_answers(std::cout, *result);
    }
    return result->cancelled ? 130 : kExitOk;
}

} // namespace vtrain::cli
