// SPDX-License-Identifier: MIT
// A scenario file out: every block, with today's shape fields only where they differ from their defaults.
#include <string>
#include <vector>

#include "vtrain/json_fields.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain {

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
    if (s.training.loss_parallel) {
        j["training"]["loss_parallel"] = true;
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
    if (s.training.zero3_fetch == Zero3Fetch::Module) {
        j["training"]["zero3_fetch"] = "module";
    }
    if (s.training.pipeline_runtime != PipelineRuntime::Megatron) {
        j["training"]["pipeline_runtime"] = to_string(s.training.pipeline_runtime);
    }
    if (s.training.te_cross_entropy) {
        j["training"]["te_cross_entropy"] = true;
    }
    if (s.training.overlap_p2p) {
        j["training"]["overlap_p2p"] = true;
    }
    if (s.training.mode != TrainingMode::Pretrain) {
        nlohmann::json& t = j["training"];
        t["mode"] = to_string(s.training.mode);
        if (s.training.mode == TrainingMode::Lora) {
            t["lora_rank"] = s.training.lora_rank;
            t["lora_alpha"] = s.training.lora_alpha;
            t["lora_targets"] = lora_target_names(s.training.lora_targets);
        }
        t["sequence_packing"] = s.training.sequence_packing;
        if (s.training.sample_tokens > 0) {
            t["sample_tokens"] = s.training.sample_tokens;
        }
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
