// SPDX-License-Identifier: MIT
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/calibration.h"
#include "vtrain/gpu_datasheet.h"
#include "vtrain/hardware_spec_json.h"
#include "vtrain/json_fields.h"
#include "vtrain/profile_json.h"

namespace vtrain::cli {

const char* const kCalibrateHelp = R"(usage: vtrain calibrate RUNS.json --gpu ID -o PROFILE.json [--precision P] [--subset NAME]...
                        [--folds K|source] [--params a,b,...] [--prior-weight W] [--max-evals N] [--starts K] [--from-previous]
                        [--min-trust high] [--spec SPEC.json] [--profile-dir DIR] [--min-rows-per-precision N] [--threads N]

Fits the free parameters of a modeled GPU profile (GEMM, memory-bound and host overheads, link
efficiencies; see docs/validation.md) to the rows of RUNS.json that run on that GPU, and writes the
calibrated profile with a "calibration" block: the objective, the rows used per subset and precision,
the fitted parameters, their bounds and why each bound is physically plausible, the parameters that
ended on a bound, the error before the fit, in sample and k-fold cross-validated (by subset and by
precision, and each fold's parameters and held-out error), and the uncertainty band that
`vtrain simulate` shows.

Objective: mean over subsets of the mean squared log error ln(predicted / measured)^2 of each row's
scored metric (tokens/s for the modern rows; every subset weighs the same). Optimizer: Nelder-Mead on the
bounded parameters. Without --precision, one fit covers every precision of the GPU: the BF16, FP8 and FP4
GEMM efficiencies are its per-precision parameters, each fitted only with enough rows of its precision.
A profile calibrated before is refitted from the prior it recorded (its uncalibrated parameters).
Cross-validation refits on k-1 folds from that prior and predicts the held-out fold; --folds source holds
out one source at a time (leave-one-source-out), and the profile's 80% band then comes from those grouped
folds. By default only the software terms are fitted (host, per-micro-batch and launch overheads, MoE host
terms, NIC and NVLink efficiency inside training); hardware terms (GEMM, attention and HBM efficiencies
and their curves) come from the profile's datasheet and are fitted only when named with --params.

options:
  --gpu ID           the profile to calibrate (e.g. a100-sxm4-80gb, h100-sxm5-80gb, gb200-nvl72); its rows
                     are those that map to it (either RUNS.json format)
  --precision P      fit only rows of this precision (bf16, fp8, nvfp4, fp16): one parameter set per GPU
                     and precision
  -o FILE            write the calibrated profile here
  --subset NAME      fit only these rows (repeatable); validate on others with vtrain validate --profile-dir
  --folds K|source   k-fold cross-validation (default 5; 0 = none); source: one fold per source_id
                     (leave-one-source-out; a fold left with fewer than 10 rows predicts with the prior)
  --params LIST      fit only these parameters (default: every software parameter some row depends on)
  --prior-weight W   MAP penalty towards the prior: W x the sum over fitted parameters of z^2 / 2, z the
                     distance from the prior in units of the parameter's documented prior width (default 0)
  --objective NAME   msle (default): mean squared log error; male: mean absolute log error (the log
                     counterpart of MAPE, robust to a few anomalous rows)
  --min-trust LEVEL  fit only rows whose "trust" is at least LEVEL (high, medium); the others are still
                     predicted by vtrain validate
  --max-evals N      objective evaluations per fit (default 400)
  --starts K         Nelder-Mead starts per fit, sharing --max-evals: the prior and K - 1 points spread over
                     the parameter ranges (Halton), the best one polished (default 1: the prior alone)
  --from-previous    also refit all rows from the profile's previous fit and keep it where the objective is
                     lower (cross-validation folds still start from the prior)
  --min-rows-per-precision N
                     fit a precision's GEMM efficiency only with N rows of it (default 3)
  --threads N        worker threads, 1..1024 (default: all cores)
  --spec FILE        also update this hardware spec or datasheet (model_parameters, links, calibration)
                     so that vtrain make-profile FILE (--from-datasheet for a datasheet) rebuilds the
                     written profile
  --profile-dir DIR  look the starting profile up in DIR first

example:
  vtrain calibrate ../shared/validation/public_runs.json --gpu a100-sxm4-80gb -o my-a100.json
  vtrain calibrate RUNS.json --gpu a100-sxm4-80gb --subset vtrain_single_node -o single.json
  vtrain calibrate ../shared/validation/modern_runs.json --gpu gb200-nvl72 --precision fp8 -o my-gb200.json
)";

namespace {

std::vector<std::string> split(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

void print_before_after(std::ostream& out, const char* title, const std::map<std::string, SubsetStats>& before,
                        const std::map<std::string, SubsetStats>& in_sample, const std::map<std::string, SubsetStats>& held_out)
{
    out << title << "\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-32s %5s %12s %12s %14s %12s\n", "", "rows", "MAPE before", "in sample", "cross-valid.", "bias (CV)");
    out << line;
    for (const auto& [name, b] : before) {
        const auto in = in_sample.find(name);
        const auto cv = held_out.find(name);
        char cv_text[24] = "-", bias_text[24] = "-";
        if (cv != held_out.end()) {
            std::snprintf(cv_text, sizeof cv_text, "%.2f%%", cv->second.mape_pct);
            std::snprintf(bias_text, sizeof bias_text, "%+.2f%%", cv->second.bias_pct);
        }
        std::snprintf(line, sizeof line, "  %-32s %5d %11.2f%% %11.2f%% %14s %12s\n", name.c_str(), b.used, b.mape_pct,
                      in != in_sample.end() ? in->second.mape_pct : 0.0, cv_text, bias_text);
        out << line;
    }
}

} // namespace

int run_calibrate(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv,
                                 {"--gpu", "--precision", "-o", "--output", "--subset", "--folds", "--params", "--max-evals", "--starts", "--spec",
                                  "--profile-dir", "--min-trust", "--objective", "--min-rows-per-precision", "--threads", "--prior-weight"},
                                 {"--from-previous"}, error, {"--subset"});
    if (!args) {
        return report_bad_input(error);
    }
    const auto output = output_option(*args);
    const auto gpu = args->value("--gpu");
    if (args->positional.size() != 1 || !output || !gpu) {
        return report_bad_input("calibrate takes one RUNS.json, --gpu ID and -o OUTPUT (see vtrain calibrate --help)");
    }
    const std::string& path = args->positional[0];
    note_input(path);
    // The output is checked before the fit (minutes): not an input, a folder or a device; not "-" either
    // (the report goes to standard output).
    if (!check_output(*output, error)) {
        return report_write_failure(error);
    }
    if (const auto spec = args->value("--spec")) {
        std::error_code ec;
        if (std::filesystem::equivalent(*spec, *output, ec)) {
            return report_bad_input("-o " + *output + ": is the --spec file, which calibrate updates; write the profile to another file");
        }
    }
    auto rows = load_runs(path);
    if (!rows.ok()) {
        return report_bad_file(path, rows.errors());
    }
    CalibrationOptions options;
    options.gpu = *gpu;
    options.precision = args->value("--precision").value_or("");
    if (!options.precision.empty() && options.precision != "bf16" && options.precision != "fp16" && options.precision != "fp32" &&
        options.precision != "fp8" && options.precision != "nvfp4") {
        return report_bad_input("--precision must be bf16, fp16, fp32, fp8 or nvfp4");
    }
    for (const auto& [key, value] : args->options) {
        if (key == "--subset") {
            options.subsets.push_back(value);
        }
    }
    if (args->value("--folds") == std::optional<std::string>("source")) {
        options.folds_by_source = true;
    } else if (const std::string bad = whole_option(*args, "--folds", 0, 100, options.folds); !bad.empty()) {
        return report_bad_input(bad + " (or source)");
    }
    for (const auto& bad :
         {number_option(*args, "--prior-weight", 0, 1e3, options.prior_weight),
          whole_option(*args, "--max-evals", 1, 10'000'000, options.max_evaluations), whole_option(*args, "--starts", 1, 1000, options.starts),
          whole_option(*args, "--min-rows-per-precision", 1, 100'000, options.min_rows_per_precision),
          whole_option(*args, "--threads", 1, static_cast<int>(kMaxThreads), options.threads)}) {
        if (!bad.empty()) {
            return report_bad_input(bad);
        }
    }
    options.from_previous = args->flag("--from-previous");
    options.min_trust = args->value("--min-trust").value_or("");
    const std::string objective = args->value("--objective").value_or("msle");
    if (objective != "msle" && objective != "male") {
        return report_bad_input("--objective must be msle (mean squared log error) or male (mean absolute log error)");
    }
    options.loss = objective == "msle" ? CalibrationLoss::SquaredLog : CalibrationLoss::AbsoluteLog;
    if (!options.min_trust.empty() && options.min_trust != "high" && options.min_trust != "medium") {
        return report_bad_input("--min-trust must be high or medium");
    }
    if (const auto p = args->value("--params")) {
        options.parameters = split(*p);
    }
    ProfileLibrary library = profile_library();
    if (const auto dir = args->value("--profile-dir")) {
        library.folders.insert(library.folders.begin(), *dir);
    }
    auto start = library.load(*gpu);
    if (!start.ok()) {
        return report_bad_input(start.errors());
    }
    if (start->source != "modeled") {
        return report_bad_input("--gpu " + *gpu + ": only modeled profiles have free parameters to fit (this one is " + start->source + ")");
    }

    bool progress_shown = false;
    const auto result = calibrate(*rows, *start, options, [&progress_shown](const std::string& stage, int evaluation, double value) {
        std::fprintf(stderr, "\r%-36s evaluation %4d  objective %.6f", stage.c_str(), evaluation, value);
        std::fflush(stderr);
        progress_shown = true;
    });
    if (progress_shown) {
        std::fprintf(stderr, "\n"); // ends the progress line (an error then starts a line of its own)
    }
    if (!result.ok()) {
        return report_bad_input(result.errors());
    }
    nlohmann::json block = result->calibration_block;
    block["data"] = std::filesystem::path(path).filename().string();
    if (!options.subsets.empty()) {
        block["subsets"] = options.subsets;
    }

    GpuProfile profile;
    if (const auto spec_path = args->value("--spec")) {
        // Update the spec so that make-profile rebuilds exactly this profile. The shared reader checks it
        // first (depth bound, line and column); the ordered reread keeps its key order.
        const auto text = json_fields::read_text_file(*spec_path);
        if (!text.ok()) {
            return report_bad_input(text.errors());
        }
        if (const auto checked = json_fields::parse_json_text(*text); !checked.ok()) {
            return report_bad_input(Diagnostics{{*spec_path, "is " + checked.errors().front().message}});
        }
        nlohmann::ordered_json spec = nlohmann::ordered_json::parse(*text, nullptr, false);
        if (spec.is_discarded() || !spec.is_object()) {
            return report_bad_input(*spec_path + ": is not a JSON object");
        }
        const nlohmann::json fitted_parameters = model_parameters_to_json(result->fitted.model);
        for (const auto& [key, value] : fitted_parameters.items()) {
            spec["model_parameters"][key] = nlohmann::ordered_json::parse(value.dump());
        }
        spec["links"]["nic_efficiency"] = result->fitted.nic_efficiency;
        spec["links"]["nvlink_bus_gbytes_per_s"] = result->fitted.nvlink_bus_gbytes_per_s;
        spec["links"]["nvlink_base_latency_us"] = result->fitted.nvlink_base_latency_us;
        spec["links"]["inter_node_base_latency_us"] = result->fitted.inter_node_base_latency_us;
        spec["calibration"] = nlohmann::ordered_json::parse(block.dump());
        if (!write_text_file(*spec_path, spec.dump(2) + "\n", error)) {
            return report_write_failure(error);
        }
        const nlohmann::json plain = nlohmann::json::parse(spec.dump());
        // A spec (profiles/specs) or a datasheet (profiles/datasheets, read by make-profile --from-datasheet).
        const auto hardware = plain.contains("datasheet_version") ? hardware_spec_from_datasheet(plain) : hardware_spec_from_json(plain);
        const auto parameters = model_parameters_from_json(plain["model_parameters"]);
        if (!hardware.ok() || !parameters.ok()) {
            return report_bad_input(!hardware.ok() ? hardware.errors() : parameters.errors());
        }
        profile = make_modeled_profile(*hardware, *parameters);
        profile.calibration = plain["calibration"];
    } else {
        profile = build_profile(hardware_spec_of(*start), result->fitted);
        profile.calibration = block;
    }
    if (!write_text_file(*output, output_json(profile_to_json(profile), -1) + "\n", error)) {
        return report_write_failure(error);
    }

    std::cout << "calibrated " << *gpu << " on " << result->rows.size() << " rows (" << result->skipped.size() << " skipped); " << result->evaluations
              << " evaluations, objective " << result->objective_start << " -> " << result->objective_fitted << "\n";
    if (options.from_previous) {
        std::cout << (result->kept_previous ? "the refit from the previous fit ended lower: kept\n"
                                            : "the refit from the previous fit did not end lower (or there was none): the fit from the prior kept\n");
    }
    if (result->centre_refreshes > 0) {
        std::cout << "range centres re-ranked under the fit: " << result->centre_refreshes << " refit" << (result->centre_refreshes == 1 ? "" : "s")
                  << (result->centres_moved == 0 ? ", now a fixed point"
                                                 : "; " + std::to_string(result->centres_moved) + " rows moved before the last")
                  << "\n";
    }
    std::cout << "\n";
    const auto bounded = calibration_parameters_for(*start);
    std::cout << "parameter                         start       fitted   bounds\n";
    for (const auto& name : result->fitted_names) {
        double low = 0, high = 0;
        for (const auto& p : bounded) {
            if (p.name == name) {
                low = p.low;
                high = p.high;
            }
        }
        char line[160];
        std::snprintf(line, sizeof line, "  %-28s %10.4g  %10.4g   [%g, %g]\n", name.c_str(), result->start.get(name), result->fitted.get(name), low,
                      high);
        std::cout << line;
    }
    for (const auto& name : result->at_bound) {
        std::cout << "  warning: " << name << " ended on its bound: the fit is compensating for an error of the model elsewhere\n";
    }
    for (const auto& text : result->kept_for_lack_of_rows) {
        std::cout << "  " << text << "\n";
    }
    std::cout << "\n";
    print_before_after(std::cout, "error of each row's scored metric, by subset:", result->start_error, result->in_sample, result->cross_validated);
    std::cout << "\n";
    print_before_after(std::cout, "by precision:", result->start_by_precision, result->in_sample_by_precision, result->cross_validated_by_precision);
    if (!result->folds.empty()) {
        std::cout << "\nfolds (fitted on the others, scored on this one):\n";
        for (const auto& f : result->folds) {
            char line[160];
            const auto all = f.held_out.find("all");
            std::snprintf(line, sizeof line, "  fold %d: %3d train rows, %3d held out, held-out MAPE %6.2f%%", f.fold + 1, f.train_rows, f.test_rows,
                          all != f.held_out.end() ? all->second.mape_pct : 0.0);
            std::cout << line << (f.source.empty() ? "" : "  (source " + f.source + (f.prior ? ": the prior, too few rows left)" : ")")) << "\n";
        }
    }
    if (block.contains("band")) {
        std::cout << "\nuncertainty band (80%): measured iteration time within [" << block["band"]["low"].get<double>() << ", "
                  << block["band"]["high"].get<double>() << "] x predicted\n";
    }
    std::cout << "\nwrote " << *output << "\n";
    return kExitOk;
}

} // namespace vtrain::cli
