// SPDX-License-Identifier: MIT
#include "vtrain/uncertainty.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vtrain {
namespace {

// Linear-interpolated quantile of sorted values (q in [0, 1]).
double quantile(const std::vector<double>& sorted, double q)
{
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(position));
    const std::size_t j = std::min(i + 1, sorted.size() - 1);
    const double f = position - static_cast<double>(i);
    return sorted[i] * (1 - f) + sorted[j] * f;
}

} // namespace

GpuProfile with_host_terms_scaled(const GpuProfile& profile, double factor)
{
    GpuProfile p = profile;
    p.host_overhead_us *= factor;
    p.moe_host_op_us *= factor;
    return p;
}

std::optional<PredictionBand> band_from_errors(std::vector<double> errors_pct, double coverage, std::string source)
{
    errors_pct.erase(std::remove_if(errors_pct.begin(), errors_pct.end(), [](double e) { return !std::isfinite(e) || e <= -100; }), errors_pct.end());
    if (errors_pct.size() < 2 || !(coverage > 0 && coverage < 1)) {
        return std::nullopt;
    }
    std::sort(errors_pct.begin(), errors_pct.end());
    const double tail = (1 - coverage) / 2;
    const double e_lo = quantile(errors_pct, tail) / 100;     // most under-predicted
    const double e_hi = quantile(errors_pct, 1 - tail) / 100; // most over-predicted
    PredictionBand band;
    band.low = 1 / (1 + e_hi);
    band.high = 1 / (1 + e_lo);
    band.coverage = coverage;
    band.source = std::move(source);
    return band;
}

double weighted_quantile(std::vector<std::pair<double, double>> vw, double q)
{
    vw.erase(std::remove_if(vw.begin(), vw.end(), [](const auto& p) { return !(p.second > 0) || !std::isfinite(p.first); }), vw.end());
    if (vw.empty()) {
        return 0;
    }
    std::sort(vw.begin(), vw.end());
    if (vw.size() == 1) {
        return vw.front().first;
    }
    // Each value sits at the middle of its weight's share of [0, 1]; interpolate between those points.
    double total = 0;
    for (const auto& p : vw) {
        total += p.second;
    }
    std::vector<double> position(vw.size());
    double cumulative = 0;
    for (std::size_t i = 0; i < vw.size(); ++i) {
        position[i] = (cumulative + vw[i].second / 2) / total;
        cumulative += vw[i].second;
    }
    // Rescale so that the first value is quantile 0 and the last quantile 1 (as unweighted quantiles do).
    const double lo = position.front(), hi = position.back();
    const double target = lo + q * (hi - lo);
    for (std::size_t i = 1; i < vw.size(); ++i) {
        if (target <= position[i]) {
            const double f = (target - position[i - 1]) / std::max(1e-300, position[i] - position[i - 1]);
            return vw[i - 1].first * (1 - f) + vw[i].first * f;
        }
    }
    return vw.back().first;
}

std::optional<PredictionBand> band_from_errors(const std::vector<double>& errors_pct, const std::vector<double>& weights, double coverage,
                                               std::string source)
{
    std::vector<std::pair<double, double>> vw;
    for (std::size_t i = 0; i < errors_pct.size() && i < weights.size(); ++i) {
        if (std::isfinite(errors_pct[i]) && errors_pct[i] > -100) {
            vw.emplace_back(errors_pct[i], weights[i]);
        }
    }
    if (vw.size() < 2 || !(coverage > 0 && coverage < 1)) {
        return std::nullopt;
    }
    const double tail = (1 - coverage) / 2;
    PredictionBand band;
    band.low = 1 / (1 + weighted_quantile(vw, 1 - tail) / 100);
    band.high = 1 / (1 + weighted_quantile(vw, tail) / 100);
    band.coverage = coverage;
    band.source = std::move(source);
    return band;
}

