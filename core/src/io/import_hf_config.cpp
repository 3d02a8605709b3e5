// SPDX-License-Identifier: MIT
// Hugging Face config.json -> model. Key names follow transformers' configuration classes (LlamaConfig,
// MistralConfig, MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config, Qwen3MoeConfig, DeepseekV3Config,
// GptOssConfig, Gemma/Gemma2/Gemma3TextConfig, GPT2Config) as of transformers 4.5x (2025). The mapping
// table is docs/import.md's.
#include <algorithm>
#include <cmath>
#include <set>

#include "io/import_readers.h"
#include "vtrain/json_fields.h"

namespace vtrain::import_detail {
namespace {

using nlohmann::json;

// Model families whose MLP is gated (SwiGLU, or GeGLU for Gemma) and normalised with RMSNorm.
const std::set<std::string>& gated_families()
{
    static const std::set<std::string> s{"llama",       "mistral",     "mixtral",     "qwen2",     "qwen2_moe", "qwen3",
                                         "qwen3_moe",   "deepseek_v2", "deepseek_v3", "gemma",     "gemma2",    "gemma3",
                                         "gemma3_text", "gpt_oss",     "phi3",        "olmo",      "olmo2",     "granite",
                                         "granitemoe",  "llama4_text", "smollm3",     "ministral", "exaone"};
    return s;
}

// transformers' default of tie_word_embeddings per family where the file leaves it out.
std::optional<bool> tied_default(const std::string& family)
{
    static const std::set<std::string> untied{"llama",       "mistral",     "mixtral", "qwen2", "qwen2_moe", "qwen3",    "qwen3_moe",
                                              "deepseek_v2", "deepseek_v3", "gpt_oss", "phi3",  "olmo2",     "gpt_neox", "llama4_text"};
    static const std::set<std::string> tied{"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "smollm3"};
    if (untied.count(family) != 0) {
        return false;
    }
    if (tied.count(family) != 0) {
        return true;
    }
    return std::nullopt;
}

// Keys that have no bearing on time, memory or cost: token ids, initialisation, dropout, positions,
// router loss coefficients, generation settings, bookkeeping.
const std::set<std::string>& no_bearing_keys()
{
    static const std::set<std::string> s{"bos_token_id",
                                         "eos_token_id",
                                         "pad_token_id",
                                         "sep_token_id",
                                         "decoder_start_token_id",
                                         "initializer_range",
                                         "initializer_factor",
                                         "rope_theta",
                                         "rope_scaling",
                                         "rope_parameters",
                                         "rope_interleave",
                                         "rope_local_base_freq",
                                         "partial_rotary_factor",
                                         "rotary_pct",
                                         "rotary_emb_base",
                                         "use_cache",
                                         "attention_dropout",
                                         "hidden_dropout",
                                         "dropout",
                                         "embd_pdrop",
                                         "resid_pdrop",
                                         "attn_pdrop",
                                         "hidden_dropout_prob",
                                         "attention_probs_dropout_prob",
                                         "classifier_dropout",
                                         "transformers_version",
                                         "architectures",
                                         "auto_map",
                                         "pretraining_tp",
                                         "rms_norm_eps",
                                         "layer_norm_eps",
                                         "layer_norm_epsilon",
                                         "norm_epsilon",
                                         "use_bfloat16",
                                         "output_attentions",
                                         "output_hidden_states",
                                         "return_dict",
                                         "is_decoder",
                                         "router_aux_loss_coef",
                                         "output_router_logits",
                                         "norm_topk_prob",
                                         "scoring_func",
                                         "topk_method",
                                         "routed_scaling_factor",
                                         "aux_loss_alpha",
                                         "seq_aux",
                                         "ep_size",
                                         "router_jitter_noise",
                                         "query_pre_attn_scalar",
                                         "cache_implementation",
                                         "tokenizer_class",
                                         "id2label",
                                         "label2id",
                                         "problem_type",
                                         "finetuning_task",
                                         "chunk_size_feed_forward",
                                         "add_cross_attention",
                                         "max_length",
                                         "temperature",
                                         "top_k",
                                         "top_p",
                                         "repetition_penalty",
                                         "use_parallel_residual",
                                         "scale_attn_weights",
                                         "reorder_and_upcast_attn",
                                         "scale_attn_by_inverse_layer_idx",
                                         "summary_type",
                                         "summary_use_proj",
                                         "summary_activation",
                                         "summary_proj_to_labels",
                                         "summary_first_dropout",
                                         "n_ctx",
                                         "mlp_only_layers",
                                         "_name_or_path",
                                         "name_or_path",
                                         "max_window_layers",
                                         "moe_layer_freq",
                                         "decoder_sparse_step",
                                         "qk_nope_head_dim",
                                         "qk_rope_head_dim",
                                         "v_head_dim",
                                         "q_lora_rank",
                                         "kv_lora_rank",
                                         "num_key_value_heads",
                                         "head_dim",
                                         "use_sliding_window",
                                         "sliding_window",
                                         "torch_dtype",
                                         "dtype",
                                         "model_type",
                                         "experts_per_token"};
    return s;
}

class Config {
public:
    Config(const json& j, Draft& draft, std::string prefix) : m_j(j), m_d(draft), m_prefix(std::move(prefix)) {}

    std::string key(const std::string& k) const { return m_prefix + k; }
    bool present(const char* k) const { return m_j.contains(k) && !m_j[k].is_null(); }
    // The value of `k` (nullptr when absent or null); marks it read.
    const json* take(const char* k)
    {
        if (!m_j.contains(k)) {
            return nullptr;
        }
        m_used.insert(k);
        const json& v = m_j[k];
        return v.is_null() ? nullptr : &v;
    }
    // The first of `keys` present, with its name; every one of them counts as read (aliases).
    std::pair<const json*, std::string> first(std::initializer_list<const char*> keys)
    {
        std::pair<const json*, std::string> found{nullptr, *keys.begin()};
        for (const char* k : keys) {
            if (const json* v = take(k); v != nullptr && found.first == nullptr) {
                found = {v, k};
            }
        }
        return found;
    }
    std::optional<long long> integer(const json* v, const std::string& k, long long min = 0, long long max = 1LL << 40)
    {
        if (v == nullptr) {
            return std::nullopt;
        }
        const auto n = whole(*v, min, max);
        if (!n) {
            m_d.error(key(k),
                      "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not " + json_fields::excerpt(*v));
        }
        return n;
    }
    std::optional<bool> boolean(const char* k)
    {
        const json* v = take(k);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_boolean()) {
            m_d.error(key(k), "must be true or false, not " + json_fields::excerpt(*v));
            return std::nullopt;
        }
        return v->get<bool>();
    }
    std::optional<std::string> string(const char* k)
    {
        const json* v = take(k);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_string()) {
            m_d.error(key(k), "must be a string, not " + json_fields::excerpt(*v));
            return std::nullopt;
        }
        return v->get<std::string>();
    }
    // Copies a shape number into `field`, range-checked later by the scenario reader (errors name `k`).
    std::optional<long long> shape(std::initializer_list<const char*> keys, const std::string& field)
    {
        const auto [v, k] = first(keys);
        m_d.source[field] = key(k);
        if (v == nullptr) {
            return std::nullopt;
        }
        if (!v->is_number()) {
            m_d.error(key(k), "must be a number, not " + json_fields::excerpt(*v));
            return std::nullopt;
        }
        m_d.set(field, *v, key(k));
        return whole(*v, 0, 1LL << 40);
    }
    // Every key not read: the ones of no bearing are listed as ignored, the rest as unknown.
    void report_rest()
    {
        for (auto it = m_j.begin(); it != m_j.end(); ++it) {
            if (m_used.count(it.key()) != 0) {
                continue;
            }
            if (no_bearing_keys().count(it.key()) != 0) {
                m_d.ignore(key(it.key()));
            } else {
                m_d.unknown_key(key(it.key()));
            }
        }
    }
    const json& json_object() const { return m_j; }

private:
    const json& m_j;
    Draft& m_d;
    std::string m_prefix;
    std::set<std::string> m_used;
};

std::string lower(std::string s)
{
    for (char& c : s) {
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    return s;
}

// The model's activation: a gated MLP is simulated as SwiGLU (three matrices), GELU / ReLU otherwise.
void read_activation(Config& c, Draft& d, const std::string& family)
{
    const auto [v, k] = c.first({"hidden_act", "hidden_activation", "activation_function"});
    std::string act = v != nullptr && v->is_string() ? lower(v->get<std::string>()) : std::string();
    if (v != nullptr && !v->is_string()) {
        d.error(c.key(k), "must be a string, not " + json_fields::excerpt(*v));
        return;
    }
    const bool gated_family = gated_families().count(family) != 0;
    const bool silu = act == "silu" || act == "swish" || act == "swiglu";
    const bool gelu = act.rfind("gelu", 0) == 0;
    if (gated_family || silu) {
        d.set("model.activation", "swiglu", c.key(k));
        d.set("model.normalization", "rmsnorm", c.key(k));
        if (gelu) {
            d.note(c.key(k), "\"" + clipped(act) + "\" in a gated MLP (GeGLU): simulated as swiglu (the same three matrices and FLOPs)");
        } else if (!act.empty() && !silu) {
            d.note(c.key(k), "\"" + clipped(act) + "\" in a gated MLP: simulated as swiglu");
        } else if (act.empty()) {
            d.default_chosen("model.activation: swiglu (the " + clipped(family) + " family's gated MLP; the file names no activation)");
        }
        return;
    }
    if (gelu || act.empty()) {
        d.set("model.activation", "gelu", c.key(k));
        d.set("model.normalization", c.present("rms_norm_eps") ? "rmsnorm" : "layernorm", c.key(k));
        if (act.empty()) {
            d.note(c.key(k), "no activation given: GELU (a GPT-style MLP of two matrices) assumed");
        } else if (act != "gelu" && act != "gelu_new" && act != "gelu_pytorch_tanh" && act != "gelu_fast") {
            d.note(c.key(k), "\"" + clipped(act) + "\": simulated as gelu");
        }
        return;
    }
    if (act == "relu") {
        d.set("model.activation", "relu", c.key(k));
        return;
    }
    if (act == "relu2" || act == "squared_relu") {
        d.set("model.activation", "squared_relu", c.key(k));
        return;
    }
    d.set("model.activation", "gelu", c.key(k));
    d.note(c.key(k), "\"" + clipped(act) + "\" is not an activation vTrain simulates: gelu assumed (two matrices)");
}

// Windowed attention: every layer (Mistral), every other (Gemma 2, GPT-OSS), five in six (Gemma 3), or
// the list of layer_types. The simulator knows "every n-th attention layer is full".
void read_window(Config& c, Draft& d, const std::string& family, std::optional<long long> layers)
{
    const json* window = c.take("sliding_window");
    const auto use = c.boolean("use_sliding_window");
    const json* types = c.take("layer_types");
    const json* pattern = c.take("sliding_window_pattern");
    const json* max_window_layers = c.take("max_window_layers");
    if (window == nullptr) {
        if (types != nullptr || pattern != nullptr) {
            d.note(c.key(types != nullptr ? "layer_types" : "sliding_window_pattern"), "no sliding_window given: every layer attends to all tokens");
        }
        return;
    }
    const auto w = c.integer(window, "sliding_window", 1, 1LL << 30);
    if (!w) {
        return;
    }
    if (use && !*use) {
        d.note(c.key("sliding_window"), "use_sliding_window is false: every layer attends to all tokens (the window is not used)");
        return;
    }
    if (use && *use && max_window_layers != nullptr) {
        d.note(c.key("max_window_layers"), "Qwen's split of windowed and full layers is not simulated: every layer is windowed");
    }
    d.set("model.sliding_window", *w, c.key("sliding_window"));
    if (types != nullptr) {
        if (!types->is_array() || types->empty() || types->size() > 100000) {
            d.error(c.key("layer_types"), "must be a list of \"sliding_attention\" and \"full_attention\"");
            return;
        }
        std::vector<bool> full;
        for (const json& t : *types) {
            const std::string s = t.is_string() ? t.get<std::string>() : std::string();
            if (s != "sliding_attention" && s != "full_attention") {
                d.note(c.key("layer_types"),
                       "\"" + clipped(t.is_string() ? s : t.dump()) + "\" is not a layer type vTrain simulates: taken as full attention");
            }
            full.push_back(s != "sliding_attention");
        }
        if (layers && static_cast<long long>(full.size()) != *layers && full.size() > 2) {
            d.note(c.key("layer_types"),
                   "lists " + std::to_string(full.size()) + " layers for a model of " + std::to_string(*layers) + ": its pattern is repeated");
        }
        const auto count = static_cast<std::size_t>(std::count(full.begin(), full.end(), true));
        if (count == 0) {
            return; // every layer windowed
        }
        if (count == full.size()) {
            d.erase("model.sliding_window");
            return;
        }
        const std::size_t period = static_cast<std::size_t>(std::find(full.begin(), full.end(), true) - full.begin()) + 1;
        bool regular = true;
        for (std::size_t i = 0; i < full.size(); ++i) {
            regular = regular && full[i] == (i % period == period - 1);
        }
        d.set("model.full_attention_every", static_cast<long long>(period), c.key("layer_types"));
        if (!regular) {
            d.note(c.key("layer_types"), "is not one full layer after every " + std::to_string(period - 1) + " windowed ones: simulated as every " +
                                             std::to_string(period) + "th layer full");
        }
        return;
    }
    if (pattern != nullptr) {
        if (const auto every = c.integer(pattern, "sliding_window_pattern", 1, 100000)) {
            if (*every > 1) {
                d.set("model.full_attention_every", *every, c.key("sliding_window_pattern"));
            } else {
                d.erase("model.sliding_window");
            }
        }
        return;
    }
    if (family == "gemma2") {
        // Gemma 2 alternates windowed (even) and full (odd) layers (transformers modeling_gemma2.py).
        d.set("model.full_attention_every", 2, c.key("sliding_window"));
    }
}

void read_moe(Config& c, Draft& d, std::optional<long long> ffn)
{
    const auto [experts_v, experts_k] = c.first({"num_local_experts", "num_experts", "n_routed_experts"});
    const auto [topk_v, topk_k] = c.first({"num_experts_per_tok", "experts_per_token", "moe_topk"});
    const json* expert_width = c.take("moe_intermediate_size");
    const json* shared = c.take("n_shared_experts");
    const json* shared_width = c.take("shared_expert_intermediate_size");
    const json* first_dense = c.take("first_k_dense_replace");
    const json* freq = c.take("moe_layer_freq");
    const json* step = c.take("decoder_sparse_step");
    const json* dense_only = c.take("mlp_only_layers");
    const auto experts = c.integer(experts_v, experts_k, 0, 1 << 20);
    if (!experts || *experts == 0) {
        if (topk_v != nullptr || expert_width != nullptr) {
            d.note(c.key(topk_v != nullptr ? topk_k : "moe_intermediate_size"), "no experts given (num_experts): a dense model");
        }
        return;
    }
    d.set("model.moe.experts", *experts, c.key(experts_k));
    if (topk_v != nullptr) {
        d.set("model.moe.top_k", *topk_v, c.key(topk_k));
    } else {
        d.source["model.moe.top_k"] = c.key(topk_k);
        d.note(c.key(topk_k), "not given: each token goes to 1 expert");
    }
    // Mixtral and GPT-OSS give the expert's width as intermediate_size; DeepSeek and Qwen give a dense
    // intermediate_size and moe_intermediate_size for the experts.
    if (expert_width != nullptr) {
        d.set("model.moe.expert_ffn_hidden", *expert_width, c.key("moe_intermediate_size"));
    } else if (ffn) {
        d.set("model.moe.expert_ffn_hidden", *ffn, c.key("intermediate_size"));
    }
    if (shared != nullptr) {
        if (const auto s = c.integer(shared, "n_shared_experts", 0, 1024); s && *s > 0) {
            d.set("model.moe.shared_experts", *s, c.key("n_shared_experts"));
        }
    }
    if (shared_width != nullptr) {
        if (const auto s = c.integer(shared_width, "shared_expert_intermediate_size", 0, 1 << 24); s && *s > 0) {
            d.set("model.moe.shared_expert_ffn_hidden", *s, c.key("shared_expert_intermediate_size"));
            d.set("model.moe.shared_experts", 1, c.key("shared_expert_intermediate_size"));
        }
    }
    long long dense_prefix = 0;
    if (first_dense != nullptr) {
        if (const auto k = c.integer(first_dense, "first_k_dense_replace", 0, 100000)) {
            dense_prefix = *k;
        }
    }
    if (dense_only != nullptr) {
        // Qwen's mlp_only_layers: dense layers by index. A leading run is first_dense_layers; others are not modeled.
        if (!dense_only->is_array()) {
            d.error(c.key("mlp_only_layers"), "must be a list of layer indices");
        } else if (!dense_only->empty()) {
            long long run = 0;
            bool prefix = true;
            for (std::size_t i = 0; i < dense_only->size() && i < 100000; ++i) {
                prefix = prefix && whole((*dense_only)[i], 0, 100000) == static_cast<long long>(i);
                run += prefix ? 1 : 0;
            }
            dense_prefix = std::max(dense_prefix, run);
            if (!prefix) {
                d.note(c.key("mlp_only_layers"),
                       "dense layers other than the first ones are not simulated: only the leading " + std::to_string(run) + " are dense");
            }
        }
    }
    long long every = 1;
    if (freq != nullptr) {
        if (const auto f = c.integer(freq, "moe_layer_freq", 1, 100000)) {
            every = *f;
        }
    }
    if (step != nullptr) {
        // Qwen-MoE: layer i is MoE when (i + 1) % step == 0, i.e. every step-th from layer step - 1.
        if (const auto s = c.integer(step, "decoder_sparse_step", 1, 100000); s && *s > 1) {
            every = *s;
            dense_prefix = std::max(dense_prefix, *s - 1);
        }
    }
    if (dense_prefix > 0) {
        d.set("model.moe.first_dense_layers", dense_prefix, c.key(first_dense != nullptr ? "first_k_dense_replace" : "mlp_only_layers"));
    }
    if (every > 1) {
        d.set("model.moe.layer_freq", every, c.key(step != nullptr ? "decoder_sparse_step" : "moe_layer_freq"));
    }
    if (const json* groups = c.take("n_group"); groups != nullptr && whole(*groups, 2, 1 << 20)) {
        d.note(c.key("n_group"), "group-limited routing (n_group, topk_group) is not simulated: a token may go to any expert");
        c.take("topk_group");
    } else {
        c.take("topk_group");
    }
}

void read_mla(Config& c, Draft& d)
{
    if (!c.present("kv_lora_rank")) {
        return;
    }
    d.set("model.attention", "mla", c.key("kv_lora_rank"));
    struct Part {
        const char* key;
        const char* field;
    };
    for (const Part& p : {Part{"kv_lora_rank", "model.mla.kv_lora_rank"}, Part{"qk_nope_head_dim", "model.mla.qk_head_dim"},
                          Part{"qk_rope_head_dim", "model.mla.qk_rope_head_dim"}, Part{"v_head_dim", "model.mla.v_head_dim"}}) {
        if (const json* v = c.take(p.key)) {
            d.set(p.field, *v, c.key(p.key));
        } else {
            d.note(c.key(p.key), "not given: DeepSeek-V3's value assumed");
        }
    }
    // q_lora_rank null: queries are not compressed (DeepSeek-V2-Lite).
    if (c.json_object().contains("q_lora_rank")) {
        const json* q = c.take("q_lora_rank");
        d.set("model.mla.q_lora_rank", q == nullptr ? json(0) : *q, c.key("q_lora_rank"));
    }
    d.erase("model.kv_heads");
    d.erase("model.head_dim");
}

// Pre-training sequence length: the context before long-context extension, where the file says it.
void read_sequence(Config& c, Draft& d)
{
    const json* initial = c.take("initial_context_length");
    const json* rope = c.take("rope_scaling");
    const auto [max_v, max_k] = c.first({"max_position_embeddings", "n_positions", "seq_length", "max_sequence_length"});
    if (initial != nullptr) {
        d.set("model.seq_len", *initial, c.key("initial_context_length"));
        d.default_chosen("model.seq_len: " + json_fields::excerpt(*initial) + " tokens (initial_context_length, the pre-training context)");
        return;
    }
    if (rope != nullptr && rope->is_object() && rope->contains("original_max_position_embeddings") &&
        whole((*rope)["original_max_position_embeddings"], 1, 1 << 24)) {
        const json& original = (*rope)["original_max_position_embeddings"];
        d.set("model.seq_len", original, c.key("rope_scaling.original_max_position_embeddings"));
        d.default_chosen("model.seq_len: " + original.dump() + " tokens (rope_scaling.original_max_position_embeddings: the context before " +
                         "long-context extension)");
        return;
    }
    const auto max_positions = c.integer(max_v, max_k, 1, 1LL << 40);
    if (max_positions && *max_positions <= 8192) {
        d.set("model.seq_len", *max_positions, c.key(max_k));
        d.default_chosen("model.seq_len: " + std::to_string(*max_positions) + " tokens (" + max_k + ")");
        return;
    }
    d.set("model.seq_len", 4096, c.key(max_k));
    d.default_chosen("model.seq_len: 4096 tokens (" +
                     (max_positions ? std::string(max_k) + " " + std::to_string(*max_positions) + " is the context after long-context extension; "
                                    : std::string("no context length given; ")) +
                     "4096 is today's usual pre-training sequence: set model.seq_len for yours)");
}

void read_precision(Config& c, Draft& d)
{
    const auto [v, k] = c.first({"torch_dtype", "dtype"});
    const std::string dtype = v != nullptr && v->is_string() ? lower(v->get<std::string>()) : std::string();
    if (dtype == "bfloat16" || dtype == "bf16") {
        d.set("training.precision", "bf16", c.key(k));
        d.default_chosen("training.precision: bf16 (the checkpoint's " + std::string(k) + ")");
    } else if (dtype == "float16" || dtype == "fp16" || dtype == "half") {
        d.set("training.precision", "fp16", c.key(k));
        d.default_chosen("training.precision: fp16 (the checkpoint's " + std::string(k) + ")");
    } else {
        d.set("training.precision", "bf16", c.key(k));
        d.default_chosen("training.precision: bf16 (" + (dtype.empty() ? std::string("no dtype given") : "the checkpoint is " + clipped(dtype)) +
                         "; today's models train in bf16)");
    }
    if (const json* q = c.take("quantization_config")) {
        const std::string method = q->is_object() && q->contains("quant_method") && (*q)["quant_method"].is_string()
                                       ? (*q)["quant_method"].get<std::string>()
                                       : std::string("?");
        d.note(c.key("quantization_config"), "the checkpoint's weights are stored quantized (" + clipped(method) +
                                                 "): training is simulated in training.precision, not in the storage format");
    }
}

} // namespace

void read_hf_json(const json& config, Draft& d, bool model_only)
{
    if (!config.is_object()) {
        d.error("", "a Hugging Face config.json must be a JSON object, not " + json_fields::excerpt(config));
        return;
    }
    if (config.contains("model") && config.contains("cluster")) {
        d.error("", "is a vTrain scenario already (it has \"model\" and \"cluster\"): open it with vtrain simulate or explore");
        return;
    }
    const json* body = &config;
    std::string prefix;
    bool nested = false;
    if (!config.contains("num_hidden_layers") && !config.contains("n_layer") && config.contains("text_config") && config["text_config"].is_object()) {
        body = &config["text_config"];
        prefix = "text_config.";
        nested = true;
    }
    Config c(*body, d, prefix);
    const std::string family = [&] {
        const json* t = c.take("model_type");
        if (t == nullptr && nested && config.contains("model_type") && config["model_type"].is_string()) {
            return lower(config["model_type"].get<std::string>());
        }
        return t != nullptr && t->is_string() ? lower(t->get<std::string>()) : std::string();
    }();
    if (!c.present("num_hidden_layers") && !c.present("n_layer") && !c.present("num_layers")) {
        d.error(c.key("num_hidden_layers"),
                "is missing: this is not a Hugging Face config.json of a decoder (no num_hidden_layers, n_layer or num_layers)");
        return;
    }
    const auto layers = c.shape({"num_hidden_layers", "n_layer", "num_layers"}, "model.layers");
    const auto hidden = c.shape({"hidden_size", "n_embd", "d_model"}, "model.hidden");
    const auto heads = c.shape({"num_attention_heads", "n_head"}, "model.heads");
    const auto ffn = c.shape({"intermediate_size", "n_inner", "ffn_dim"}, "model.ffn_hidden");
    c.shape({"vocab_size"}, "model.vocab");
    if (const json* kv = c.take("num_key_value_heads")) {
        const auto k = c.integer(kv, "num_key_value_heads", 1, 1 << 20);
        if (k && heads && *k != *heads) { // more key/value heads than heads: the scenario reader refuses it
            d.set("model.kv_heads", *k, c.key("num_key_value_heads"));
        }
    }
    if (const json* hd = c.take("head_dim")) {
        const auto h = c.integer(hd, "head_dim", 1, 1 << 20);
        if (h && hidden && heads && *heads > 0 && *h * *heads != *hidden) {
            d.set("model.head_dim", *h, c.key("head_dim"));
        }
    }
    read_activation(c, d, family);
    const auto tie = c.boolean("tie_word_embeddings");
    if (tie) {
        d.set("model.tied_embeddings", *tie, c.key("tie_word_embeddings"));
    } else if (const auto t = tied_default(family)) {
        d.set("model.tied_embeddings", *t, c.key("tie_word_embeddings"));
    } else {
        d.set("model.tied_embeddings", true, c.key("tie_word_embeddings"));
        d.note(c.key("tie_word_embeddings"), "not given: tied input and output embeddings assumed (transformers' default)");
    }
    // Biases: attention_bias (Llama, GPT-OSS) on the QKV (and output) projections; Qwen2 always has QKV
    // biases; GPT-OSS and mlp_bias put them on every linear layer.
    const auto attention_bias = c.boolean("attention_bias");
    const bool qwen2 = family == "qwen2" || family == "qwen2_moe";
    if ((attention_bias && *attention_bias) || qwen2) {
        d.set("model.qkv_bias", true, c.key(qwen2 && !attention_bias ? "model_type" : "attention_bias"));
    }
    const auto mlp_bias = c.boolean("mlp_bias");
    if ((family == "gpt_oss" && attention_bias && *attention_bias) || (mlp_bias && *mlp_bias)) {
        const json* activation = d.get("model.activation");
        if (activation != nullptr && *activation != "gelu") {
            d.set("model.linear_bias", true, c.key(family == "gpt_oss" ? "attention_bias" : "mlp_bias"));
        }
    }
    if (family == "qwen3" || family == "qwen3_moe" || family == "gemma3" || family == "gemma3_text" || family == "olmo2") {
        d.set("model.qk_norm", true, c.key("model_type"));
    }
    if (const auto qk = c.boolean("use_qk_norm"); qk && *qk) {
        d.set("model.qk_norm", true, c.key("use_qk_norm"));
    }
    if (const json* limit = c.take("swiglu_limit")) {
        if (limit->is_number() && limit->get<double>() > 0) {
            d.set("model.glu_clamp", *limit, c.key("swiglu_limit"));
        }
    }
    read_window(c, d, family, layers);
    read_moe(c, d, ffn);
    read_mla(c, d);
    if (const json* mtp = c.take("num_nextn_predict_layers")) {
        if (const auto n = c.integer(mtp, "num_nextn_predict_layers", 0, 64); n && *n > 0) {
            d.set("model.mtp_layers", *n, c.key("num_nextn_predict_layers"));
        }
    }
    for (const char* k : {"attn_logit_softcapping", "final_logit_softcapping"}) {
        if (c.take(k) != nullptr) {
            d.note(c.key(k), "soft-capping (a tanh on the attention scores or the output logits) is not simulated: its elementwise cost is left out");
        }
    }
    if (!model_only) {
        read_sequence(c, d);
        read_precision(c, d);
        const json* name = c.take("_name_or_path");
        if (name != nullptr && name->is_string() && !name->get<std::string>().empty()) {
            d.name = name->get<std::string>();
        } else if (!family.empty()) {
            d.name = family;
        }
    } else {
        for (const char* k : {"initial_context_length", "rope_scaling", "max_position_embeddings", "torch_dtype", "quantization_config"}) {
            c.take(k);
        }
    }
    if (nested) {
        d.note("text_config", "the language model's text_config is read; the rest of the file (vision or audio towers) is not simulated");
    }
    c.report_rest();
}

void read_hf_config(const std::string& text, Draft& d)
{
    const auto parsed = json_fields::parse_json_text(text);
    if (!parsed.ok()) {
        for (const Diagnostic& e : parsed.errors()) {
            d.error(e.field, e.message);
        }
        return;
    }
    read_hf_json(*parsed, d);
}

void apply_known_model(const KnownModel& known, const std::string& key, Draft& d)
{
    Draft model;
    read_hf_json(json::parse(known.config_json), model, true);
    d.model = model.model;
    for (const auto& entry : model.source) {
        d.source[entry.first] = key;
    }
}

} // namespace vtrain::import_detail
