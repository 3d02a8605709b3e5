// SPDX-License-Identifier: MIT
// The vocabularies of RUNS.json as ../shared/validation/README.md defines them: gpu_type (canonical ids
// and the old file's free text), precision and the FP8 recipe in notes[0], arch_family tokens (the
// structured keys win where set), and fsdp as bool or integer. Every default taken is written into the
// row's notes.
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "validation/text_scan.h"
#include "validation/validation_detail.h"
#include "vtrain/json_fields.h"

namespace vtrain {
namespace validation_detail {

bool contains(const std::optional<std::string>& s, const char* what)
{
    return s && lowercase(*s).find(what) != std::string::npos;
}

bool names_token_drop(const RunRow& r)
{
    return contains(r.model_name, "tokendrop");
}

int round_up(int v, int multiple)
{
    return (v + multiple - 1) / multiple * multiple;
}

const char* preset_gpu(const RunRow& r)
{
    // gb200 before b200: "gb200-nvl72" contains "b200".
    return contains(r.gpu_type, "gb200") ? "gb200" : contains(r.gpu_type, "b200") ? "b200" : contains(r.gpu_type, "h100") ? "h100" : nullptr;
}

std::optional<SelectiveModules> selective_modules(const std::string& activation_recompute)
{
    const std::string rc = lowercase(activation_recompute);
    const std::size_t colon = rc.find(':');
    if (rc.rfind("selective", 0) != 0 || colon == std::string::npos) {
        return std::nullopt;
    }
    // The list itself, without its parenthetical asides ("(after \"Remove up_proj recompute\")").
    const std::string list = scan::replace_spans(std::string_view(rc).substr(colon + 1), '(', ')', " ");
    // Megatron-Core's module names (transformer_config.py recompute_modules) and the prose a paper uses for
    // them; "mlp" as a word is the dense layers' MLP, not moe_act or a DeepSeek "mlp + up_proj" token.
    // Each name as the words or substrings that spell it (the patterns were core_attn|attention core,
    // \blayernorm\b|rmsnorm, mla_up_proj|\bup_proj\b|mla up-projection, moe_act, \bmlp\b, shared_experts and
    // \bmoe\b(?!_)); found by plain search, so any length of text is read in one pass.
    struct Name {
        std::vector<std::string_view> substrings;
        std::vector<std::string_view> words; // with a word boundary on both sides
        const char* name;
        unsigned bit; // 0: not costed by the simulator
        bool core_attn;
    };
    static const Name names[] = {
        {{"core_attn", "attention core"}, {}, "core_attn", 0, true},
        {{"rmsnorm"}, {"layernorm"}, "layernorm", kRecomputeLayernorm, false},
        {{"mla_up_proj", "mla up-projection"}, {"up_proj"}, "mla_up_proj", kRecomputeMlaUpProj, false},
        {{"moe_act"}, {}, "moe_act", kRecomputeMoeAct, false},
        {{}, {"mlp"}, "mlp", 0, false},
        {{"shared_experts"}, {}, "shared_experts", 0, false},
        {{}, {"moe"}, "moe", kRecomputeMoe, false},
    };
    SelectiveModules out;
    for (const Name& n : names) {
        const bool named =
            std::any_of(n.substrings.begin(), n.substrings.end(), [&](std::string_view s) { return list.find(s) != std::string::npos; }) ||
            std::any_of(n.words.begin(), n.words.end(), [&](std::string_view w) { return scan::has_word(list, w); });
        if (!named) {
            continue;
        }
        out.names.emplace_back(n.name);
        out.core_attn = out.core_attn || n.core_attn;
        out.bits |= n.bit;
        if (n.bit == 0 && !n.core_attn) {
            out.unmodeled.emplace_back(n.name);
        }
    }
    if (out.names.empty()) {
        return std::nullopt;
    }
    return out;
}

namespace {

// The README's canonical ids ("Vocabulary used in both files") and every other shipped profile's id
// (profiles/*.json, what `vtrain profiles` lists; tst_validation checks the two agree).
const std::set<std::string>& canonical_gpu_ids()
{
    static const std::set<std::string> ids{"h100-sxm5-80gb", "h800-sxm5-80gb", "b200-sxm-180gb", "gb200-nvl72",    "h100-hbm2e-96gb",
                                           "a100-sxm4-40gb", "a100-sxm4-80gb", "h200-sxm-141gb", "b300",           "gb300-nvl72",
                                           "mi300x",         "mi325x",         "mi355x",         "v100-sxm3-32gb", "h100-measured"};
    return ids;
}

std::set<std::string> tokens_of(const std::string& arch_family)
{
    std::set<std::string> out;
    std::stringstream in(lowercase(arch_family));
    std::string t;
    while (std::getline(in, t, '_')) {
        if (!t.empty()) {
            out.insert(t);
        }
    }
    return out;
}

} // namespace

std::string gpu_profile_id(const RunRow& r, Notes& notes)
{
    const std::string t = lowercase(*r.gpu_type);
    if (canonical_gpu_ids().count(t) != 0) {
        return t;
    }
    if (t == "a100-80gb") {
        // README: "a100-80gb (form factor not stated)"; the SXM4 part is the one of DGX/HGX A100 clusters.
        notes.push_back("gpu_type a100-80gb (form factor not stated): profile a100-sxm4-80gb");
        return "a100-sxm4-80gb";
    }
    bool defaulted = false;
    const std::string id = profile_for_gpu_type(*r.gpu_type, r.gpu_memory_gb, defaulted);
    if (defaulted) {
        notes.push_back(id == "v100-sxm3-32gb" ? "V100 memory variant not stated: profile v100-sxm3-32gb (DGX-2)"
                                               : "A100 memory variant not stated: profile a100-sxm4-80gb");
    }
    return id;
}

PrecisionChoice precision_of(const RunRow& r)
{
    PrecisionChoice c;
    const std::string p = lowercase(r.precision.value_or(""));
    if (p.empty() || p.find("not specified") != std::string::npos) {
        return c;
    }
    if (p == "nvfp4" || p.find("fp4") != std::string::npos) {
        c.precision = Precision::Nvfp4;
    } else if (p == "fp8" || p.find("fp8") != std::string::npos || p.find("float8") != std::string::npos) {
        c.precision = Precision::Fp8;
    } else if (p.find("bf16") != std::string::npos) {
        c.precision = Precision::Bf16;
    } else if (p.find("fp16") != std::string::npos) {
        c.precision = Precision::Fp16;
    } else if (p.find("fp32") != std::string::npos || p.find("tf32") != std::string::npos) {
        c.precision = Precision::Fp32;
    } else {
        return c;
    }
    if (c.precision != Precision::Fp8 || r.notes.empty()) {
        return c;
    }
    // The recipe as published is the first entry of notes (README "Vocabulary"): an explicit
    // "(recipe: NAME" first, then the page's words, current scaling before the MX and block variants
    // (a note like "FP8-CS (FP8-MX)" names current scaling as the main value).
    const std::string n = lowercase(r.notes.front());
    c.recipe_text = r.notes.front();
    auto has = [&](const char* w) { return n.find(w) != std::string::npos; };
    const auto explicit_at = n.find("(recipe: ");
    const std::string named = explicit_at == std::string::npos ? std::string() : n.substr(explicit_at + 9, 24);
    auto named_is = [&](const char* w) { return named.rfind(w, 0) == 0; };
    if (named_is("mxfp8")) {
        c.recipe = Fp8Recipe::Mxfp8;
    } else if (named_is("fp8-current") || named_is("current")) {
        c.recipe = Fp8Recipe::Current;
    } else if (named_is("fp8-blockwise") || named_is("blockwise")) {
        c.recipe = Fp8Recipe::Blockwise;
    } else if (named_is("delayed") || named_is("fp8-delayed")) {
        c.recipe = Fp8Recipe::Delayed;
    } else if (has("current scaling") || has("current-scaling") || has("fp8-cs") || has("tensorwise")) {
        // torchao "tensorwise" is dynamic per-tensor scaling: Transformer Engine's current scaling.
        c.recipe = Fp8Recipe::Current;
    } else if (has("mxfp8") || has("fp8-mx")) {
        c.recipe = Fp8Recipe::Mxfp8;
    } else if (has("blockwise") || has("block-scaled") || has("128x128")) {
        c.recipe = Fp8Recipe::Blockwise;
    } else if (has("rowwise")) {
        // torchao's per-row scaling has no Transformer Engine counterpart: its cost (one scale per row of
        // each operand, computed on the fly) is closest to the 1 x 128 blockwise recipe.
        c.recipe = Fp8Recipe::Blockwise;
        c.recipe_approximated = true;
    } else if (has("delayed")) {
        c.recipe = Fp8Recipe::Delayed;
    }
    // MX formats need Blackwell; on Hopper the pages' note names the blockwise recipe for the same rows.
    const bool blackwell = contains(r.gpu_type, "b200") || contains(r.gpu_type, "b300");
    if (c.recipe == Fp8Recipe::Mxfp8 && !blackwell) {
        c.recipe = Fp8Recipe::Blockwise;
        c.recipe_on_hopper = true;
    }
    return c;
}

namespace {

// Hand-written scanners for fine_tuning_of() (no std::regex: issue 32). Texts are lower case.
bool letter_or_underscore(char c)
{
    return (c >= 'a' && c <= 'z') || c == '_';
}

// The first of `words` found where no letter or underscore precedes it ("(?:^|[^a-z_])(w1|w2|...)"), and,
// with `whole`, none follows it ("(?![a-z_])"); alternatives tried in order at each position.
std::string first_word(std::string_view text, std::initializer_list<std::string_view> words, bool whole)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i > 0 && letter_or_underscore(text[i - 1])) {
            continue;
        }
        for (const std::string_view w : words) {
            const std::size_t end = i + w.size();
            if (text.substr(i, w.size()) == w && (!whole || end == text.size() || !letter_or_underscore(text[end]))) {
                return std::string(w);
            }
        }
    }
    return {};
}

