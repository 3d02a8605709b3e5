// SPDX-License-Identifier: MIT
#include "vtrain/memory_model.h"

#include <algorithm>

#include "model/fine_tuning.h"
#include "model/model_math.h"

namespace vtrain {

double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& t, int micro_batch, int tp, bool sp, Recompute recompute)
{
    const double s = m.seq_len;
    const double b = micro_batch;
    const double h = m.hidden;
    const double a = m.heads;
    const double sbh = s * b * h;
    // Korthikanti's constants assume 2-byte activations and a 4h GELU FFN; scale the FFN part
    // (16 of the 34 bytes per element) with the real FFN width, and the whole by the element size.
    const double element_scale = t.precision == Precision::Fp32 ? 2.0 : 1.0;
    const double ffn_scale = static_cast<double>(m.effective_ffn_hidden()) / (4.0 * h) * (m.activation == FfnActivation::SwiGlu ? 1.5 : 1.0);
    const double per_element = 18.0 + 16.0 * ffn_scale; // 34 for GPT
    // Of the 34: 10 bytes are replicated across tensor-parallel ranks unless sequence parallelism shards them.
    const double replicated = 10.0;
    const double sharded = per_element - replicated;
    const double scores = t.attention == AttentionKernel::Flash ? 0.0 : 5.0 * a * s / h; // softmax, dropout mask, scores

    switch (recompute) {
    case Recompute::Full:
        // Only the layer input survives: 2 bytes per element, sharded with sequence parallelism.
        return element_scale * 2.0 * sbh / (sp ? tp : 1);
    case Recompute::Selective: return element_scale * sbh * (sp ? per_element / tp : replicated + sharded / tp);
    case Recompute::None: break;
    }
    return element_scale * sbh * (sp ? (per_element + scores) / tp : replicated + (sharded + scores) / tp);
}

std::vector<double> stage_params(const ModelSpec& m, int tp, int pp)
{
    std::vector<double> params(static_cast<std::size_t>(pp), 0.0);
    const double per_layer = layer_params(m) / tp;
    const int layers_per_stage = m.layers / pp;
    const double vocab_table = static_cast<double>(m.vocab) * m.hidden / tp;
    for (int s = 0; s < pp; ++s) {
        params[s] = per_layer * layers_per_stage;
    }
    params.front() += embedding_params(m) / tp;
    // The last stage holds the output projection: its own copy of the embedding when tied and pp > 1.
    if (!m.tied_embeddings || pp > 1) {
        params.back() += vocab_table;
    }
    params.back() += 2.0 * m.hidden; // final norm
    return params;
}

namespace {

// Layers whose parameters differ (MoE, hybrid patterns) are summed one by one; a uniform stack multiplies.
bool uniform_layers(const ModelSpec& m)
{
    return !m.moe.enabled() && m.layer_pattern.empty();
}

// PyTorch's ring attention (torchtitan's context parallelism) during one layer's backward, beside that
// layer's activations (torch/distributed/tensor/experimental/_attention.py, late 2024 to 2025): the
// all-gather rotater, torchtitan's default (context_parallel_rotate_method "allgather"), holds every
// rank's K/V at once -- cp x the local K/V, repeated to the query heads (torchtitan's repeat_kv runs before
// SDPA) -- in 16 bits; _templated_ring_attention_backward accumulates dQ, dK and dV in fp32 (accum_dtype)
// and passes the packed fp32 dK/dV to the next rank every step (the buffer sent and the one received).
double torch_ring_backward_bytes(const ModelSpec& m, const TrainingSpec& t, const Plan& plan)
{
    if (plan.cp <= 1 || plan.cp_kind != ContextParallelKind::Ring || !t.cp_ring_pytorch || m.attention == AttentionKind::Mla || m.heads <= 0) {
        return 0.0;
    }
    const double tokens = static_cast<double>(plan.micro_batch) * m.seq_len / plan.cp;
    const double e = t.precision == Precision::Fp32 ? 4 : 2;
    const double q_width = static_cast<double>(m.heads) / plan.tp * m.head_dim();
    const double kv_width = 2 * q_width; // K and V repeated to every query head
    const double gathered_kv = plan.cp * kv_width * e;
    const double fp32_accumulators = 4.0 * (q_width + kv_width);
    const double dkv_in_flight = 2 * 4.0 * kv_width;
    return tokens * (gathered_kv + fp32_accumulators + dkv_in_flight);
}

} // namespace

