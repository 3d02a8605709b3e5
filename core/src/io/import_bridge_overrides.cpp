// SPDX-License-Identifier: MIT
// Megatron-Bridge recipe overrides -> scenario. Keys are ConfigContainer paths (model.* is the
// GPTModelProvider / TransformerConfig, train.* TrainingConfig, ddp.* DistributedDataParallelConfig,
// mixed_precision a preset name of megatron.bridge.training.mixed_precision, comm_overlap.*
// CommOverlapConfig) in Hydra/OmegaConf override syntax, as Megatron-Bridge's run_recipe.py and its
// scripts/translate_mlm_to_bridge.py write them (late 2025). The inverse of `vtrain launch --framework
// megatron-bridge` (launch_bridge.cpp); the table is docs/import.md's.
#include <cctype>
#include <set>

#include "io/import_bridge_syntax.h"
#include "io/import_flags.h"
#include "io/import_readers.h"
#include "vtrain/launch_bridge.h"
#include "vtrain/scenario_json.h"

namespace vtrain::import_detail {
namespace {

using nlohmann::json;

class BridgeReader {
public:
    explicit BridgeReader(Draft& draft) : d(draft), m_base(!draft.model.empty()) {}

    void add(const std::string& key, const std::string& raw, std::size_t line)
    {
        if (m_values.count(key) != 0) {
            d.note(key, "is given twice: the last value counts (line " + std::to_string(line) + ")");
        } else {
            m_order.push_back(key);
        }
        m_values[key] = hydra_value(raw);
    }

    void read()
    {
        model();
        parallel();
        batch();
        precision();
        sharding();
        leftovers();
    }

private:
    const json* take(const std::string& key)
    {
        const auto it = m_values.find(key);
        if (it == m_values.end()) {
            return nullptr;
        }
        m_used.insert(key);
        return &it->second;
    }
    // A number into `field` (range-checked later); a non-number is an error naming the key.
    std::optional<long long> number(const std::string& key, const std::string& field)
    {
        const json* v = take(key);
        if (!field.empty()) {
            d.source.emplace(field, key);
        }
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        if (!v->is_number()) {
            d.error(key, "must be a number, not \"" + clipped(v->is_string() ? v->get<std::string>() : v->dump()) + "\"");
            return std::nullopt;
        }
        if (!field.empty()) {
            d.set(field, *v, key);
        }
        return whole(*v, 0, 1LL << 40);
    }
    std::optional<bool> flag(const std::string& key)
    {
        const json* v = take(key);
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        if (!v->is_boolean()) {
            d.error(key, "must be true or false, not \"" + clipped(v->is_string() ? v->get<std::string>() : v->dump()) + "\"");
            return std::nullopt;
        }
        return v->get<bool>();
    }
    std::optional<std::string> text(const std::string& key)
    {
        const json* v = take(key);
        if (v == nullptr || v->is_null()) {
            return std::nullopt;
        }
        std::string s = v->is_string() ? v->get<std::string>() : v->dump();
        // Enum values may come with their class ("AttnBackend.flash").
        if (const std::size_t dot = s.rfind('.'); dot != std::string::npos && v->is_string() && s.find('/') == std::string::npos) {
            s = s.substr(dot + 1);
        }
        return s;
    }

