// SPDX-License-Identifier: MIT
// Plans as Megatron-Bridge overrides. Keys are ConfigContainer paths as Megatron-Bridge (late 2025) names
// them: model.* (GPTModelProvider / TransformerConfig fields, the Megatron-Core names of Megatron-LM's
// flags), train.* (TrainingConfig), ddp.* (DistributedDataParallelConfig), optimizer.* (OptimizerConfig),
// mixed_precision (a preset of megatron.bridge.training.mixed_precision), comm_overlap.*
// (CommOverlapConfig), dist.* (DistributedInitConfig); scripts/training/run_recipe.py takes them as trailing
// key=value arguments. `vtrain import` reads them back (import_bridge_overrides.cpp).
#include "vtrain/launch_bridge.h"

#include <cmath>
#include <cstdio>

#include "vtrain/launch_config.h"
#include "vtrain/pipeline_layout.h"
#include "vtrain/plan_check.h"
#include "vtrain/rank_layout.h"
#include "vtrain/scenario_json.h"

namespace vtrain {
namespace {

std::string str(long long v)
{
    return std::to_string(v);
}

std::string boolean(bool v)
{
    return v ? "true" : "false";
}

std::string number(double v)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return buffer;
}

// A Hydra list of names: [a,b] (quoted for the shell where the override is written).
std::string list(const std::vector<std::string>& names)
{
    std::string out = "[";
    for (std::size_t i = 0; i < names.size(); ++i) {
        out += (i > 0 ? "," : "") + names[i];
    }
    return out + "]";
}

class Overrides {
public:
    void add(const std::string& key, const std::string& value) { m_items.push_back(key + "=" + value); }
    // Values with shell or Hydra syntax in them ([ ] | * ( )) are written in double quotes.
    void add_quoted(const std::string& key, const std::string& value) { m_items.push_back("\"" + key + "=" + value + "\""); }
    std::vector<std::string> take() { return std::move(m_items); }

private:
    std::vector<std::string> m_items;
};

void model_overrides(const ModelSpec& m, Overrides& o, std::vector<std::string>& warnings)
{
    o.add("model.num_layers", str(m.layers));
    o.add("model.hidden_size", str(m.hidden));
    o.add("model.ffn_hidden_size", str(m.effective_ffn_hidden()));
    o.add("model.num_attention_heads", str(m.heads));
    if (m.attention != AttentionKind::Mla && m.effective_kv_heads() != m.heads) {
        o.add("model.num_query_groups", str(m.effective_kv_heads()));
    }
    if (m.head_dim_override > 0 && m.attention != AttentionKind::Mla) {
        o.add("model.kv_channels", str(m.head_dim_override));
    }
    switch (m.activation) {
    case FfnActivation::SwiGlu:
        o.add("model.gated_linear_unit", "true");
        o.add("model.activation_func", "silu");
        break;
    case FfnActivation::SquaredRelu:
        o.add("model.gated_linear_unit", "false");
        o.add("model.activation_func", "squared_relu");
        break;
    case FfnActivation::Relu:
        o.add("model.gated_linear_unit", "false");
        o.add("model.activation_func", "relu");
        break;
    case FfnActivation::Gelu:
        o.add("model.gated_linear_unit", "false");
        o.add("model.activation_func", "gelu");
        break;
    }
    if (m.glu_clamp > 0) {
        o.add("model.activation_func_clamp_value", number(m.glu_clamp));
    }
    o.add("model.normalization", m.normalization == Normalization::RmsNorm ? "RMSNorm" : "LayerNorm");
    o.add("model.share_embeddings_and_output_weights", boolean(m.tied_embeddings));
    const bool biases = m.activation == FfnActivation::Gelu || m.linear_bias;
    o.add("model.add_bias_linear", boolean(biases));
    if (m.qkv_bias && !biases) {
        o.add("model.add_qkv_bias", "true");
    }
    if (m.qk_norm) {
        o.add("model.qk_layernorm", "true");
    }
    if (m.activation != FfnActivation::Gelu) {
        o.add("model.position_embedding_type", "rope");
    }
    o.add("model.seq_length", str(m.seq_len));
    o.add("dataset.sequence_length", str(m.seq_len));
    o.add("model.vocab_size", str(m.vocab));
    if (m.sliding_window > 0) {
        std::string window(1, '[');
        window += str(m.sliding_window);
        window += ",0]";
        o.add_quoted("model.window_size", window);
        if (m.full_attention_every > 0) {
            o.add("model.window_attn_skip_freq", str(m.full_attention_every));
        }
    }
    if (m.attention == AttentionKind::Mla) {
        o.add("model.multi_latent_attention", "true");
        o.add("model.q_lora_rank", m.mla.q_lora_rank > 0 ? str(m.mla.q_lora_rank) : "null");
        o.add("model.kv_lora_rank", str(m.mla.kv_lora_rank));
        o.add("model.qk_head_dim", str(m.mla.qk_head_dim));
        o.add("model.qk_pos_emb_head_dim", str(m.mla.qk_rope_head_dim));
        o.add("model.v_head_dim", str(m.mla.v_head_dim));
    }
    if (m.mtp_layers > 0) {
        o.add("model.mtp_num_layers", str(m.mtp_layers));
    }
    if (!m.layer_pattern.empty()) {
        o.add_quoted("model.hybrid_override_pattern", m.layer_pattern);
        o.add("model.mamba_state_dim", str(m.mamba.state_dim));
        o.add("model.mamba_head_dim", str(m.mamba.head_dim));
        o.add("model.mamba_num_groups", str(m.mamba.groups));
        if (m.mamba.heads > 0) {
            o.add("model.mamba_num_heads", str(m.mamba.heads));
        }
        warnings.emplace_back("a hybrid (Mamba) model needs a Mamba recipe (its MambaModelProvider), not the GPT base recipe: start from one and "
                              "keep these overrides");
    }
}

void moe_overrides(const ModelSpec& m, const Plan& p, const TrainingSpec& t, Overrides& o)
{
    if (!m.moe.enabled()) {
        return;
    }
    const MoeSpec& e = m.moe;
    o.add("model.num_moe_experts", str(e.experts));
    o.add("model.moe_router_topk", str(e.top_k));
    const int width = e.expert_ffn_hidden > 0 ? e.expert_ffn_hidden : m.effective_ffn_hidden();
    o.add("model.moe_ffn_hidden_size", str(width));
    if (e.shared_experts > 0) {
        o.add("model.moe_shared_expert_intermediate_size",
              str(e.shared_expert_ffn_hidden > 0 ? e.shared_expert_ffn_hidden : e.shared_experts * width));
    }
    if (e.first_dense_layers > 0) {
        // One entry per layer: 0 dense, 1 MoE.
        std::string freq = "[";
        for (int i = 0; i < m.layers; ++i) {
            const bool moe = i >= e.first_dense_layers && (i - e.first_dense_layers) % e.layer_freq == 0;
            freq += std::string(i > 0 ? "," : "") + (moe ? "1" : "0");
        }
        o.add_quoted("model.moe_layer_freq", freq + "]");
    } else if (e.layer_freq > 1) {
        o.add("model.moe_layer_freq", str(e.layer_freq));
    }
    o.add("model.moe_grouped_gemm", "true");
    o.add("model.moe_token_dispatcher_type", t.moe_dispatcher == MoeDispatcher::Flex ? "flex" : "alltoall");
    if (!e.dropless && e.capacity_factor > 0) {
        o.add("model.moe_expert_capacity_factor", number(e.capacity_factor));
        if (e.pad_to_capacity) {
            o.add("model.moe_pad_expert_input_to_capacity", "true");
        }
    }
    o.add("model.expert_model_parallel_size", str(p.ep));
    o.add("model.expert_tensor_parallel_size", str(p.effective_etp()));
    if (p.moe_overlap) {
        o.add("comm_overlap.overlap_moe_expert_parallel_comm", "true");
        o.add("comm_overlap.delay_wgrad_compute", "true");
    }
}

void parallel_overrides(const Scenario& s, const Plan& p, Overrides& o, std::vector<std::string>& warnings)
{
    o.add("model.tensor_model_parallel_size", str(p.tp));
    o.add("model.pipeline_model_parallel_size", str(p.pp));
    if (p.schedule == Schedule::Interleaved && p.pipeline_layout.empty()) {
        o.add("model.virtual_pipeline_model_parallel_size", str(p.virtual_stages));
    }
    if (p.schedule == Schedule::Interleaved && p.pp > 1) {
        // Megatron-Core overlaps an interleaved schedule's sends when asked; the simulated plan blocks unless overlap_p2p.
        o.add("model.overlap_p2p_comm", boolean(s.training.overlap_p2p));
    }
    if (p.cp > 1) {
        o.add("model.context_parallel_size", str(p.cp));
        o.add("model.cp_comm_type", p.cp_kind == ContextParallelKind::Ring ? "p2p" : "a2a");
    }
    o.add("model.sequence_parallel", boolean(p.sequence_parallel));
    if (!p.pipeline_layout.empty()) {
        o.add_quoted("model.pipeline_model_parallel_layout", "'" + p.pipeline_layout + "'");
    } else {
        if (p.first_stage_layers > 0) {
            o.add("model.num_layers_in_first_pipeline_stage", str(p.first_stage_layers));
        }
        if (p.last_stage_layers > 0) {
            o.add("model.num_layers_in_last_pipeline_stage", str(p.last_stage_layers));
        }
    }
    if (p.tp_overlap) {
        o.add("comm_overlap.tp_comm_overlap", "true");
    }
    RankOrder pp_dp;
    pp_dp.dims = {ParallelDim::Tp, ParallelDim::Cp, ParallelDim::Ep, ParallelDim::Pp, ParallelDim::Dp};
    if (p.rank_order == pp_dp) {
        o.add("dist.use_tp_pp_dp_mapping", "true");
    } else if (p.rank_order != RankOrder{}) {
        warnings.push_back("rank order " + to_string(p.rank_order) + " has no Megatron-Bridge setting (only dist.use_tp_pp_dp_mapping, for " +
                           "tp-cp-ep-pp-dp): the run uses tp-cp-ep-dp-pp");
    }
    if (p.schedule == Schedule::GPipe && p.pp > 1) {
        warnings.emplace_back("Megatron-Bridge has no GPipe schedule: it runs pipeline plans with 1F1B, which keeps fewer micro-batches' "
                              "activations in flight than the simulated GPipe");
    }
    if (p.schedule == Schedule::DualPipe && p.pp > 1) {
        warnings.emplace_back("DualPipe is DeepSeek's own schedule: the exported plan runs 1F1B, whose bubble is larger than simulated");
    }
    if (const std::string why = moe_overlap_refusal(p); !why.empty()) {
        warnings.push_back("comm_overlap.overlap_moe_expert_parallel_comm " + why);
    }
}

void training_overrides(const Scenario& s, const Plan& p, Overrides& o, std::vector<std::string>& warnings)
{
    const TrainingSpec& t = s.training;
    o.add("train.micro_batch_size", str(p.micro_batch));
    o.add("train.global_batch_size", str(t.global_batch));
    if (t.tokens > 0) {
        const double per_iteration = static_cast<double>(t.global_batch) * s.model.seq_len;
        o.add("train.train_iters", str(static_cast<long long>(std::ceil(t.tokens / per_iteration))));
    } else {
        warnings.emplace_back("training.tokens is not given: set train.train_iters yourself");
    }
    switch (t.precision) {
    case Precision::Bf16: o.add("mixed_precision", "bf16_mixed"); break;
    case Precision::Fp16: o.add("mixed_precision", "fp16_mixed"); break;
    case Precision::Fp32: warnings.emplace_back("fp32 training has no mixed_precision preset: drop the recipe's mixed_precision (null)"); break;
    case Precision::Nvfp4: o.add("mixed_precision", "bf16_with_nvfp4_mixed"); break;
    case Precision::Fp8: {
        const char* preset = t.fp8_recipe == Fp8Recipe::Delayed     ? "bf16_with_fp8_delayed_scaling_mixed"
                             : t.fp8_recipe == Fp8Recipe::Current   ? "bf16_with_fp8_current_scaling_mixed"
                             : t.fp8_recipe == Fp8Recipe::Blockwise ? "bf16_with_fp8_subchannel_scaling_mixed"
                                                                    : "bf16_with_mxfp8_mixed";
        o.add("mixed_precision", preset);
        break;
    }
    }
    if (t.fp8_param_gather && t.precision == Precision::Fp8) {
        o.add("mixed_precision.fp8_param_gather", "true");
    }
    o.add("model.attention_backend", t.attention == AttentionKernel::Flash ? "flash" : "unfused");
    if (t.te_cross_entropy) {
        o.add("model.cross_entropy_loss_fusion", "true");
        o.add("model.cross_entropy_fusion_impl", "te");
    }
    if (t.cuda_graphs == CudaGraphs::FullIteration) {
        o.add("model.cuda_graph_impl", "local");
        o.add("model.cuda_graph_scope", "full_iteration");
    } else if (t.cuda_graphs == CudaGraphs::Scoped) {
        const auto names = cuda_graph_scope_names(t.cuda_graph_scope);
        if (!names.empty()) {
            o.add("model.cuda_graph_impl", "transformer_engine");
            o.add_quoted("model.cuda_graph_scope", list(names));
        }
    }
    // Recomputation: Megatron-Core's granularity, method and modules.
    const auto modules = recompute_module_names(p.recompute_modules);
    if (p.recompute == Recompute::Full) {
        o.add("model.recompute_granularity", "full");
        o.add("model.recompute_method", "uniform");
        o.add("model.recompute_num_layers", "1");
        if (!modules.empty()) {
            warnings.emplace_back("recompute_modules are not written: full recomputation already recomputes every module");
        }
    } else if (p.recompute == Recompute::Selective || !modules.empty()) {
        o.add("model.recompute_granularity", "selective");
        std::vector<std::string> names;
        if (p.recompute == Recompute::Selective) {
            names.emplace_back("core_attn");
        }
        names.insert(names.end(), modules.begin(), modules.end());
        o.add_quoted("model.recompute_modules", list(names));
    }
}

void data_parallel_overrides(const Scenario& s, const Plan& p, Overrides& o, std::vector<std::string>& warnings)
{
    const bool distributed = p.zero_stage >= 1;
    if (p.zero_stage >= 2) {
        // Megatron-FSDP: optim_grads shards gradients too (ZeRO-2), optim_grads_params the weights (ZeRO-3).
        o.add("ddp.use_megatron_fsdp", "true");
        o.add("ddp.data_parallel_sharding_strategy", p.zero_stage >= 3 ? "optim_grads_params" : "optim_grads");
    }
    o.add("ddp.use_distributed_optimizer", boolean(distributed));
    o.add("optimizer.use_distributed_optimizer", boolean(distributed));
    if (p.shard_group > 0 && p.shard_group < p.dp * p.cp) {
        o.add("ddp.num_distributed_optimizer_instances", str(p.dp * p.cp / p.shard_group));
    }
    const bool overlap = p.overlap_grad_reduce && (p.dp > 1 || p.cp > 1);
    o.add("ddp.overlap_grad_reduce", boolean(overlap));
    if (overlap) {
        o.add("ddp.bucket_size", str(grad_bucket_elements(p, s.training.precision)));
    }
    if (p.overlap_param_gather && distributed) {
        o.add("ddp.overlap_param_gather", "true");
    }
    if (s.training.bf16_gradients) {
        o.add("ddp.grad_reduce_in_fp32", "false");
    }
    if (p.offload_optimizer) {
        o.add("optimizer.optimizer_cpu_offload", "true");
        o.add("optimizer.optimizer_offload_fraction", "1.0");
    }
    if (p.offload_activations > 0) {
        const int per_chunk = s.model.layers / std::max(1, p.pp * plan_chunks(p));
        const int layers = std::max(1, static_cast<int>(std::lround(p.offload_activations * per_chunk)));
        o.add("model.cpu_offloading", "true");
        o.add("model.cpu_offloading_num_layers", str(layers));
        warnings.push_back("Transformer Engine offloads whole layers' activations: " + str(layers) + " of " + str(per_chunk) +
                           " layers per model chunk stand for the simulated share");
    }
    if (p.zero_stage >= 2) {
        warnings.emplace_back("ZeRO-2/3 are written as Megatron-FSDP (ddp.use_megatron_fsdp with its sharding strategy); some Megatron-Bridge "
                              "releases name it ddp.use_custom_fsdp");
    }
}

} // namespace

