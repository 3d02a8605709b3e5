// SPDX-License-Identifier: MIT
// The "model" block of a scenario: shape, layer options and its mixture-of-experts, MLA and Mamba sections.
#include "io/model_json.h"

#include <algorithm>

namespace vtrain {
namespace {

using json_fields::lowercase;
using json_fields::Reader;

MlaSpec read_mla(Reader r)
{
    r.reject_unknown({"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_rope_head_dim", "v_head_dim", "description"});
    MlaSpec s; // defaults: DeepSeek-V3 (arXiv 2412.19437 Sec. 4.2)
    s.q_lora_rank = r.optional_int("q_lora_rank", 0, 1 << 20).value_or(s.q_lora_rank);
    s.kv_lora_rank = r.optional_int("kv_lora_rank", 1, 1 << 20).value_or(s.kv_lora_rank);
    s.qk_head_dim = r.optional_int("qk_head_dim", 1, 1 << 16).value_or(s.qk_head_dim);
    s.qk_rope_head_dim = r.optional_int("qk_rope_head_dim", 0, 1 << 16).value_or(s.qk_rope_head_dim);
    s.v_head_dim = r.optional_int("v_head_dim", 1, 1 << 16).value_or(s.v_head_dim);
    return s;
}

MoeSpec read_moe(Reader r, int layers, int ffn_hidden)
{
    r.reject_unknown({"experts", "top_k", "expert_ffn_hidden", "shared_experts", "shared_expert_ffn_hidden", "first_dense_layers", "layer_freq",
                      "dropless", "capacity_factor", "pad_to_capacity", "load_imbalance", "latent_size", "description"});
    MoeSpec s;
    s.experts = r.required_int("experts", 2, 1 << 20);
    s.top_k = r.optional_int("top_k", 1, 1 << 20).value_or(1);
    s.expert_ffn_hidden = r.optional_int("expert_ffn_hidden", 1, 1 << 24).value_or(ffn_hidden);
    s.shared_experts = r.optional_int("shared_experts", 0, 1 << 10).value_or(0);
    s.shared_expert_ffn_hidden = r.optional_int("shared_expert_ffn_hidden", 1, 1 << 24).value_or(0);
    s.first_dense_layers = r.optional_int("first_dense_layers", 0, 100000).value_or(0);
    s.layer_freq = r.optional_int("layer_freq", 1, 100000).value_or(1);
    const auto dropless = r.optional_bool("dropless");
    const auto capacity = r.optional_number("capacity_factor", 0.01, 1e4);
    s.dropless = dropless.value_or(!capacity.has_value());
    if (capacity) {
        if (s.dropless) {
            r.error("capacity_factor", "cannot be combined with \"dropless\": true (dropless routing has no capacity)");
        }
        s.capacity_factor = *capacity;
    } else if (!s.dropless) {
        r.error("dropless", "is false, so \"capacity_factor\" is required (tokens per expert <= factor x tokens x top_k / experts)");
    }
    s.pad_to_capacity = r.optional_bool("pad_to_capacity").value_or(false);
    if (s.pad_to_capacity && s.dropless) {
        r.error("pad_to_capacity", "needs token dropping (\"capacity_factor\"): dropless routing has no capacity to pad to");
    }
    s.load_imbalance = r.optional_number("load_imbalance", 1.0, 1e6).value_or(1.0);
    s.latent_size = r.optional_int("latent_size", 1, 1 << 24).value_or(0);
    if (s.top_k > s.experts) {
        r.error("top_k", "must not exceed experts (" + std::to_string(s.experts) + "), not " + std::to_string(s.top_k));
    }
    // The busiest expert cannot receive more than every token once: max / mean <= experts / top_k.
    if (s.top_k <= s.experts && s.load_imbalance > static_cast<double>(s.experts) / s.top_k + 1e-9) {
        r.error("load_imbalance",
                "must not exceed experts / top_k (" + std::to_string(s.experts / s.top_k) + "): the busiest expert gets at most every token");
    }
    if (s.shared_expert_ffn_hidden > 0 && s.shared_experts == 0) {
        s.shared_experts = 1;
    }
    if (layers > 0 && s.first_dense_layers >= layers) {
        r.error("first_dense_layers", "must be below layers (" + std::to_string(layers) + ")");
    }
    return s;
}

MambaSpec read_mamba(Reader r)
{
    r.reject_unknown({"state_dim", "head_dim", "heads", "groups", "conv_kernel", "description"});
    MambaSpec s; // defaults: Nemotron-H (Megatron's --mamba-state-dim 128, --mamba-head-dim 64, 8 groups)
    s.state_dim = r.optional_int("state_dim", 1, 1 << 16).value_or(s.state_dim);
    s.head_dim = r.optional_int("head_dim", 1, 1 << 16).value_or(s.head_dim);
    s.heads = r.optional_int("heads", 1, 1 << 20).value_or(0);
    s.groups = r.optional_int("groups", 1, 1 << 16).value_or(s.groups);
    s.conv_kernel = r.optional_int("conv_kernel", 1, 64).value_or(s.conv_kernel);
    return s;
}

} // namespace

ModelSpec read_model(Reader r)
{
    r.reject_unknown(
        {"name",       "layers",        "hidden",          "heads",     "kv_heads",      "ffn_hidden", "seq_len",        "vocab",
         "activation", "normalization", "tied_embeddings", "attention", "mla",           "head_dim",   "sliding_window", "full_attention_every",
         "qk_norm",    "qkv_bias",      "mtp_layers",      "moe",       "layer_pattern", "mamba",      "description",    "linear_bias",
         "glu_clamp"});
    ModelSpec m;
    m.name = r.optional_string("name").value_or("model");
    if (m.name.size() > kMaxModelNameChars) {
        r.error("name", "is " + std::to_string(m.name.size()) + " characters long; at most " + std::to_string(kMaxModelNameChars) + " are allowed");
        m.name.resize(kMaxModelNameChars);
    }
    m.layers = r.required_int("layers", 1, 100000);
    m.hidden = r.required_int("hidden", 1, 1 << 20);
    m.heads = r.required_int("heads", 1, 1 << 16);
    m.kv_heads = r.optional_int("kv_heads", 1, 1 << 16).value_or(0);
    m.ffn_hidden = r.optional_int("ffn_hidden", 1, 1 << 24).value_or(0);
    m.seq_len = r.required_int("seq_len", 1, 1 << 24);
    m.vocab = r.required_int("vocab", 1, 1 << 26);
    m.tied_embeddings = r.optional_bool("tied_embeddings").value_or(true);
    if (const auto act = r.optional_string("activation")) {
        const std::string a = lowercase(*act);
        if (a == "gelu") {
            m.activation = FfnActivation::Gelu;
        } else if (a == "swiglu") {
            m.activation = FfnActivation::SwiGlu;
        } else if (a == "squared_relu") {
            m.activation = FfnActivation::SquaredRelu;
        } else if (a == "relu") {
            m.activation = FfnActivation::Relu;
        } else {
            r.error("activation", "must be \"gelu\", \"swiglu\", \"squared_relu\" or \"relu\", not \"" + json_fields::bounded(*act) + "\"");
        }
    }
    // GPT-style (GELU) models use LayerNorm, today's models RMSNorm: the default follows the activation.
    m.normalization = m.activation == FfnActivation::Gelu ? Normalization::LayerNorm : Normalization::RmsNorm;
    if (const auto norm = r.optional_string("normalization")) {
        const std::string n = lowercase(*norm);
        if (n == "layernorm") {
            m.normalization = Normalization::LayerNorm;
        } else if (n == "rmsnorm") {
            m.normalization = Normalization::RmsNorm;
        } else {
            r.error("normalization", "must be \"layernorm\" or \"rmsnorm\", not \"" + json_fields::bounded(*norm) + "\"");
        }
    }
    m.head_dim_override = r.optional_int("head_dim", 1, 1 << 16).value_or(0);
    m.attention = m.kv_heads > 0 && m.kv_heads < m.heads ? AttentionKind::Gqa : AttentionKind::Mha;
    if (const auto att = r.optional_string("attention")) {
        const std::string a = lowercase(*att);
        if (a == "mha") {
            m.attention = AttentionKind::Mha;
            if (m.kv_heads > 0 && m.kv_heads != m.heads) {
                r.error("kv_heads", "must equal heads with \"attention\": \"mha\" (use \"gqa\" for fewer key/value heads)");
            }
        } else if (a == "gqa") {
            m.attention = AttentionKind::Gqa;
        } else if (a == "mla") {
            m.attention = AttentionKind::Mla;
        } else {
            r.error("attention", "must be \"mha\", \"gqa\" or \"mla\", not \"" + json_fields::bounded(*att) + "\"");
        }
    } else if (r.has("mla")) {
        m.attention = AttentionKind::Mla;
    }
    if (r.has("mla")) {
        if (m.attention != AttentionKind::Mla) {
            r.error("mla", "applies only with \"attention\": \"mla\"");
        }
        m.mla = read_mla(r.child("mla"));
    }
    if (m.attention == AttentionKind::Mla && m.kv_heads > 0) {
        r.error("kv_heads", "does not apply to \"mla\" (its keys and values come from the compressed latent)");
    }
    // Heads must split hidden evenly only where the head size is derived from it.
    if (m.attention != AttentionKind::Mla && m.head_dim_override == 0 && m.heads > 0 && m.hidden > 0 && m.hidden % m.heads != 0) {
        r.error("heads", "must divide hidden (" + std::to_string(m.hidden) + " is not a multiple of " + std::to_string(m.heads) +
                             "); give \"head_dim\" when heads x head_dim differs from hidden");
    }
    if (m.kv_heads > 0 && m.heads > 0 && m.heads % m.kv_heads != 0) {
        r.error("kv_heads", "must divide heads (" + std::to_string(m.heads) + " is not a multiple of " + std::to_string(m.kv_heads) + ")");
    }
    m.sliding_window = r.optional_int("sliding_window", 1, 1 << 24).value_or(0);
    m.full_attention_every = r.optional_int("full_attention_every", 1, 100000).value_or(0);
    if (m.full_attention_every > 0 && m.sliding_window == 0) {
        r.error("full_attention_every", "needs \"sliding_window\" (without a window every layer attends to all tokens)");
    }
    if (m.sliding_window > 0 && m.attention == AttentionKind::Mla) {
        r.error("sliding_window", "is not supported with \"mla\" attention");
    }
    m.qk_norm = r.optional_bool("qk_norm").value_or(false);
    m.qkv_bias = r.optional_bool("qkv_bias").value_or(false);
    m.linear_bias = r.optional_bool("linear_bias").value_or(false);
    m.glu_clamp = r.optional_number("glu_clamp", 1e-6, 1e6).value_or(0);
    if (m.glu_clamp > 0 && m.activation != FfnActivation::SwiGlu) {
        r.error("glu_clamp", "needs a gated activation (\"activation\": \"swiglu\"): it clamps the gate and linear halves");
    }
    m.mtp_layers = r.optional_int("mtp_layers", 0, 64).value_or(0);
    if (r.has("moe")) {
        m.moe = read_moe(r.child("moe"), m.layers, m.effective_ffn_hidden());
        if (m.hidden > 0 && m.moe.latent_size > m.hidden) {
            r.error("moe.latent_size", "must not exceed hidden (" + std::to_string(m.hidden) + "): the latent is a down-projection");
        }
    }
    m.layer_pattern = r.optional_string("layer_pattern").value_or("");
    if (!m.layer_pattern.empty()) {
        if (static_cast<int>(m.layer_pattern.size()) != m.layers) {
            r.error("layer_pattern", "has " + std::to_string(m.layer_pattern.size()) + " letters but the model has " + std::to_string(m.layers) +
                                         " layers (one letter per layer)");
        }
        const std::size_t bad = m.layer_pattern.find_first_not_of("M*-E");
        if (bad != std::string::npos) {
            r.error("layer_pattern", "has the unknown letter '" + json_fields::bounded(std::string(1, m.layer_pattern[bad])) + "' at position " +
                                         std::to_string(bad) + " (M Mamba-2, * attention, - dense FFN, E MoE FFN)");
        }
        if (m.layer_pattern.find('E') != std::string::npos && !m.moe.enabled()) {
            r.error("layer_pattern", "has MoE layers ('E') but the model has no \"moe\" block");
        }
        if (m.moe.enabled() && m.layer_pattern.find('E') == std::string::npos) {
            r.error("moe", "is given but \"layer_pattern\" has no MoE layer ('E')");
        }
        if (m.moe.first_dense_layers > 0 || m.moe.layer_freq > 1) {
            r.error("moe", "\"first_dense_layers\" and \"layer_freq\" do not apply with a \"layer_pattern\" (the pattern says which layers are MoE)");
        }
        if (m.layer_pattern.find('*') == std::string::npos && m.sliding_window > 0) {
            r.error("sliding_window", "applies to attention layers, and \"layer_pattern\" has none");
        }
    }
    if (r.has("mamba")) {
        if (m.layer_pattern.find('M') == std::string::npos) {
            r.error("mamba", "applies only with a \"layer_pattern\" that has Mamba-2 layers ('M')");
        }
        m.mamba = read_mamba(r.child("mamba"));
    }
    if (m.layer_pattern.find('M') != std::string::npos) {
        const int heads = m.mamba.heads > 0 ? m.mamba.heads : 2 * m.hidden / m.mamba.head_dim;
        if (heads <= 0) {
            r.error("mamba", "gives no heads (2 x hidden / head_dim is below 1); set \"heads\"");
        } else if (heads % m.mamba.groups != 0) {
            r.error("mamba", "heads (" + std::to_string(heads) + ") must be a multiple of groups (" + std::to_string(m.mamba.groups) + ")");
        }
    }
    return m;
}

} // namespace vtrain