    void model()
    {
        for (const auto& [key, field] : {std::pair<const char*, const char*>{"model.num_layers", "model.layers"},
                                         {"model.hidden_size", "model.hidden"},
                                         {"model.num_attention_heads", "model.heads"},
                                         {"model.ffn_hidden_size", "model.ffn_hidden"},
                                         {"model.kv_channels", "model.head_dim"},
                                         {"model.mtp_num_layers", "model.mtp_layers"}}) {
            number(key, field);
        }
        if (const auto groups = number("model.num_query_groups", "")) {
            const json* heads = d.get("model.heads");
            const auto h = heads != nullptr ? whole(*heads, 1, 1 << 20) : std::nullopt;
            if (!h || *groups < *h) {
                d.set("model.kv_heads", *groups, "model.num_query_groups");
            }
        }
        if (m_values.count("model.seq_length") != 0) {
            number("model.seq_length", "model.seq_len");
            for (const char* alias : {"dataset.sequence_length", "dataset.seq_length"}) {
                take(alias);
            }
        } else if (m_values.count("dataset.sequence_length") != 0 || m_values.count("dataset.seq_length") != 0) {
            number(m_values.count("dataset.sequence_length") != 0 ? "dataset.sequence_length" : "dataset.seq_length", "model.seq_len");
        } else if (m_values.count("model.max_position_embeddings") != 0) {
            number("model.max_position_embeddings", "model.seq_len");
            d.note("model.max_position_embeddings", "no model.seq_length or dataset.sequence_length: the sequence is taken as the position count");
        }
        if (m_values.count("model.vocab_size") != 0) {
            number("model.vocab_size", "model.vocab");
            take("tokenizer.vocab_size");
        } else if (m_values.count("tokenizer.vocab_size") != 0) {
            number("tokenizer.vocab_size", "model.vocab");
        }
        // Activation: TransformerConfig's gated_linear_unit with activation_func (default gelu, not gated).
        const auto gated = flag("model.gated_linear_unit");
        const auto func = text("model.activation_func");
        if (gated || func || !m_base) {
            const std::string fn = func.value_or("gelu");
            const bool is_gated = gated.value_or(false);
            std::string act;
            if (fn == "squared_relu" || fn == "relu2") {
                act = "squared_relu";
            } else if (fn == "relu") {
                act = "relu";
            } else if (is_gated) {
                act = "swiglu";
                if (fn != "silu" && fn != "swish") {
                    d.note("model.activation_func", "gated " + clipped(fn) + " is simulated as swiglu (the same three matrices)");
                }
            } else {
                act = "gelu";
                if (fn != "gelu" && fn != "fast_gelu" && fn != "openai_gelu" && fn != "gelu_impl") {
                    d.note("model.activation_func", clipped(fn) + " without a gate is simulated as gelu (two matrices)");
                }
            }
            d.set("model.activation", act, gated ? "model.gated_linear_unit" : "model.activation_func");
        }
        if (const auto norm = text("model.normalization")) {
            const std::string n = *norm == "RMSNorm" || *norm == "rmsnorm"       ? "rmsnorm"
                                  : *norm == "LayerNorm" || *norm == "layernorm" ? "layernorm"
                                                                                 : "";
            if (n.empty()) {
                d.error("model.normalization", "must be LayerNorm or RMSNorm, not \"" + clipped(*norm) + "\"");
            } else {
                d.set("model.normalization", n, "model.normalization");
            }
        } else if (!m_base) {
            d.set("model.normalization", "layernorm", "model.normalization");
        }
        if (const auto share = flag("model.share_embeddings_and_output_weights")) {
            d.set("model.tied_embeddings", *share, "model.share_embeddings_and_output_weights");
        } else if (!m_base) {
            d.set("model.tied_embeddings", true, "model.share_embeddings_and_output_weights");
        }
        if (const auto qk = flag("model.qk_layernorm"); qk && *qk) {
            d.set("model.qk_norm", true, "model.qk_layernorm");
        }
        if (const auto qkv = flag("model.add_qkv_bias"); qkv && *qkv) {
            d.set("model.qkv_bias", true, "model.add_qkv_bias");
        }
        const auto bias = flag("model.add_bias_linear");
        const json* act = d.get("model.activation");
        if (act != nullptr && *act != "gelu" && (bias || !m_base)) {
            d.set("model.linear_bias", bias.value_or(true), "model.add_bias_linear");
        }
        if (const json* window = take("model.window_size"); window != nullptr && !window->is_null()) {
            const json first = window->is_array() && !window->empty() ? (*window)[0] : *window;
            if (first.is_number()) {
                d.set("model.sliding_window", first, "model.window_size");
            } else {
                d.error("model.window_size", "must be [left, right] token counts, not " + clipped(window->dump()));
            }
        }
        number("model.window_attn_skip_freq", "model.full_attention_every");
        number("model.activation_func_clamp_value", "model.glu_clamp");
        if (const auto pattern = text("model.hybrid_override_pattern")) {
            d.set("model.layer_pattern", *pattern, "model.hybrid_override_pattern");
        }
        for (const auto& [key, field] : {std::pair<const char*, const char*>{"model.mamba_state_dim", "model.mamba.state_dim"},
                                         {"model.mamba_head_dim", "model.mamba.head_dim"},
                                         {"model.mamba_num_heads", "model.mamba.heads"},
                                         {"model.mamba_num_groups", "model.mamba.groups"}}) {
            if (m_values.count(key) != 0) {
                number(key, field);
            }
        }
        if (const auto mla = flag("model.multi_latent_attention"); mla && *mla) {
            d.set("model.attention", "mla", "model.multi_latent_attention");
            for (const auto& [key, field] : {std::pair<const char*, const char*>{"model.q_lora_rank", "model.mla.q_lora_rank"},
                                             {"model.kv_lora_rank", "model.mla.kv_lora_rank"},
                                             {"model.qk_head_dim", "model.mla.qk_head_dim"},
                                             {"model.qk_pos_emb_head_dim", "model.mla.qk_rope_head_dim"},
                                             {"model.v_head_dim", "model.mla.v_head_dim"}}) {
                if (const json* v = take(key)) {
                    d.set(field, v->is_null() ? json(0) : *v, key);
                }
            }
            d.erase("model.kv_heads");
            d.erase("model.head_dim");
        }
        moe();
    }