// "(sft|supervised fine-?tuning|full fine-?tuning|fine-?tuning|finetun\w*|instruction tuning)" after a
// non-letter: the words a supervised fine-tuning row uses.
std::string sft_word(std::string_view text)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i > 0 && letter_or_underscore(text[i - 1])) {
            continue;
        }
        for (const std::string_view w : {"sft", "supervised fine-tuning", "supervised finetuning", "full fine-tuning", "full finetuning",
                                         "fine-tuning", "finetuning", "instruction tuning"}) {
            if (text.substr(i, w.size()) == w) {
                return std::string(w);
            }
        }
        if (text.substr(i, 7) == "finetun") {
            std::size_t end = i + 7;
            while (end < text.size() && scan::is_word(text[end])) {
                ++end;
            }
            return std::string(text.substr(i, end - i));
        }
    }
    return {};
}

// MLA's compressed widths ("q_lora_rank", "kv LoRA rank 512"): "(?:q|kv)[ _-]?lora[ _-]?rank" replaced by a space.
std::string without_mla_lora_ranks(std::string_view text)
{
    auto separator = [&](std::size_t j) { return j < text.size() && (text[j] == ' ' || text[j] == '_' || text[j] == '-') ? j + 1 : j; };
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t after_prefix = text.substr(i, 2) == "kv" ? i + 2 : text.substr(i, 1) == "q" ? i + 1 : std::string_view::npos;
        if (after_prefix != std::string_view::npos) {
            std::size_t j = separator(after_prefix);
            if (text.substr(j, 4) == "lora") {
                j = separator(j + 4);
                if (text.substr(j, 4) == "rank") {
                    out += ' ';
                    i = j + 4;
                    continue;
                }
            }
        }
        out += text[i++];
    }
    return out;
}