int expert_data_parallel(const Plan& p)
{
    const long long ep_etp = static_cast<long long>(p.ep) * p.effective_etp();
    return static_cast<int>(std::max<long long>(1, static_cast<long long>(p.tp) * p.cp * p.dp / ep_etp));
}

ShardDegrees shard_degrees(const Plan& p)
{
    ShardDegrees d;
    if (p.zero_stage < 1) {
        return d;
    }
    const int dense_dp = p.dp * p.cp;
    d.dense = p.shard_group > 0 ? p.shard_group : dense_dp;
    d.replicas = std::max(1, dense_dp / d.dense);
    const int edp = expert_data_parallel(p);
    d.expert = edp % d.replicas == 0 ? edp / d.replicas : edp;
    return d;
}

ParamShare virtual_stage_params(const ModelSpec& m, const Plan& p, const VirtualStage& v)
{
    const double tp = p.tp;
    const double ep_etp = static_cast<double>(p.ep) * p.effective_etp();
    ParamShare out;
    if (v.layers > 0) {
        if (uniform_layers(m)) {
            const LayerParamSplit one = layer_param_split(m, v.first_layer);
            out.dense = one.dense / tp * v.layers;
            out.expert = one.expert / ep_etp * v.layers;
        } else {
            for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
                const LayerParamSplit one = layer_param_split(m, i);
                out.dense += one.dense / tp;
                out.expert += one.expert / ep_etp;
            }
        }
    }
    if (v.mtp_layers > 0) {
        const LayerParamSplit one = mtp_param_split(m); // model_math: the one count of an MTP module
        out.dense += one.dense / tp * v.mtp_layers;
        out.expert += one.expert / ep_etp * v.mtp_layers;
    }
    if (v.embedding) {
        out.vocab += embedding_params(m) / tp;
    }
    if (v.loss) {
        // The output projection: its own copy of the embedding when tied and pp > 1.
        if (!m.tied_embeddings || p.pp > 1) {
            out.vocab += static_cast<double>(m.vocab) * m.hidden / tp;
        }
        out.dense += 2.0 * m.hidden; // final norm
    }
    return out;
}

double adapter_stage_params(const ModelSpec& m, const TrainingSpec& t, const Plan& p, const VirtualStage& v)
{
    if (t.mode != TrainingMode::Lora) {
        return 0;
    }
    double params = 0;
    for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
        params += lora_adapter_params(m, t, layer_kind(m, i));
    }
    return params / p.tp;
}

ParamShare trainable_stage_params(const ModelSpec& m, const TrainingSpec& t, const Plan& p, const VirtualStage& v)
{
    if (t.mode != TrainingMode::Lora) {
        return virtual_stage_params(m, p, v);
    }
    ParamShare out;
    out.dense = adapter_stage_params(m, t, p, v);
    return out;
}

double largest_layer_params(const ModelSpec& m, const Plan& p)
{
    const double ep_etp = static_cast<double>(p.ep) * p.effective_etp();
    double largest = 0;
    const int n = uniform_layers(m) ? std::min(1, m.layers) : m.layers;
    for (int i = 0; i < n; ++i) {
        const LayerParamSplit one = layer_param_split(m, i);
        largest = std::max(largest, one.dense / p.tp + one.expert / ep_etp);
    }
    return largest;
}

