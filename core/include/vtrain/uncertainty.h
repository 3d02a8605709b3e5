// SPDX-License-Identifier: MIT
#pragma once
// How sure a prediction is: the band the measured iteration time falls in, derived from the validation
// error of the GPU profile (the cross-validated signed errors `vtrain calibrate` stores in the profile's
// "calibration" block). With signed errors e = (predicted - measured) / measured, a measured time is
// predicted / (1 + e); the band takes the e quantiles that leave (1 - coverage) / 2 out on each side.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vtrain/gpu_profile.h"

namespace vtrain {

struct PredictionBand {
    double low = 1;         // multiplier on a predicted time: the band's lower end
    double high = 1;        // multiplier: the band's upper end
    double coverage = 0.8;  // fraction of validation rows inside the band
    std::string source;     // where the errors come from, e.g. "5-fold cross-validation on 1,559 published runs"
    bool calibrated = true; // false: a default band for a profile never fitted to measured runs (a prior)
};

// Band from signed errors in percent (needs at least 2); coverage in (0, 1).
std::optional<PredictionBand> band_from_errors(std::vector<double> errors_pct, double coverage, std::string source);
// The same with a weight per error (e.g. 1 / rows of its subset, so that every subset counts the same).
std::optional<PredictionBand> band_from_errors(const std::vector<double>& errors_pct, const std::vector<double>& weights, double coverage,
                                               std::string source);
// Weighted quantile (q in [0, 1]) of values; equal weights give the usual linear-interpolated quantile.
double weighted_quantile(std::vector<std::pair<double, double>> value_weight, double q);

// The JSON stored as profile["calibration"]["band"], and back.
// `weights` (optional, one per error) weigh the quantiles recorded next to the band.
nlohmann::json band_to_json(const PredictionBand& band, const std::vector<double>& errors_pct, const std::vector<double>& weights = {});
std::optional<PredictionBand> band_from_json(const nlohmann::json& band);

// The band of a profile: its calibration band if it has one; otherwise (calibrated = false) the profile's
// "default_band" or, without one, default_uncalibrated_band(). Every prediction carries a band, and the
// band's source says when it is only the wide default of an uncalibrated profile.
std::optional<PredictionBand> prediction_band(const GpuProfile& profile);

// The wide band reported for profiles that no published run has calibrated (see uncertainty.cpp for why).
PredictionBand default_uncalibrated_band();

// The framework's CPU time per operator (GpuProfile::host_overhead_us, and moe_host_op_us after a MoE
// layer's tokens-per-expert sync) belongs to the software stack, not to the GPU, and stacks differ by more
// than any band measured on one: on A100 the documented prior is 20 us and vTrain's 2021 Megatron stack fits
// 67 us. Its documented prior width is x/÷ 3 (calibration_parameters.cpp), so a prediction states what it
// becomes with both terms at their prior's ends. Plans whose GPU work hides the host barely move; host-bound
// ones (small models, micro-batch 1, wide tensor parallelism) move by up to that factor.
constexpr double kHostTermPriorWidth = 3.0;
// The profile with host_overhead_us and moe_host_op_us multiplied by `factor` (> 0).
GpuProfile with_host_terms_scaled(const GpuProfile& profile, double factor);

// "+-6.1%" (symmetric to 0.5 points) or "-4.0%/+8.2%": the band around a prediction, for reports.
std::string band_label(const PredictionBand& band);

} // namespace vtrain
