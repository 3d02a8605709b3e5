// SPDX-License-Identifier: MIT
#include "vtrain/scenario_json.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "vtrain/json_fields.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/rank_layout.h"

namespace vtrain {
namespace {

using json_fields::Reader;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

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
        const std::string a = lower(*act);
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
        const std::string n = lower(*norm);
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
        const std::string a = lower(*att);
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
            r.error("layer_pattern", std::string("has the unknown letter '") + m.layer_pattern[bad] + "' at position " + std::to_string(bad) +
                                         " (M Mamba-2, * attention, - dense FFN, E MoE FFN)");
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

ClusterSpec read_cluster(Reader r)
{
    r.reject_unknown({"gpu", "num_gpus", "gpus_per_node", "nvlink_domain_gpus", "price_per_gpu_hour", "gpu_prices", "nvlink_bus_gbytes_per_s",
                      "nic_gbit_per_s", "nics_per_node", "inter_node_latency_us", "description"});
    ClusterSpec c;
    c.gpu = r.required_string("gpu");
    c.num_gpus = r.required_int("num_gpus", 1, 10'000'000);
    c.gpus_per_node = r.optional_int("gpus_per_node", 1, 1024).value_or(0);
    c.nvlink_domain_gpus = r.optional_int("nvlink_domain_gpus", 1, 1'000'000).value_or(0);
    c.price_per_gpu_hour = r.optional_number("price_per_gpu_hour", 0, 1000);
    if (r.has("gpu_prices")) {
        Reader prices = r.child("gpu_prices");
        for (const auto& [id, value] : prices.json().items()) {
            if (id == c.gpu) {
                prices.error(id, "is the cluster's own GPU: its price is cluster.price_per_gpu_hour");
            } else if (const auto price = prices.optional_number(id.c_str(), 0, 1000)) {
                c.gpu_prices[id] = *price;
            }
        }
    }
    c.links.nvlink_bus_gbytes_per_s = r.optional_number("nvlink_bus_gbytes_per_s", 1, 1e5);
    c.links.nic_gbit_per_s = r.optional_number("nic_gbit_per_s", 1, 1e5);
    c.links.nics_per_node = r.optional_int("nics_per_node", 1, 64);
    c.links.inter_node_latency_us = r.optional_number("inter_node_latency_us", 0, 1e4);
    return c;
}

TrainingSpec read_training(Reader r)
{
    r.reject_unknown({"global_batch",
                      "tokens",
                      "precision",
                      "fp8_recipe",
                      "attention",
                      "grad_accumulation_bytes",
                      "optimizer_moments",
                      "bf16_gradients",
                      "fp8_param_gather",
                      "per_op_sac",
                      "tp_overlap_forward_only",
                      "eager_elementwise",
                      "bf16_edge_layers",
                      "moe_dispatcher",
                      "description",
                      "fp8_axiswise_casts",
                      "attention_peak_fraction",
                      "cp_ring_pytorch",
                      "loss_bytes_per_logit",
                      "cuda_graphs",
                      "cuda_graph_scope",
                      "fused_grouped_mlp",
                      "ssd_scan_time_factor",
                      "te_cross_entropy",
                      "overlap_p2p"});
    TrainingSpec t;
    t.global_batch = r.required_int("global_batch", 1, 1'000'000'000);
    t.tokens = r.optional_number("tokens", 0, 1e17).value_or(0);
    if (const auto p = r.optional_string("precision")) {
        if (const auto v = precision_from_string(*p)) {
            t.precision = *v;
        } else {
            r.error("precision", "must be \"bf16\", \"fp16\", \"fp32\", \"fp8\" or \"nvfp4\", not \"" + json_fields::bounded(*p) + "\"");
        }
    }
    // The recipe is read whatever the precision: a search over precisions uses it for its fp8 plans.
    if (const auto recipe = r.optional_string("fp8_recipe")) {
        if (const auto v = fp8_recipe_from_string(*recipe)) {
            t.fp8_recipe = *v;
        } else {
            r.error("fp8_recipe", "must be \"delayed\", \"current\", \"blockwise\" or \"mxfp8\", not \"" + json_fields::bounded(*recipe) + "\"");
        }
    }
    if (const auto a = r.optional_string("attention")) {
        const std::string s = lower(*a);
        if (s == "flash") {
            t.attention = AttentionKernel::Flash;
        } else if (s == "unfused") {
            t.attention = AttentionKernel::Unfused;
        } else {
            r.error("attention", "must be \"flash\" or \"unfused\", not \"" + json_fields::bounded(*a) + "\"");
        }
    }
    t.grad_accumulation_bytes = r.optional_number("grad_accumulation_bytes", 0, 64).value_or(0);
    if (const auto moments = r.optional_string("optimizer_moments")) {
        if (*moments == "bf16" || *moments == "fp32") {
            t.bf16_optimizer_moments = *moments == "bf16";
        } else {
            r.error("optimizer_moments", "must be \"fp32\" or \"bf16\", not \"" + json_fields::bounded(*moments) + "\"");
        }
    }
    t.bf16_gradients = r.optional_bool("bf16_gradients").value_or(false);
    t.fp8_param_gather = r.optional_bool("fp8_param_gather").value_or(false);
    t.per_op_sac = r.optional_bool("per_op_sac").value_or(false);
    t.tp_overlap_forward_only = r.optional_bool("tp_overlap_forward_only").value_or(false);
    t.eager_elementwise = r.optional_bool("eager_elementwise").value_or(false);
    t.bf16_edge_layers = r.optional_int("bf16_edge_layers", 0, 1'000'000).value_or(0);
    t.fp8_axiswise_casts = r.optional_bool("fp8_axiswise_casts").value_or(false);
    t.attention_peak_fraction = r.optional_number("attention_peak_fraction", 0, 1).value_or(0);
    t.cp_ring_pytorch = r.optional_bool("cp_ring_pytorch").value_or(false);
    t.loss_bytes_per_logit = r.optional_number("loss_bytes_per_logit", 0, 64).value_or(0);
    t.fused_grouped_mlp = r.optional_bool("fused_grouped_mlp").value_or(false);
    t.ssd_scan_time_factor = r.optional_number("ssd_scan_time_factor", 0.1, 100).value_or(1);
    t.te_cross_entropy = r.optional_bool("te_cross_entropy").value_or(false);
    t.overlap_p2p = r.optional_bool("overlap_p2p").value_or(false);
    if (const auto d = r.optional_string("moe_dispatcher")) {
        const std::string s = lower(*d);
        if (s == "alltoall") {
            t.moe_dispatcher = MoeDispatcher::AllToAll;
        } else if (s == "flex") {
            t.moe_dispatcher = MoeDispatcher::Flex;
        } else {
            r.error("moe_dispatcher", "must be \"alltoall\" (NCCL, one row per token and expert) or \"flex\" (DeepEP/HybridEP: once per "
                                      "destination NVLink domain), not \"" +
                                          json_fields::bounded(*d) + "\"");
        }
    }
    if (const auto g = r.optional_string("cuda_graphs")) {
        if (const auto v = cuda_graphs_from_string(*g)) {
            t.cuda_graphs = *v;
        } else {
            r.error("cuda_graphs", "must be \"none\" (every kernel launched by the host), \"scoped\" (per-module graphs) or "
                                   "\"full_iteration\" (the whole forward and backward captured), not \"" +
                                       json_fields::bounded(*g) + "\"");
        }
    }
    if (r.json().contains("cuda_graph_scope")) {
        const nlohmann::json& list = r.json()["cuda_graph_scope"];
        if (!list.is_array() || list.size() > 16) {
            r.error("cuda_graph_scope", "must be a list of module names (\"attn\", \"mlp\", \"moe_router\", \"moe_preprocess\", \"mamba\")");
        } else {
            unsigned bits = 0;
            for (const nlohmann::json& item : list) {
                const unsigned bit = item.is_string() ? cuda_graph_scope_bit(item.get<std::string>()) : 0u;
                if (bit == 0) {
                    r.error("cuda_graph_scope", "names \"attn\", \"mlp\", \"moe_router\", \"moe_preprocess\" or \"mamba\", not \"" +
                                                    json_fields::bounded(item.is_string() ? item.get<std::string>() : item.dump()) + "\"");
                }
                bits |= bit;
            }
            t.cuda_graph_scope = bits;
        }
    }
    return t;
}

Schedule read_schedule(Reader& r, const char* key, Schedule fallback)
{
    const auto s = r.optional_string(key);
    if (!s) {
        return fallback;
    }
    if (const auto v = schedule_from_string(*s)) {
        return *v;
    }
    r.error(key, "must be \"gpipe\", \"1f1b\" or \"interleaved\", not \"" + json_fields::bounded(*s) + "\"");
    return fallback;
}

Recompute read_recompute(Reader& r, const char* key, Recompute fallback)
{
    const nlohmann::json& j = r.json();
    if (j.is_object() && j.contains(key) && j[key].is_boolean()) {
        return j[key].get<bool>() ? Recompute::Full : Recompute::None;
    }
    const auto s = r.optional_string(key);
    if (!s) {
        return fallback;
    }
    if (const auto v = recompute_from_string(*s)) {
        return *v;
    }
    r.error(key, "must be \"none\", \"selective\" or \"full\", not \"" + json_fields::bounded(*s) + "\"");
    return fallback;
}

Plan read_plan(Reader r)
{
    r.reject_unknown({"tp",
                      "pp",
                      "dp",
                      "micro_batch",
                      "schedule",
                      "virtual_stages",
                      "recompute",
                      "sequence_parallel",
                      "zero_stage",
                      "shard_group",
                      "grad_bucket_mb",
                      "overlap_grad_reduce",
                      "overlap_param_gather",
                      "cp",
                      "cp_kind",
                      "ep",
                      "etp",
                      "moe_overlap",
                      "tp_overlap",
                      "first_stage_layers",
                      "last_stage_layers",
                      "pipeline_layout",
                      "rank_order",
                      "offload_optimizer",
                      "offload_activations",
                      "recompute_modules",
                      "description"});
    Plan p;
    p.tp = r.required_int("tp", 1, 1 << 16);
    p.pp = r.required_int("pp", 1, 1 << 16);
    p.dp = r.required_int("dp", 1, 10'000'000);
    p.micro_batch = r.required_int("micro_batch", 1, 1 << 20);
    p.schedule = read_schedule(r, "schedule", Schedule::OneFOneB);
    p.virtual_stages = r.optional_int("virtual_stages", 1, 1024).value_or(p.schedule == Schedule::Interleaved ? 2 : 1);
    p.recompute = read_recompute(r, "recompute", Recompute::None);
    p.sequence_parallel = r.optional_bool("sequence_parallel").value_or(false);
    p.zero_stage = r.optional_int("zero_stage", 0, 3).value_or(0);
    p.shard_group = r.optional_int("shard_group", 1, 10'000'000).value_or(0);
    p.grad_bucket_mb = r.optional_number("grad_bucket_mb", 0.01, 1e6).value_or(40);
    p.overlap_grad_reduce = r.optional_bool("overlap_grad_reduce").value_or(true);
    p.overlap_param_gather = r.optional_bool("overlap_param_gather").value_or(false);
    p.cp = r.optional_int("cp", 1, 1 << 16).value_or(1);
    if (const auto kind = r.optional_string("cp_kind")) {
        const std::string k = lower(*kind);
        if (k == "ring" || k == "p2p") {
            p.cp_kind = ContextParallelKind::Ring;
        } else if (k == "all_to_all" || k == "a2a" || k == "ulysses") {
            p.cp_kind = ContextParallelKind::AllToAll;
        } else {
            r.error("cp_kind", "must be \"ring\" or \"all_to_all\", not \"" + json_fields::bounded(*kind) + "\"");
        }
    }
    p.ep = r.optional_int("ep", 1, 1 << 16).value_or(1);
    p.etp = r.optional_int("etp", 1, 1 << 16).value_or(0);
    p.moe_overlap = r.optional_bool("moe_overlap").value_or(false);
    p.tp_overlap = r.optional_bool("tp_overlap").value_or(false);
    if (r.has("recompute_modules")) {
        const nlohmann::json& list = r.json().at("recompute_modules");
        if (!list.is_array()) {
            r.error("recompute_modules", "must be a list of \"layernorm\", \"mla_up_proj\", \"moe_act\", \"moe\"");
        } else {
            for (const auto& v : list) {
                const unsigned bit = v.is_string() ? recompute_module_bit(v.get<std::string>()) : 0u;
                if (bit != 0) {
                    p.recompute_modules |= bit;
                } else {
                    r.error("recompute_modules", "knows \"layernorm\", \"mla_up_proj\", \"moe_act\" and \"moe\", not " + json_fields::excerpt(v));
                }
            }
        }
    }
    p.first_stage_layers = r.optional_int("first_stage_layers", 1, 100000).value_or(0);
    p.last_stage_layers = r.optional_int("last_stage_layers", 1, 100000).value_or(0);
    p.pipeline_layout = r.optional_string("pipeline_layout").value_or("");
    if (const auto order = r.optional_string("rank_order")) {
        std::string why;
        if (const auto parsed = parse_rank_order(lower(*order), &why)) {
            p.rank_order = *parsed;
        } else {
            r.error("rank_order", "\"" + json_fields::bounded(*order) + "\" " + why);
        }
    }
    p.offload_optimizer = r.optional_bool("offload_optimizer").value_or(false);
    p.offload_activations = r.optional_number("offload_activations", 0, 1).value_or(0);
    if (!p.pipeline_layout.empty() && (p.first_stage_layers > 0 || p.last_stage_layers > 0)) {
        r.error("pipeline_layout", "give either pipeline_layout or first_stage_layers / last_stage_layers, not both");
    }
    if (!p.pipeline_layout.empty()) {
        std::vector<VirtualStage> stages;
        if (auto why = parse_pipeline_layout(p.pipeline_layout, stages)) {
            r.error("pipeline_layout", "does not parse: " + *why);
        }
    }
    return p;
}

template <typename T, typename ReadOne>
std::vector<T> read_list(Reader& r, const char* key, ReadOne read_one)
{
    std::vector<T> out;
    const nlohmann::json& j = r.json();
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) {
        return out;
    }
    const nlohmann::json& list = j[key];
    if (!list.is_array()) {
        r.error(key, "must be a list");
        return out;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (auto v = read_one(list[i])) {
            out.push_back(*v);
        } else {
            r.error(key, "item " + std::to_string(i) + " (" + json_fields::excerpt(list[i]) + ") is not valid");
        }
    }
    return out;
}

std::optional<int> positive_int(const nlohmann::json& j, int max)
{
    return json_fields::whole_number_in_range(j, 1, max);
}

SearchSpace read_search(Reader r)
{
    r.reject_unknown({"tp",
                      "pp",
                      "micro_batch",
                      "schedule",
                      "virtual_stages",
                      "recompute",
                      "sequence_parallel",
                      "zero_stage",
                      "num_gpus",
                      "gpu",
                      "cp",
                      "ep",
                      "etp",
                      "precision",
                      "tp_overlap",
                      "moe_overlap",
                      "overlap_grad_reduce",
                      "rank_order",
                      "offload_optimizer",
                      "offload_activations",
                      "description"});
    SearchSpace s;
    s.tp = read_list<int>(r, "tp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.pp = read_list<int>(r, "pp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.micro_batch = read_list<int>(r, "micro_batch", [](const nlohmann::json& j) { return positive_int(j, 1 << 20); });
    s.virtual_stages = read_list<int>(r, "virtual_stages", [](const nlohmann::json& j) { return positive_int(j, 1024); });
    s.num_gpus = read_list<int>(r, "num_gpus", [](const nlohmann::json& j) { return positive_int(j, 10'000'000); });
    s.zero_stage = read_list<int>(r, "zero_stage", [](const nlohmann::json& j) { return json_fields::whole_number_in_range(j, 0, 3); });
    s.cp = read_list<int>(r, "cp", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.ep = read_list<int>(r, "ep", [](const nlohmann::json& j) { return positive_int(j, 1 << 16); });
    s.etp = read_list<int>(r, "etp", [](const nlohmann::json& j) { return json_fields::whole_number_in_range(j, 0, 1 << 16); }); // 0 = the same as tp
    s.precision = read_list<Precision>(r, "precision", [](const nlohmann::json& j) -> std::optional<Precision> {
        if (!j.is_string()) {
            return std::nullopt;
        }
        for (const Precision p : {Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Nvfp4}) {
            if (j.get<std::string>() == to_string(p)) {
                return p;
            }
        }
        return std::nullopt; // fp32 is no searched choice: nobody trains today's models in it
    });
    auto flag = [](const nlohmann::json& j) -> std::optional<bool> { return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt; };
    s.tp_overlap = read_list<bool>(r, "tp_overlap", flag);
    s.moe_overlap = read_list<bool>(r, "moe_overlap", flag);
    s.overlap_grad_reduce = read_list<bool>(r, "overlap_grad_reduce", flag);
    s.offload_optimizer = read_list<bool>(r, "offload_optimizer", flag);
    s.offload_activations = read_list<double>(r, "offload_activations", [](const nlohmann::json& j) -> std::optional<double> {
        return j.is_number() && j.get<double>() >= 0 && j.get<double>() <= 1 ? std::optional<double>(j.get<double>()) : std::nullopt;
    });
    s.rank_order = read_list<RankOrder>(r, "rank_order", [](const nlohmann::json& j) -> std::optional<RankOrder> {
        return j.is_string() ? parse_rank_order(lower(j.get<std::string>())) : std::nullopt;
    });
    s.schedule = read_list<Schedule>(r, "schedule", [](const nlohmann::json& j) -> std::optional<Schedule> {
        return j.is_string() ? schedule_from_string(j.get<std::string>()) : std::nullopt;
    });
    s.recompute = read_list<Recompute>(r, "recompute", [](const nlohmann::json& j) -> std::optional<Recompute> {
        if (j.is_boolean()) {
            return j.get<bool>() ? Recompute::Full : Recompute::None;
        }
        return j.is_string() ? recompute_from_string(j.get<std::string>()) : std::nullopt;
    });
    s.sequence_parallel = read_list<bool>(r, "sequence_parallel", [](const nlohmann::json& j) -> std::optional<bool> {
        return j.is_boolean() ? std::optional<bool>(j.get<bool>()) : std::nullopt;
    });
    s.gpu = read_list<std::string>(r, "gpu", [](const nlohmann::json& j) -> std::optional<std::string> {
        return j.is_string() && !j.get<std::string>().empty() ? std::optional<std::string>(j.get<std::string>()) : std::nullopt;
    });
    return s;
}

} // namespace

const char* to_string(FfnActivation v)
{
    switch (v) {
    case FfnActivation::Gelu: return "gelu";
    case FfnActivation::SwiGlu: return "swiglu";
    case FfnActivation::SquaredRelu: return "squared_relu";
    case FfnActivation::Relu: return "relu";
    }
    return "gelu";
}
const char* to_string(Normalization v)
{
    return v == Normalization::LayerNorm ? "layernorm" : "rmsnorm";
}
const char* to_string(AttentionKernel v)
{
    return v == AttentionKernel::Flash ? "flash" : "unfused";
}
const char* to_string(MoeDispatcher v)
{
    return v == MoeDispatcher::Flex ? "flex" : "alltoall";
}
const char* to_string(CudaGraphs v)
{
    return v == CudaGraphs::FullIteration ? "full_iteration" : v == CudaGraphs::Scoped ? "scoped" : "none";
}
const char* to_string(Precision v)
{
    switch (v) {
    case Precision::Bf16: return "bf16";
    case Precision::Fp16: return "fp16";
    case Precision::Fp32: return "fp32";
    case Precision::Fp8: return "fp8";
    case Precision::Nvfp4: return "nvfp4";
    }
    return "bf16";
}
const char* to_string(Fp8Recipe v)
{
    switch (v) {
    case Fp8Recipe::Delayed: return "delayed";
    case Fp8Recipe::Current: return "current";
    case Fp8Recipe::Blockwise: return "blockwise";
    case Fp8Recipe::Mxfp8: return "mxfp8";
    }
    return "delayed";
}
const char* to_string(AttentionKind v)
{
    switch (v) {
    case AttentionKind::Mha: return "mha";
    case AttentionKind::Gqa: return "gqa";
    case AttentionKind::Mla: return "mla";
    }
    return "mha";
}
const char* to_string(ContextParallelKind v)
{
    return v == ContextParallelKind::Ring ? "ring" : "all_to_all";
}
const char* to_string(Schedule v)
{
    switch (v) {
    case Schedule::GPipe: return "gpipe";
    case Schedule::OneFOneB: return "1f1b";
    case Schedule::Interleaved: return "interleaved";
    case Schedule::DualPipe: return "dualpipe";
    }
    return "1f1b";
}
const char* to_string(Recompute v)
{
    switch (v) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}

std::optional<Schedule> schedule_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "gpipe") {
        return Schedule::GPipe;
    }
    if (v == "1f1b" || v == "pipedream-flush") {
        return Schedule::OneFOneB;
    }
    if (v == "interleaved" || v == "interleaved-1f1b") {
        return Schedule::Interleaved;
    }
    if (v == "dualpipe") {
        return Schedule::DualPipe;
    }
    return std::nullopt;
}

std::optional<Recompute> recompute_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "none" || v == "off") {
        return Recompute::None;
    }
    if (v == "selective") {
        return Recompute::Selective;
    }
    if (v == "full") {
        return Recompute::Full;
    }
    return std::nullopt;
}