    void moe()
    {
        if (const auto dispatcher = text("model.moe_token_dispatcher_type")) {
            if (*dispatcher == "alltoall" || *dispatcher == "flex") {
                d.set("training.moe_dispatcher", *dispatcher, "model.moe_token_dispatcher_type");
            } else {
                d.note("model.moe_token_dispatcher_type", "\"" + clipped(*dispatcher) + "\" is simulated as alltoall");
            }
        }
        const auto experts = number("model.num_moe_experts", "");
        if (experts && *experts > 0) {
            d.set("model.moe.experts", *experts, "model.num_moe_experts");
        }
        if (!d.has("model.moe.experts")) {
            return;
        }
        if (!number("model.moe_router_topk", "model.moe.top_k") && !d.has("model.moe.top_k")) {
            d.set("model.moe.top_k", 2, "model.moe_router_topk");
            d.note("model.moe_router_topk", "not given: Megatron-Core's default, 2 experts per token");
        }
        number("model.moe_ffn_hidden_size", "model.moe.expert_ffn_hidden");
        if (number("model.moe_shared_expert_intermediate_size", "model.moe.shared_expert_ffn_hidden")) {
            d.set("model.moe.shared_experts", 1, "model.moe_shared_expert_intermediate_size");
        }
        if (const json* freq = take("model.moe_layer_freq"); freq != nullptr && !freq->is_null()) {
            if (freq->is_number()) {
                d.set("model.moe.layer_freq", *freq, "model.moe_layer_freq");
            } else {
                std::vector<int> list;
                std::string why;
                if (freq->is_array()) {
                    for (const json& v : *freq) {
                        list.push_back(v == 1 ? 1 : 0);
                    }
                } else if (const auto parsed = eval_layer_list(freq->get<std::string>(), 100000, why)) {
                    list = *parsed;
                }
                if (list.empty()) {
                    d.error("model.moe_layer_freq", "must be a number or a list of 0 and 1 per layer" + (why.empty() ? "" : ": " + why));
                } else {
                    apply_layer_list(list, "model.moe_layer_freq", d);
                }
            }
        }
        if (number("model.moe_expert_capacity_factor", "model.moe.capacity_factor")) {
            d.set("model.moe.dropless", false, "model.moe_expert_capacity_factor");
            if (const auto pad = flag("model.moe_pad_expert_input_to_capacity"); pad && *pad) {
                d.set("model.moe.pad_to_capacity", true, "model.moe_pad_expert_input_to_capacity");
            }
        }
        for (const char* key : {"model.moe_router_num_groups", "model.moe_router_group_topk"}) {
            if (const json* v = take(key); v != nullptr && !v->is_null()) {
                d.note(key, "group-limited routing is not simulated: a token may go to any expert");
            }
        }
    }

