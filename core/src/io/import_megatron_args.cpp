// SPDX-License-Identifier: MIT
// Megatron-LM / Megatron-Core pretrain_gpt.py arguments -> scenario. The flags are those of
// megatron/training/arguments.py (Megatron-Core 0.14/0.15, late 2025), the inverse of what `vtrain launch`
// writes (launch_config.cpp); Megatron-DeepSpeed's --zero-stage is read too. The table is docs/import.md's.
#include <cmath>
#include <set>

#include "io/import_flags.h"
#include "io/import_megatron_flags.h"
#include "io/import_readers.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain::import_detail {
namespace {

using nlohmann::json;

bool all_digits(const std::string& s)
{
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

class MegatronReader {
public:
    MegatronReader(Flags& flags, Draft& draft) : f(flags), d(draft), m_base(!draft.model.empty()) {}

    void read()
    {
        f.read_launcher(d);
        model();
        moe_and_mla();
        parallel();
        batch();
        precision();
        recompute();
        sharding();
        misc();
        leftovers();
    }

private:
    std::optional<long long> count(const std::string& name, const std::string& field, long long min = 1, long long max = 1LL << 40)
    {
        const auto n = f.number(name, field, d);
        if (!n) {
            return std::nullopt;
        }
        const auto w = whole(*n, min, max);
        if (!w && field.empty()) {
            d.error(name, "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", not " + n->dump());
        }
        return w;
    }

    void model()
    {
        for (const auto& [flag, field] : {std::pair<const char*, const char*>{"--num-layers", "model.layers"},
                                          {"--hidden-size", "model.hidden"},
                                          {"--num-attention-heads", "model.heads"},
                                          {"--ffn-hidden-size", "model.ffn_hidden"},
                                          {"--vocab-size", "model.vocab"}}) {
            d.source[field] = flag;
            f.number(flag, field, d);
        }
        d.source["model.seq_len"] = "--seq-length";
        if (f.has("--seq-length")) {
            f.number("--seq-length", "model.seq_len", d);
            if (f.take("--max-position-embeddings") != nullptr) {
                d.ignore("--max-position-embeddings");
            }
        } else if (f.has("--max-position-embeddings")) {
            f.number("--max-position-embeddings", "model.seq_len", d);
            d.note("--max-position-embeddings", "no --seq-length: the sequence is taken as the position count");
        }
        const bool gqa = f.on("--group-query-attention", d);
        if (f.has("--num-query-groups")) {
            if (gqa) {
                f.number("--num-query-groups", "model.kv_heads", d);
            } else {
                f.take("--num-query-groups");
                d.note("--num-query-groups", "has no effect without --group-query-attention (Megatron-LM): multi-head attention");
            }
        }
        if (f.has("--kv-channels")) {
            f.number("--kv-channels", "model.head_dim", d);
        }
        const bool swiglu = f.on("--swiglu", d);
        const bool squared = f.on("--squared-relu", d);
        f.on("--openai-gelu", d);
        if (swiglu || squared || !m_base) {
            d.set("model.activation", swiglu ? "swiglu" : squared ? "squared_relu" : "gelu", swiglu ? "--swiglu" : "--squared-relu");
        }
        if (const std::string* norm = f.value("--normalization", d)) {
            const std::string n = *norm == "RMSNorm" || *norm == "rmsnorm"       ? "rmsnorm"
                                  : *norm == "LayerNorm" || *norm == "layernorm" ? "layernorm"
                                                                                 : "";
            if (n.empty()) {
                d.error("--normalization", "must be LayerNorm or RMSNorm, not \"" + clipped(*norm) + "\"");
            } else {
                d.set("model.normalization", n, "--normalization");
            }
        } else if (!m_base) {
            d.set("model.normalization", "layernorm", "--normalization"); // Megatron-LM's default
        }
        const bool untie = f.on("--untie-embeddings-and-output-weights", d);
        if (untie || !m_base) {
            d.set("model.tied_embeddings", !untie, "--untie-embeddings-and-output-weights");
        }
        if (f.on("--qk-layernorm", d)) {
            d.set("model.qk_norm", true, "--qk-layernorm");
        }
        const bool no_bias = f.on("--disable-bias-linear", d);
        const bool add_bias = f.on("--add-bias-linear", d);
        if (f.on("--add-qkv-bias", d)) {
            d.set("model.qkv_bias", true, "--add-qkv-bias");
        }
        const json* act = d.get("model.activation");
        const bool gelu = act == nullptr || *act == "gelu";
        if (!gelu && (!m_base || no_bias || add_bias)) {
            // Megatron-LM puts biases on every linear layer unless --disable-bias-linear.
            d.set("model.linear_bias", !no_bias || add_bias, "--disable-bias-linear");
        } else if (gelu && no_bias) {
            d.note("--disable-bias-linear", "a GELU (GPT-style) model is simulated with its biases");
        }
        if (f.has("--window-size")) {
            const std::string* w = f.value("--window-size", d);
            if (w != nullptr) {
                // "(128, 0)": tokens before and after; the first is the causal window.
                std::string digits;
                for (const char c : *w) {
                    if (c >= '0' && c <= '9') {
                        digits.push_back(c);
                    } else if (!digits.empty()) {
                        break;
                    }
                }
                std::string why;
                if (const auto n = parse_number(digits, why)) {
                    d.set("model.sliding_window", *n, "--window-size");
                } else {
                    d.error("--window-size", "must be \"(left, right)\" token counts, not \"" + clipped(*w) + "\"");
                }
            }
        }
        if (f.has("--window-attn-skip-freq")) {
            f.number("--window-attn-skip-freq", "model.full_attention_every", d);
        }
        if (f.has("--activation-func-clamp-value")) {
            f.number("--activation-func-clamp-value", "model.glu_clamp", d);
        }
        if (const std::string* pattern = f.value("--hybrid-override-pattern", d)) {
            d.set("model.layer_pattern", *pattern, "--hybrid-override-pattern");
        }
        for (const auto& [flag, field] : {std::pair<const char*, const char*>{"--mamba-state-dim", "model.mamba.state_dim"},
                                          {"--mamba-head-dim", "model.mamba.head_dim"},
                                          {"--mamba-num-heads", "model.mamba.heads"},
                                          {"--mamba-num-groups", "model.mamba.groups"}}) {
            if (f.has(flag)) {
                f.number(flag, field, d);
            }
        }
        if (!f.has("--vocab-size") && !d.has("model.vocab")) {
            const std::string* tokenizer = f.has("--tokenizer-type") ? f.value("--tokenizer-type", d) : nullptr;
            const bool gpt2 = tokenizer != nullptr && *tokenizer == "GPT2BPETokenizer";
            d.set("model.vocab", gpt2 ? 50257 : 128256, "--vocab-size");
            d.default_chosen(std::string("model.vocab: ") +
                             (gpt2 ? "50257 (GPT2BPETokenizer's)" : "128256 (Llama 3's; the file's tokenizer decides)") +
                             ": the vocabulary comes from the tokenizer, which the arguments name but do not size");
        }
        if (f.has("--ffn-hidden-size") || !d.has("model.hidden")) {
            return;
        }
        if (const auto h = whole(*d.get("model.hidden"), 1, 1 << 24); h && swiglu && !d.has("model.ffn_hidden")) {
            // arguments.py: with --swiglu and no --ffn-hidden-size, int((4 * h * 2 / 3) / 64) * 64.
            const long long ffn = static_cast<long long>((4.0 * *h * 2 / 3) / 64) * 64;
            d.set("model.ffn_hidden", ffn, "--ffn-hidden-size");
            d.default_chosen("model.ffn_hidden: " + std::to_string(ffn) + " (Megatron-LM's default for --swiglu without --ffn-hidden-size)");
        }
    }

    void moe_and_mla()
    {
        if (f.on("--multi-latent-attention", d)) {
            d.set("model.attention", "mla", "--multi-latent-attention");
            for (const auto& [flag, field] : {std::pair<const char*, const char*>{"--q-lora-rank", "model.mla.q_lora_rank"},
                                              {"--kv-lora-rank", "model.mla.kv_lora_rank"},
                                              {"--qk-head-dim", "model.mla.qk_head_dim"},
                                              {"--qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim"},
                                              {"--v-head-dim", "model.mla.v_head_dim"}}) {
                if (f.has(flag)) {
                    f.number(flag, field, d);
                } else {
                    d.note(flag, "not given: Megatron-LM's default (DeepSeek-V3's value in vTrain) assumed");
                }
            }
            if (d.has("model.kv_heads")) {
                d.erase("model.kv_heads");
                d.note("--num-query-groups", "does not apply to multi-latent attention (keys and values come from the latent)");
            }
            d.erase("model.head_dim");
        }
        if (f.has("--mtp-num-layers")) {
            f.number("--mtp-num-layers", "model.mtp_layers", d);
        }
        if (const std::string* dispatcher = f.value("--moe-token-dispatcher-type", d)) {
            if (*dispatcher == "alltoall" || *dispatcher == "flex") {
                d.set("training.moe_dispatcher", *dispatcher, "--moe-token-dispatcher-type");
            } else {
                d.note("--moe-token-dispatcher-type", "\"" + clipped(*dispatcher) + "\" is simulated as alltoall");
            }
        }
        if (f.has("--num-experts")) {
            f.number("--num-experts", "model.moe.experts", d);
        }
        if (!d.has("model.moe.experts")) {
            return;
        }
        if (f.has("--moe-router-topk")) {
            f.number("--moe-router-topk", "model.moe.top_k", d);
        } else if (!d.has("model.moe.top_k")) {
            d.note("--moe-router-topk", "not given: Megatron-LM's default, 2 experts per token");
            d.set("model.moe.top_k", 2, "--moe-router-topk");
        }
        if (f.has("--moe-ffn-hidden-size")) {
            f.number("--moe-ffn-hidden-size", "model.moe.expert_ffn_hidden", d);
        }
        if (f.has("--moe-shared-expert-intermediate-size")) {
            f.number("--moe-shared-expert-intermediate-size", "model.moe.shared_expert_ffn_hidden", d);
            d.set("model.moe.shared_experts", 1, "--moe-shared-expert-intermediate-size");
        }
        if (const std::string* freq = f.value("--moe-layer-freq", d)) {
            layer_frequency(*freq);
        }
        if (f.has("--moe-expert-capacity-factor")) {
            f.number("--moe-expert-capacity-factor", "model.moe.capacity_factor", d);
            d.set("model.moe.dropless", false, "--moe-expert-capacity-factor");
            if (f.on("--moe-pad-expert-input-to-capacity", d)) {
                d.set("model.moe.pad_to_capacity", true, "--moe-pad-expert-input-to-capacity");
            }
        } else if (f.on("--moe-pad-expert-input-to-capacity", d)) {
            d.note("--moe-pad-expert-input-to-capacity", "needs --moe-expert-capacity-factor: dropless routing has no capacity to pad to");
        }
        if (f.has("--moe-router-num-groups") || f.has("--moe-router-group-topk")) {
            d.note(f.has("--moe-router-num-groups") ? "--moe-router-num-groups" : "--moe-router-group-topk",
                   "group-limited routing is not simulated: a token may go to any expert");
        }
    }

    void layer_frequency(const std::string& text)
    {
        if (all_digits(text)) {
            std::string why;
            if (const auto n = parse_number(text, why)) {
                d.set("model.moe.layer_freq", *n, "--moe-layer-freq");
            }
            return;
        }
        std::string why;
        const auto list = eval_layer_list(text, 100000, why);
        if (!list) {
            d.error("--moe-layer-freq", "\"" + clipped(text) + "\" " + why);
            return;
        }
        apply_layer_list(*list, "--moe-layer-freq", d);
    }

    void parallel()
    {
        for (const auto& [flag, field] : {std::pair<const char*, const char*>{"--tensor-model-parallel-size", "plan.tp"},
                                          {"--pipeline-model-parallel-size", "plan.pp"},
                                          {"--context-parallel-size", "plan.cp"},
                                          {"--expert-model-parallel-size", "plan.ep"},
                                          {"--expert-tensor-parallel-size", "plan.etp"}}) {
            if (f.has(flag)) {
                f.number(flag, field, d);
            }
        }
        if (Flag* comm = f.take("--cp-comm-type"); comm != nullptr && !comm->values.empty()) {
            const std::string& kind = comm->values.front();
            if (kind == "p2p" || kind == "all_gather") {
                d.set("plan.cp_kind", "ring", "--cp-comm-type");
                if (kind == "all_gather") {
                    d.note("--cp-comm-type", "all_gather is simulated as the p2p ring (the same volume, less overlap)");
                }
            } else if (kind == "a2a" || kind == "a2a+p2p") {
                d.set("plan.cp_kind", "all_to_all", "--cp-comm-type");
                if (kind != "a2a") {
                    d.note("--cp-comm-type", "a2a+p2p (hierarchical) is simulated as a2a");
                }
            } else {
                d.error("--cp-comm-type", "must be p2p, a2a, all_gather or a2a+p2p, not \"" + clipped(kind) + "\"");
            }
            if (comm->values.size() > 1) {
                d.note("--cp-comm-type", "one type per layer is not simulated: the first, " + clipped(kind) + ", is used for every layer");
            }
        }
        if (f.on("--sequence-parallel", d)) {
            d.set("plan.sequence_parallel", true, "--sequence-parallel");
        }
        if (f.has("--num-layers-per-virtual-pipeline-stage")) {
            if (const auto n = count("--num-layers-per-virtual-pipeline-stage", "", 1, 100000)) {
                d.layers_per_virtual_stage = *n;
                d.layers_per_virtual_stage_key = "--num-layers-per-virtual-pipeline-stage";
            }
        }
        for (const char* flag : {"--num-virtual-stages-per-pipeline-rank", "--virtual-pipeline-model-parallel-size"}) {
            if (f.has(flag)) {
                if (const auto v = count(flag, "", 1, 1024); v && *v > 1) {
                    d.set("plan.schedule", "interleaved", flag);
                    d.set("plan.virtual_stages", *v, flag);
                }
            }
        }
        if (f.has("--decoder-first-pipeline-num-layers")) {
            f.number("--decoder-first-pipeline-num-layers", "plan.first_stage_layers", d);
        }
        if (f.has("--decoder-last-pipeline-num-layers")) {
            f.number("--decoder-last-pipeline-num-layers", "plan.last_stage_layers", d);
        }
        if (const std::string* layout = f.value("--pipeline-model-parallel-layout", d)) {
            d.set("plan.pipeline_layout", *layout, "--pipeline-model-parallel-layout");
        }
        for (const char* flag : {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}) {
            if (f.on(flag, d)) {
                d.note(flag, "is not simulated: the layers split as if the embedding and the loss took no stage's room "
                             "(a --pipeline-model-parallel-layout states such a split exactly)");
            }
        }
        if (f.on("--use-tp-pp-dp-mapping", d)) {
            d.set("plan.rank_order", "tp-cp-ep-pp-dp", "--use-tp-pp-dp-mapping");
        }
        if (f.on("--tp-comm-overlap", d)) {
            d.set("plan.tp_overlap", true, "--tp-comm-overlap");
        }
        if (f.on("--overlap-moe-expert-parallel-comm", d)) {
            d.set("plan.moe_overlap", true, "--overlap-moe-expert-parallel-comm");
        }
        // Megatron-LM overlaps an interleaved schedule's sends unless --no-overlap-p2p-communication.
        d.overlap_p2p_default = !f.on("--no-overlap-p2p-communication", d);
        if (f.has("--microbatch-group-size-per-virtual-pipeline-stage")) {
            f.take("--microbatch-group-size-per-virtual-pipeline-stage");
            d.note("--microbatch-group-size-per-virtual-pipeline-stage", "is not simulated: micro-batches grouped by pp, Megatron's default");
        }
    }

    void batch()
    {
        d.source["plan.micro_batch"] = "--micro-batch-size";
        if (f.has("--micro-batch-size")) {
            f.number("--micro-batch-size", "plan.micro_batch", d);
        }
        d.source["training.global_batch"] = "--global-batch-size";
        if (f.has("--global-batch-size")) {
            f.number("--global-batch-size", "training.global_batch", d);
        }
        if (f.has("--train-samples")) {
            if (const auto n = f.number("--train-samples", "", d); n && n->is_number()) {
                d.train_samples = n->get<double>();
                d.train_length_key = "--train-samples";
            }
        } else if (f.has("--train-iters")) {
            if (const auto n = f.number("--train-iters", "", d); n && n->is_number()) {
                d.train_iters = n->get<double>();
                d.train_length_key = "--train-iters";
            }
        }
        if (f.take("--rampup-batch-size") != nullptr) {
            d.note("--rampup-batch-size", "batch-size ramp-up is not simulated: every iteration runs the full --global-batch-size");
        }
    }

    void precision()
    {
        const bool bf16 = f.on("--bf16", d);
        const bool fp16 = f.on("--fp16", d);
        if (bf16 && fp16) {
            d.error("--fp16", "cannot be combined with --bf16");
            return;
        }
        std::string p = bf16 ? "bf16" : fp16 ? "fp16" : "fp32";
        const char* key = bf16 ? "--bf16" : fp16 ? "--fp16" : "--bf16";
        if (!bf16 && !fp16) {
            d.default_chosen("training.precision: fp32 (neither --bf16 nor --fp16: Megatron-LM trains in fp32)");
        }
        if (const std::string* format = f.value("--fp8-format", d)) {
            if (*format != "hybrid" && *format != "e4m3") {
                d.error("--fp8-format", "must be e4m3 or hybrid, not \"" + clipped(*format) + "\"");
            }
            p = "fp8";
            key = "--fp8-format";
            const std::string* recipe = f.value("--fp8-recipe", d);
            const std::string r = recipe == nullptr ? "delayed" : *recipe;
            const std::string simulated = r == "delayed"      ? "delayed"
                                          : r == "tensorwise" ? "current"
                                          : r == "blockwise"  ? "blockwise"
                                          : r == "mxfp8"      ? "mxfp8"
                                                              : "";
            if (simulated.empty()) {
                d.error("--fp8-recipe", "must be delayed, tensorwise, blockwise or mxfp8, not \"" + clipped(r) + "\"");
            } else {
                d.set("training.fp8_recipe", simulated, recipe == nullptr ? "--fp8-format" : "--fp8-recipe");
            }
            if (recipe == nullptr) {
                d.default_chosen("training.fp8_recipe: delayed (--fp8-format without --fp8-recipe: Megatron-LM's default)");
            }
            if ((*format == "hybrid") != (r == "delayed")) {
                d.note("--fp8-format", *format + " with the " + r + " recipe: simulated by its recipe (the format does not change the cost)");
            }
        } else if (f.has("--fp8-recipe")) {
            f.take("--fp8-recipe");
            d.note("--fp8-recipe", "has no effect without --fp8-format: not FP8");
        }
        if (const std::string* fp4 = f.value("--fp4-format", d)) {
            if (*fp4 != "e2m1") {
                d.error("--fp4-format", "must be e2m1, not \"" + clipped(*fp4) + "\"");
            }
            p = "nvfp4";
            key = "--fp4-format";
            if (const std::string* recipe = f.value("--fp4-recipe", d); recipe != nullptr && *recipe != "nvfp4") {
                d.note("--fp4-recipe", "\"" + clipped(*recipe) + "\" is simulated as nvfp4");
            }
        }
        d.set("training.precision", p, key);
        if (f.on("--fp8-param-gather", d)) {
            d.set("training.fp8_param_gather", true, "--fp8-param-gather");
        }
        if (f.on("--grad-reduce-in-bf16", d)) {
            d.set("training.bf16_gradients", true, "--grad-reduce-in-bf16");
        }
        if (const std::string* backend = f.value("--attention-backend", d)) {
            if (*backend == "unfused" || *backend == "local") {
                d.set("training.attention", "unfused", "--attention-backend");
            } else {
                d.set("training.attention", "flash", "--attention-backend");
                if (*backend != "flash" && *backend != "fused" && *backend != "auto") {
                    d.note("--attention-backend", "\"" + clipped(*backend) + "\" is simulated as flash attention");
                }
            }
        }
        if (f.on("--use-flash-attn-v2", d)) {
            d.set("training.attention", "flash", "--use-flash-attn-v2");
        }
    }

    void recompute()
    {
        std::string granularity;
        if (const std::string* g = f.value("--recompute-granularity", d)) {
            granularity = *g;
            if (granularity != "full" && granularity != "selective") {
                d.error("--recompute-granularity", "must be full or selective, not \"" + clipped(granularity) + "\"");
                return;
            }
        } else if (f.on("--recompute-activations", d)) {
            granularity = "selective";
        }
        const std::string* method = f.value("--recompute-method", d);
        std::optional<long long> layers;
        if (f.has("--recompute-num-layers")) {
            layers = count("--recompute-num-layers", "", 0, 100000);
        }
        if (granularity == "full") {
            d.set("plan.recompute", "full", "--recompute-granularity");
            if (method != nullptr && *method == "block") {
                d.note("--recompute-method", "block recomputes the first " + (layers ? std::to_string(*layers) : std::string("N")) +
                                                 " layers of each stage: simulated as full recomputation of every layer");
            } else if (layers && *layers > 1) {
                d.note("--recompute-num-layers", "uniform recomputation of " + std::to_string(*layers) +
                                                     "-layer blocks is simulated as per-layer full recomputation (the same work)");
            }
        } else if (method != nullptr || layers) {
            d.note(method != nullptr ? "--recompute-method" : "--recompute-num-layers", "has no effect without --recompute-granularity full");
        }
        unsigned bits = 0;
        bool core_attn = granularity == "selective";
        if (Flag* modules = f.take("--recompute-modules")) {
            core_attn = false;
            std::vector<std::string> names;
            for (const std::string& m : modules->values) {
                if (m == "core_attn") {
                    core_attn = true;
                } else if (const unsigned bit = recompute_module_bit(m)) {
                    bits |= bit;
                    names.push_back(m);
                } else {
                    d.note("--recompute-modules", "\"" + clipped(m) + "\" is not simulated: those activations are kept");
                }
            }
            if (granularity != "selective") {
                d.note("--recompute-modules", "applies with --recompute-granularity selective (Megatron-LM): not used");
                bits = 0;
            }
        }
        if (granularity == "selective") {
            d.set("plan.recompute", core_attn ? "selective" : "none", "--recompute-granularity");
        }
        if (f.on("--moe-layer-recompute", d)) {
            bits |= kRecomputeMoe;
        }
        if (bits != 0) {
            d.set("plan.recompute_modules", recompute_module_names(bits), "--recompute-modules");
        }
    }

    void sharding()
    {
        int stage = 0;
        const char* key = "--use-distributed-optimizer";
        if (f.on("--use-distributed-optimizer", d)) {
            stage = 1;
        }
        const bool megatron_fsdp = f.on("--use-megatron-fsdp", d) || f.on("--use-custom-fsdp", d);
        const std::string* strategy = f.value("--data-parallel-sharding-strategy", d);
        if (megatron_fsdp) {
            const std::string s = strategy == nullptr ? "optim_grads_params" : *strategy;
            key = "--data-parallel-sharding-strategy";
            stage = s == "no_shard" ? 0 : s == "optim" ? 1 : s == "optim_grads" ? 2 : s == "optim_grads_params" ? 3 : -1;
            if (stage < 0) {
                d.error("--data-parallel-sharding-strategy",
                        "must be no_shard, optim, optim_grads or optim_grads_params, not \"" + clipped(s) + "\"");
                return;
            }
            if (strategy == nullptr) {
                d.note("--use-megatron-fsdp", "without --data-parallel-sharding-strategy: optim_grads_params (ZeRO-3) assumed");
            }
            if (f.take("--no-gradient-accumulation-fusion") != nullptr) {
                d.ignore("--no-gradient-accumulation-fusion");
            }
        } else if (strategy != nullptr) {
            d.note("--data-parallel-sharding-strategy", "applies to Megatron-FSDP (--use-megatron-fsdp): not used");
        }
        if (f.on("--use-torch-fsdp2", d)) {
            stage = 3;
            key = "--use-torch-fsdp2";
        }
        if (f.has("--zero-stage")) {
            if (const auto z = count("--zero-stage", "", 0, 3)) {
                stage = static_cast<int>(*z);
                key = "--zero-stage";
            }
        }
        d.set("plan.zero_stage", stage, key);
        if (f.has("--num-distributed-optimizer-instances")) {
            if (const auto k = count("--num-distributed-optimizer-instances", "", 1, 10'000'000); k && *k > 1) {
                d.optimizer_instances = *k;
                d.optimizer_instances_key = "--num-distributed-optimizer-instances";
            }
        }
        d.set("plan.overlap_grad_reduce", f.on("--overlap-grad-reduce", d), "--overlap-grad-reduce");
        if (f.on("--overlap-param-gather", d)) {
            d.set("plan.overlap_param_gather", true, "--overlap-param-gather");
        }
        if (f.has("--ddp-bucket-size")) {
            if (const auto n = f.number("--ddp-bucket-size", "", d); n && n->is_number()) {
                d.bucket_elements = n->get<double>();
                d.bucket_key = "--ddp-bucket-size";
            }
        }
        if (!megatron_fsdp && f.on("--no-gradient-accumulation-fusion", d)) {
            d.set("training.grad_accumulation_bytes", 10, "--no-gradient-accumulation-fusion");
            d.note("--no-gradient-accumulation-fusion", "weight gradients accumulated into the fp32 main gradient by a separate kernel (10 bytes "
                                                        "moved per parameter and micro-batch)");
        }
    }

    void misc()
    {
        if (f.on("--optimizer-cpu-offload", d)) {
            d.set("plan.offload_optimizer", true, "--optimizer-cpu-offload");
            if (f.has("--optimizer-offload-fraction")) {
                if (const auto n = f.number("--optimizer-offload-fraction", "", d); n && n->is_number() && n->get<double>() < 1) {
                    d.note("--optimizer-offload-fraction", "a partial offload is simulated as the whole optimizer on the CPU");
                }
            }
        }
        if (f.on("--cpu-offloading", d)) {
            if (f.has("--cpu-offloading-num-layers")) {
                if (const auto n = count("--cpu-offloading-num-layers", "", 0, 100000)) {
                    d.offload_layers = *n;
                    d.offload_key = "--cpu-offloading-num-layers";
                }
            } else {
                d.offload_layers = 1;
                d.offload_key = "--cpu-offloading";
                d.note("--cpu-offloading", "without --cpu-offloading-num-layers: Megatron-LM's default, 1 layer per model chunk");
            }
        }
        if (f.on("--cross-entropy-loss-fusion", d)) {
            const std::string* impl = f.value("--cross-entropy-fusion-impl", d);
            if (impl != nullptr && *impl == "te") {
                d.set("training.te_cross_entropy", true, "--cross-entropy-fusion-impl");
            } else {
                d.note("--cross-entropy-loss-fusion", "Megatron's native fused cross-entropy is simulated as the unfused loss (only Transformer "
                                                      "Engine's, --cross-entropy-fusion-impl te, is modeled)");
            }
        }
        if (const std::string* impl = f.value("--cuda-graph-impl", d)) {
            Flag* scope = f.take("--cuda-graph-scope");
            if (*impl == "none") {
                // Megatron-LM's default
            } else if (scope != nullptr && !scope->values.empty() && scope->values.front() == "full_iteration") {
                d.set("training.cuda_graphs", "full_iteration", "--cuda-graph-scope");
            } else {
                d.set("training.cuda_graphs", "scoped", "--cuda-graph-impl");
                if (scope != nullptr) {
                    std::vector<std::string> names;
                    for (const std::string& s : scope->values) {
                        if (cuda_graph_scope_bit(s) != 0) {
                            names.push_back(s);
                        } else {
                            d.note("--cuda-graph-scope", "\"" + clipped(s) + "\" is not a scope vTrain simulates: left out");
                        }
                    }
                    d.set("training.cuda_graph_scope", names, "--cuda-graph-scope");
                }
            }
        }
        if (f.on("--enable-cuda-graph", d) || f.on("--external-cuda-graph", d)) {
            d.set("training.cuda_graphs", "scoped", "--enable-cuda-graph");
        }
        if (Flag* config = f.take("--deepspeed_config"); config != nullptr) {
            d.note("--deepspeed_config", "the DeepSpeed config file is not read: its batch, precision and ZeRO settings come from the arguments");
        }
    }

    void leftovers()
    {
        f.note_repeats(d);
        for (const Flag* flag : f.unused()) {
            if (megatron_no_bearing().count(flag->name) != 0) {
                d.ignore(flag->name);
            } else {
                d.unknown_key(flag->name);
            }
        }
    }

    Flags& f;
    Draft& d;
    bool m_base; // the model came from --model: Megatron-LM's defaults do not replace its shape
};

} // namespace

void apply_layer_list(const std::vector<int>& list, const std::string& key, Draft& d)
{
    // k dense layers, then one MoE layer every f-th: MoeSpec's first_dense_layers and layer_freq.
    std::size_t dense = 0;
    while (dense < list.size() && list[dense] == 0) {
        ++dense;
    }
    if (dense == list.size()) {
        d.error(key, "lists no MoE layer (1)");
        return;
    }
    std::size_t every = 1;
    while (dense + every < list.size() && list[dense + every] == 0) {
        ++every;
    }
    bool regular = true;
    for (std::size_t i = dense; i < list.size(); ++i) {
        regular = regular && list[i] == ((i - dense) % every == 0 ? 1 : 0);
    }
    if (d.has("model.layers")) {
        if (const auto layers = whole(*d.get("model.layers"), 1, 100000); layers && static_cast<std::size_t>(*layers) != list.size()) {
            d.error(key, "lists " + std::to_string(list.size()) + " layers but the model has " + std::to_string(*layers));
            return;
        }
    }
    if (dense > 0) {
        d.set("model.moe.first_dense_layers", static_cast<long long>(dense), key);
    }
    if (every > 1) {
        d.set("model.moe.layer_freq", static_cast<long long>(every), key);
    }
    if (!regular) {
        d.note(key, "is not " + std::to_string(dense) + " dense layers then every " + std::to_string(every) +
                        "th layer MoE: simulated as that pattern, which it starts with");
    }
}

void read_megatron_args(const std::string& text, Draft& d)
{
    const ShellWords words = split_shell_words(text);
    if (!words.error.empty()) {
        d.error("", words.error);
        return;
    }
    Flags flags(words, megatron_arity());
    bool any_megatron = false;
    for (const auto& [name, arity] : megatron_arity()) {
        any_megatron = any_megatron || flags.has(name);
        (void)arity;
    }
    if (!flags.has("--num-layers") && !flags.has("--tensor-model-parallel-size") && !flags.has("--hidden-size") && !any_megatron &&
        !d.has("model.layers")) {
        d.error("--num-layers", "is missing: these are not Megatron-LM arguments (no --num-layers, --hidden-size or "
                                "--tensor-model-parallel-size)");
        return;
    }
    MegatronReader(flags, d).read();
    // Words that are neither flags nor their values: the launcher and the script are expected.
    std::size_t shown = 0;
    for (const ShellWord& w : flags.others()) {
        const std::string& t = w.text;
        const bool expected = w.assignment || w.command_start || t.find(".py") != std::string::npos || t == "-m" || t.rfind("torch.", 0) == 0 ||
                              t == "torchrun" || t == "python" || t == "python3" || t == "deepspeed" || t.rfind("-", 0) == 0;
        if (!expected && shown++ < 3) {
            d.note(t, "a word that is no flag's value (line " + std::to_string(w.line) + "): not read");
        }
    }
}

} // namespace vtrain::import_detail
