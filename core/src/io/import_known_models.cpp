// SPDX-License-Identifier: MIT
// Models a torchtitan flavor or a Megatron-Bridge recipe names without stating their shape. Each is a
// Hugging Face config.json of the model's shape keys (written for vTrain from the values of the public
// config.json files of meta-llama/Meta-Llama-3-8B, meta-llama/Meta-Llama-3-70B, meta-llama/Llama-3.1-405B,
// Qwen/Qwen3-30B-A3B, Qwen/Qwen3-235B-A22B, deepseek-ai/DeepSeek-V3, mistralai/Mixtral-8x22B-v0.1 and
// openai/gpt-oss-120b), read by the same reader as a user's config.json.
#include <cctype>

#include "io/import_draft.h"

namespace vtrain::import_detail {

const std::vector<KnownModel>& known_models()
{
    static const std::vector<KnownModel> models{
        {"llama3-8b", R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "intermediate_size": 14336,
            "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
            "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"llama3-70b", R"({"model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192, "intermediate_size": 28672,
            "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
            "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"llama3.1-405b", R"({"model_type": "llama", "num_hidden_layers": 126, "hidden_size": 16384, "intermediate_size": 53248,
            "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192},
            "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"qwen3-30b-a3b", R"({"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048, "intermediate_size": 6144,
            "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
            "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
            "hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"qwen3-235b-a22b", R"({"model_type": "qwen3_moe", "num_hidden_layers": 94, "hidden_size": 4096, "intermediate_size": 12288,
            "moe_intermediate_size": 1536, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
            "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
            "hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"deepseek-v3", R"({"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168, "intermediate_size": 18432,
            "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
            "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_attention_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_nextn_predict_layers": 1, "vocab_size": 129280,
            "max_position_embeddings": 163840, "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
            "hidden_act": "silu", "rms_norm_eps": 1e-6, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
        {"mixtral-8x22b", R"({"model_type": "mixtral", "num_hidden_layers": 56, "hidden_size": 6144, "intermediate_size": 16384,
            "num_local_experts": 8, "num_experts_per_tok": 2, "num_attention_heads": 48, "num_key_value_heads": 8, "vocab_size": 32768,
            "max_position_embeddings": 65536, "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": false,
            "torch_dtype": "bfloat16"})"},
        {"gpt-oss-120b", R"({"model_type": "gpt_oss", "num_hidden_layers": 36, "hidden_size": 2880, "intermediate_size": 2880,
            "num_local_experts": 128, "num_experts_per_tok": 4, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
            "attention_bias": true, "sliding_window": 128, "swiglu_limit": 7.0, "vocab_size": 201088, "initial_context_length": 4096,
            "max_position_embeddings": 131072, "layer_types": ["sliding_attention", "full_attention"], "hidden_act": "silu",
            "rms_norm_eps": 1e-5, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})"},
    };
    return models;
}

namespace {

const KnownModel* by_id(const char* id)
{
    for (const KnownModel& m : known_models()) {
        if (std::string(m.id) == id) {
            return &m;
        }
    }
    return nullptr;
}

std::string lower(std::string s)
{
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

} // namespace

const KnownModel* known_model_for_torchtitan(const std::string& name, const std::string& flavor)
{
    // torchtitan's flavors (torchtitan/models/llama3/__init__.py, models/deepseek_v3/__init__.py).
    const std::string n = lower(name);
    const std::string f = lower(flavor);
    if (n == "llama3" || n == "llama3_1" || n == "llama3.1") {
        if (f == "8b") {
            return by_id("llama3-8b");
        }
        if (f == "70b") {
            return by_id("llama3-70b");
        }
        if (f == "405b") {
            return by_id("llama3.1-405b");
        }
    }
    if (n == "deepseek_v3" && f == "671b") {
        return by_id("deepseek-v3");
    }
    return nullptr;
}

const KnownModel* known_model_for_recipe(const std::string& recipe)
{
    // Megatron-Bridge recipe functions are named <model>_<task>_..._config (llama3_8b_pretrain_config,
    // qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config); a module path may come before the name.
    static const std::pair<const char*, const char*> stems[] = {
        {"llama3_8b", "llama3-8b"},         {"llama3_70b", "llama3-70b"},       {"llama31_405b", "llama3.1-405b"},
        {"llama3_1_405b", "llama3.1-405b"}, {"qwen3_30b_a3b", "qwen3-30b-a3b"}, {"qwen3_235b_a22b", "qwen3-235b-a22b"},
        {"deepseek_v3", "deepseek-v3"},     {"mixtral_8x22b", "mixtral-8x22b"}, {"gpt_oss_120b", "gpt-oss-120b"},
    };
    std::string r = lower(recipe);
    const std::size_t slash = r.find_last_of("./");
    if (slash != std::string::npos) {
        r = r.substr(slash + 1);
    }
    for (const auto& [stem, id] : stems) {
        const std::string s = stem;
        if (r.rfind(s, 0) == 0 && (r.size() == s.size() || r[s.size()] == '_')) {
            return by_id(id);
        }
    }
    return nullptr;
}

} // namespace vtrain::import_detail