ParamBytes param_bytes(const TrainingSpec& t, const Plan& plan)
{
    ParamBytes b;
    b.weight = t.precision == Precision::Fp32 ? 4 : 2;
    // Megatron keeps fp32 main gradients for bf16 (accumulate-allreduce-grads-in-fp32) and fp32 training.
    b.gradient = t.precision == Precision::Fp16 ? 2 : 4;
    // Megatron with grad_reduce_in_fp32 false (the Megatron-Bridge performance scripts) keeps bf16 main
    // gradients and reduce-scatters them in bf16.
    if (t.bf16_gradients && t.precision != Precision::Fp32) {
        b.gradient = 2;
    }
    // Adam: fp32 master weights (not needed when training in fp32), first and second moments.
    b.optimizer = t.precision == Precision::Fp32 ? 8 : 12;
    if (t.bf16_optimizer_moments) {
        b.optimizer -= 4; // two 2-byte moments instead of two 4-byte ones (DeepSeek-V3 Sec. 3.3.2)
    }
    b.gather = b.weight;
    // Low-precision recipes keep the bf16 weight and cache quantized copies of each decoder weight for the
    // micro-batches of an iteration: a row-wise copy for Fprop and a column-wise (transposed) one for
    // Dgrad/Wgrad (TE performance_considerations.rst; MLM-GB200 Sec. 1 "dual precision"). Per parameter:
    // FP8 1 byte per copy; blockwise adds an fp32 scale per 128x128 weight block; MXFP8 an E8M0 scale per 32
    // elements; NVFP4 half a byte plus an E4M3 scale per 16 elements (TE recipe docs). Hopper needs the
    // transposed FP8 copy; Blackwell reads FP8 either way for per-tensor recipes, so this is an upper bound there.
    if (t.precision == Precision::Fp8) {
        switch (t.fp8_recipe) {
        case Fp8Recipe::Delayed:
        case Fp8Recipe::Current: b.low_precision = 2.0; break;
        case Fp8Recipe::Blockwise: b.low_precision = 2.0 * (1.0 + 4.0 / (128.0 * 128.0)); break;
        case Fp8Recipe::Mxfp8: b.low_precision = 2.0 * (1.0 + 1.0 / 32.0); break;
        }
        // FSDP2 (torchtitan enable_fsdp_float8_all_gather) and Megatron-FSDP gather per-tensor-scaled FP8
        // weights; block-scaled recipes gather bf16 and quantize after (MoE README: MXFP8 excepted).
        if (plan.zero_stage >= 3 && (t.fp8_recipe == Fp8Recipe::Delayed || t.fp8_recipe == Fp8Recipe::Current)) {
            b.gather = 1.0;
        }
    } else if (t.precision == Precision::Nvfp4) {
        b.low_precision = 2.0 * (0.5 + 1.0 / 16.0);
    }
    b.layer_weight = b.weight;
    b.layer_gather = b.weight;
    // fp8_param_gather (Megatron --fp8-param-gather; set by Megatron-Bridge's FP8 precision configs): the
    // decoder weights exist only as FP8 tensors (no bf16 copy; the fp32 master lives in the optimizer) and
    // the distributed optimizer all-gathers them in FP8 (MoE README: halves the parameter all-gather).
    if (t.fp8_param_gather && t.precision == Precision::Fp8) {
        b.layer_weight = 0;
        b.layer_gather = b.low_precision / 2.0;
        b.gather = std::min(b.gather, b.layer_gather);
    }
    return b;
}

void apply_host_offload(const Plan& plan, double one_layer_bytes, StageMemory& memory)
{
    if (plan.offload_optimizer) {
        memory.optimizer_bytes = 0;
    }
    const double f = std::clamp(plan.offload_activations, 0.0, 1.0);
    if (f > 0) {
        // The offloaded layers leave only their copy buffers: the layer being copied and the one
        // prefetched ahead of it (Transformer Engine double-buffers the offload, model/host_offload.h).
        const double stashed = memory.activations_bytes;
        memory.activations_bytes = (1 - f) * stashed + f * std::min(stashed, 2 * std::max(0.0, one_layer_bytes));
    }
}

