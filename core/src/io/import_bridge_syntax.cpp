// SPDX-License-Identifier: MIT
// Megatron-Bridge override syntax (io/import_bridge_syntax.h).
#include "io/import_bridge_syntax.h"

#include <cctype>

#include "io/import_readers.h"

namespace vtrain::import_detail {

using nlohmann::json;

// Config groups whose keys have no bearing on time, memory or cost.
const std::set<std::string>& quiet_groups()
{
    static const std::set<std::string> s{"checkpoint",
                                         "logger",
                                         "scheduler",
                                         "rng",
                                         "validation",
                                         "profiling",
                                         "dist",
                                         "ft",
                                         "straggler",
                                         "nvrx_straggler",
                                         "inprocess_restart",
                                         "rerun_state_machine",
                                         "env_vars",
                                         "tokenizer",
                                         "dataset",
                                         "peft"};
    return s;
}

// Keys of the modeled groups that have no bearing on time, memory or cost.
const std::set<std::string>& quiet_keys()
{
    static const std::set<std::string> s{"model.make_vocab_size_divisible_by",
                                         "model.max_position_embeddings",
                                         "model.should_pad_vocab",
                                         "model.position_embedding_type",
                                         "model.rotary_base",
                                         "model.rotary_percent",
                                         "model.rotary_scaling_factor",
                                         "model.seq_len_interpolation_factor",
                                         "model.layernorm_epsilon",
                                         "model.init_method_std",
                                         "model.attention_dropout",
                                         "model.hidden_dropout",
                                         "model.moe_grouped_gemm",
                                         "model.moe_aux_loss_coeff",
                                         "model.moe_z_loss_coeff",
                                         "model.moe_router_load_balancing_type",
                                         "model.moe_router_score_function",
                                         "model.moe_router_topk_scaling_factor",
                                         "model.moe_router_enable_expert_bias",
                                         "model.moe_router_bias_update_rate",
                                         "model.moe_router_dtype",
                                         "model.moe_router_pre_softmax",
                                         "model.moe_router_fusion",
                                         "model.moe_permute_fusion",
                                         "model.moe_shared_expert_overlap",
                                         "model.moe_flex_dispatcher_backend",
                                         "model.moe_router_force_load_balancing",
                                         "model.mtp_loss_scaling_factor",
                                         "model.pipeline_dtype",
                                         "model.params_dtype",
                                         "model.apply_rope_fusion",
                                         "model.bias_activation_fusion",
                                         "model.bias_dropout_fusion",
                                         "model.masked_softmax_fusion",
                                         "model.persist_layer_norm",
                                         "model.gradient_accumulation_fusion",
                                         "model.deallocate_pipeline_outputs",
                                         "model.use_transformer_engine_full_layer_spec",
                                         "model.mscale",
                                         "model.mscale_all_dim",
                                         "model.defer_embedding_wgrad_compute",
                                         "model.wgrad_deferral_limit",
                                         "model.calculate_per_token_loss",
                                         "model.use_te_rng_tracker",
                                         "model.qk_layernorm_hidden_dim",
                                         "train.eval_iters",
                                         "train.eval_interval",
                                         "train.exit_duration_in_mins",
                                         "train.exit_interval",
                                         "train.exit_signal_handler",
                                         "train.manual_gc",
                                         "train.manual_gc_interval",
                                         "train.manual_gc_eval",
                                         "train.check_weight_hash_across_dp_replicas_interval",
                                         "train.skip_train",
                                         "ddp.check_for_nan_in_grad",
                                         "ddp.average_in_collective",
                                         "ddp.fsdp_double_buffer",
                                         "ddp.nccl_ub",
                                         "ddp.align_param_gather",
                                         "ddp.delay_wgrad_compute",
                                         "ddp.outer_dp_sharding_strategy",
                                         "ddp.suggested_communication_unit_size",
                                         "ddp.keep_fp8_transpose_cache",
                                         "comm_overlap.delay_wgrad_compute",
                                         "comm_overlap.tp_comm_bootstrap_backend",
                                         "comm_overlap.tp_comm_overlap_cfg",
                                         "comm_overlap.defer_embedding_wgrad_compute",
                                         "comm_overlap.wgrad_deferral_limit",
                                         "comm_overlap.align_param_gather",
                                         "comm_overlap.bucket_size",
                                         "comm_overlap.batch_p2p_comm",
                                         "mixed_precision.grad_reduce_in_fp32",
                                         "mixed_precision.params_dtype",
                                         "mixed_precision.pipeline_dtype",
                                         "mixed_precision.autocast_enabled",
                                         "mixed_precision.fp8_margin",
                                         "mixed_precision.fp8_amax_history_len",
                                         "mixed_precision.fp8_amax_compute_algo",
                                         "mixed_precision.fp8_wgrad",
                                         "mixed_precision.fp8_dot_product_attention",
                                         "mixed_precision.fp8_multi_head_attention",
                                         "mixed_precision.first_last_layers_bf16",
                                         "mixed_precision.num_layers_at_start_in_bf16",
                                         "mixed_precision.num_layers_at_end_in_bf16",
                                         "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag"};
    return s;
}

bool is_override_key(const std::string& key)
{
    if (key.empty()) {
        return false;
    }
    for (const char c : key) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.')) {
            return false;
        }
    }
    return std::isalpha(static_cast<unsigned char>(key[0])) != 0 || key[0] == '_';
}

std::string strip_quotes(std::string v)
{
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
        return v.substr(1, v.size() - 2);
    }
    return v;
}

// A Hydra value: null, true/false, a number, a [list], or a string.
json hydra_value(const std::string& raw)
{
    const std::string v = strip_quotes(raw);
    if (v == "null" || v == "None" || v == "~") {
        return nullptr;
    }
    if (v == "true" || v == "True") {
        return true;
    }
    if (v == "false" || v == "False") {
        return false;
    }
    if (v.size() >= 2 && (v.front() == '[' || v.front() == '(') && (v.back() == ']' || v.back() == ')')) {
        json list = json::array();
        std::string item;
        const std::string inside = v.substr(1, v.size() - 2);
        for (std::size_t i = 0; i <= inside.size(); ++i) {
            if (i == inside.size() || inside[i] == ',') {
                std::size_t a = item.find_first_not_of(" \t");
                std::size_t b = item.find_last_not_of(" \t");
                if (a != std::string::npos && list.size() < 100000) {
                    list.push_back(hydra_value(item.substr(a, b - a + 1)));
                }
                item.clear();
            } else if (inside[i] != '[' && inside[i] != ']') {
                item.push_back(inside[i]);
            }
        }
        return list;
    }
    std::string why;
    if (!v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) != 0 || ((v[0] == '-' || v[0] == '.') && v.size() > 1))) {
        if (auto n = parse_number(v, why)) {
            return *n;
        }
    }
    return v;
}

} // namespace vtrain::import_detail