std::optional<Precision> precision_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "bf16") {
        return Precision::Bf16;
    }
    if (v == "fp16") {
        return Precision::Fp16;
    }
    if (v == "fp32") {
        return Precision::Fp32;
    }
    if (v == "fp8") {
        return Precision::Fp8;
    }
    if (v == "nvfp4" || v == "fp4") {
        return Precision::Nvfp4;
    }
    return std::nullopt;
}

namespace {

using BitNames = std::pair<unsigned, const char*>;

// The bit of `name` in a table of (bit, name) pairs, 0 when it is none of them.
template <std::size_t N>
unsigned bit_named(const BitNames (&table)[N], const std::string& name)
{
    for (const auto& [bit, known] : table) {
        if (name == known) {
            return bit;
        }
    }
    return 0;
}

// The names of the bits set in `bits`, in the table's order.
template <std::size_t N>
std::vector<std::string> names_of_bits(const BitNames (&table)[N], unsigned bits)
{
    std::vector<std::string> names;
    for (const auto& [bit, name] : table) {
        if ((bits & bit) != 0) {
            names.emplace_back(name);
        }
    }
    return names;
}

constexpr BitNames kRecomputeModuleNames[] = {
    {kRecomputeLayernorm, "layernorm"}, {kRecomputeMlaUpProj, "mla_up_proj"}, {kRecomputeMoeAct, "moe_act"}, {kRecomputeMoe, "moe"}};

constexpr BitNames kGraphScopeNames[] = {
    {kGraphAttn, "attn"}, {kGraphMlp, "mlp"}, {kGraphMoeRouter, "moe_router"}, {kGraphMoePreprocess, "moe_preprocess"}, {kGraphMamba, "mamba"}};

} // namespace