// The rank a LoRA row names: "(?:lora[ _-]?(?:rank|dim|r)|peft\.dim|adapter[ _-]?(?:rank|dim)|\brank|\bdim)
// \s*[=:]?\s*(\d{1,4})\b" ("LoRA rank 16", "lora_rank=8", "dim 32", "r=16").
std::optional<int> lora_rank_named(std::string_view text)
{
    auto separator = [&](std::size_t j) { return j < text.size() && (text[j] == ' ' || text[j] == '_' || text[j] == '-') ? j + 1 : j; };
    // The number after a key ending at `j`, as the pattern's tail reads it.
    auto number_after = [&](std::size_t j) -> std::optional<int> {
        j = scan::skip_spaces(text, j);
        j += j < text.size() && (text[j] == '=' || text[j] == ':') ? 1 : 0;
        j = scan::skip_spaces(text, j);
        const std::size_t end = scan::digits_end(text, j);
        if (end == j || end - j > 4 || (end < text.size() && scan::is_word(text[end]))) {
            return std::nullopt;
        }
        return std::stoi(std::string(text.substr(j, end - j)));
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        std::vector<std::size_t> key_ends;
        if (text.substr(i, 4) == "lora") {
            const std::size_t j = separator(i + 4);
            for (const std::string_view w : {"rank", "dim", "r"}) {
                if (text.substr(j, w.size()) == w) {
                    key_ends.push_back(j + w.size());
                }
            }
        }
        if (text.substr(i, 8) == "peft.dim") {
            key_ends.push_back(i + 8);
        }
        if (text.substr(i, 7) == "adapter") {
            const std::size_t j = separator(i + 7);
            for (const std::string_view w : {"rank", "dim"}) {
                if (text.substr(j, w.size()) == w) {
                    key_ends.push_back(j + w.size());
                }
            }
        }
        const bool boundary = i == 0 || !scan::is_word(text[i - 1]);
        for (const std::string_view w : {"rank", "dim"}) {
            if (boundary && text.substr(i, w.size()) == w) {
                key_ends.push_back(i + w.size());
            }
        }
        for (const std::size_t end : key_ends) {
            if (const std::optional<int> n = number_after(end)) {
                return n;
            }
        }
    }
    return std::nullopt;
}

} // namespace

