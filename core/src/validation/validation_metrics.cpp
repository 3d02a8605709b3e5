// SPDX-License-Identifier: MIT
// The measured quantity a row is scored on, and the FLOP conventions of its sources. TFLOP/s, MFU and HFU
// are scored only under a convention the tool reproduces (SC'21 Eq. 3, Korthikanti's model/hardware
// FLOPs); otherwise the row's iteration time or tokens/s is used, and a row with neither is skipped with
// that reason (README modern caveat 1: vendor "model TFLOP/s" formulas differ between frameworks and
// releases).
#include <algorithm>
#include <cmath>

#include "model/model_math.h"
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
    case FlopConvention::MegatronLm2024Model: return "megatron_lm_2024_model";
    case FlopConvention::NemoFormulas: return "nemo_flops_formulas";
    case FlopConvention::MegatronBridge: return "megatron_bridge_flop_utils";
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

std::optional<double> megatron_lm_2024_model_flops(const ModelSpec& m, double batch)
{
    // megatron/training/training.py num_floating_point_operations of core_r0.5 .. core_r0.10 (2024): one
    // expression for every layer; the attention core's s/h is not halved for the causal mask.
    if (!m.layer_pattern.empty() || m.attention == AttentionKind::Mla) {
        return std::nullopt;
    }
    const double h = m.hidden, s = m.seq_len, L = m.layers, a = m.heads;
    const double q_ratio = static_cast<double>(m.head_dim()) * a / h;
    const double glu = m.activation == FfnActivation::SwiGlu ? 1.5 : 1.0;
    const double routed = m.moe.enabled() ? m.moe.top_k : 1.0;
    const double ffn = m.moe.enabled() && m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.effective_ffn_hidden();
    const double shared = m.moe.enabled() ? shared_expert_ffn_hidden_total(m) : 0.0;
    return 12.0 * batch * s * L * h * h *
           ((1.0 + m.effective_kv_heads() / a + s / h) * q_ratio + ffn / h * routed * glu + shared / h * glu + m.vocab / (2.0 * L * h));
}

namespace {

// NeMo 2's model families (nemo/utils/flops_formulas.py) as a model name spells them; nullptr for another.
const char* nemo_family(const std::string& model_name)
{
    const std::string n = json_fields::lowercase(model_name);
    auto has = [&](const char* w) { return n.find(w) != std::string::npos; };
    if (has("mixtral")) {
        return "mixtral";
    }
    if (has("nemotron") && !has("nemotron-h") && !has("nemotron_h") && !has("nemotron 3") && !has("nemotron_3")) {
        return "nemotron";
    }
    if (has("llama3") || has("llama 3") || has("llama-3") || has("llama_3")) {
        return "llama3";
    }
    if (has("llama2") || has("llama 2") || has("llama-2") || has("llama_2")) {
        return "llama2";
    }
    if (has("gpt") && !has("gpt-oss") && !has("gpt oss") && !has("gpt_oss")) {
        return "gpt3";
    }
    return nullptr;
}

} // namespace

std::optional<double> nemo_formula_model_flops(const std::string& model_name, const ModelSpec& m, double batch)
{
    const char* family = nemo_family(model_name);
    if (family == nullptr) {
        return std::nullopt;
    }
    const std::string f = family;
    const double B = batch, s = m.seq_len, L = m.layers, h = m.hidden;
    const double g = m.effective_kv_heads(), a = m.heads;
    // LLM_VOCAB_SIZE_MAP (nemo/collections/common/parts/perf_metrics_utils.py): the family's, not the model's.
    if (f == "gpt3") {
        const double V = 51200;
        return (24 * B * s * h * h + 4 * B * s * s * h) * (3 * L) + 6 * B * s * h * V;
    }
    const double V = f == "llama3" ? 128256 : f == "nemotron" ? 256000 : 32000;
    const double ffn = f == "mixtral" ? (m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.effective_ffn_hidden()) * m.moe.top_k
                                      : static_cast<double>(m.effective_ffn_hidden());
    const double ffn_coefficient = f == "nemotron" ? 12 : 18;
    return B * s * L * h * h * (12 + 12 * g / a + ffn_coefficient * ffn / h + 12 * s / h + 6 * V / (L * h));
}