std::optional<CudaGraphs> cuda_graphs_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "none") {
        return CudaGraphs::None;
    }
    if (v == "scoped") {
        return CudaGraphs::Scoped;
    }
    if (v == "full_iteration") {
        return CudaGraphs::FullIteration;
    }
    return std::nullopt;
}

unsigned cuda_graph_scope_bit(const std::string& name)
{
    return bit_named(kGraphScopeNames, lower(name));
}

std::vector<std::string> cuda_graph_scope_names(unsigned scope)
{
    return names_of_bits(kGraphScopeNames, scope);
}

unsigned recompute_module_bit(const std::string& name)
{
    return bit_named(kRecomputeModuleNames, name);
}

std::vector<std::string> recompute_module_names(unsigned modules)
{
    return names_of_bits(kRecomputeModuleNames, modules);
}

std::optional<Fp8Recipe> fp8_recipe_from_string(const std::string& s)
{
    const std::string v = lower(s);
    if (v == "delayed") {
        return Fp8Recipe::Delayed;
    }
    if (v == "current" || v == "tensorwise") {
        return Fp8Recipe::Current;
    }
    if (v == "blockwise") {
        return Fp8Recipe::Blockwise;
    }
    if (v == "mxfp8") {
        return Fp8Recipe::Mxfp8;
    }
    return std::nullopt;
}

