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
// validation.h, predict_range) is fitted at its centre: the middle candidate(s) chosen once with the
// starting profile, so that a fit costs one or two simulations per row and evaluation.
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
};

// Every parameter calibrate can fit: the ModelParameters fields and the links' nic_efficiency and
// nvlink_bus_gbytes_per_s (NCCL's achievable bus bandwidth inside a node while training).
const std::vector<CalibrationParameter>& calibration_parameters();

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
// A modeled profile built from the hardware, with the parameters (links included) applied.
GpuProfile build_profile(const HardwareSpec& hardware, const ParameterSet& parameters);

// How one row's log error ln(predicted / measured) counts: squared (MSLE) or absolute (MALE, the log
// counterpart of MAPE, less swayed by a few anomalous rows).
enum class CalibrationLoss { SquaredLog, AbsoluteLog };

struct CalibrationOptions {
    std::string gpu;                      // profile id whose rows are fitted
    std::string precision;                // only rows of this precision ("bf16", "fp8", "nvfp4", ...); "" = all
    std::vector<std::string> subsets;     // only these subsets; empty = all
    std::vector<std::string> parameters;  // names to fit; empty = every sensitive parameter
    std::string min_trust;                // "high" = fit only high-trust rows; "medium" = high and medium; "" = all
    CalibrationLoss loss = CalibrationLoss::SquaredLog;
    int folds = 5;                        // k-fold cross-validation; < 2 = none
    int max_evaluations = 400;            // per fit
    int threads = 0;
};

struct CalibrationRow {
    std::string id;
    std::string subset;
    double measured = 0;
    double in_sample_error_pct = 0;       // with the parameters fitted on all rows
    double cv_error_pct = 0;              // predicted by the fit that did not see the row (0 without CV)
};

struct CalibrationResult {
    ParameterSet start;
    ParameterSet fitted;
    std::vector<std::string> fitted_names;
    double objective_start = 0;
    double objective_fitted = 0;
    int evaluations = 0;
    std::vector<CalibrationRow> rows;
    std::map<std::string, SubsetStats> in_sample;   // by subset, and "all"
    std::map<std::string, SubsetStats> cross_validated;
    std::vector<std::string> skipped;     // "id: reason" for rows that could not be used
    nlohmann::json calibration_block;     // what goes into the profile's "calibration"
};

using CalibrationProgress = std::function<void(const std::string& stage, int evaluation, double objective)>;

Expected<CalibrationResult> calibrate(const std::vector<RunRow>& rows, const GpuProfile& start, const CalibrationOptions& options,
                                      const CalibrationProgress& progress = {});

// The objective for a set of predictions: mean over subsets of the subset's mean loss.
double calibration_objective(const std::vector<std::string>& subsets, const std::vector<double>& log_errors,
                             CalibrationLoss loss = CalibrationLoss::SquaredLog);

// Derivative-free minimisation of f on [0, 1]^n from x0 (Nelder-Mead, coordinates clamped to the cube).
struct MinimizeResult {
    std::vector<double> x;
    double value = 0;
    int evaluations = 0;
};
MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0, int max_evaluations,
                           double initial_step = 0.15);

} // namespace vtrain