FineTuningChoice fine_tuning_of(const RunRow& r)
{
    FineTuningChoice f;
    // What a row says of itself: its model name, software, the table it comes from and its notes (never its id
    // or subset). Each field is bounded; the scanners read it once.
    std::string text;
    for (const std::optional<std::string>* field : {&r.model_name, &r.software, &r.source_ref}) {
        if (*field && (*field)->size() <= 4096) {
            text += " " + lowercase(**field);
        }
    }
    for (const std::string& n : r.notes) {
        if (n.size() <= 4096) {
            text += " " + lowercase(n);
        }
    }
    // MLA's compressed widths are attention dimensions, not fine-tuning; the rest is read as whole words.
    text = without_mla_lora_ranks(text);
    const std::string lora = first_word(text, {"qlora", "lora"}, true);
    const std::string dora = first_word(text, {"dora"}, true);
    const std::string peft = first_word(text, {"peft"}, true);
    const std::string sft = sft_word(text);
    if (lora == "qlora") {
        return FineTuningChoice{TrainingMode::Pretrain, {}, 0, {}, "", "QLoRA (a 4-bit quantized frozen base) is not modeled"};
    }
    if (!dora.empty()) {
        return FineTuningChoice{TrainingMode::Pretrain, {}, 0, {}, "", "DoRA (weight-decomposed LoRA) is not modeled"};
    }
    if (!lora.empty()) {
        f.mode = TrainingMode::Lora;
        f.evidence = "the row says LoRA";
    } else if (!peft.empty()) {
        return FineTuningChoice{TrainingMode::Pretrain, {}, 0, {}, "", "a PEFT run without its method named (LoRA, DoRA, ...) is not modeled"};
    } else if (!sft.empty()) {
        f.mode = TrainingMode::Sft;
        f.evidence = "the row says \"" + sft + "\"";
    } else {
        return f;
    }
    if (f.mode == TrainingMode::Lora) {
        // "LoRA rank 16", "lora_rank=8", "dim 32", "r=16".
        if (const std::optional<int> rank = lora_rank_named(text)) {
            f.rank = std::max(1, *rank);
        }
        for (const auto& [name, bit] : {std::pair{"qkv", kLoraQkv}, {"proj", kLoraProj}, {"fc1", kLoraFc1}, {"fc2", kLoraFc2}}) {
            if (text.find(std::string("linear_") + name) != std::string::npos) {
                f.targets |= bit;
            }
        }
    }
    if (!first_word(text, {"unpacked", "not packed", "no packing", "without packing", "padded"}, false).empty()) {
        f.packing = false;
    } else if (!first_word(text, {"packed", "packing"}, false).empty()) {
        f.packing = true;
    }
    return f;
}

std::optional<int> fsdp_degree(const RunRow& r)
{
    return r.fsdp;
}