std::vector<StageMemory> stage_memory(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const PipelineLayout& layout,
                                      const std::vector<int>& in_flight_chunks)
{
    const ParamBytes bytes = param_bytes(t, plan);
    const ShardDegrees shard = shard_degrees(plan);
    const double cp = plan.cp;
    const double e = t.precision == Precision::Fp32 ? 4 : 2;
    const double sbh = static_cast<double>(m.seq_len) / cp * plan.micro_batch * m.hidden;
    // Each layer's stored activations for the s/cp tokens of a context-parallel rank
    // (layer_activation_bytes_at: Korthikanti's count for GPT layers, every kind of today's layers); a
    // uniform stack is one layer times the count.
    const bool uniform = uniform_layers(m);
    const double uniform_layer = uniform && m.layers > 0 ? layer_activation_bytes_at(m, t, plan, 0) : 0.0;
    const double mtp_layer = m.mtp_layers > 0 ? mtp_activation_bytes(m, t, plan) : 0.0;
    // During one layer's backward its full activations exist again when recomputed (the largest layer).
    double full_layer = 0;
    if (plan.recompute != Recompute::None) {
        const int n = uniform ? std::min(1, m.layers) : m.layers;
        for (int i = 0; i < n; ++i) {
            full_layer = std::max(full_layer, layer_activation_bytes_at(m, t, plan, i, Recompute::None));
        }
    }
    full_layer += torch_ring_backward_bytes(m, t, plan);
    // ZeRO-3 keeps the gathered parameters of up to two layers (the one computing and the one prefetched)
    // and one layer's unsharded gradients (Megatron-FSDP double buffering; FSDP2 prefetch).
    const double unit = plan.zero_stage >= 3 ? largest_layer_params(m, plan) : 0.0;

    std::vector<StageMemory> out(static_cast<std::size_t>(plan.pp));
    for (int s = 0; s < plan.pp; ++s) {
        ParamShare params;
        ParamShare trained;  // what gets gradients and optimizer state: all of `params`, or LoRA's adapters
        double adapters = 0; // LoRA adapter weights held besides `params`
        auto hold = [&](const VirtualStage& v) {
            params += virtual_stage_params(m, plan, v);
            trained += trainable_stage_params(m, t, plan, v);
            adapters += adapter_stage_params(m, t, plan, v);
        };
        for (int c = 0; c < layout.chunks; ++c) {
            hold(layout.at(s, c));
            if (plan.schedule == Schedule::DualPipe && plan.pp > 1) {
                // DualPipe: this device also runs stage pp - 1 - s of the other direction (report Table 2:
                // two copies of the parameters, gradients and optimizer states).
                hold(layout.at(plan.pp - 1 - s, c));
            }
        }
        const double layer_params = params.dense + params.expert; // what low-precision recipes quantize
        // Sharded parameter counts: dense and vocabulary state over the dense group, experts over theirs.
        const double sharded = (params.dense + params.vocab) / shard.dense + params.expert / shard.expert;
        const double trained_sharded = (trained.dense + trained.vocab) / shard.dense + trained.expert / shard.expert;
        StageMemory& mem = out[s];
        if (plan.zero_stage >= 3 && plan.pp > 1) {
            // Sharded data parallelism under a pipeline (FSDP2 as torchtitan runs it): no reshard after the
            // forward, so every layer of the stage stays gathered across the micro-batches ("For PP, do not
            // reshard after forward to avoid per-microbatch all-gathers", torchtitan parallelize_llama.py
            // apply_fsdp), and gradients are reduce-scattered only after the last micro-batch (PyTorch
            // pipelining's backward_maybe_with_nosync: set_requires_gradient_sync(last_backward)), so the
            // stage's unsharded gradients accumulate until then, in the reduce dtype when it differs from the
            // parameter dtype (FSDPParam.to_accumulated_grad_if_needed upcasts them; torchtitan reduces in
            // fp32 by default, mixed_precision_reduce "float32"): 4 bytes per parameter of the stage.
            const double stage_params = params.dense + params.vocab;
            const double trained_stage = trained.dense + trained.vocab;
            mem.weights_bytes = sharded * bytes.weight + stage_params * (bytes.gather + bytes.low_precision);
            mem.gradients_bytes = (trained_sharded + trained_stage) * bytes.gradient;
        } else if (plan.zero_stage >= 3) {
            mem.weights_bytes = sharded * bytes.weight + 2.0 * unit * (bytes.layer_weight + bytes.low_precision);
            if (t.zero3_fetch == Zero3Fetch::Layer) {
                // The root unit -- embedding, final norm and output layer, which no transformer block owns -- is
                // gathered when the forward starts and stays gathered until the end of the backward: FSDP2 does
                // not reshard the root after its forward ("the parameters would be freed and all-gathered
                // immediately", FSDPState._lazy_init sets the root group's post_forward_mesh_info to None).
                // In the 16-bit dtype: FP8 recipes leave the embedding and the output layer unquantized.
                mem.weights_bytes += params.vocab * bytes.weight;
            }
            mem.gradients_bytes = trained_sharded * bytes.gradient + (t.frozen_base() ? 0.0 : unit * bytes.gradient);
        } else {
            mem.weights_bytes = params.vocab * bytes.weight + layer_params * (bytes.layer_weight + bytes.low_precision);
            mem.gradients_bytes = plan.zero_stage >= 2 ? trained_sharded * bytes.gradient : trained.total() * bytes.gradient;
        }
        // Frozen weights (LoRA) have no gradient buffer, no fp32 master copy and no Adam moments: only the trained
        // parameters do (Megatron's distributed optimizer and DDP buffers hold parameters with requires_grad).
        mem.weights_bytes += adapters * bytes.weight;
        mem.optimizer_bytes = (plan.zero_stage >= 1 ? trained_sharded : trained.total()) * bytes.optimizer;
        const double expert_sharded = params.expert / shard.expert;
        const double trained_expert_sharded = trained.expert / shard.expert;
        mem.expert_weights_bytes = plan.zero_stage >= 3 ? expert_sharded * bytes.weight : params.expert * (bytes.weight + bytes.low_precision);
        mem.expert_gradients_bytes = (plan.zero_stage >= 2 ? trained_expert_sharded : trained.expert) * bytes.gradient;
        mem.expert_optimizer_bytes = (plan.zero_stage >= 1 ? trained_expert_sharded : trained.expert) * bytes.optimizer;

        auto stage_activation_bytes = [&](int stage) {
            double bytes_sum = uniform_layer * layout.stage_layers(stage) + mtp_layer * layout.stage_mtp_layers(stage);
            if (!uniform) {
                bytes_sum = mtp_layer * layout.stage_mtp_layers(stage);
                for (int c = 0; c < layout.chunks; ++c) {
                    const VirtualStage& v = layout.at(stage, c);
                    for (int i = v.first_layer; i < v.first_layer + v.layers; ++i) {
                        bytes_sum += layer_activation_bytes_at(m, t, plan, i);
                    }
                }
            }
            return bytes_sum;
        };
        // DualPipe: the device's PP + 1 sets (report Table 2 gives the total only) split between its two
        // stages, s and pp - 1 - s; both end devices hold the embedding and the loss.
        const bool dualpipe = plan.schedule == Schedule::DualPipe && plan.pp > 1;
        const double stage_bytes = dualpipe ? (stage_activation_bytes(s) + stage_activation_bytes(plan.pp - 1 - s)) / 2 : stage_activation_bytes(s);
        const double sets = s < static_cast<int>(in_flight_chunks.size()) ? in_flight_chunks[s] : 0.0;
        // A set is one micro-batch through one chunk; chunks of a rank hold about the same layers.
        mem.activations_bytes = stage_bytes * sets / layout.chunks;
        mem.working_bytes = full_layer;
        if (s == 0 || (dualpipe && s == plan.pp - 1)) {
            // Embedding output and its dropout mask for each micro-batch in flight (Korthikanti Sec. 4.3).
            mem.activations_bytes += (sets / layout.chunks) * sbh * (e + 1) / (plan.sequence_parallel ? plan.tp : 1) / (dualpipe ? 2 : 1);
        }
        if (s == plan.pp - 1 || (dualpipe && s == 0)) {
            // fp32 logits and their gradient for the micro-batch in the loss (or what the training states).
            // Transformer Engine's fused cross-entropy keeps the 16-bit logits and writes the gradient into them
            // (transformer_engine/pytorch/triton/cross_entropy.py: cross_entropy_backward_kernel stores the
            // gradient at X_ptr in the input dtype and returns _input), beside 16 bytes per row: no fp32 copy.
            const double per_logit = t.loss_bytes_per_logit > 0 ? t.loss_bytes_per_logit : t.te_cross_entropy ? e : 2.0 * 4.0;
            const double logits = m.seq_len / cp * plan.micro_batch * (static_cast<double>(m.vocab) / plan.tp);
            mem.working_bytes += per_logit * logits;
            if (t.loss_parallel && plan.tp > 1) {
                // torchtitan's tensor-parallel output layer (parallelize_llama: "output" ColwiseParallel with
                // input_layouts Shard(1), loss_parallel): the Linear saves its all-gathered, full-sequence bf16
                // input (output is left out of Float8) until its backward, past the loss; and loss_parallel's
                // backward (torch.distributed.tensor.parallel.loss, _nll_loss_and_log_softmax_backward: zeros_like,
                // exp, add, mul over fp32) holds 16 bytes per logit where aten's fused cross-entropy holds 12.
                mem.working_bytes += sbh * e + 4.0 * logits;
            }
        }
        if (plan.offload_optimizer || plan.offload_activations > 0) {
            const int layers = std::max(1, layout.stage_layers(s) + layout.stage_mtp_layers(s));
            apply_host_offload(plan, stage_bytes / layers, mem); // host_offload.h: mean layer of one set
        }
    }
    return out;
}

} // namespace vtrain

