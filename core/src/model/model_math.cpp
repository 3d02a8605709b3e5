// SPDX-License-Identifier: MIT
#include "model/model_math.h"

#include <algorithm>

namespace vtrain {
namespace {

// Chunk length of Mamba-2's state-space-dual (SSD) scan: Megatron-Core's default chunk_size.
constexpr double kMambaChunk = 128;

double norm_params(const ModelSpec& m, double width)
{
    return m.normalization == Normalization::LayerNorm ? 2 * width : width; // LayerNorm: weight + bias
}

bool linear_biases(const ModelSpec& m)
{
    return m.activation == FfnActivation::Gelu;
} // GPT-style models

// Weights of the GEMMs (what FLOPs scale with), then everything else (biases, norms).
struct Count {
    double matrix = 0; // weight-matrix elements multiplied per token (FLOPs = 2 x this)
    double other = 0;  // biases, norm weights, per-head scalars
    double params() const { return matrix + other; }
};

double q_width(const ModelSpec& m)
{
    return static_cast<double>(m.heads) * m.head_dim();
}

Count attention_count(const ModelSpec& m)
{
    const double h = m.hidden;
    Count c;
    c.other = norm_params(m, h); // pre-norm
    if (m.attention == AttentionKind::Mla) {
        const MlaSpec& a = m.mla;
        const double heads = m.heads;
        const double qk = a.qk_head_dim + a.qk_rope_head_dim;
        if (a.q_lora_rank > 0) {
            c.matrix += h * a.q_lora_rank + a.q_lora_rank * heads * qk; // down, then up to every head
            c.other += norm_params(m, a.q_lora_rank);
        } else {
            c.matrix += h * heads * qk;
        }
        // The compressed KV latent plus one shared rotary key, then keys (non-rotary part) and values per head.
        c.matrix += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * heads * (a.qk_head_dim + a.v_head_dim);
        c.other += norm_params(m, a.kv_lora_rank);
        c.matrix += heads * a.v_head_dim * h; // output projection
        return c;
    }
    const double q = q_width(m);
    const double kv = static_cast<double>(m.effective_kv_heads()) * m.head_dim();
    c.matrix = h * (q + 2 * kv) + q * h;
    if (linear_biases(m) || m.qkv_bias) {
        c.other += q + 2 * kv;
    }
    if (linear_biases(m)) {
        c.other += h; // output projection bias
    }
    if (m.qk_norm) {
        c.other += 2 * norm_params(m, m.head_dim()); // one norm over the head size for queries, one for keys
    }
    return c;
}

// An FFN of `width` reading and writing `io_width` (the model's hidden size, or a LatentMoE latent).
Count ffn_count(const ModelSpec& m, double width, double io_width)
{
    Count c;
    if (width <= 0) {
        return c;
    }
    c.matrix = ffn_matrices(m) * io_width * width;
    if (linear_biases(m) && m.activation != FfnActivation::SwiGlu) {
        c.other = width + io_width;
    }
    return c;
}

Count ffn_count(const ModelSpec& m, double width)
{
    return ffn_count(m, width, m.hidden);
}

Count mamba_count(const ModelSpec& m)
{
    const double h = m.hidden;
    const MambaSpec& s = m.mamba;
    const double heads = mamba_heads(m);
    const double inner = mamba_inner(m);
    const double bc = 2.0 * s.groups * s.state_dim; // B and C projections
    Count c;
    c.matrix = h * (2 * inner + bc + heads) + inner * h;             // in_proj (z, x, B, C, dt) and out_proj
    c.other = norm_params(m, h) + (inner + bc) * (s.conv_kernel + 1) // depthwise conv1d + bias
              + 3 * heads                                            // A_log, D, dt_bias
              + inner;                                               // gated RMSNorm before out_proj
    return c;
}

struct LayerCount {
    double dense_params = 0;
    double expert_params = 0; // routed experts, all of them
    double active_matrix = 0; // matrix elements one token multiplies (routed experts x top_k)
    double active_other = 0;
    double core_flops = 0; // attention scores/values or the SSD scan, forward, per token
};

LayerCount count_layer(const ModelSpec& m, const LayerKind& k)
{
    LayerCount out;
    const double h = m.hidden;
    if (k.mixer == MixerKind::Attention) {
        const Count a = attention_count(m);
        out.dense_params += a.params();
        out.active_matrix += a.matrix;
        out.active_other += a.other;
        out.core_flops += attention_core_forward_flops_per_token(m) / m.seq_len * attention_keys_per_query(m, k.windowed);
    } else if (k.mixer == MixerKind::Mamba) {
        const Count c = mamba_count(m);
        out.dense_params += c.params();
        out.active_matrix += c.matrix;
        out.active_other += c.other;
        const MambaSpec& s = m.mamba;
        const double q = std::min(kMambaChunk, static_cast<double>(m.seq_len));
        const double p = s.head_dim, n = s.state_dim, heads = mamba_heads(m);
        // Depthwise conv, then SSD (Dao & Gu 2024, arXiv 2405.21060, Sec. 6): intra-chunk C B^T scores
        // (2QNG), scores x X (2QPH), chunk states (2NPH) and state-to-output (2NPH) per token.
        out.core_flops += 2 * (mamba_inner(m) + 2.0 * s.groups * n) * s.conv_kernel + 2 * q * n * s.groups + 2 * q * p * heads + 4 * n * p * heads;
    }
    if (k.ffn == FfnKind::Dense) {
        const Count f = ffn_count(m, m.effective_ffn_hidden());
        out.dense_params += f.params() + norm_params(m, h);
        out.active_matrix += f.matrix;
        out.active_other += f.other + norm_params(m, h);
    } else if (k.ffn == FfnKind::Moe) {
        const MoeSpec& e = m.moe;
        // LatentMoE (Megatron-Core moe_layer.py, moe_latent_size): the router and shared experts read the
        // full hidden state; fc1_latent_proj (h -> l) runs before the dispatch, the routed experts work in
        // the latent l, and fc2_latent_proj (l -> h) follows the combine. The projections are dense weights.
        const double io = e.expert_input_width(m.hidden);
        const Count expert = ffn_count(m, routed_expert_ffn_hidden(m), io);
        const Count shared = ffn_count(m, shared_expert_ffn_hidden_total(m));
        const double router = h * e.experts;
        const double latent_projections = e.latent_size > 0 ? 2 * h * e.latent_size : 0;
        out.dense_params += norm_params(m, h) + router + shared.params() + latent_projections;
        out.expert_params += e.experts * expert.params();
        out.active_matrix += router + shared.matrix + e.top_k * expert.matrix + latent_projections;
        out.active_other += norm_params(m, h) + shared.other + e.top_k * expert.other;
    }
    return out;
}

double layer_flops(const ModelSpec& m, const LayerKind& k)
{
    const LayerCount c = count_layer(m, k);
    return 2 * c.active_matrix + c.core_flops;
}

double mtp_own_params_besides_block(const ModelSpec& m)
{
    // DeepSeek-V3 Sec. 2.2: RMSNorms on the hidden state and on the next token's embedding, a 2h -> h
    // projection, then a transformer block and the shared output head (with its own final norm).
    const double h = m.hidden;
    return 3 * norm_params(m, h) + 2 * h * h;
}

} // namespace

LayerKind layer_kind(const ModelSpec& m, int i)
{
    LayerKind k;
    int attention_ordinal = i;
    if (!m.layer_pattern.empty() && i >= 0 && i < static_cast<int>(m.layer_pattern.size())) {
        const char c = m.layer_pattern[static_cast<std::size_t>(i)];
        k.mixer = c == 'M' ? MixerKind::Mamba : c == '*' ? MixerKind::Attention : MixerKind::None;
        k.ffn = c == '-' ? FfnKind::Dense : c == 'E' ? FfnKind::Moe : FfnKind::None;
        attention_ordinal = static_cast<int>(std::count(m.layer_pattern.begin(), m.layer_pattern.begin() + i, '*'));
    } else if (m.moe.enabled() && i >= m.moe.first_dense_layers && (i - m.moe.first_dense_layers) % std::max(1, m.moe.layer_freq) == 0) {
        k.ffn = FfnKind::Moe;
    }
    if (k.mixer == MixerKind::Attention && m.sliding_window > 0) {
        // GPT-OSS alternates windowed and full layers starting with a windowed one (full_attention_every 2),
        // Gemma 3 has five windowed layers per full one (6): the n-th, 2n-th ... attention layers are full.
        const int every = m.full_attention_every;
        k.windowed = !(every > 0 && attention_ordinal % every == every - 1);
    }
    return k;
}

LayerKind mtp_block_kind(const ModelSpec& m)
{
    LayerKind k;
    k.ffn = m.moe.enabled() ? FfnKind::Moe : FfnKind::Dense;
    return k;
}

double routed_expert_ffn_hidden(const ModelSpec& m)
{
    return m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.effective_ffn_hidden();
}

double shared_expert_ffn_hidden_total(const ModelSpec& m)
{
    if (m.moe.shared_expert_ffn_hidden > 0) {
        return m.moe.shared_expert_ffn_hidden;
    }
    return static_cast<double>(m.moe.shared_experts) * routed_expert_ffn_hidden(m);
}

int mamba_heads(const ModelSpec& m)
{
    return m.mamba.heads > 0 ? m.mamba.heads : std::max(1, 2 * m.hidden / std::max(1, m.mamba.head_dim));
}

double mamba_inner(const ModelSpec& m)
{
    return static_cast<double>(mamba_heads(m)) * m.mamba.head_dim;
}

double ffn_matrices(const ModelSpec& m)
{
    return m.activation == FfnActivation::SwiGlu ? 3.0 : 2.0;
}

double attention_keys_per_query(const ModelSpec& m, bool windowed)
{
    const double s = m.seq_len;
    const double w = m.sliding_window;
    if (!windowed || w <= 0 || w >= s) {
        return s;
    }
    // Causal window: query p sees min(p, w) keys, on average w - w^2/(2s); the full-matrix convention
    // counts 2x the causal work (s for full attention), so the same factor applies here.
    return 2 * w - w * w / s;
}

double layer_params(const ModelSpec& m)
{
    return layer_params(m, 0);
}

double layer_params(const ModelSpec& m, int i)
{
    return layer_param_split(m, i).total();
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
    double layers = 0;
    for (int i = 0; i < m.layers; ++i) {
        layers += layer_params(m, i);
    }
    return layers + embedding_params(m) + output_params(m) + norm_params(m, m.hidden);
}

LayerParamSplit layer_param_split(const ModelSpec& m, int i)
{
    const LayerCount c = count_layer(m, layer_kind(m, i));
    return {c.dense_params, c.expert_params};
}

LayerParamSplit mtp_param_split(const ModelSpec& m)
{
    const LayerCount c = count_layer(m, mtp_block_kind(m));
    return {c.dense_params + mtp_own_params_besides_block(m), c.expert_params};
}

double mtp_module_params(const ModelSpec& m)
{
    return mtp_param_split(m).total();
}

double active_params(const ModelSpec& m)
{
    double layers = 0;
    for (int i = 0; i < m.layers; ++i) {
        const LayerCount c = count_layer(m, layer_kind(m, i));
        layers += c.active_matrix + c.active_other;
    }
    return layers + embedding_params(m) + output_params(m) + norm_params(m, m.hidden);
}

double attention_core_forward_flops_per_token(const ModelSpec& m)
{
    // Q K^T and scores x V over all s keys (all query heads set the work even with GQA):
    // 2 s heads (d_qk + d_v), i.e. 4 s h for MHA with heads x head_dim = h.
    const double s = m.seq_len;
    if (m.attention == AttentionKind::Mla) {
        const MlaSpec& a = m.mla;
        return 2.0 * s * m.heads * (a.qk_head_dim + a.qk_rope_head_dim + a.v_head_dim);
    }
    return 4.0 * s * q_width(m);
}

double attention_core_forward_flops_per_token(const ModelSpec& m, int i)
{
    const LayerKind k = layer_kind(m, i);
    if (k.mixer != MixerKind::Attention) {
        return 0;
    }
    return attention_core_forward_flops_per_token(m) / m.seq_len * attention_keys_per_query(m, k.windowed);
}

double layer_forward_flops_per_token(const ModelSpec& m)
{
    return layer_forward_flops_per_token(m, 0);
}

double layer_forward_flops_per_token(const ModelSpec& m, int i)
{
    return layer_flops(m, layer_kind(m, i));
}

double layers_forward_flops_per_token(const ModelSpec& m)
{
    double sum = 0;
    if (m.layer_pattern.empty() && !m.moe.enabled() && m.sliding_window == 0) {
        return m.layers * layer_flops(m, layer_kind(m, 0)); // every layer alike
    }
    for (int i = 0; i < m.layers; ++i) {
        sum += layer_forward_flops_per_token(m, i);
    }
    return sum;
}

double output_forward_flops_per_token(const ModelSpec& m)
{
    return 2.0 * m.hidden * m.vocab;
}

double mtp_forward_flops_per_token(const ModelSpec& m)
{
    const double h = m.hidden;
    return 2 * 2 * h * h + layer_flops(m, mtp_block_kind(m)) + output_forward_flops_per_token(m);
}

double model_flops_per_iteration(const ModelSpec& m, int global_batch)
{
    const double tokens = static_cast<double>(global_batch) * m.seq_len;
    return 3.0 * tokens * (layers_forward_flops_per_token(m) + output_forward_flops_per_token(m) + m.mtp_layers * mtp_forward_flops_per_token(m));
}

double hardware_flops_per_iteration(const ModelSpec& m, int global_batch, Recompute recompute)
{
    const double tokens = static_cast<double>(global_batch) * m.seq_len;
    double extra = 0;
    if (recompute == Recompute::Full) {
        extra = tokens * layers_forward_flops_per_token(m);
    } else if (recompute == Recompute::Selective) {
        for (int i = 0; i < m.layers; ++i) {
            extra += tokens * attention_core_forward_flops_per_token(m, i);
        }
    }
    return model_flops_per_iteration(m, global_batch) + extra;
}

} // namespace vtrain