std::optional<std::string> model_of(const RunRow& r, ModelSpec& m, Notes& notes)
{
    const std::set<std::string> tokens = r.arch_family ? tokens_of(*r.arch_family) : std::set<std::string>{};
    auto has = [&](const char* t) { return tokens.count(t) != 0; };
    if (has("unspecified")) {
        return std::string("model dimensions not given (arch_family \"") + json_fields::bounded(*r.arch_family) + "\")";
    }
    // Features the contract has no field for: refused with the feature's name.
    if (has("gateddeltanet")) {
        return std::string("gated DeltaNet (linear attention) layers are not modeled");
    }
    if (has("gatedattn")) {
        return std::string("gated attention is not modeled");
    }
    if (published_model_config(r, m, notes)) {
        if (!r.seq_length) {
            return std::string("model dimensions not given (seq_length)");
        }
        m.seq_len = *r.seq_length;
        if (m.moe.enabled()) {
            notes.push_back("MoE routing balanced (README caveat 3: vendor benchmarks force-balance the experts)");
        }
        return std::nullopt;
    }
    if (has("latentmoe")) {
        // No structured key carries the latent width: only a published configuration gives it.
        return std::string("model dimensions not given (latent mixture-of-experts without a published configuration)");
    }
    for (const auto& [value, name] : {std::pair{&r.num_layers, "num_layers"},
                                      {&r.hidden_size, "hidden_size"},
                                      {&r.num_attention_heads, "num_attention_heads"},
                                      {&r.seq_length, "seq_length"}}) {
        if (!*value) {
            return std::string("model dimensions not given (") + name + ")";
        }
    }
    if ((has("mamba2") || has("hybrid")) && !r.layer_pattern) {
        return std::string("model dimensions not given (hybrid stack without layer_pattern)");
    }

    m.name = r.model_name.value_or("model");
    m.layers = *r.num_layers;
    m.hidden = *r.hidden_size;
    m.heads = *r.num_attention_heads;
    m.kv_heads = r.num_query_groups.value_or(0);
    m.seq_len = *r.seq_length;
    if (r.ffn_hidden_size) {
        m.ffn_hidden = *r.ffn_hidden_size;
    } else {
        notes.push_back("ffn_hidden_size not given: 4 x hidden (GPT)");
    }
    if (!r.arch_family) {
        notes.push_back("arch_family not given: GPT (LayerNorm, GELU, learned positions, tied embeddings)");
    }

    // Block details: the structured key wins, then the tokens, then GPT's.
    if (r.normalization) {
        m.normalization = *r.normalization == "rmsnorm" ? Normalization::RmsNorm : Normalization::LayerNorm;
    } else if (has("rmsnorm")) {
        m.normalization = Normalization::RmsNorm;
    } else {
        m.normalization = Normalization::LayerNorm;
    }
    const std::string act = r.ffn_activation.value_or("");
    if (act == "swiglu" || (act.empty() && has("swiglu"))) {
        m.activation = FfnActivation::SwiGlu;
    } else if (act == "squared_relu" || (act.empty() && (has("sqrelu") || (has("squared") && has("relu"))))) {
        m.activation = FfnActivation::SquaredRelu;
    } else if (act == "relu" || (act.empty() && has("relu"))) {
        m.activation = FfnActivation::Relu;
    } else {
        m.activation = FfnActivation::Gelu;
    }
    // Untied unless a key or the GPT family says otherwise (Llama, Qwen, DeepSeek untie them).
    if (r.tied_embeddings) {
        m.tied_embeddings = *r.tied_embeddings;
    } else if (has("gpt") || !r.arch_family) {
        m.tied_embeddings = true;
    } else {
        m.tied_embeddings = false;
        notes.push_back("tied_embeddings not given: untied (the " + r.arch_family->substr(0, r.arch_family->find('_')) + " family's configs)");
    }
    m.qk_norm = r.qk_layernorm.value_or(has("qknorm"));
    m.qkv_bias = r.qkv_bias.value_or(has("qkvbias"));
    if (has("attnsinks")) {
        notes.push_back("attention sinks (one learned logit per head) are not costed: a softmax term, no GEMM");
    }
    if (has("embed") && has("layernorm")) {
        notes.push_back("embedding LayerNorm not costed: one norm per sequence position");
    }

    // Attention: MLA where its keys (or the token) say so, else GQA/MHA from the query groups.
    const bool mla = r.mla_kv_lora_rank.has_value() || has("mla");
    if (mla) {
        if (!r.mla_kv_lora_rank || !r.mla_qk_head_dim || !r.mla_v_head_dim || !r.mla_qk_rope_head_dim) {
            return std::string("model dimensions not given (multi-head latent attention without mla_* keys)");
        }
        m.attention = AttentionKind::Mla;
        m.mla.q_lora_rank = r.mla_q_lora_rank.value_or(0);
        m.mla.kv_lora_rank = *r.mla_kv_lora_rank;
        m.mla.qk_head_dim = *r.mla_qk_head_dim;
        m.mla.qk_rope_head_dim = *r.mla_qk_rope_head_dim;
        m.mla.v_head_dim = *r.mla_v_head_dim;
        m.kv_heads = 0;
    } else {
        m.attention = m.kv_heads > 0 && m.kv_heads < m.heads ? AttentionKind::Gqa : AttentionKind::Mha;
        if (m.hidden % m.heads != 0 && !r.kv_channels) {
            return "hidden_size " + std::to_string(m.hidden) + " is not a multiple of num_attention_heads " + std::to_string(m.heads);
        }
    }
    if (r.kv_channels && !mla && *r.kv_channels * m.heads != m.hidden) {
        m.head_dim_override = *r.kv_channels;
    }

    // Sliding window: the size and how often a full-attention layer recurs.
    if (r.attention_window) {
        m.sliding_window = *r.attention_window;
        m.full_attention_every = r.attention_window_every.value_or(0);
    } else if (has("swa")) {
        return std::string("model dimensions not given (sliding-window attention without attention_window)");
    }

    // Mixture of experts.
    if (r.num_experts) {
        if (!r.moe_top_k || !r.moe_ffn_hidden_size) {
            return std::string("model dimensions not given (num_experts without moe_top_k or moe_ffn_hidden_size)");
        }
        MoeSpec& e = m.moe;
        e.experts = *r.num_experts;
        e.top_k = *r.moe_top_k;
        e.expert_ffn_hidden = *r.moe_ffn_hidden_size;
        // A shared width without a count still means shared experts (README: the key is "their total
        // FFN width"; Megatron's moe_shared_expert_intermediate_size alone turns them on): one of that width.
        e.shared_experts = r.num_shared_experts.value_or(r.moe_shared_expert_ffn_hidden_size ? 1 : 0);
        if (e.shared_experts > 0) {
            e.shared_expert_ffn_hidden = r.moe_shared_expert_ffn_hidden_size.value_or(e.shared_experts * e.expert_ffn_hidden);
        }
        e.first_dense_layers = r.moe_first_dense_layers.value_or(0);
        e.layer_freq = 1;
        if (r.moe_layer_freq && r.moe_layer_freq->size() <= 4096) {
            // An integer, or text ending in the integer in parentheses ("every layer is MoE (1)"); the
            // leading dense layers come from moe_first_dense_layers.
            if (const auto freq = scan::lone_or_parenthesised_int(*r.moe_layer_freq)) {
                e.layer_freq = std::max(1, *freq);
            }
        }
        // README: vendor benchmarks are force-balanced and dropless unless the model name says "tokendrop".
        if (names_token_drop(r)) {
            e.dropless = false;
            e.capacity_factor = 1.0;
            notes.push_back(
                "model name says tokendrop: capacity factor 1.0 (Megatron-Core's --moe-expert-capacity-factor in the token-drop recipes)");
            if (contains(r.software, "megatron-bridge")) {
                // apply_moe_token_drop(capacity 1.0, pad True) (src/megatron/bridge/training/utils/moe_token_drop.py)
                e.pad_to_capacity = true;
                notes.push_back("token drop as Megatron-Bridge applies it (training/utils/moe_token_drop.py, apply_moe_token_drop): "
                                "inputs padded to capacity, so no device-to-host sync before the routed experts");
            }
        } else {
            e.dropless = true;
        }
        e.load_imbalance = 1.0;
        notes.push_back("MoE routing balanced (README caveat 3: vendor benchmarks force-balance the experts)");
    } else if (has("moe") || has("mixtral")) {
        return std::string("model dimensions not given (mixture-of-experts without num_experts)");
    }

    // Hybrid stacks.
    if (r.layer_pattern) {
        if (static_cast<int>(r.layer_pattern->size()) != m.layers) {
            return "layer_pattern has " + std::to_string(r.layer_pattern->size()) + " letters for " + std::to_string(m.layers) + " layers";
        }
        m.layer_pattern = *r.layer_pattern;
    }
    published_model_details(r, m, notes);

    // Multi-token prediction: no structured key carries it (the name, else the family's published config).
    m.mtp_layers = published_mtp_layers(r, m, notes);
    return std::nullopt;
}

} // namespace validation_detail