    void parallel()
    {
        for (const auto& [key, field] : {std::pair<const char*, const char*>{"model.tensor_model_parallel_size", "plan.tp"},
                                         {"model.pipeline_model_parallel_size", "plan.pp"},
                                         {"model.context_parallel_size", "plan.cp"},
                                         {"model.expert_model_parallel_size", "plan.ep"},
                                         {"model.expert_tensor_parallel_size", "plan.etp"},
                                         {"model.num_layers_in_first_pipeline_stage", "plan.first_stage_layers"},
                                         {"model.num_layers_in_last_pipeline_stage", "plan.last_stage_layers"}}) {
            number(key, field);
        }
        if (const auto v = number("model.virtual_pipeline_model_parallel_size", ""); v && *v > 1) {
            d.set("plan.schedule", "interleaved", "model.virtual_pipeline_model_parallel_size");
            d.set("plan.virtual_stages", *v, "model.virtual_pipeline_model_parallel_size");
        }
        if (const auto layout = text("model.pipeline_model_parallel_layout")) {
            d.set("plan.pipeline_layout", *layout, "model.pipeline_model_parallel_layout");
        }
        if (const auto kind = text("model.cp_comm_type")) {
            if (*kind == "p2p" || *kind == "all_gather") {
                d.set("plan.cp_kind", "ring", "model.cp_comm_type");
            } else if (*kind == "a2a" || *kind == "a2a+p2p") {
                d.set("plan.cp_kind", "all_to_all", "model.cp_comm_type");
            } else {
                d.error("model.cp_comm_type", "must be p2p, a2a, all_gather or a2a+p2p, not \"" + clipped(*kind) + "\"");
            }
        }
        if (const auto sp = flag("model.sequence_parallel"); sp && *sp) {
            d.set("plan.sequence_parallel", true, "model.sequence_parallel");
        }
        for (const char* key : {"model.tp_comm_overlap", "comm_overlap.tp_comm_overlap"}) {
            if (const auto on = flag(key); on && *on) {
                d.set("plan.tp_overlap", true, key);
            }
        }
        for (const char* key : {"comm_overlap.overlap_moe_expert_parallel_comm", "model.overlap_moe_expert_parallel_comm"}) {
            if (const auto on = flag(key); on && *on) {
                d.set("plan.moe_overlap", true, key);
            }
        }
        for (const char* key : {"model.overlap_p2p_comm", "comm_overlap.overlap_p2p_comm"}) {
            if (const auto on = flag(key)) {
                d.overlap_p2p_default = *on;
            }
        }
        if (const auto mapping = flag("dist.use_tp_pp_dp_mapping"); mapping && *mapping) {
            d.set("plan.rank_order", "tp-cp-ep-pp-dp", "dist.use_tp_pp_dp_mapping");
        }
        for (const char* key : {"model.account_for_embedding_in_pipeline_split", "model.account_for_loss_in_pipeline_split"}) {
            if (const auto on = flag(key); on && *on) {
                d.note(key, "is not simulated: the layers split as if the embedding and the loss took no stage's room");
            }
        }
        // Recomputation.
        const auto granularity = text("model.recompute_granularity");
        const auto method = text("model.recompute_method");
        const auto layers = number("model.recompute_num_layers", "");
        if (granularity == "full") {
            d.set("plan.recompute", "full", "model.recompute_granularity");
            if (method == "block" || (layers && *layers > 1)) {
                d.note(method == "block" ? "model.recompute_method" : "model.recompute_num_layers",
                       "partial or blocked full recomputation is simulated as per-layer full recomputation");
            }
        } else if (granularity && *granularity != "selective") {
            d.error("model.recompute_granularity", "must be full, selective or null, not \"" + clipped(*granularity) + "\"");
        }
        unsigned bits = 0;
        bool core_attn = granularity == "selective";
        if (const json* modules = take("model.recompute_modules"); modules != nullptr && modules->is_array()) {
            core_attn = false;
            for (const json& m : *modules) {
                const std::string name = m.is_string() ? m.get<std::string>() : m.dump();
                if (name == "core_attn") {
                    core_attn = true;
                } else if (const unsigned bit = recompute_module_bit(name)) {
                    bits |= bit;
                } else {
                    d.note("model.recompute_modules", "\"" + clipped(name) + "\" is not simulated: those activations are kept");
                }
            }
        }
        if (granularity == "selective") {
            d.set("plan.recompute", core_attn ? "selective" : "none", "model.recompute_granularity");
            if (bits != 0) {
                d.set("plan.recompute_modules", recompute_module_names(bits), "model.recompute_modules");
            }
        }
        if (const auto offload = flag("model.cpu_offloading"); offload && *offload) {
            const auto n = number("model.cpu_offloading_num_layers", "");
            d.offload_layers = n.value_or(1);
            d.offload_key = "model.cpu_offloading_num_layers";
        }
        take("model.cpu_offloading_num_layers");
    }

