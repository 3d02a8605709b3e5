// SPDX-License-Identifier: MIT
#pragma once
// Fitting a modeled GPU profile's free parameters to measured runs (`vtrain calibrate`).
//
// Objective: the mean over subsets of each subset's mean squared log error, ln(predicted / measured)^2,
// so that every subset weighs the same whatever its row count (vTrain's 1,440 single-node rows would
// otherwise decide alone). For throughput metrics the log error is the time's with the sign flipped.
// Optimizer: Nelder-Mead (derivative-free) on the unit cube of the bounded parameters, each mapped
// linearly or logarithmically onto its physical range (efficiencies in (0, 1], overheads in
// microseconds); points outside the cube are clamped. Parameters that no row is sensitive to are left
// as they are. k-fold cross-validation refits on k-1 folds (rows split per subset, by a hash of the id)
// from the starting parameters and predicts the held-out fold: the reported cross-validated error and
// the uncertainty band come from those held-out predictions. A row whose settings are a range (see
// validation.h, predict_range) is fitted at its centre: the middle candidate(s) chosen with the
// starting profile, so that a fit costs one or two simulations per row and evaluation; after the fit the
// centres are re-ranked under the fitted profile and, where one moved, refitted from there (at most
// four times), so that the in-sample figures are the ones `validate` reports with the shipped profile.
//
// Modern sets (issues 13/16): one fit per GPU over all its precisions, in which the BF16, FP8 and FP4
// GEMM efficiencies are the per-precision parameters (a precision's efficiency is fitted only when at
// least min_rows_per_precision rows run at it; otherwise it keeps the datasheet estimate). Every bound is
// a physically plausible range with its reason (CalibrationParameter::why), so that a fit cannot make up
// for a structural error of the cost model with an impossible efficiency; a parameter that ends on a
// bound is listed in the result (at_bound), which says the model, not the parameter, is off. A profile
// that was calibrated before is refitted from the prior it recorded (calibration.start_parameters), so
// that refitting is reproducible and "before" always means the datasheet estimate.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"
#include "vtrain/modeled_profile.h"
#include "vtrain/validation.h"

namespace vtrain {

// One free parameter: where it lives, its physical range and whether it is searched in log space.
struct CalibrationParameter {
    std::string name;
    double low = 0;
    double high = 1;
    bool log_scale = false;
    std::string unit;
    bool fitted_by_default = true; // false: only when named with --params
    std::string why;               // why the range is physically plausible (with its source)
    // A hardware term (peak fractions, HBM and GEMM/attention curves): it comes from datasheets and
    // microbenchmarks, cited in the profile, and is fitted only when named with --params.
    bool hardware = false;
    // The documented uncertainty of the prior, for the MAP penalty (CalibrationOptions::prior_weight): a
    // factor for log-scale parameters (the prior x/÷ prior_width is one standard deviation), an absolute
    // width otherwise (for nvlink_bus_gbytes_per_s, a fraction of the part's per-direction NVLink rate,
    // scaled by calibration_parameters_for); 0 = no penalty.
    double prior_width = 0;
    std::string prior_why; // where the prior's value and width come from
};

// Every parameter calibrate can fit: the ModelParameters fields and the links' nic_efficiency and
// nvlink_bus_gbytes_per_s (NCCL's achievable bus bandwidth inside a node while training).
const std::vector<CalibrationParameter>& calibration_parameters();
// The same with the bounds that depend on the part: the NVLink bus bandwidth as a fraction of the
// datasheet's per-direction NVLink rate where the profile records it (see calibration.cpp).
std::vector<CalibrationParameter> calibration_parameters_for(const GpuProfile& profile);

// The free parameters of a profile as a name -> value map (from its spec/model_parameters and links).
struct ParameterSet {
    ModelParameters model;
    double nic_efficiency = 0.9;
    double nvlink_bus_gbytes_per_s = 230;
    double nvlink_base_latency_us = 32;
    double inter_node_base_latency_us = 10;