std::optional<double> megatron_bridge_model_flops(const ModelSpec& m, double batch)
{
    if (m.sliding_window > 0) {
        return std::nullopt;
    }
    if (m.layer_pattern.empty()) {
        return megatron_lm_model_flops(m, batch);
    }
    // flop_utils.py hybrid_flops: layers counted from the pattern, MTP depths adding their block's layers.
    int attention = 0, mamba = 0, mlp = 0, moe = 0;
    for (const char c : m.layer_pattern) {
        attention += c == '*' ? 1 : 0;
        mamba += c == 'M' ? 1 : 0;
        mlp += c == '-' ? 1 : 0;
        moe += c == 'E' ? 1 : 0;
    }
    if (m.mtp_layers > 0) {
        const LayerKind k = mtp_block_kind(m);
        attention += k.mixer == MixerKind::Attention ? m.mtp_layers : 0;
        mlp += k.ffn == FfnKind::Dense ? m.mtp_layers : 0;
        moe += k.ffn == FfnKind::Moe ? m.mtp_layers : 0;
    }
    const double B = batch, s = m.seq_len, h = m.hidden;
    const double glu = m.activation == FfnActivation::SwiGlu ? 1.5 : 1.0;
    const double p = static_cast<double>(m.head_dim()) * m.heads / h;
    const double attn = 4 * B * s * h * p * (h + h * m.effective_kv_heads() / m.heads + s / 2);
    const double mlp_flops = 4 * (m.effective_ffn_hidden() / h) * glu * B * s * h * h;
    const MoeSpec& e = m.moe;
    const double expert = e.expert_ffn_hidden > 0 ? e.expert_ffn_hidden : m.effective_ffn_hidden();
    const double routed = e.latent_size > 0 ? 4 * B * s * e.latent_size * expert * e.top_k * glu + 4 * B * s * h * e.latent_size
                                            : 4 * B * s * h * expert * e.top_k * glu;
    const double moe_flops = routed + 4 * B * s * h * shared_expert_ffn_hidden_total(m) * glu;
    const double d_in = 2 * h; // hybrid_flops takes the mixer's inner width as 2 h
    const double N = m.mamba.state_dim, G = m.mamba.groups, heads = mamba_heads(m);
    const double mamba_flops = 2 * B * s * h * (2 * d_in + 2 * G * N + heads) + 7 * B * s * d_in * N + 2 * B * s * d_in * h;
    const double logits = 2 * B * s * h * m.vocab * (1 + m.mtp_layers);
    return 3 * (attention * attn + mlp * mlp_flops + moe * moe_flops + mamba * mamba_flops + logits);
}

