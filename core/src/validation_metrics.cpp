// SPDX-License-Identifier: MIT
// The measured quantity a row is scored on, and the FLOP conventions of its sources. TFLOP/s, MFU and HFU
// are scored only under a convention the tool reproduces (SC'21 Eq. 3, Korthikanti's model/hardware
// FLOPs); otherwise the row's iteration time or tokens/s is used, and a row with neither is skipped with
// that reason (README modern caveat 1: vendor "model TFLOP/s" formulas differ between frameworks and
// releases).
#include "validation_detail.h"

namespace vtrain {

const char* to_string(FlopConvention c)
{
    switch (c) {
    case FlopConvention::Sc21Eq3: return "sc21_eq3";
    case FlopConvention::KorthikantiModel: return "korthikanti_model";
    case FlopConvention::KorthikantiHardware: return "korthikanti_hardware";
    }
    return "unknown";
}

const char* to_string(ValidationMetric m)
{
    switch (m) {
    case ValidationMetric::IterationTime: return "iteration_time_s";
    case ValidationMetric::TokensPerSecPerGpu: return "tokens_per_sec_per_gpu";
    case ValidationMetric::TflopsPerGpu: return "tflops_per_gpu";
    case ValidationMetric::MfuPct: return "mfu_pct";
    case ValidationMetric::HfuPct: return "hfu_pct";
    case ValidationMetric::LayerTime: return "layer_total_ms";
    case ValidationMetric::PeakMemory: return "peak_memory_gb_per_gpu";
    case ValidationMetric::OutOfMemory: return "observed_oom";
    }
    return "unknown";
}

double sc21_eq3_flops(double B, double s, double l, double h, double V)
{
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double korthikanti_model_flops(double B, double L, double s, double h, double v)
{
    return 72.0 * B * L * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * L));
}

double korthikanti_hardware_flops(double B, double L, double s, double h, double v, Recompute recompute)
{
    switch (recompute) {
    case Recompute::None: return korthikanti_model_flops(B, L, s, h, v);
    case Recompute::Selective: return 72.0 * B * L * s * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * h * L));
    case Recompute::Full: return sc21_eq3_flops(B, s, L, h, v);
    }
    return 0;
}

namespace validation_detail {

std::optional<FlopConvention> detect_convention(const RunRow& r, bool hardware)
{
    const std::string text = lower(r.flops_definition.value_or("") + " " + r.tflops_kind.value_or(""));
    if (text.find("sc21_eq3") != std::string::npos || text.find("sc'21 eq") != std::string::npos || text.find("eq.(3)") != std::string::npos ||
        text.find("96*b*s*l*h^2") != std::string::npos) {
        return FlopConvention::Sc21Eq3;
    }
    if (text.find("korthikanti_hardware") != std::string::npos) {
        return FlopConvention::KorthikantiHardware;
    }
    if (text.find("korthikanti") != std::string::npos || text.find("72*b*l*s*h^2") != std::string::npos) {
        return hardware ? FlopConvention::KorthikantiHardware : FlopConvention::KorthikantiModel;
    }
    return std::nullopt;
}

double convention_flops(FlopConvention c, const ModelSpec& m, const TrainingSpec& t, Recompute recompute)
{
    switch (c) {
    case FlopConvention::Sc21Eq3: return sc21_eq3_flops(t.global_batch, m.seq_len, m.layers, m.hidden, m.vocab);
    case FlopConvention::KorthikantiModel: return korthikanti_model_flops(t.global_batch, m.layers, m.seq_len, m.hidden, m.vocab);
    case FlopConvention::KorthikantiHardware:
        return korthikanti_hardware_flops(t.global_batch, m.layers, m.seq_len, m.hidden, m.vocab, recompute);
    }
    return 0;
}


std::optional<std::string> choose_metric(const RunRow& r, MappedRun& run)
{
    run.peak_tflops = r.peak_tflops_reference.value_or(312);
    std::optional<double> derived_tokens;
    if (r.primary_metric == "derived.tokens_per_sec_per_gpu" && r.derived.contains("tokens_per_sec_per_gpu")) {
        derived_tokens = r.derived["tokens_per_sec_per_gpu"].get<double>();
    }
    if (r.iteration_time_s) {
        run.metric = ValidationMetric::IterationTime;
        run.measured = *r.iteration_time_s;
        return std::nullopt;
    }
    if (r.tokens_per_sec_per_gpu || derived_tokens) {
        run.metric = ValidationMetric::TokensPerSecPerGpu;
        run.measured = r.tokens_per_sec_per_gpu ? *r.tokens_per_sec_per_gpu : *derived_tokens;
        if (!r.tokens_per_sec_per_gpu) {
            run.notes.push_back("measured: derived.tokens_per_sec_per_gpu (" + r.derived.value("tokens_per_sec_per_gpu_formula", std::string("our arithmetic")) + ")");
        }
        return std::nullopt;
    }
    if (r.tokens_per_sec_total && r.num_gpus) {
        run.metric = ValidationMetric::TokensPerSecPerGpu;
        run.measured = *r.tokens_per_sec_total / *r.num_gpus;
        run.notes.push_back("measured: tokens_per_sec_total / num_gpus");
        return std::nullopt;
    }
    if (r.tflops_per_gpu) {
        const auto conv = detect_convention(r, true);
        if (!conv) {
            return std::string("tflops_per_gpu under a FLOP convention the tool does not reproduce, and no tokens/s or time");
        }
        run.metric = ValidationMetric::TflopsPerGpu;
        run.convention = *conv;
        run.measured = *r.tflops_per_gpu;
        return std::nullopt;
    }
    if (r.mfu_pct || r.hfu_pct) {
        const bool hardware = !r.mfu_pct;
        const auto conv = detect_convention(r, hardware);
        if (!conv) {
            return std::string(hardware ? "hfu_pct" : "mfu_pct") + " under a FLOP convention the tool does not reproduce, and no tokens/s or time";
        }
        run.metric = hardware ? ValidationMetric::HfuPct : ValidationMetric::MfuPct;
        run.convention = *conv;
        run.measured = hardware ? *r.hfu_pct : *r.mfu_pct;
        return std::nullopt;
    }
    if (r.layer_total_ms) {
        run.metric = ValidationMetric::LayerTime;
        run.measured = *r.layer_total_ms;
        return std::nullopt;
    }
    return std::string("no measured quantity (iteration_time_s, tokens_per_sec_per_gpu, tflops_per_gpu, mfu_pct, hfu_pct or layer_total_ms)");
}

} // namespace validation_detail
} // namespace vtrain
