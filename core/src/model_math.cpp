// SPDX-License-Identifier: MIT
#include "vtrain/model_math.h"

namespace vtrain {

double layer_params(const ModelSpec& m)
{
    const double h = m.hidden;
    const double kv_width = static_cast<double>(m.effective_kv_heads()) * m.head_dim();
    const double f = m.effective_ffn_hidden();
    const bool biases = m.activation == FfnActivation::Gelu;
    const double qkv = h * (h + 2 * kv_width) + (biases ? h + 2 * kv_width : 0);
    const double proj = h * h + (biases ? h : 0);
    const double ffn = m.activation == FfnActivation::SwiGlu ? 3 * h * f : 2 * h * f + f + h;
    const double norms = biases ? 4 * h : 2 * h; // LayerNorm has weight and bias, RMSNorm a weight only
    return qkv + proj + ffn + norms;
}

double embedding_params(const ModelSpec& m)
{
    const double positions = m.activation == FfnActivation::Gelu ? static_cast<double>(m.seq_len) * m.hidden : 0;
    return static_cast<double>(m.vocab) * m.hidden + positions;
}

double output_params(const ModelSpec& m)
{
    return m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * m.hidden;
}

double total_params(const ModelSpec& m)
{
    const double final_norm = m.activation == FfnActivation::Gelu ? 2.0 * m.hidden : m.hidden;
    return m.layers * layer_params(m) + embedding_params(m) + output_params(m) + final_norm;
}

LayerParamSplit layer_param_split(const ModelSpec& m, int /*layer_index*/)
{
    // Dense decoder: every layer is the same and nothing is routed (MoE shapes fill `expert`).
    return {layer_params(m), 0.0};
}

double active_params(const ModelSpec& m) { return total_params(m); }

double attention_core_forward_flops_per_token(const ModelSpec& m)
{
    // Q K^T and scores x V: 2 * s * h each (all heads; query heads set the work even with GQA).
    return 4.0 * m.seq_len * m.hidden;
}

double layer_forward_flops_per_token(const ModelSpec& m)
{
    const double h = m.hidden;
    const double kv_width = static_cast<double>(m.effective_kv_heads()) * m.head_dim();
    const double f = m.effective_ffn_hidden();
    const double ffn_matrices = m.activation == FfnActivation::SwiGlu ? 3 : 2;
    const double gemms = 2 * h * (h + 2 * kv_width) + 2 * h * h + 2 * ffn_matrices * h * f;
    return gemms + attention_core_forward_flops_per_token(m);
}

double output_forward_flops_per_token(const ModelSpec& m)
{
    return 2.0 * m.hidden * m.vocab;
}

double model_flops_per_iteration(const ModelSpec& m, int global_batch)
{
    const double tokens = static_cast<double>(global_batch) * m.seq_len;
    return 3.0 * tokens * (m.layers * layer_forward_flops_per_token(m) + output_forward_flops_per_token(m));
}

double hardware_flops_per_iteration(const ModelSpec& m, int global_batch, Recompute recompute)
{
    const double tokens = static_cast<double>(global_batch) * m.seq_len;
    double extra = 0;
    if (recompute == Recompute::Full) {
        extra = tokens * m.layers * layer_forward_flops_per_token(m);
    } else if (recompute == Recompute::Selective) {
        extra = tokens * m.layers * attention_core_forward_flops_per_token(m);
    }
    return model_flops_per_iteration(m, global_batch) + extra;
}

} // namespace vtrain