    double get(const std::string& name) const;
    void set(const std::string& name, double value);
    nlohmann::json to_json() const;
};

// The datasheet part of a modeled profile, and the parameters it was built with.
HardwareSpec hardware_spec_of(const GpuProfile& profile);
ParameterSet parameters_of(const GpuProfile& profile);
// What a fit of this profile starts from: the prior a calibrated profile recorded
// (calibration.start_parameters), else parameters_of(profile).
ParameterSet prior_parameters_of(const GpuProfile& profile);
// The inverse of ParameterSet::to_json (missing names keep `base`'s values).
ParameterSet parameters_from_json(const nlohmann::json& json, ParameterSet base);
// A modeled profile built from the hardware, with the parameters (links included) applied.
GpuProfile build_profile(const HardwareSpec& hardware, const ParameterSet& parameters);

// How one row's log error ln(predicted / measured) counts: squared (MSLE) or absolute (MALE, the log
// counterpart of MAPE, less swayed by a few anomalous rows).
enum class CalibrationLoss { SquaredLog, AbsoluteLog };

struct CalibrationOptions {
    std::string gpu;                     // profile id whose rows are fitted
    std::string precision;               // only rows of this precision ("bf16", "fp8", "nvfp4", ...); "" = all
    std::vector<std::string> subsets;    // only these subsets; empty = all
    std::vector<std::string> parameters; // names to fit; empty = every sensitive parameter
    std::string min_trust;               // "high" = fit only high-trust rows; "medium" = high and medium; "" = all
    CalibrationLoss loss = CalibrationLoss::SquaredLog;
    int folds = 5;             // k-fold cross-validation; < 2 = none
    int max_evaluations = 400; // per fit
    int starts = 1;            // Nelder-Mead starts per fit (multi_start_minimize); 1 = from the prior only
    // Also refit all rows from the starting profile's previous fit (its calibration "parameters"), keeping that
    // fit where its objective is lower. Nelder-Mead is local: a refit from the prior alone can end in a worse
    // optimum than the one shipped. Folds still start from the prior (no held-out row steers them).
    bool from_previous = false;
    int min_rows_per_precision = 3; // a precision's GEMM efficiency is fitted only with this many rows of it
    int threads = 0;
    // MAP penalty towards the prior, added to the objective: prior_weight x sum over the fitted parameters of
    // z^2 / 2, z = ln(value / prior) / ln(prior_width) (log-scale) or (value - prior) / prior_width. A parameter
    // the rows do not identify then stays near its documented prior instead of wandering to a bound. 0 = none.
    double prior_weight = 0;
    // Cross-validation folds: false = `folds` folds dealt by a hash of the row id inside each subset (random
    // folds); true = one fold per source (the row's source_id; leave-one-source-out), `folds` ignored. A
    // fold whose training rows number fewer than min_fit_rows keeps the prior (as grouped validation does).
    bool folds_by_source = false;
    int min_fit_rows = 10;
};

struct CalibrationRow {
    std::string id;
    std::string subset;
    std::string precision; // "bf16", "fp8", "nvfp4", ...
    std::string metric;    // to_string(ValidationMetric): what the errors are of
    double measured = 0;
    double start_error_pct = 0;     // with the starting (uncalibrated) parameters
    double in_sample_error_pct = 0; // with the parameters fitted on all rows
    double cv_error_pct = 0;        // predicted by the fit that did not see the row (0 without CV)
};

// One fold of the cross-validation: fitted on the other folds, scored on this one.
struct CalibrationFold {
    int fold = 0;
    std::string source; // folds_by_source: the source this fold holds out
    bool prior = false; // too few training rows: the fold predicts with the prior
    int train_rows = 0;
    int test_rows = 0;
    ParameterSet fitted;
    double objective_train = 0;
    int evaluations = 0;
    std::map<std::string, SubsetStats> held_out; // by subset, and "all"
};

struct CalibrationResult {
    ParameterSet start;
    ParameterSet fitted;
    std::vector<std::string> fitted_names;
    double objective_start = 0;
    double objective_fitted = 0;
    int evaluations = 0;
    std::vector<CalibrationRow> rows;
    std::map<std::string, SubsetStats> in_sample; // by subset, and "all"
    std::map<std::string, SubsetStats> cross_validated;
    std::map<std::string, SubsetStats> start_error; // by subset and "all", with the starting parameters
    // The same three by precision ("bf16", "fp8", ...).
    std::map<std::string, SubsetStats> start_by_precision, in_sample_by_precision, cross_validated_by_precision;
    std::vector<CalibrationFold> folds;
    std::vector<std::string> at_bound;              // "name (high)": fitted values on a bound of their range
    std::vector<std::string> kept_for_lack_of_rows; // per-precision parameters left at the prior, and why
    std::vector<std::string> skipped;               // "id: reason" for rows that could not be used
    nlohmann::json calibration_block;               // what goes into the profile's "calibration"
    int centre_refreshes = 0;                       // refits after a row's range centre moved under the fitted profile
    int centres_moved = 0;                          // rows whose centre moved in the last refresh (0: a fixed point)
    bool kept_previous = false;                     // from_previous: the refit from the previous fit won
};

using CalibrationProgress = std::function<void(const std::string& stage, int evaluation, double objective)>;

Expected<CalibrationResult> calibrate(const std::vector<RunRow>& rows, const GpuProfile& start, const CalibrationOptions& options,
                                      const CalibrationProgress& progress = {});

// The objective for a set of predictions: mean over subsets of the subset's mean loss.
double calibration_objective(const std::vector<std::string>& subsets, const std::vector<double>& log_errors,
                             CalibrationLoss loss = CalibrationLoss::SquaredLog);

// The MAP penalty of `value` against `prior` for one parameter (z^2 / 2, see prior_weight); 0 without a width.
double prior_penalty(const CalibrationParameter& parameter, double value, double prior);

// Derivative-free minimisation of f on [0, 1]^n from x0 (Nelder-Mead, coordinates clamped to the cube).
struct MinimizeResult {
    std::vector<double> x;
    double value = 0;
    int evaluations = 0;
};
MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0, int max_evaluations,
                           double initial_step = 0.15);

// Nelder-Mead is local: with starts > 1, runs it from x0 and from starts - 1 points of a Halton sequence over
// the cube (deterministic), each with a share of the budget, then polishes the best with what is left. Never
// worse than the start points' values; starts <= 1 is nelder_mead(f, x0, max_evaluations).
MinimizeResult multi_start_minimize(const std::function<double(const std::vector<double>&)>& f, const std::vector<double>& x0, int max_evaluations,
                                    int starts);

} // namespace vtrain