namespace {

// "(?:^|[^0-9])(16|32|40|80)\s*-?\s*g(?:b|ib)?(?:[^a-z]|$)" in a lower-case GPU name: "a100-sxm4-40gb",
// "a100 40g", "v100 32 gb".
std::optional<int> spelled_memory_gb(std::string_view t)
{
    for (std::size_t i = 0; i + 2 <= t.size(); ++i) {
        if (i > 0 && validation_detail::scan::is_digit(t[i - 1])) {
            continue;
        }
        const std::string_view two = t.substr(i, 2);
        if (two != "16" && two != "32" && two != "40" && two != "80") {
            continue;
        }
        std::size_t j = validation_detail::scan::skip_spaces(t, i + 2);
        j += j < t.size() && t[j] == '-' ? 1 : 0;
        j = validation_detail::scan::skip_spaces(t, j);
        if (j >= t.size() || t[j] != 'g') {
            continue;
        }
        ++j;
        for (const std::size_t end :
             {t.substr(j, 1) == "b" ? j + 1 : std::string_view::npos, t.substr(j, 2) == "ib" ? j + 2 : std::string_view::npos, j}) {
            if (end != std::string_view::npos && (end == t.size() || !(t[end] >= 'a' && t[end] <= 'z'))) {
                return (two[0] - '0') * 10 + (two[1] - '0');
            }
        }
    }
    return std::nullopt;
}

} // namespace

