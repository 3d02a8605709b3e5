// SPDX-License-Identifier: MIT
#include "model/fine_tuning.h"

#include <algorithm>

namespace vtrain {

std::vector<LoraAdapter> lora_adapters(const ModelSpec& m, const TrainingSpec& t, const LayerKind& kind)
{
    std::vector<LoraAdapter> out;
    if (t.mode != TrainingMode::Lora) {
        return out;
    }
    const double h = m.hidden;
    if (kind.mixer == MixerKind::Attention && m.attention != AttentionKind::Mla) {
        const double q = static_cast<double>(m.heads) * m.head_dim();
        const double kv = static_cast<double>(m.effective_kv_heads()) * m.head_dim();
        if ((t.lora_targets & kLoraQkv) != 0) {
            out.push_back({kLoraQkv, h, q + 2 * kv, false});
        }
        if ((t.lora_targets & kLoraProj) != 0) {
            out.push_back({kLoraProj, q, h, true});
        }
    }
    if (kind.ffn == FfnKind::Dense) {
        const double f = m.effective_ffn_hidden();
        if ((t.lora_targets & kLoraFc1) != 0) {
            out.push_back({kLoraFc1, h, ffn_matrices(m) == 3 ? 2 * f : f, false});
        }
        if ((t.lora_targets & kLoraFc2) != 0) {
            out.push_back({kLoraFc2, f, h, true});
        }
    }
    return out;
}

double lora_adapter_params(const ModelSpec& m, const TrainingSpec& t, const LayerKind& kind)
{
    double params = 0;
    for (const LoraAdapter& a : lora_adapters(m, t, kind)) {
        params += t.lora_rank * (a.in + a.out);
    }
    return params;
}

std::optional<std::string> fine_tuning_not_modeled(const ModelSpec& m, const TrainingSpec& t)
{
    if (t.mode != TrainingMode::Lora) {
        return std::nullopt;
    }
    const bool attention_targets = (t.lora_targets & (kLoraQkv | kLoraProj)) != 0;
    const bool ffn_targets = (t.lora_targets & (kLoraFc1 | kLoraFc2)) != 0;
    if (attention_targets && m.attention == AttentionKind::Mla) {
        return std::string("LoRA adapters on multi-head latent attention projections are not modeled (lora_targets qkv/proj)");
    }
    if (ffn_targets && m.moe.enabled()) {
        return std::string("LoRA adapters on mixture-of-experts FFNs (routed experts) are not modeled (lora_targets fc1/fc2)");
    }
    if (m.layer_pattern.find('M') != std::string::npos) {
        return std::string("LoRA on hybrid stacks with Mamba-2 mixers is not modeled");
    }
    if (m.mtp_layers > 0) {
        return std::string("LoRA with multi-token-prediction modules is not modeled");
    }
    bool any = false;
    for (int i = 0; i < m.layers && !any; ++i) {
        any = !lora_adapters(m, t, layer_kind(m, i)).empty();
    }
    if (!any) {
        return std::string("LoRA targets no linear layer of this model (lora_targets)");
    }
    return std::nullopt;
}

double packed_attention_share(const ModelSpec& m, const TrainingSpec& t)
{
    if (t.mode == TrainingMode::Pretrain || !t.sequence_packing || t.sample_tokens <= 0 || m.seq_len <= 0) {
        return 1.0;
    }
    return std::min(1.0, static_cast<double>(t.sample_tokens) / m.seq_len);
}

double useful_tokens_per_iteration(const ModelSpec& m, const TrainingSpec& t)
{
    const double per_sequence =
        t.mode != TrainingMode::Pretrain && !t.sequence_packing && t.sample_tokens > 0 ? std::min(t.sample_tokens, m.seq_len) : m.seq_len;
    return static_cast<double>(t.global_batch) * per_sequence;
}

double mode_model_flops_per_iteration(const ModelSpec& m, const TrainingSpec& t)
{
    const double tokens = static_cast<double>(t.global_batch) * m.seq_len;
    const double forward = layers_forward_flops_per_token(m) + output_forward_flops_per_token(m) + m.mtp_layers * mtp_forward_flops_per_token(m);
    double core = 0; // the attention core's forward FLOPs per token (no weights)
    for (int i = 0; i < m.layers; ++i) {
        core += attention_core_forward_flops_per_token(m, i);
    }
    // Packed samples attend within themselves only.
    const double packed_saving = (1.0 - packed_attention_share(m, t)) * core;
    if (t.mode != TrainingMode::Lora) {
        return 3.0 * tokens * (forward - packed_saving);
    }
    double adapters = 0; // forward FLOPs per token: x A and (x A) B
    for (int i = 0; i < m.layers; ++i) {
        adapters += 2.0 * lora_adapter_params(m, t, layer_kind(m, i));
    }
    const double packed_core = core - packed_saving;
    const double weights = forward - core;
    return tokens * (2.0 * weights + 3.0 * packed_core + 3.0 * adapters);
}

} // namespace vtrain
