// SPDX-License-Identifier: MIT
// The measured quantity a row is scored on, and the FLOP conventions of its sources. TFLOP/s, MFU and HFU
// are scored only under a convention the tool reproduces (SC'21 Eq. 3, Korthikanti's model/hardware
// FLOPs); otherwise the row's iteration time or tokens/s is used, and a row with neither is skipped with
// that reason (README modern caveat 1: vendor "model TFLOP/s" formulas differ between frameworks and
// releases).
#include <algorithm>
#include <cmath>

#include "validation/text_scan.h"
#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"

namespace vtrain {

const char* to_string(FlopConvention c)
{
    switch (c) {
    case FlopConvention::Sc21Eq3: return "sc21_eq3";
    case FlopConvention::KorthikantiModel: return "korthikanti_model";
    case FlopConvention::KorthikantiHardware: return "korthikanti_hardware";
    case FlopConvention::MegatronLmModel: return "megatron_lm_model";
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

std::optional<double> megatron_lm_model_flops(const ModelSpec& m, double batch)
{
    if (!m.layer_pattern.empty()) {
        return std::nullopt;
    }
    const double h = m.hidden, s = m.seq_len, heads = m.heads;
    const double fb = 3.0 * 2.0; // forward + two backward GEMMs, 2 FLOPs per multiply-add
    const double ffn_factor = m.activation == FfnActivation::SwiGlu ? 3.0 : 2.0;
    // Dense and MoE MLP layers (MoE layers after the leading dense ones, every layer_freq-th).
    int moe_layers = 0;
    if (m.moe.enabled()) {
        for (int i = 0; i < m.layers; ++i) {
            moe_layers += i >= m.moe.first_dense_layers && i % std::max(1, m.moe.layer_freq) == 0 ? 1 : 0;
        }
    }
    int dense_layers = m.layers - moe_layers;
    // MTP modules repeat the last layer's kind.
    const bool last_is_moe = m.moe.enabled() && moe_layers > 0 && (m.layers - 1) % std::max(1, m.moe.layer_freq) == 0;
    (last_is_moe ? moe_layers : dense_layers) += m.mtp_layers;
    const int layers = m.layers + m.mtp_layers;
    const double expert_ffn = m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.effective_ffn_hidden();
    const double shared_ffn = m.moe.shared_expert_ffn_hidden > 0 ? m.moe.shared_expert_ffn_hidden : m.moe.shared_experts * expert_ffn;
    const double mlp = fb * h *
                       (m.effective_ffn_hidden() * ffn_factor * dense_layers + expert_ffn * m.moe.top_k * ffn_factor * moe_layers +
                        shared_ffn * ffn_factor * moe_layers);
    double attention = 0;
    if (m.attention == AttentionKind::Mla) {
        const MlaSpec& a = m.mla;
        const double q_term = a.q_lora_rank == 0 ? h * heads * (a.qk_head_dim + a.qk_rope_head_dim)
                                                 : a.q_lora_rank * (h + heads * (a.qk_head_dim + a.qk_rope_head_dim) + 1);
        attention = fb * (q_term + a.kv_lora_rank * (h + heads * (a.qk_head_dim + a.v_head_dim) + 1) + h * a.qk_rope_head_dim +
                          heads * a.v_head_dim * h + s * heads * (a.qk_head_dim + a.qk_rope_head_dim) / 2 + s * heads * a.v_head_dim / 2);
    } else {
        const double q = static_cast<double>(m.head_dim()) * heads;
        const double kv = static_cast<double>(m.head_dim()) * m.effective_kv_heads();
        attention = fb * (h * (q + 2 * kv) + q * s / 2 * 2 + q * h);
    }
    const double mtp = fb * m.mtp_layers * (3 * h + 2 * h * h);
    const double logits = fb * h * m.vocab * (m.mtp_layers + 1);
    return batch * s * (mlp + attention * layers + mtp + logits);
}

namespace validation_detail {

std::optional<FlopConvention> detect_convention(const RunRow& r, bool hardware)
{
    const std::string text = lowercase(r.flops_definition.value_or("") + " " + r.tflops_kind.value_or(""));
    if (text.find("megatron-lm") != std::string::npos && text.find("num_floating_point_operations") != std::string::npos) {
        return FlopConvention::MegatronLmModel;
    }
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
    case FlopConvention::KorthikantiHardware: return korthikanti_hardware_flops(t.global_batch, m.layers, m.seq_len, m.hidden, m.vocab, recompute);
    case FlopConvention::MegatronLmModel: return megatron_lm_model_flops(m, t.global_batch).value_or(0);
    }
    return 0;
}

std::optional<std::string> choose_metric(const RunRow& r, MappedRun& run)
{
    run.peak_tflops = r.peak_tflops_reference.value_or(312);
    // peak_memory_gb_per_gpu is in GB unless the row's notes say the source published GiB (torchtitan's
    // benchmark tables: "Memory(GiB)", the caching allocator's reserved_bytes.all.peak / 1024^3,
    // torchtitan metrics.py DeviceMemoryMonitor.get_peak_stats).
    for (const auto& n : r.notes) {
        if (n.find("in GiB") != std::string::npos) {
            run.memory_in_gib = true;
        }
    }
    if (run.memory_in_gib && r.peak_memory_gb_per_gpu) {
        run.notes.push_back("peak memory compared in GiB (the source's unit)");
    }
    std::optional<double> derived_tokens;
    if (r.primary_metric == "derived.tokens_per_sec_per_gpu" && r.derived.contains("tokens_per_sec_per_gpu") &&
        r.derived["tokens_per_sec_per_gpu"].is_number() && r.derived["tokens_per_sec_per_gpu"].get<double>() > 0 &&
        std::isfinite(r.derived["tokens_per_sec_per_gpu"].get<double>())) {
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
            const auto formula = r.derived.find("tokens_per_sec_per_gpu_formula");
            const bool has_formula = formula != r.derived.end() && formula->is_string();
            run.notes.push_back("measured: derived.tokens_per_sec_per_gpu (" +
                                (has_formula ? json_fields::bounded(formula->get<std::string>()) : std::string("the file's arithmetic")) + ")");
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
        if (!conv || (*conv == FlopConvention::MegatronLmModel && !megatron_lm_model_flops(run.scenario.model, 1))) {
            return std::string("tflops_per_gpu under a FLOP convention the tool does not reproduce, and no tokens/s or time");
        }
        // A software-optimisation ladder (the same run under successive software changes) says in its notes
        // which step to score ("score the final row (970.01)"); the other steps are kept as skipped rows.
        for (const auto& n : r.notes) {
            if (n.size() > 4096) {
                continue;
            }
            const auto score = scan::final_row_score(n);
            if (score && std::abs(std::stod(*score) - *r.tflops_per_gpu) > 1e-6 * *r.tflops_per_gpu) {
                return std::string("an intermediate step of a software-optimisation ladder (the source scores the final row)");
            }
        }
        run.metric = ValidationMetric::TflopsPerGpu;
        run.convention = *conv;
        run.measured = *r.tflops_per_gpu;
        if (*conv == FlopConvention::MegatronLmModel) {
            run.notes.push_back("measured TFLOP/s under Megatron-LM's num_floating_point_operations (reproduced: megatron_lm_model_flops)");
        }
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