Expected<Scenario> scenario_from_json(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a scenario must be a JSON object with \"model\", \"cluster\", \"training\" and \"plan\" or \"search\""};
    }
    Reader r(json, "", diags);
    r.reject_unknown({"model", "cluster", "training", "plan", "search", "description", "name", "schema_version"});
    Scenario s;
    s.name = r.optional_string("name").value_or(std::string{});
    s.description = r.optional_string("description").value_or(std::string{});
    s.model = read_model(r.child("model"));
    s.cluster = read_cluster(r.child("cluster"));
    s.training = read_training(r.child("training"));
    if (r.has("plan")) {
        s.plan = read_plan(r.child("plan"));
    }
    if (r.has("search")) {
        s.search = read_search(r.child("search"));
    }
    if (!diags.empty()) {
        return diags;
    }
    return s;
}

Expected<Scenario> scenario_from_text(const std::string& text)
{
    const auto json = json_fields::parse_json_text(text);
    if (!json.ok()) {
        return json.errors();
    }
    return scenario_from_json(*json);
}

Expected<Scenario> load_scenario(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Diagnostic{path.string(), "cannot be opened"};
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return scenario_from_text(buffer.str());
}

nlohmann::json plan_to_json(const Plan& p)
{
    nlohmann::json j = {{"tp", p.tp},
                        {"pp", p.pp},
                        {"dp", p.dp},
                        {"micro_batch", p.micro_batch},
                        {"schedule", to_string(p.schedule)},
                        {"virtual_stages", p.virtual_stages},
                        {"recompute", to_string(p.recompute)},
                        {"sequence_parallel", p.sequence_parallel},
                        {"zero_stage", p.zero_stage},
                        {"grad_bucket_mb", p.grad_bucket_mb},
                        {"overlap_grad_reduce", p.overlap_grad_reduce}};
    // Today's fields only when they differ from their defaults, so older readers see the plans they know.
    if (p.cp > 1) {
        j["cp"] = p.cp;
        j["cp_kind"] = to_string(p.cp_kind);
    }
    if (p.ep > 1) {
        j["ep"] = p.ep;
    }
    if (p.etp > 0) {
        j["etp"] = p.etp;
    }
    if (p.moe_overlap) {
        j["moe_overlap"] = true;
    }
    if (p.tp_overlap) {
        j["tp_overlap"] = true;
    }
    if (p.shard_group > 0) {
        j["shard_group"] = p.shard_group;
    }
    if (p.overlap_param_gather) {
        j["overlap_param_gather"] = true;
    }
    if (p.first_stage_layers > 0) {
        j["first_stage_layers"] = p.first_stage_layers;
    }
    if (p.last_stage_layers > 0) {
        j["last_stage_layers"] = p.last_stage_layers;
    }
    if (!p.pipeline_layout.empty()) {
        j["pipeline_layout"] = p.pipeline_layout;
    }
    if (p.rank_order != RankOrder{}) {
        j["rank_order"] = to_string(p.rank_order);
    }
    if (p.offload_optimizer) {
        j["offload_optimizer"] = true;
    }
    if (p.offload_activations > 0) {
        j["offload_activations"] = p.offload_activations;
    }
    if (p.recompute_modules != 0) {
        j["recompute_modules"] = recompute_module_names(p.recompute_modules);
    }
    return j;
}