nlohmann::json band_to_json(const PredictionBand& band, const std::vector<double>& errors_pct, const std::vector<double>& weights)
{
    std::vector<std::pair<double, double>> vw;
    for (std::size_t i = 0; i < errors_pct.size(); ++i) {
        vw.emplace_back(errors_pct[i], i < weights.size() ? weights[i] : 1.0);
    }
    nlohmann::json quantiles = nlohmann::json::object();
    if (!vw.empty()) {
        for (const double q : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95}) {
            char key[8];
            std::snprintf(key, sizeof key, "p%02d", static_cast<int>(std::lround(q * 100)));
            quantiles[key] = std::round(weighted_quantile(vw, q) * 1000) / 1000;
        }
    }
    return {{"coverage", band.coverage},
            {"low", band.low},
            {"high", band.high},
            {"source", band.source},
            {"error_quantiles_pct", quantiles},
            {"meaning", "measured iteration time lies in [low x predicted, high x predicted] for `coverage` of the validation rows; "
                        "error_quantiles_pct are quantiles of the signed cross-validated error of the iteration time, (predicted - measured) / "
                        "measured x 100 (a throughput error e counts as the time error 1 / (1 + e) - 1)"}};
}

std::optional<PredictionBand> band_from_json(const nlohmann::json& j)
{
    if (!j.is_object() || !j.contains("low") || !j.contains("high") || !j["low"].is_number() || !j["high"].is_number()) {
        return std::nullopt;
    }
    PredictionBand band;
    band.low = j["low"].get<double>();
    band.high = j["high"].get<double>();
    if (!(band.low > 0 && band.high >= band.low)) {
        return std::nullopt;
    }
    if (j.contains("coverage") && j["coverage"].is_number()) {
        band.coverage = j["coverage"].get<double>();
    }
    if (j.contains("source") && j["source"].is_string()) {
        band.source = j["source"].get<std::string>();
    }
    return band;
}

PredictionBand default_uncalibrated_band()
{
    // A prior, not a measurement. It is asymmetric because what an uncalibrated, datasheet-only profile
    // leaves out makes real runs slower rather than faster: host and launch overheads (CUDA graphs and CPU
    // binding alone were worth ~155 TFLOP/s per GPU on GB200 DeepSeek-V3, Megatron-LM
    // docs/discussions/deepseek-v3-gb200-optimization §2.3-2.4), communication contention and stragglers
    // (1-2% diurnal variation alone, Llama 3 report §3.3.4). It must be wider on both sides than the
    // bands that calibration measures on the same kind of runs, or an unfitted part would look surer than
    // a fitted one: the leave-one-source-out bands of the shipped fits reach +42% (A100) and +34% (B200),
    // and the bands transferred to B300 and GB300 from their nearest calibrated part +47% (scripts/transfer-fits.py)
    // (profiles/datasheets/b300.json default_band; docs/validation.md). Measured time within 0.65x to
    // 1.6x the prediction. Replace it with a measured band (vtrain calibrate) wherever published runs exist.
    PredictionBand band;
    band.low = 0.65;
    band.high = 1.6;
    band.coverage = 0.8;
    band.source = "the default band of an uncalibrated profile (kernel efficiencies not fitted to measured runs of this part): an "
                  "assumed prior, not a measured error; vtrain calibrate replaces it";
    band.calibrated = false;
    return band;
}

std::optional<PredictionBand> prediction_band(const GpuProfile& profile)
{
    if (profile.calibration.is_object()) {
        const auto it = profile.calibration.find("band");
        if (it != profile.calibration.end()) {
            if (auto band = band_from_json(*it)) {
                return band;
            }
        }
    }
    if (auto band = band_from_json(profile.default_band)) {
        band->calibrated = false;
        if (band->source.empty()) {
            band->source = "the profile's default band (not fitted to measured runs)";
        }
        return band;
    }
    return default_uncalibrated_band();
}

std::string band_label(const PredictionBand& band)
{
    const double down = (1 - band.low) * 100;
    const double up = (band.high - 1) * 100;
    char buffer[64];
    if (std::abs(down - up) <= 0.5) {
        std::snprintf(buffer, sizeof buffer, "\xC2\xB1%.1f%%", std::max(down, up));
    } else {
        std::snprintf(buffer, sizeof buffer, "%+.1f%%/%+.1f%%", -down, up);
    }
    return buffer;
}

} // namespace vtrain