namespace validation_detail {

namespace {

// The Megatron-Core release a row's software names ("Megatron-Core v0.9", "core_r0.8.0", "mcore 0.12") as
// minor version, 0 when none: its num_floating_point_operations changed to the causal count after core_r0.10.
int megatron_core_minor(const RunRow& r)
{
    const std::string text = lowercase(r.software.value_or("") + " " + r.flops_definition.value_or(""));
    if (text.size() > 4096) {
        return 0;
    }
    // (megatron-core|mcore|core_r)\s*v?0\.(\d{1,3}), scanned by hand (no std::regex: issue 32).
    for (std::size_t i = 0; i < text.size(); ++i) {
        std::size_t j = std::string::npos;
        for (const std::string_view name : {"megatron-core", "mcore", "core_r"}) {
            if (scan::at_icase(text, i, name)) {
                j = i + name.size();
                break;
            }
        }
        if (j == std::string::npos) {
            continue;
        }
        j = scan::skip_spaces(text, j);
        j += j < text.size() && text[j] == 'v' ? 1 : 0;
        if (j + 2 < text.size() && text[j] == '0' && text[j + 1] == '.' && scan::is_digit(text[j + 2])) {
            const std::size_t end = std::min(scan::digits_end(text, j + 2), j + 5); // at most three digits
            return std::stoi(text.substr(j + 2, end - (j + 2)));
        }
    }
    return 0;
}

// A release year a row's software or FLOP definition names (2019-2029), 0 when none.
int named_year(const RunRow& r)
{
    const std::string text = r.software.value_or("") + " " + r.flops_definition.value_or("");
    if (text.size() > 4096) {
        return 0;
    }
    // \b(20[12][0-9])\b, scanned by hand.
    for (std::size_t i = 0; i + 4 <= text.size(); ++i) {
        const bool bounded = (i == 0 || !scan::is_word(text[i - 1])) && (i + 4 == text.size() || !scan::is_word(text[i + 4]));
        if (bounded && text[i] == '2' && text[i + 1] == '0' && (text[i + 2] == '1' || text[i + 2] == '2') && scan::is_digit(text[i + 3])) {
            return 2000 + (text[i + 2] - '0') * 10 + (text[i + 3] - '0');
        }
    }
    return 0;
}

} // namespace

std::optional<FlopConvention> detect_convention(const RunRow& r, bool hardware)
{
    const std::string text = lowercase(r.flops_definition.value_or("") + " " + r.tflops_kind.value_or(""));
    auto has = [&](const char* w) { return text.find(w) != std::string::npos; };
    // Megatron-Bridge's own calculator (flop_utils.py) names itself; NeMo 2's FLOPs callback its formulas file.
    if (has("flop_utils") || (has("megatron-bridge") && (has("model flops") || has("tflop")))) {
        return FlopConvention::MegatronBridge;
    }
    if (has("flops_formulas") || has("flopsmeasurementcallback") || (has("nemo") && has("flops") && !has("megatron-lm"))) {
        return FlopConvention::NemoFormulas;
    }
    if ((has("megatron-lm") || has("megatron-core") || has("mcore")) && (has("num_floating_point_operations") || has("log-throughput"))) {
        // The 2024 releases counted the attention core over the full matrix (see megatron_lm_2024_model_flops).
        const int minor = megatron_core_minor(r);
        const int year = named_year(r);
        const bool release_2024 = (minor > 0 && minor <= 10) || (minor == 0 && year > 0 && year <= 2024);
        return release_2024 ? FlopConvention::MegatronLm2024Model : FlopConvention::MegatronLmModel;
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
    case FlopConvention::MegatronLm2024Model: return megatron_lm_2024_model_flops(m, t.global_batch).value_or(0);
    case FlopConvention::NemoFormulas: return nemo_formula_model_flops(m.name, m, t.global_batch).value_or(0);
    case FlopConvention::MegatronBridge: return megatron_bridge_model_flops(m, t.global_batch).value_or(0);
    }
    return 0;
}

std::optional<std::string> convention_not_reproduced(FlopConvention c, const ModelSpec& m, const TrainingSpec& t)
{
    const bool counted = convention_flops(c, m, t, Recompute::None) > 0;
    switch (c) {
    case FlopConvention::MegatronLmModel:
    case FlopConvention::MegatronLm2024Model:
        if (!counted) {
            return std::string("Megatron-LM's num_floating_point_operations counts hybrid (Mamba) stacks another way; not reproduced");
        }
        break;
    case FlopConvention::NemoFormulas:
        if (!counted) {
            return std::string("NeMo 2's flops_formulas.py has no formula for this model family (gpt3, llama2, llama3, nemotron, mixtral)");
        }
        break;
    case FlopConvention::MegatronBridge:
        if (!counted) {
            return std::string("Megatron-Bridge's flop_utils.py counts sliding-window attention differently between releases; not reproduced");
        }
        // Packed fine-tuning batches: Bridge counts attention over the real sub-sequences (accumulate_flops_metadata,
        // sum of s_i^2 from cu_seqlens) and LoRA on Llama 3 70B from the packed dataset's statistics
        // (calculate_avg_seqlen): data the row does not give.
        if (t.mode != TrainingMode::Pretrain) {
            return std::string("Megatron-Bridge counts a fine-tuning batch's FLOPs from its packed samples' lengths (flop_utils.py), which the row "
                               "does not give");
        }
        break;
    default: break;
    }
    return std::nullopt;
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
        if (!conv) {
            return std::string("tflops_per_gpu under a FLOP convention the tool does not reproduce, and no tokens/s or time");
        }
        if (auto why = convention_not_reproduced(*conv, run.scenario.model, run.scenario.training)) {
            return "tflops_per_gpu: " + *why + ", and no tokens/s or time";
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
        switch (*conv) {
        case FlopConvention::MegatronLmModel:
            run.notes.push_back("measured TFLOP/s under Megatron-LM's num_floating_point_operations (reproduced: megatron_lm_model_flops)");
            break;
        case FlopConvention::MegatronLm2024Model:
            run.notes.push_back("measured TFLOP/s under Megatron-LM's 2024 num_floating_point_operations, attention over the full matrix "
                                "(reproduced: megatron_lm_2024_model_flops)");
            break;
        case FlopConvention::NemoFormulas:
            run.notes.push_back("measured TFLOP/s under NeMo 2's flops_formulas.py (reproduced: nemo_formula_model_flops, the family's vocabulary)");
            break;
        case FlopConvention::MegatronBridge:
            run.notes.push_back("measured TFLOP/s under Megatron-Bridge's flop_utils.py (reproduced: megatron_bridge_model_flops)");
            break;
        default: break;
        }
        return std::nullopt;
    }
    if (r.mfu_pct || r.hfu_pct) {
        const bool hardware = !r.mfu_pct;
        const auto conv = detect_convention(r, hardware);
        if (conv) {
            if (auto why = convention_not_reproduced(*conv, run.scenario.model, run.scenario.training)) {
                return std::string(hardware ? "hfu_pct: " : "mfu_pct: ") + *why + ", and no tokens/s or time";
            }
        }
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