namespace {

// Today's shape fields, written only where they differ from their defaults (old files round-trip unchanged).
void model_shape_to_json(const ModelSpec& m, nlohmann::json& out)
{
    const Normalization default_norm = m.activation == FfnActivation::Gelu ? Normalization::LayerNorm : Normalization::RmsNorm;
    if (m.normalization != default_norm) {
        out["normalization"] = to_string(m.normalization);
    }
    const AttentionKind default_attention = m.kv_heads > 0 && m.kv_heads < m.heads ? AttentionKind::Gqa : AttentionKind::Mha;
    if (m.attention != default_attention) {
        out["attention"] = to_string(m.attention);
    }
    if (m.attention == AttentionKind::Mla) {
        out["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                      {"kv_lora_rank", m.mla.kv_lora_rank},
                      {"qk_head_dim", m.mla.qk_head_dim},
                      {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                      {"v_head_dim", m.mla.v_head_dim}};
    }
    if (m.head_dim_override > 0) {
        out["head_dim"] = m.head_dim_override;
    }
    if (m.sliding_window > 0) {
        out["sliding_window"] = m.sliding_window;
    }
    if (m.full_attention_every > 0) {
        out["full_attention_every"] = m.full_attention_every;
    }
    if (m.qk_norm) {
        out["qk_norm"] = true;
    }
    if (m.qkv_bias) {
        out["qkv_bias"] = true;
    }
    if (m.linear_bias) {
        out["linear_bias"] = true;
    }
    if (m.glu_clamp > 0) {
        out["glu_clamp"] = m.glu_clamp;
    }
    if (m.mtp_layers > 0) {
        out["mtp_layers"] = m.mtp_layers;
    }
    if (m.moe.enabled()) {
        const MoeSpec& e = m.moe;
        nlohmann::json moe = {{"experts", e.experts},
                              {"top_k", e.top_k},
                              {"expert_ffn_hidden", e.expert_ffn_hidden > 0 ? e.expert_ffn_hidden : m.effective_ffn_hidden()}};
        if (e.shared_experts > 0) {
            moe["shared_experts"] = e.shared_experts;
        }
        if (e.shared_expert_ffn_hidden > 0) {
            moe["shared_expert_ffn_hidden"] = e.shared_expert_ffn_hidden;
        }
        if (e.first_dense_layers > 0) {
            moe["first_dense_layers"] = e.first_dense_layers;
        }
        if (e.layer_freq > 1) {
            moe["layer_freq"] = e.layer_freq;
        }
        if (e.dropless) {
            moe["dropless"] = true;
        } else {
            moe["capacity_factor"] = e.capacity_factor;
            if (e.pad_to_capacity) {
                moe["pad_to_capacity"] = true;
            }
        }
        if (e.load_imbalance != 1.0) {
            moe["load_imbalance"] = e.load_imbalance;
        }
        if (e.latent_size > 0) {
            moe["latent_size"] = e.latent_size;
        }
        out["moe"] = moe;
    }
    if (!m.layer_pattern.empty()) {
        out["layer_pattern"] = m.layer_pattern;
    }
    if (m.layer_pattern.find('M') != std::string::npos) {
        out["mamba"] = {
            {"state_dim", m.mamba.state_dim}, {"head_dim", m.mamba.head_dim}, {"groups", m.mamba.groups}, {"conv_kernel", m.mamba.conv_kernel}};
        if (m.mamba.heads > 0) {
            out["mamba"]["heads"] = m.mamba.heads;
        }
    }
}

} // namespace

nlohmann::json scenario_to_json(const Scenario& s)
{
    nlohmann::json j;
    if (!s.name.empty()) {
        j["name"] = s.name;
    }
    if (!s.description.empty()) {
        j["description"] = s.description;
    }
    const ModelSpec& m = s.model;
    j["model"] = {{"name", m.name},
                  {"layers", m.layers},
                  {"hidden", m.hidden},
                  {"heads", m.heads},
                  {"seq_len", m.seq_len},
                  {"vocab", m.vocab},
                  {"activation", to_string(m.activation)}};
    if (m.kv_heads > 0) {
        j["model"]["kv_heads"] = m.kv_heads;
    }
    if (m.ffn_hidden > 0) {
        j["model"]["ffn_hidden"] = m.ffn_hidden;
    }
    j["model"]["tied_embeddings"] = m.tied_embeddings;
    model_shape_to_json(m, j["model"]);
    const ClusterSpec& c = s.cluster;
    j["cluster"] = {{"gpu", c.gpu}, {"num_gpus", c.num_gpus}};
    if (c.gpus_per_node > 0) {
        j["cluster"]["gpus_per_node"] = c.gpus_per_node;
    }
    if (c.nvlink_domain_gpus > 0) {
        j["cluster"]["nvlink_domain_gpus"] = c.nvlink_domain_gpus;
    }
    if (c.price_per_gpu_hour) {
        j["cluster"]["price_per_gpu_hour"] = *c.price_per_gpu_hour;
    }
    if (!c.gpu_prices.empty()) {
        j["cluster"]["gpu_prices"] = c.gpu_prices;
    }
    if (c.links.nvlink_bus_gbytes_per_s) {
        j["cluster"]["nvlink_bus_gbytes_per_s"] = *c.links.nvlink_bus_gbytes_per_s;
    }
    if (c.links.nic_gbit_per_s) {
        j["cluster"]["nic_gbit_per_s"] = *c.links.nic_gbit_per_s;
    }
    if (c.links.nics_per_node) {
        j["cluster"]["nics_per_node"] = *c.links.nics_per_node;
    }
    if (c.links.inter_node_latency_us) {
        j["cluster"]["inter_node_latency_us"] = *c.links.inter_node_latency_us;
    }
    j["training"] = {
        {"global_batch", s.training.global_batch}, {"precision", to_string(s.training.precision)}, {"attention", to_string(s.training.attention)}};
    if (s.training.precision == Precision::Fp8 || s.training.fp8_recipe != Fp8Recipe::Delayed) {
        j["training"]["fp8_recipe"] = to_string(s.training.fp8_recipe);
    }
    if (s.training.tokens > 0) {
        j["training"]["tokens"] = s.training.tokens;
    }
    if (s.training.grad_accumulation_bytes > 0) {
        j["training"]["grad_accumulation_bytes"] = s.training.grad_accumulation_bytes;
    }
    if (s.training.bf16_optimizer_moments) {
        j["training"]["optimizer_moments"] = "bf16";
    }
    if (s.training.bf16_gradients) {
        j["training"]["bf16_gradients"] = true;
    }
    if (s.training.fp8_param_gather) {
        j["training"]["fp8_param_gather"] = true;
    }
    if (s.training.per_op_sac) {
        j["training"]["per_op_sac"] = true;
    }
    if (s.training.tp_overlap_forward_only) {
        j["training"]["tp_overlap_forward_only"] = true;
    }
    if (s.training.eager_elementwise) {
        j["training"]["eager_elementwise"] = true;
    }
    if (s.training.bf16_edge_layers > 0) {
        j["training"]["bf16_edge_layers"] = s.training.bf16_edge_layers;
    }
    if (s.training.moe_dispatcher != MoeDispatcher::AllToAll) {
        j["training"]["moe_dispatcher"] = to_string(s.training.moe_dispatcher);
    }
    if (s.training.fp8_axiswise_casts) {
        j["training"]["fp8_axiswise_casts"] = true;
    }
    if (s.training.attention_peak_fraction > 0) {
        j["training"]["attention_peak_fraction"] = s.training.attention_peak_fraction;
    }
    if (s.training.cp_ring_pytorch) {
        j["training"]["cp_ring_pytorch"] = true;
    }
    if (s.training.loss_bytes_per_logit > 0) {
        j["training"]["loss_bytes_per_logit"] = s.training.loss_bytes_per_logit;
    }
    if (s.training.cuda_graphs != CudaGraphs::None) {
        j["training"]["cuda_graphs"] = to_string(s.training.cuda_graphs);
    }
    if (s.training.fused_grouped_mlp) {
        j["training"]["fused_grouped_mlp"] = true;
    }
    if (s.training.cuda_graph_scope != kDefaultGraphScope) {
        j["training"]["cuda_graph_scope"] = cuda_graph_scope_names(s.training.cuda_graph_scope);
    }
    if (s.training.ssd_scan_time_factor != 1) {
        j["training"]["ssd_scan_time_factor"] = s.training.ssd_scan_time_factor;
    }
    if (s.training.te_cross_entropy) {
        j["training"]["te_cross_entropy"] = true;
    }
    if (s.training.overlap_p2p) {
        j["training"]["overlap_p2p"] = true;
    }
    if (s.plan) {
        j["plan"] = plan_to_json(*s.plan);
    }
    if (s.search) {
        const SearchSpace& q = *s.search;
        nlohmann::json sj = nlohmann::json::object();
        auto put = [&](const char* key, const auto& list) {
            if (!list.empty()) {
                sj[key] = list;
            }
        };
        put("tp", q.tp);
        put("pp", q.pp);
        put("micro_batch", q.micro_batch);
        put("virtual_stages", q.virtual_stages);
        put("zero_stage", q.zero_stage);
        put("num_gpus", q.num_gpus);
        put("gpu", q.gpu);
        put("cp", q.cp);
        put("ep", q.ep);
        put("etp", q.etp);
        std::vector<bool> sp(q.sequence_parallel.begin(), q.sequence_parallel.end());
        put("sequence_parallel", sp);
        put("tp_overlap", std::vector<bool>(q.tp_overlap.begin(), q.tp_overlap.end()));
        put("moe_overlap", std::vector<bool>(q.moe_overlap.begin(), q.moe_overlap.end()));
        put("overlap_grad_reduce", std::vector<bool>(q.overlap_grad_reduce.begin(), q.overlap_grad_reduce.end()));
        put("offload_optimizer", std::vector<bool>(q.offload_optimizer.begin(), q.offload_optimizer.end()));
        put("offload_activations", q.offload_activations);
        std::vector<std::string> orders;
        for (const auto& o : q.rank_order) {
            orders.push_back(to_string(o));
        }
        put("rank_order", orders);
        std::vector<std::string> precisions;
        for (auto v : q.precision) {
            precisions.emplace_back(to_string(v));
        }
        put("precision", precisions);
        std::vector<std::string> names;
        for (auto v : q.schedule) {
            names.emplace_back(to_string(v));
        }
        put("schedule", names);
        names.clear();
        for (auto v : q.recompute) {
            names.emplace_back(to_string(v));
        }
        put("recompute", names);
        j["search"] = sj;
    }
    return j;
}

} // namespace vtrain