std::string profile_for_gpu_type(const std::string& gpu_type, std::optional<double> memory_gb, bool& defaulted)
{
    using json_fields::lowercase;
    defaulted = false;
    const std::string t = lowercase(gpu_type);
    auto has = [&](const char* s) { return t.find(s) != std::string::npos; };
    // The memory a name spells ("A100-SXM4-40GB", "A100 40G", "V100 32 GB"), else the row's gpu_memory_gb.
    std::optional<double> memory = memory_gb;
    if (t.size() <= 4096) {
        if (const std::optional<int> gb = spelled_memory_gb(t)) {
            memory = *gb;
        }
    }
    if (has("a100")) {
        if (memory && *memory <= 48) {
            return "a100-sxm4-40gb";
        }
        if (memory) {
            return "a100-sxm4-80gb";
        }
        defaulted = true;
        return "a100-sxm4-80gb";
    }
    if (has("v100")) {
        // Only the 32 GB SXM3 part of DGX-2 (16 GPUs on NVSwitch) has a profile; a 16 GB V100 (DGX-1's hybrid
        // cube-mesh NVLink, or PCIe) is another system and has none.
        if (memory && *memory <= 16) {
            return {};
        }
        if (!memory) {
            defaulted = true;
        }
        return "v100-sxm3-32gb";
    }
    if (has("mi355")) {
        return "mi355x";
    }
    if (has("mi325")) {
        return "mi325x";
    }
    if (has("gb200")) {
        return "gb200-nvl72";
    }
    if (has("gb300")) {
        return "gb300-nvl72";
    }
    if (has("b200")) {
        return "b200-sxm-180gb";
    }
    if (has("h800")) {
        return "h800-sxm5-80gb";
    }
    if (has("h100")) {
        // Meta's Grand Teton H100 (96 GB HBM2e, 500 W) is a different part from the SXM5 80 GB one.
        if (has("hbm2e") || (memory_gb && *memory_gb > 90 && *memory_gb < 100)) {
            return "h100-hbm2e-96gb";
        }
        return "h100-sxm5-80gb";
    }
    if (has("h200")) {
        return "h200-sxm-141gb";
    }
    if (has("mi300x")) {
        return "mi300x";
    }
    return {};
}

} // namespace vtrain