    void batch()
    {
        number("train.micro_batch_size", "plan.micro_batch");
        number("train.global_batch_size", "training.global_batch");
        if (const auto iters = number("train.train_iters", "")) {
            d.train_iters = static_cast<double>(*iters);
            d.train_length_key = "train.train_iters";
        } else if (const auto samples = number("train.train_samples", "")) {
            d.train_samples = static_cast<double>(*samples);
            d.train_length_key = "train.train_samples";
        }
        if (const json* rampup = take("train.rampup_batch_size"); rampup != nullptr && !rampup->is_null()) {
            d.note("train.rampup_batch_size", "batch-size ramp-up is not simulated: every iteration runs the full global batch");
        }
    }

    void precision()
    {
        std::string p;
        std::string recipe;
        std::string key = "mixed_precision";
        if (const auto preset = text("mixed_precision")) {
            // megatron.bridge.training.mixed_precision's presets.
            static const std::pair<const char*, std::pair<const char*, const char*>> presets[] = {
                {"bf16_mixed", {"bf16", ""}},
                {"fp16_mixed", {"fp16", ""}},
                {"16-mixed", {"fp16", ""}},
                {"bf16-mixed", {"bf16", ""}},
                {"32", {"fp32", ""}},
                {"fp32", {"fp32", ""}},
                {"bf16_with_fp8_delayed_scaling_mixed", {"fp8", "delayed"}},
                {"bf16_with_fp8_current_scaling_mixed", {"fp8", "current"}},
                {"bf16_with_fp8_subchannel_scaling_mixed", {"fp8", "blockwise"}},
                {"bf16_with_mxfp8_mixed", {"fp8", "mxfp8"}},
                {"bf16_with_nvfp4_mixed", {"nvfp4", ""}},
                {"fp16_with_fp8_delayed_scaling_mixed", {"fp8", "delayed"}},
                {"fp16_with_fp8_current_scaling_mixed", {"fp8", "current"}},
                {"fp16_with_fp8_subchannel_scaling_mixed", {"fp8", "blockwise"}},
                {"fp16_with_mxfp8_mixed", {"fp8", "mxfp8"}},
            };
            for (const auto& [name, value] : presets) {
                if (*preset == name) {
                    p = value.first;
                    recipe = value.second;
                }
            }
            if (p.empty()) {
                const bool fp8 = preset->find("fp8") != std::string::npos;
                p = fp8 ? "fp8" : preset->find("fp16") == 0 ? "fp16" : "bf16";
                recipe = fp8 ? "current" : "";
                d.note("mixed_precision",
                       "\"" + clipped(*preset) + "\" is not a preset vTrain knows: simulated as " + p + (fp8 ? " with current scaling" : ""));
            }
            if (preset->rfind("fp16_with", 0) == 0) {
                d.note("mixed_precision", "FP8 on fp16 master weights is simulated as FP8 on bf16");
            }
        }
        // Sub-keys (mixed_precision.fp8=hybrid ...), on top of a preset or alone.
        if (const auto bf16 = flag("mixed_precision.bf16"); bf16 && *bf16) {
            p = p.empty() ? "bf16" : p;
            key = "mixed_precision.bf16";
        }
        if (const auto fp16 = flag("mixed_precision.fp16"); fp16 && *fp16) {
            p = p.empty() || p == "bf16" ? "fp16" : p;
            key = "mixed_precision.fp16";
        }
        for (const char* k : {"mixed_precision.fp8", "model.fp8"}) {
            if (const auto fp8 = text(k)) {
                p = "fp8";
                key = k;
                recipe = recipe.empty() ? "delayed" : recipe;
            }
        }
        for (const char* k : {"mixed_precision.fp8_recipe", "model.fp8_recipe"}) {
            if (const auto r = text(k)) {
                recipe = *r == "tensorwise" ? "current" : *r;
                if (recipe != "delayed" && recipe != "current" && recipe != "blockwise" && recipe != "mxfp8") {
                    d.error(k, "must be delayed, tensorwise, blockwise or mxfp8, not \"" + clipped(*r) + "\"");
                }
            }
        }
        for (const char* k : {"mixed_precision.fp4", "model.fp4"}) {
            if (const auto fp4 = text(k)) {
                p = "nvfp4";
                key = k;
            }
        }
        take("mixed_precision.fp4_recipe");
        take("model.fp4_recipe");
        for (const char* k : {"mixed_precision.fp8_param_gather", "mixed_precision.fp8_param", "model.fp8_param"}) {
            if (const auto on = flag(k); on && *on) {
                d.set("training.fp8_param_gather", true, k);
            }
        }
        if (p.empty()) {
            if (!m_base) {
                p = "bf16";
                d.default_chosen("training.precision: bf16 (no mixed_precision override: the recipe's own is not known, bf16_mixed assumed)");
            }
        }
        if (!p.empty()) {
            d.set("training.precision", p, key);
        }
        if (p == "fp8" && !recipe.empty()) {
            d.set("training.fp8_recipe", recipe, key);
        }
        if (const auto backend = text("model.attention_backend")) {
            d.set("training.attention", *backend == "unfused" || *backend == "local" ? "unfused" : "flash", "model.attention_backend");
        }
        if (const auto fused = flag("model.cross_entropy_loss_fusion"); fused && *fused) {
            const auto impl = text("model.cross_entropy_fusion_impl");
            if (impl == "te") {
                d.set("training.te_cross_entropy", true, "model.cross_entropy_fusion_impl");
            } else {
                d.note("model.cross_entropy_loss_fusion", "Megatron's native fused cross-entropy is simulated as the unfused loss");
            }
        }
        take("model.cross_entropy_fusion_impl");
        if (const auto impl = text("model.cuda_graph_impl"); impl && *impl != "none") {
            const json* scope = take("model.cuda_graph_scope");
            const bool full = scope != nullptr && ((scope->is_string() && scope->get<std::string>() == "full_iteration") ||
                                                   (scope->is_array() && !scope->empty() && (*scope)[0] == "full_iteration"));
            if (full) {
                d.set("training.cuda_graphs", "full_iteration", "model.cuda_graph_scope");
            } else {
                d.set("training.cuda_graphs", "scoped", "model.cuda_graph_impl");
                if (scope != nullptr && scope->is_array()) {
                    std::vector<std::string> names;
                    for (const json& s : *scope) {
                        const std::string n = s.is_string() ? s.get<std::string>() : s.dump();
                        if (cuda_graph_scope_bit(n) != 0) {
                            names.push_back(n);
                        } else {
                            d.note("model.cuda_graph_scope", "\"" + clipped(n) + "\" is not a scope vTrain simulates: left out");
                        }
                    }
                    d.set("training.cuda_graph_scope", names, "model.cuda_graph_scope");
                }
            }
        }
        take("model.cuda_graph_scope");
    }