std::string BridgeLaunch::command_text() const
{
    std::string text = launch_command;
    for (const std::string& o : overrides) {
        text += " \\\n    " + o;
    }
    return text + '\n';
}

Expected<BridgeLaunch> megatron_bridge_launch(const Scenario& s, const Plan& p, int gpus_per_node)
{
    if (gpus_per_node < 1) {
        return Diagnostic{"cluster.gpus_per_node", "must be known (>= 1) to write a launch line"};
    }
    if (const auto rejection = check_plan(s.model, s.training, p, s.cluster.num_gpus)) {
        return rejection->diagnostic;
    }
    BridgeLaunch out;
    auto& w = out.warnings;
    const int gpus = s.cluster.num_gpus;
    const int nodes = gpus <= gpus_per_node ? 1 : (gpus + gpus_per_node - 1) / gpus_per_node;
    const int per_node = gpus <= gpus_per_node ? gpus : gpus_per_node;
    if (nodes > 1 && gpus % gpus_per_node != 0) {
        w.push_back(str(gpus) + " GPUs do not fill whole nodes of " + str(gpus_per_node) + ": adjust the node count by hand");
    }
    out.launch_command =
        std::string(p.tp > 1 ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "") + "torchrun --nproc-per-node " + str(per_node) + " --nnodes " + str(nodes);
    if (nodes > 1) {
        out.launch_command += " --node-rank $NODE_RANK --master-addr $MASTER_ADDR --master-port 29500";
        w.push_back("run the torchrun line on each of the " + str(nodes) + " nodes with NODE_RANK = 0.." + str(nodes - 1) +
                    " and MASTER_ADDR = the first node's address");
    }
    out.launch_command += " scripts/training/run_recipe.py --recipe " + std::string(kBridgeBaseRecipe);

    Overrides o;
    model_overrides(s.model, o, w);
    parallel_overrides(s, p, o, w);
    moe_overrides(s.model, p, s.training, o);
    training_overrides(s, p, o, w);
    data_parallel_overrides(s, p, o, w);
    out.overrides = o.take();

    w.emplace_back(std::string("the overrides start from Megatron-Bridge's ") + kBridgeBaseRecipe +
                   " recipe and set every model field; recipe names and a few keys differ between Megatron-Bridge releases");
    w.push_back("the vocabulary comes from the tokenizer (tokenizer.*): model.vocab_size = " + str(s.model.vocab) +
                " is what was simulated, so pick a tokenizer of that size");
    w.emplace_back("still to set: the dataset (dataset.*, or --dataset mock), the optimizer and schedule (optimizer.lr, scheduler.*), "
                   "checkpoint.save / checkpoint.load");
    return out;
}

} // namespace vtrain