// --- per-layer activations for today's layer kinds (layer_activation_bytes_at) --------------------------
namespace vtrain {
namespace {

struct ActivationCtx {
    double tokens = 0; // b x s / cp
    double h = 0;
    double tp = 1;
    double rep = 1;     // divisor of width-h tensors: tp with sequence parallelism, else 1
    double e = 2;       // stored activation bytes
    double gemm_in = 2; // stored GEMM inputs (1 byte under FP8/FP4)
};

// Bytes per token of one layer kind with nothing recomputed.
double kind_bytes_per_token(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const LayerKind& k, const ActivationCtx& c)
{
    const double h = c.h;
    // Megatron-Core's --recompute-modules (DeepSeek-V3 Sec. 3.2.3: "recompute all RMSNorm operations and MLA
    // up-projections"; Sec. 3.3.2: SwiGLU inputs cached, its output recomputed): what is recomputed is not kept.
    const bool rc_norm = (plan.recompute_modules & kRecomputeLayernorm) != 0;
    const bool rc_mla_up = (plan.recompute_modules & kRecomputeMlaUpProj) != 0;
    const bool rc_moe_act = (plan.recompute_modules & kRecomputeMoeAct) != 0;
    const double norm_out = rc_norm ? 0.0 : c.gemm_in; // a norm's output, the next GEMM's input
    double bytes = 0;
    if (k.mixer == MixerKind::Attention) {
        bytes += c.e * h / c.rep + norm_out * h / c.rep + h / c.rep; // norm input, QKV input, dropout mask
        if (m.attention == AttentionKind::Mla) {
            const MlaSpec& a = m.mla;
            const double heads = m.heads / c.tp;
            const double qk = a.qk_head_dim + a.qk_rope_head_dim;
            // Compressed latents (and their normed copies feeding the up projections), then per-head Q, K, V
            // and the attention output (flash keeps O and the log-sum-exp only).
            bytes += (c.e + (rc_norm || rc_mla_up ? 0.0 : c.gemm_in)) * (a.q_lora_rank + a.kv_lora_rank) + c.e * a.qk_rope_head_dim;
            bytes += (rc_mla_up ? 0.0 : c.e * heads * (2 * qk + a.v_head_dim)) + c.gemm_in * heads * a.v_head_dim;
        } else {
            const double q = static_cast<double>(m.heads) * m.head_dim();
            const double kv = static_cast<double>(m.effective_kv_heads()) * m.head_dim();
            bytes += c.e * (q + 2 * kv) / c.tp + c.gemm_in * q / c.tp;
            if (m.qk_norm) {
                bytes += c.e * (q + kv) / c.tp; // inputs of the q/k norms
            }
        }
        if (t.attention == AttentionKernel::Unfused) {
            // Scores, softmax output (2 bytes each) and dropout mask (1) over the keys, per head.
            bytes += 5.0 * m.heads / c.tp * m.seq_len;
        }
    } else if (k.mixer == MixerKind::Mamba) {
        const MambaSpec& s = m.mamba;
        const double heads = mamba_heads(m) / c.tp;
        const double inner = heads * s.head_dim;
        const double bc = 2.0 * s.groups / std::min(c.tp, static_cast<double>(s.groups)) * s.state_dim;
        bytes += c.e * h / c.rep + c.gemm_in * h / c.rep + h / c.rep;
        bytes += c.e * (2 * inner + bc + heads)                                                             // in_proj output
                 + c.e * (inner + bc)                                                                       // conv output
                 + 4.0 * heads * s.head_dim * s.state_dim / std::min(128.0, static_cast<double>(m.seq_len)) // fp32 chunk states
                 + c.e * 2 * inner + c.gemm_in * inner; // scan output, gated-norm input, out_proj input
    }
    const double gate = m.activation == FfnActivation::SwiGlu ? 2.0 : 1.0;
    if (k.ffn == FfnKind::Dense) {
        const double f = m.effective_ffn_hidden() / c.tp;
        bytes += c.e * h / c.rep + norm_out * h / c.rep + h / c.rep; // norm input, fc1 input, dropout mask
        bytes += c.e * gate * f + c.gemm_in * f;                     // fc1 output, activation output
    } else if (k.ffn == FfnKind::Moe) {
        const MoeSpec& e = m.moe;
        const double etp = plan.effective_etp();
        const double skew = e.dropless ? e.load_imbalance : std::min(e.load_imbalance, e.capacity_factor);
        // Rows this rank's experts process per token of the rank (Megatron's folding: etp x top_k, busiest rank).
        const double rows = etp * e.top_k * skew / c.tp;
        const double width = routed_expert_ffn_hidden(m) / etp;
        bytes += c.e * h / c.tp + h / c.rep; // norm input, dropout mask
        if ((plan.recompute_modules & kRecomputeMoe) != 0) {
            // "moe" recompute (Megatron-Core MoELayer.moe_layer_recompute): the layer's forward runs again from
            // its input, the pre-MLP norm's output, which is all it keeps.
            return bytes + c.e * h / c.rep;
        }
        bytes += 4.0 * e.experts / c.tp; // FP32 router scores
        // Dispatched rows (fc1 input), fc1 output, activation output; under LatentMoE the rows are latent-wide,
        // and the two projections keep their inputs. The router's probabilities are applied inside the
        // activation (Megatron-Core experts.py TEGroupedMLP: weighted_bias_swiglu_impl with permuted_probs),
        // so the unpermute is a plain gather and no expert output is kept for the combine's backward.
        const double io = e.expert_input_width(m.hidden);
        // Recomputing the activation keeps only its input: in FP8 under DeepSeek's blockwise recipe (Sec. 3.3.2
        // "Inputs of the SwiGLU operator in MoE ... stored in FP8"; Megatron-Core --activation-func-fp8-input-store),
        // else in the activation precision.
        const double act_in = rc_moe_act && t.precision == Precision::Fp8 && t.fp8_recipe == Fp8Recipe::Blockwise ? 1.0 : c.e;
        const double act_out = rc_moe_act ? 0.0 : c.gemm_in;
        bytes += rows * (c.gemm_in * io + act_in * gate * width + act_out * width);
        if (e.latent_size > 0) {
            bytes += c.gemm_in * (h + io) / c.tp;
        }
        const double shared = shared_expert_ffn_hidden_total(m) / c.tp;
        if (shared > 0) {
            bytes += c.gemm_in * h / c.rep + c.e * gate * shared + c.gemm_in * shared;
        }
    }
    return bytes;
}

// What eager PyTorch keeps on top of the fused count, bytes per token of a layer whose norms and activation
// are stored (TrainingSpec::eager_elementwise; the op sequences are layer_builder.h's). An RMSNorm run as
// x.float() -> pow -> mean -> rsqrt -> x * rsqrt -> type_as -> * weight saves its fp32 upcast (pow's and the
// multiply's input, 4 bytes) and the normalized tensor before the weight multiply (the weight's gradient), where
// the fused kernel keeps the input: 4 bytes more per element. silu(w1 x) * w3 x saves silu's output for the
// multiply's backward besides its input. RoPE's complex multiply saves only the frequency table, and
// aten's layer norm is one kernel in eager too. torchtitan's 8B FSDP rows (mbs 2 x 8192, per-op SAC) measure
// 5.0-5.4 GiB more without torch.compile than with it; ~0.9 GiB of it is this, held by the one layer being
// recomputed in its backward; the rest is not modeled (the allocator's blocks, docs/validation.md).
double eager_activation_delta(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const LayerKind& k, const ActivationCtx& c)
{
    if (!t.eager_elementwise) {
        return 0;
    }
    double delta = 0;
    if (m.normalization == Normalization::RmsNorm && (plan.recompute_modules & kRecomputeLayernorm) == 0) {
        const int norms = (k.mixer != MixerKind::None ? 1 : 0) + (k.ffn != FfnKind::None ? 1 : 0);
        delta += norms * 4.0 * c.h / c.rep;
    }
    if (k.ffn == FfnKind::Dense && m.activation == FfnActivation::SwiGlu) {
        delta += c.e * m.effective_ffn_hidden() / c.tp;
    }
    return delta;
}

// What LoRA changes in a layer's stored activations, bytes per token (model/fine_tuning.h). A frozen linear
// layer does not keep its input: Transformer Engine saves it only for the weight gradient
// (linear.py / layernorm_linear.py: backward_needs_input = is_grad_enabled and weight.requires_grad). A
// targeted layer's adapter keeps that input for dA (under sequence parallelism the gathered norm output,
// Megatron-Bridge's return_layernorm_output_gathered, in the activation dtype) and its [tokens, r] low-rank
// activation for dB. The attention output stays either way: flash attention keeps it for its own backward.
double lora_activation_delta(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const LayerKind& k, const ActivationCtx& c)
{
    if (t.mode != TrainingMode::Lora) {
        return 0;
    }
    const bool rc_norm = (plan.recompute_modules & kRecomputeLayernorm) != 0;
    const double norm_out = rc_norm ? 0.0 : c.gemm_in; // the stored norm output, as kind_bytes_per_token counts it
    auto targeted = [&](LoraTarget target) { return (t.lora_targets & target) != 0; };
    double delta = 0;
    if (k.mixer == MixerKind::Attention && m.attention != AttentionKind::Mla) {
        // The QKV input: dropped when frozen and untargeted, the adapter's copy (full width) when targeted.
        delta -= norm_out * c.h / c.rep;
        delta += targeted(kLoraQkv) && !rc_norm ? c.e * c.h : 0.0;
    }
    if (k.ffn == FfnKind::Dense) {
        const double f = m.effective_ffn_hidden() / c.tp;
        delta -= norm_out * c.h / c.rep; // fc1 input
        delta += targeted(kLoraFc1) && !rc_norm ? c.e * c.h : 0.0;
        delta -= c.gemm_in * f; // fc2 input (the activation's output)
        delta += targeted(kLoraFc2) ? c.e * f : 0.0;
    }
    delta += c.e * t.lora_rank * static_cast<double>(lora_adapters(m, t, k).size()); // x A per adapter
    return delta;
}

ActivationCtx activation_ctx(const ModelSpec& m, const TrainingSpec& t, const Plan& plan)
{
    ActivationCtx c;
    c.tokens = static_cast<double>(plan.micro_batch) * m.seq_len / std::max(1, plan.cp);
    c.h = m.hidden;
    c.tp = plan.tp;
    c.rep = plan.sequence_parallel ? plan.tp : 1;
    c.e = t.precision == Precision::Fp32 ? 4 : 2;
    c.gemm_in = (t.precision == Precision::Fp8 || t.precision == Precision::Nvfp4) ? 1 : c.e;
    return c;
}

double kind_bytes(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, const LayerKind& k, Recompute recompute)
{
    const ActivationCtx c = activation_ctx(m, t, plan);
    if (recompute == Recompute::Full) {
        return c.tokens * c.e * c.h / c.rep; // only the layer input survives
    }
    if (recompute == Recompute::Selective && t.per_op_sac && k.mixer == MixerKind::Attention && k.ffn == FfnKind::Dense &&
        m.attention != AttentionKind::Mla) {
        // torchtitan's per-op SAC (parallelize_llama.py @ 9dec370, _save_list and _custom_policy) keeps the
        // block's input and the outputs of the ops on its save list: every mm but the second of each pair
        // (wq, wv, w1, w2 saved; wk, wo, w3 recomputed), SDPA (output and fp32 log-sum-exp) and, with TP,
        // the reduce-scatters (after wo and w2). Everything else is recomputed. The linears' outputs are
        // bf16 under float8 too (torchao casts only the GEMM operands).
        const double q = static_cast<double>(m.heads) * m.head_dim() / c.tp;
        const double kv = static_cast<double>(m.effective_kv_heads()) * m.head_dim() / c.tp;
        const double f = m.effective_ffn_hidden() / c.tp;
        const double rs = c.tp > 1 ? 2 * c.h / c.rep : 0.0;
        const double per_token = c.e * (c.h / c.rep + q + kv + q + f + c.h + rs) + 4.0 * m.heads / c.tp;
        return c.tokens * per_token;
    }
    // Selective recompute drops the attention scores, which flash attention never stores.
    TrainingSpec flash = t;
    if (recompute == Recompute::Selective) {
        flash.attention = AttentionKernel::Flash;
    }
    return c.tokens *
           (kind_bytes_per_token(m, flash, plan, k, c) + lora_activation_delta(m, t, plan, k, c) + eager_activation_delta(m, t, plan, k, c));
}

} // namespace

double layer_activation_bytes_at(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, int i, Recompute recompute)
{
    return kind_bytes(m, t, plan, layer_kind(m, i), recompute);
}

double layer_activation_bytes_at(const ModelSpec& m, const TrainingSpec& t, const Plan& plan, int i)
{
    return layer_activation_bytes_at(m, t, plan, i, plan.recompute);
}

double mtp_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const Plan& plan)
{
    const ActivationCtx c = activation_ctx(m, t, plan);
    // Two norm inputs and the concatenated 2h projection input, then the block.
    const double own = c.tokens * (2 * c.e * c.h / c.rep + c.gemm_in * 2 * c.h);
    return own + kind_bytes(m, t, plan, mtp_block_kind(m), plan.recompute);
}

} // namespace vtrain
