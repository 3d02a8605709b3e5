// SPDX-License-Identifier: MIT
// Published model configurations for rows whose model dimensions the runs file leaves null (README
// "Model dimensions never appear in the benchmark tables: they come from public model configs"). A row
// is matched by its model_name (never its id or subset), and only when it carries no dimensions of its
// own; every value used is written into the row's notes with the file it comes from.
#include "validation/validation_detail.h"

namespace vtrain::validation_detail {

namespace {

// Nemotron 3 Super (120B-A12B, LatentMoE): NVIDIA-NeMo/Megatron-Bridge
// src/megatron/bridge/models/nemotronh/nemotron_h_provider.py @ 160ccccbb49d8eb37d05197a9fd4c4390eb9f88e
// (Nemotron3SuperProvider over NemotronHModelProvider: squared ReLU, RMSNorm, mamba_num_groups 8).
// Vocabulary: the recipe's tokenizer is Nemotron 3 Nano's (recipes/nemotronh/nemotron_3_super.py,
// tokenizer_model "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), 131,072 entries. MTP: the same recipe
// sets mtp_num_layers 2 with mtp_hybrid_override_pattern "*E" (an attention + MoE block per depth).
ModelSpec nemotron_3_super()
{
    ModelSpec m;
    m.name = "Nemotron 3 Super 120B-A12B";
    m.layers = 88;
    m.layer_pattern = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME";
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 2;
    m.attention = AttentionKind::Gqa;
    m.ffn_hidden = 2688;
    m.vocab = 131072;
    m.activation = FfnActivation::SquaredRelu;
    m.normalization = Normalization::RmsNorm;
    m.tied_embeddings = false;
    m.mamba.heads = 128;
    m.mamba.head_dim = 64;
    m.mamba.state_dim = 128;
    m.mamba.groups = 8;
    m.moe.experts = 512;
    m.moe.top_k = 22;
    m.moe.expert_ffn_hidden = 2688;
    m.moe.shared_experts = 1;
    m.moe.shared_expert_ffn_hidden = 5376;
    m.moe.latent_size = 1024;
    m.mtp_layers = 2;
    return m;
}

} // namespace

bool published_model_config(const RunRow& r, ModelSpec& m, Notes& notes)
{
    if (r.num_layers || r.hidden_size || r.num_attention_heads || !r.model_name) {
        return false; // the row's own dimensions are the authority
    }
    const std::string name = lowercase(*r.model_name);
    if (name == "nemotron_3_super" || name == "nemotron 3 super") {
        m = nemotron_3_super();
        notes.push_back("model dimensions not in the row: Nemotron 3 Super from Megatron-Bridge nemotron_h_provider.py @ 160cccc "
                        "(Nemotron3SuperProvider: 88 layers, hidden 4096, 32 heads / 2 KV groups, 512 experts top-22 of width 2688, "
                        "shared 5376, moe_latent_size 1024, Mamba-2 128 heads x 64)");
        notes.push_back("vocabulary 131072 (the recipe's tokenizer, Nemotron 3 Nano's); MTP 2 blocks (recipe mtp_num_layers 2, \"*E\")");
        return true;
    }
    return false;
}

bool is_deepseek_v3(const RunRow& r)
{
    // "DeepSeek-V3 (671B total, 37B activated)", "DeepSeekV3", "DeepSeekV3 (dropless)", ...
    return contains(r.model_name, "deepseek-v3") || contains(r.model_name, "deepseekv3") || contains(r.model_name, "deepseek v3");
}

bool is_qwen3_moe(const RunRow& r)
{
    // "Qwen3_235B_a22B", "Qwen3_30B_a3B (tokendrop)", ...: the two Qwen3 MoE sizes (not Qwen3-Next, a hybrid).
    const std::string name = lowercase(r.model_name.value_or(""));
    auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
    return has("qwen3") && !has("next") && ((has("235b") && has("a22b")) || (has("30b") && has("a3b")));
}

int published_mtp_layers(const RunRow& r, const ModelSpec& m, Notes& notes)
{
    if (contains(r.model_name, "w/o mtp") || contains(r.model_name, "no mtp") || contains(r.model_name, "without mtp")) {
        notes.push_back("model name says no MTP: no multi-token-prediction module");
        return 0;
    }
    if (contains(r.model_name, "w/ mtp") || contains(r.model_name, "with mtp")) {
        notes.push_back("model name says MTP: one multi-token-prediction module");
        return 1;
    }
    if (is_deepseek_v3(r) && m.moe.enabled()) {
        // DeepSeek-V3 report Sec. 2.2 and 4.2 ("we set the MTP depth D to 1"); its Hugging Face config
        // num_nextn_predict_layers 1; Megatron-Bridge recipes/deepseek/deepseek_v3.py (_deepseek_v3_common:
        // model_cfg.mtp_num_layers = 1, every pipeline layout ending in "mtp", "loss"), which the
        // performance scripts (scripts/performance/configs/deepseek) build on without changing it.
        notes.push_back("multi-token prediction not in a structured key: 1 module (DeepSeek-V3 report Sec. 4.2, MTP depth 1; "
                        "HF config num_nextn_predict_layers 1; Megatron-Bridge deepseek_v3.py mtp_num_layers 1)");
        return 1;
    }
    if (m.moe.enabled() && m.attention == AttentionKind::Mla) {
        notes.push_back("multi-token prediction not stated in a structured key: none");
    }
    return 0;
}

void published_model_details(const RunRow& r, ModelSpec& m, Notes& notes)
{
    if (!r.model_name) {
        return;
    }
    const std::string name = lowercase(*r.model_name);
    gpt_oss_model_details(r, m, notes);
    if (is_deepseek_v3(r) && !r.ffn_activation && m.activation == FfnActivation::Gelu) {
        // DeepSeek-V3's dense and expert FFNs are gated SiLU (SwiGLU): deepseek-ai/DeepSeek-V3
        // inference/model.py @ 4c2fdb8, MLP and Expert forward = w2(silu(w1(x)) * w3(x)). A row whose
        // arch_family names no activation would otherwise get GPT's GELU, a third fewer expert FLOPs.
        m.activation = FfnActivation::SwiGlu;
        notes.push_back("ffn_activation not given: SwiGLU (DeepSeek-V3 inference/model.py: w2(silu(w1(x)) * w3(x)))");
    }
    if ((name == "nemotron_3_nano" || name == "nemotron 3 nano") && !m.layer_pattern.empty()) {
        // Nemotron 3 Nano 30B-A3B: NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/models/nemotronh/
        // nemotron_h_provider.py (Nemotron3NanoProvider: mamba_num_heads 64, mamba_head_dim 64,
        // mamba_state_dim 128; NemotronHModelProvider: mamba_num_groups 8). No structured key carries the
        // Mamba-2 dimensions; without them the default (2 x hidden / head_dim = 84 heads) is a third wider.
        m.mamba.heads = 64;
        m.mamba.head_dim = 64;
        m.mamba.state_dim = 128;
        m.mamba.groups = 8;
        notes.push_back("Mamba-2 dimensions not in the row: Nemotron3NanoProvider (Megatron-Bridge nemotron_h_provider.py): 64 heads x 64, "
                        "state 128, 8 groups");
        if (!r.vocab_size) {
            // The provider leaves the vocabulary to the tokenizer: the model's Hugging Face tokenizer
            // (nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16, config.json vocab_size 131072), the one the
            // Nemotron 3 recipes load.
            m.vocab = 131072;
            notes.push_back("vocab_size not given: 131072 (the Nemotron 3 Nano tokenizer, config.json vocab_size)");
        }
    }
}

} // namespace vtrain::validation_detail