    void sharding()
    {
        int stage = 0;
        std::string key = "ddp.use_distributed_optimizer";
        for (const char* k : {"ddp.use_distributed_optimizer", "optimizer.use_distributed_optimizer"}) {
            if (const auto on = flag(k); on && *on) {
                stage = 1;
                key = k;
            }
        }
        bool fsdp = false;
        for (const char* k : {"ddp.use_megatron_fsdp", "ddp.use_custom_fsdp"}) {
            if (const auto on = flag(k); on && *on) {
                fsdp = true;
            }
        }
        if (const auto strategy = text("ddp.data_parallel_sharding_strategy")) {
            if (fsdp) {
                const int s = *strategy == "no_shard"             ? 0
                              : *strategy == "optim"              ? 1
                              : *strategy == "optim_grads"        ? 2
                              : *strategy == "optim_grads_params" ? 3
                                                                  : -1;
                if (s < 0) {
                    d.error("ddp.data_parallel_sharding_strategy",
                            "must be no_shard, optim, optim_grads or optim_grads_params, not \"" + clipped(*strategy) + "\"");
                } else {
                    stage = s;
                    key = "ddp.data_parallel_sharding_strategy";
                }
            }
        } else if (fsdp) {
            stage = 3;
            key = "ddp.use_megatron_fsdp";
            d.note("ddp.use_megatron_fsdp", "without ddp.data_parallel_sharding_strategy: optim_grads_params (ZeRO-3) assumed");
        }
        d.set("plan.zero_stage", stage, key);
        if (const auto k = number("ddp.num_distributed_optimizer_instances", ""); k && *k > 1) {
            d.optimizer_instances = *k;
            d.optimizer_instances_key = "ddp.num_distributed_optimizer_instances";
        }
        bool overlap = false;
        for (const char* k : {"ddp.overlap_grad_reduce", "comm_overlap.overlap_grad_reduce"}) {
            if (const auto on = flag(k)) {
                overlap = *on;
            }
        }
        d.set("plan.overlap_grad_reduce", overlap, "ddp.overlap_grad_reduce");
        for (const char* k : {"ddp.overlap_param_gather", "optimizer.overlap_param_gather", "comm_overlap.overlap_param_gather"}) {
            if (const auto on = flag(k); on && *on) {
                d.set("plan.overlap_param_gather", true, k);
            }
        }
        if (const auto bucket = number("ddp.bucket_size", "")) {
            d.bucket_elements = static_cast<double>(*bucket);
            d.bucket_key = "ddp.bucket_size";
        }
        if (const auto fp32 = flag("ddp.grad_reduce_in_fp32"); fp32 && !*fp32) {
            d.set("training.bf16_gradients", true, "ddp.grad_reduce_in_fp32");
        }
        if (const auto offload = flag("optimizer.optimizer_cpu_offload"); offload && *offload) {
            d.set("plan.offload_optimizer", true, "optimizer.optimizer_cpu_offload");
            if (const json* fraction = take("optimizer.optimizer_offload_fraction");
                fraction != nullptr && fraction->is_number() && fraction->get<double>() < 1) {
                d.note("optimizer.optimizer_offload_fraction", "a partial offload is simulated as the whole optimizer on the CPU");
            }
        }
        take("optimizer.optimizer_offload_fraction");
    }

    void leftovers()
    {
        for (const std::string& key : m_order) {
            if (m_used.count(key) != 0) {
                continue;
            }
            const std::string group = key.substr(0, key.find('.'));
            if (group == "peft") {
                d.note(key, "parameter-efficient fine-tuning is not simulated: every weight trains");
            } else if (quiet_groups().count(group) != 0 || quiet_keys().count(key) != 0 || group == "optimizer" ||
                       (group == "comm_overlap" && key.find("overlap") == std::string::npos) || group == "train") {
                d.ignore(key);
            } else {
                d.unknown_key(key);
            }
        }
    }

    Draft& d;
    bool m_base;
    std::map<std::string, json> m_values;
    std::vector<std::string> m_order;
    std::set<std::string> m_used;
};

std::map<std::string, FlagArity> bridge_arity()
{
    std::map<std::string, FlagArity> m;
    for (const char* v : {"--recipe", "--model", "--mode", "--dataset", "--config-file", "--config_file", "--step-func", "--step_func", "--hf-path",
                          "--hf_path", "--peft", "--seq-length", "--seq_length"}) {
        m[v] = FlagArity::Value;
    }
    return m;
}

} // namespace

void read_bridge_overrides(const std::string& text, Draft& d)
{
    const ShellWords words = split_shell_words(text);
    if (!words.error.empty()) {
        d.error("", words.error);
        return;
    }
    Flags flags(words, bridge_arity());
    flags.read_launcher(d);
    // The recipe gives the model when vTrain knows it (and no --model replaced it).
    for (const char* name : {"--recipe", "--model"}) {
        const std::string* recipe = flags.value(name, d);
        if (recipe == nullptr || *recipe == kBridgeBaseRecipe) {
            continue; // the base recipe `vtrain launch` writes: the overrides set every model field
        }
        if (const KnownModel* known = known_model_for_recipe(*recipe); known != nullptr && d.model.empty()) {
            apply_known_model(*known, std::string(name) + " " + clipped(*recipe), d);
            d.default_chosen("model: " + std::string(known->id) + "'s shape (the recipe " + clipped(*recipe) + ")");
        } else if (known == nullptr) {
            d.note(name, "\"" + clipped(*recipe) + "\" is not a recipe whose model vTrain knows: the model comes from the model.* overrides" +
                             std::string(d.model.empty() ? "" : " on top of --model"));
        }
        d.note(name, "the recipe's own parallelism, batch and precision are not known to vTrain: what the overrides leave out takes "
                     "Megatron-Core's defaults (tp = pp = 1, no distributed optimizer, no recomputation)");
    }
    for (const char* name : {"--mode", "--dataset", "--step-func", "--step_func", "--hf-path", "--hf_path"}) {
        if (flags.take(name) != nullptr) {
            d.ignore(name);
        }
    }
    if (const std::string* config = flags.value("--config-file", d)) {
        d.note("--config-file", "the YAML file " + clipped(*config) + " is not read: give its settings as key=value overrides");
    }
    BridgeReader reader(d);
    std::size_t overrides = 0;
    for (const ShellWord& w : flags.others()) {
        std::string t = w.text;
        const std::size_t eq = t.find('=');
        if (eq == std::string::npos) {
            continue;
        }
        std::string key = t.substr(0, eq);
        if (key.rfind("++", 0) == 0) {
            key = key.substr(2);
        } else if (!key.empty() && key[0] == '+') {
            key = key.substr(1);
        }
        if (!is_override_key(key)) {
            continue;
        }
        if (!w.unresolved.empty()) {
            d.error(key, "\"" + clipped(t.substr(eq + 1)) + "\" holds " + clipped(w.unresolved) + ", which the file does not set");
            continue;
        }
        // Shell variables set in the file (TP=4) are not overrides unless they name a config group.
        const bool group = key.find('.') != std::string::npos || key == "mixed_precision";
        if (!group) {
            continue;
        }
        reader.add(key, t.substr(eq + 1), w.line);
        ++overrides;
    }
    for (const ShellWord& w : flags.others()) {
        if (w.text.size() > 1 && w.text[0] == '~' && is_override_key(w.text.substr(1))) {
            d.note(w.text, "deletes a recipe field: not simulated (the field's default is assumed)");
        }
    }
    if (overrides == 0 && d.model.empty()) {
        d.error("model.num_layers", "is missing: these are not Megatron-Bridge overrides (no section.key=value, no known --recipe)");
        return;
    }
    reader.read();
    for (const Flag* f : flags.unused()) {
        d.unknown_key(f->name);
    }
}

} // namespace vtrain::import_detail
