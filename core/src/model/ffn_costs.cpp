// SPDX-License-Identifier: MIT
// The FFNs: dense (GELU, SwiGLU, ReLU variants) and mixture-of-experts (router, permutation, expert-parallel
// dispatch and combine, grouped expert GEMMs, host-bound routed section, shared experts, LatentMoE).
#include "model/layer_builder.h"

#include <cmath>

#include "model/cuda_graphs.h"
#include "model/layer_comm.h"
#include "model/model_math.h"
#include "model/nccl_tuning.h"

namespace vtrain::layer_ops {
namespace {

// Router kernels per MoE layer forward with router fusion (see moe_ffn()).
constexpr double kMoeRouterKernels = 31;

// DeepEP's normal (training) kernels between nodes: 43, 58 and 51 GB/s of RDMA bandwidth per 400 Gb/s
// ConnectX-7 (~50 GB/s) at EP 16, 32 and 64 (H800, deepseek-ai/DeepEP docs/legacy.md; restated in
// shared/research/modern-training.md Sec. 3.1): the lowest, 43 of 50, as the share of line rate a flex
// dispatcher's network traffic reaches.
constexpr double kFlexNicEfficiency = 43.0 / 50.0;

const char* activation_kind(FfnActivation a)
{
    // relu and squared relu stream their input once like GELU; SwiGLU reads two halves.
    return a == FfnActivation::SwiGlu ? "swiglu" : "gelu";
}

const char* activation_name(FfnActivation a)
{
    switch (a) {
    case FfnActivation::SwiGlu: return "swiglu";
    case FfnActivation::Gelu: return "gelu";
    case FfnActivation::Relu: return "relu";
    case FfnActivation::SquaredRelu: return "squared relu";
    }
    return "gelu";
}

// A dense FFN of `width` over `rows` tokens, split over tensor-parallel ranks (the model's FFN or the
// shared experts).
void ffn_gemms(BlockBuilder& b, const Ctx& c, double rows, double width_local, const char* up, const char* down)
{
    const bool swiglu = c.m.activation == FfnActivation::SwiGlu;
    // torchtitan's w1 and w3 are two Linears (the rowwise filter judges each).
    add_gemm(b, c, up, rows, (swiglu ? 2 : 1) * width_local, c.h, c.full, true, rowwise_bf16_share(c, {width_local}, c.h));
    add_memory_bound(b, c.hp, activation_name(c.m.activation), activation_kind(c.m.activation),
                     rows * width_local * c.e * (swiglu ? 2 : 1) * (c.eager && swiglu ? kEagerSwigluTraffic : 1.0), c.full || c.sac);
    add_gemm(b, c, down, rows, c.h, width_local, c.full, true, rowwise_bf16_share(c, {c.h}, width_local));
    if (c.sac) {
        // Per-op SAC (see attention_mixer): the layer's 6th matmul, w3 (the up half) with SwiGLU, else w2.
        add_recomputed_gemm(b, c, swiglu ? "ffn up (per-op SAC)" : "ffn down (per-op SAC)", rows, swiglu ? width_local : c.h,
                            swiglu ? c.h : width_local,
                            swiglu ? rowwise_bf16_share(c, {width_local}, c.h) : rowwise_bf16_share(c, {c.h}, width_local));
    }
}

// LatentMoE's projections around the routed experts (Megatron-Core moe_layer.py: fc1_latent_proj before the
// dispatch, fc2_latent_proj after the combine): plain GEMMs over this rank's tokens, h -> l and l -> h.
void latent_projection(BlockBuilder& b, const Ctx& c, const char* name, double tokens, double out_width, double in_width)
{
    if (c.m.moe.latent_size > 0) {
        add_gemm(b, c, name, tokens, out_width, in_width, c.full);
    }
}

// Host operators of the routed-expert section of one MoE layer, per pass (see moe_host_operators()).
struct MoeHostOps {
    double forward = 0;
    double backward = 0;
};

// Operators the CPU issues between the dispatcher's device-host sync and the combine, counted from
// Megatron-Core's alltoall dispatcher (token_dispatcher.py: permute, token and probability all-to-alls,
// sort by local expert, and their mirrors) and Transformer Engine's grouped linear layers, which run one
// GEMM per local expert (multi-stream cuBLAS, Megatron-LM deepseek-v3-gb200-optimization Sec. 1) and,
// under FP8/FP4 recipes, quantize each expert's input separately. Forward: 8 section operators, per local
// expert FC1 and FC2 (+ a quantize each); backward: 8, per local expert dgrad and wgrad of both (+ a
// gradient quantize each).
MoeHostOps moe_host_operators(double local_experts, bool low_precision)
{
    MoeHostOps ops;
    ops.forward = 8 + local_experts * (low_precision ? 4 : 2);
    ops.backward = 8 + local_experts * (low_precision ? 6 : 4);
    return ops;
}

// The clamp of a clamped gated activation (ModelSpec::glu_clamp, GPT-OSS) as Megatron-Core runs it outside the
// fused activation: weighted_bias_quick_geglu_impl clamps the gate half and the linear half with two
// torch.clamp calls and torch.cat's them back before the fused kernel (NVIDIA/Megatron-LM
// megatron/core/fusions/fused_bias_geglu.py @ 1fb2a0c). Forward: one element-wise pass over the [rows, 2F]
// input for the clamps, one copy for the cat; backward: the clamps' masked gradient (cat's backward is a
// view). `input_bytes` is the activation's input. Returns the host operators it adds (2 clamps and the cat;
// their backward: 2).
double clamped_glu_passes(BlockBuilder& b, const Ctx& c, double input_bytes, bool recomputed)
{
    const double clamp = c.hp.memory_bound_seconds("gelu", input_bytes, false);
    b.compute(Phase::Forward, "activation input clamp + cat (unfused)", 2 * clamp);
    b.compute(Phase::Backward, "activation input clamp (unfused)", c.hp.memory_bound_seconds("gelu", input_bytes, true));
    if (recomputed) {
        b.compute(Phase::Recompute, "activation input clamp + cat (unfused)", 2 * clamp);
    }
    return 3;
}

// The routed experts' output bias (ModelSpec::linear_bias, GPT-OSS): TEGroupedMLP builds linear_fc2 with
// skip_bias_add and adds each local expert's bias weighted by the router probability in Python,
// torch.cat([t + b * p for t, b, p in zip(torch.split(out, tokens_per_expert), biases, torch.split(probs, ...))])
// (NVIDIA/Megatron-LM megatron/core/transformer/moe/experts.py, TEGroupedMLP._apply_bias). Forward per
// expert: the broadcast product b * p (a written tensor) and the add (two read, one written), then the cat
// (a copy) over the [rows, h] output; backward: autograd of b * p gives dB = sum over rows of g * p and
// dP = sum over h of g * b, each a product written and reduced (the add and the split pass gradients as
// views). Host operators: per expert the product and the add (+ the split), and the cat; backward 2 products
// and 2 reductions per expert.
struct BiasHostOps {
    double forward = 0;
    double backward = 0;
};
BiasHostOps expert_output_bias(BlockBuilder& b, const Ctx& c, double local_experts, double out_bytes, bool recomputed)
{
    const double copy = c.hp.memory_bound_seconds("gelu", out_bytes, false);
    const double fwd = c.hp.memory_bound_seconds("residual_add", out_bytes, false) + 0.5 * copy + copy;
    b.compute(Phase::Forward, "experts output bias (per-expert add + cat)", fwd);
    b.compute(Phase::Backward, "experts output bias gradients (dB, dprobs)", 2 * 1.5 * copy);
    if (recomputed) {
        b.compute(Phase::Recompute, "experts output bias (per-expert add + cat)", fwd);
    }
    return {3 * local_experts + 1, 4 * local_experts};
}
} // namespace

void dense_ffn(BlockBuilder& b, const Ctx& c)
{
    const bool swiglu = c.m.activation == FfnActivation::SwiGlu;
    add_norm(b, c, "layernorm 2", c.hidden_bytes);
    tp_collectives(b, c, true);
    ffn_gemms(b, c, c.tokens, c.m.effective_ffn_hidden() / c.t, swiglu ? "ffn gate+up" : "ffn up", "ffn down");
    // LoRA adapters on fc1 (gate and up together, Megatron's fused linear_fc1) and fc2 (model/lora_costs.cpp).
    const double f = c.m.effective_ffn_hidden();
    add_lora(b, c, kLoraFc1, c.tokens, c.h, (swiglu ? 2 : 1) * f, false);
    add_lora(b, c, kLoraFc2, c.tokens, f, c.h, true);
    tp_collectives(b, c, false);
    residual(b, c, "dropout 2", "residual 2");
}

// A mixture-of-experts FFN on one rank (Megatron-Core's alltoall dispatcher, token_dispatcher.py): router,
// permutation, dispatch over the EP group (+ all-gather over ETP), grouped expert GEMMs, the reverse, and
// the shared experts. Tokens enter sharded by sequence parallelism (Megatron requires SP with TP and MoE).
//
// `outer` times what sits outside Megatron-Core's MoELayer (the pre-MLP norm, the residual): with the "moe"
// recompute module `c` is a copy with `full` set, so everything inside the layer runs again before its
// backward (MoELayer.forward wraps router, dispatch, experts, combine and shared experts in one checkpoint).
void moe_ffn(BlockBuilder& b, const Ctx& c, const Ctx& outer)
{
    const ModelSpec& m = c.m;
    const MoeSpec& moe = m.moe;
    const LayerCostInput& in = c.in;
    const int ep = std::max(1, in.ep);
    const int etp = in.etp > 0 ? in.etp : in.tp;
    const double tokens = c.tokens / c.t; // this rank's tokens
    const double k = moe.top_k;
    // Busiest rank: routing skew (max / mean tokens per expert), capped by the capacity when tokens drop.
    const double skew = moe.dropless ? moe.load_imbalance : std::min(moe.load_imbalance, moe.capacity_factor);
    const double local_experts = std::ceil(static_cast<double>(moe.experts) / ep);
    // Assignments reaching this rank's experts from the whole EP x ETP group: etp x tokens x k on average.
    const double rows = etp * tokens * k;
    double rows_per_expert = rows / local_experts * skew;
    if (c.lowp) {
        const double align = fp8_row_alignment(c.in.training->precision, c.in.training->fp8_recipe);
        rows_per_expert = std::ceil(rows_per_expert / align) * align;
    }
    const double width = routed_expert_ffn_hidden(m) / etp;
    const bool swiglu = m.activation == FfnActivation::SwiGlu;
    const double io = moe.expert_input_width(m.hidden); // the latent under LatentMoE: what is permuted and sent

    // A moe_router graph captures the pre-MLP norm and the router (Megatron-Core's TE-scoped graphs).
    const Ctx& rc = module_ctx(c, kGraphMoeRouter);
    add_memory_bound(b, rc.hp, "layernorm 2", "layernorm", tokens * c.h * c.e, outer.full || c.rc_norm);
    // Router: a BF16/FP32 GEMM to expert scores, then the scoring, top-k, normalisation and aux-loss
    // bookkeeping as small element-wise kernels over the [tokens, experts] FP32 scores: 31 kernels with
    // Megatron-Core's --moe-router-fusion (72 without; Megatron-LM deepseek-v3-gb200-optimization Sec.
    // 2.1.4). Each streams the score matrix once (kMoeRouterKernels passes of the "softmax" kind).
    add_gemm(b, rc, "moe router", tokens, moe.experts, c.h, c.full, false);
    add_memory_bound_passes(b, rc.hp, "moe router kernels (scores, top-k, aux loss)", "softmax", tokens * moe.experts * 4, kMoeRouterKernels, c.full);
    const bool router_graphed = &rc != &c; // module_ctx() handed the graphed context
    if (!router_graphed) {
        // Each of those kernels is an operator the CPU issues (forward and its autograd mirror), not one; a
        // moe_router graph replays them from one launch.
        b.add_host_ops(Phase::Forward, kMoeRouterKernels - 1);
        b.add_host_ops(Phase::Backward, kMoeRouterKernels - 1);
        if (c.full) {
            b.add_host_ops(Phase::Recompute, kMoeRouterKernels - 1);
        }
    }
    latent_projection(b, c, "moe latent down-projection", tokens, io, c.h);

    // The routed-expert section starts here (after the tokens-per-expert sync): its GPU time per phase.
    const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
    double section_start[3], section_ops[3];
    for (int i = 0; i < 3; ++i) {
        section_start[i] = b.phase_total(phases[i]);
        section_ops[i] = b.host_ops(phases[i]);
    }

    // Permutation copies each token once per selected expert into destination order: a row gather. The
    // flex dispatchers (DeepEP, HybridEP) fuse it into their send kernel (Megatron-LM
    // deepseek-v3-gb200-optimization Sec. 2.1.1).
    const bool flex = in.training->moe_dispatcher == MoeDispatcher::Flex;
    const double permuted_bytes = tokens * k * io * c.e;
    if (!flex) {
        add_memory_bound(b, c.hp, "moe permute", "embedding", permuted_bytes, c.full);
    }

    // Dispatch: DeepSeek-V3's blockwise FP8 recipe sends FP8 rows with 1x128 scales (Sec. 3.3.3); the
    // combine and every backward transfer stay BF16. The busiest receiver gets `skew` x the mean.
    const bool fp8_dispatch = c.lowp && c.in.training->precision == Precision::Fp8 && c.in.training->fp8_recipe == Fp8Recipe::Blockwise;
    const double dispatch_bpe = fp8_dispatch ? 1 + 4.0 / 128 : c.e;
    const double a2a_efficiency = in.profile->expert_all_to_all_efficiency;
    // A flex dispatcher sends a token once per remote NVLink domain its experts live in (then NVLink
    // forwards it), not once per remote expert.
    auto network_bytes = [&](double bpe) {
        return flex ? moe_network_bytes_per_rank(tokens, moe.top_k, moe.experts, io * bpe, in.ep_group, true) * skew : -1.0;
    };
    // The flex dispatchers move their network share with their own RDMA kernels, at the rate DeepEP measures
    // (kFlexNicEfficiency), not at the NIC efficiency NCCL's collectives reach inside training.
    CommModel a2a = c.comm;
    if (flex) {
        a2a.links.nic_efficiency = kFlexNicEfficiency;
    }
    const double dispatch = expert_all_to_all_seconds(a2a, moe_dispatch_bytes(tokens, moe.top_k, io, dispatch_bpe) * skew, in.ep_group,
                                                      a2a_efficiency, network_bytes(dispatch_bpe));
    const double combine =
        expert_all_to_all_seconds(a2a, moe_dispatch_bytes(tokens, moe.top_k, io, c.e) * skew, in.ep_group, a2a_efficiency, network_bytes(c.e));
    const double etp_bytes = rows * skew * io * c.e; // the gathered rows of the ETP group
    const double etp_gather = etp > 1 ? c.comm.collective_seconds(Collective::AllGather, etp_bytes, in.etp_group) : 0;
    const double etp_scatter = etp > 1 ? c.comm.collective_seconds(Collective::ReduceScatter, etp_bytes, in.etp_group) : 0;
    b.expert_comm(Phase::Forward, "ep dispatch (all-to-all)", dispatch);
    b.expert_comm(Phase::Forward, "etp all-gather", etp_gather);
    b.expert_comm(Phase::Backward, "ep dispatch backward (all-to-all)", combine);
    b.expert_comm(Phase::Backward, "etp reduce-scatter backward", etp_scatter);
    if (c.full) {
        b.expert_comm(Phase::Recompute, "ep dispatch (all-to-all)", dispatch);
        b.expert_comm(Phase::Recompute, "etp all-gather", etp_gather);
    }
    // Received rows arrive grouped by source rank; with more than one local expert they are sorted into
    // expert order before the grouped GEMM and back after it (token_dispatcher.py sort_chunks_by_idxs; the
    // flex dispatchers keep this local permute too, Megatron-LM deepseek-v3-gb200-optimization Sec. 2.1.1).
    const double received_bytes = rows * skew * io * c.e;
    if (local_experts > 1) {
        add_memory_bound(b, c.hp, "moe sort by local expert", "embedding", received_bytes, c.full);
    }

    add_grouped_gemm(b, c, swiglu ? "experts gate+up (grouped)" : "experts up (grouped)", local_experts, rows_per_expert, (swiglu ? 2 : 1) * width,
                     io, c.full);
    // A fused grouped MLP (TrainingSpec::fused_grouped_mlp) computes the activation in the GEMMs' epilogue.
    // Host operators of the GPT-OSS-style extras below (added to the section's count).
    double extra_host_fwd = 0, extra_host_bwd = 0;
    if (!in.training->fused_grouped_mlp) {
        add_memory_bound(b, c.hp, activation_name(m.activation), activation_kind(m.activation),
                         local_experts * rows_per_expert * width * c.e * (swiglu ? 2 : 1), c.full || c.rc_moe_act);
        if (m.glu_clamp > 0 && swiglu) {
            const double ops = clamped_glu_passes(b, c, local_experts * rows_per_expert * width * c.e * 2, c.full || c.rc_moe_act);
            extra_host_fwd += ops;
            extra_host_bwd += 2;
        }
    }
    add_grouped_gemm(b, c, "experts down (grouped)", local_experts, rows_per_expert, io, width, c.full);
    // (A fused grouped MLP replaces TEGroupedMLP's forward, and with it the Python bias loop.)
    if (m.linear_bias && !in.training->fused_grouped_mlp) {
        const BiasHostOps ops = expert_output_bias(b, c, local_experts, local_experts * rows_per_expert * io * c.e, c.full);
        extra_host_fwd += ops.forward;
        extra_host_bwd += ops.backward;
    }

    if (local_experts > 1) {
        add_memory_bound(b, c.hp, "moe unsort", "embedding", received_bytes, c.full);
    }
    b.expert_comm(Phase::Forward, "etp reduce-scatter", etp_scatter);
    b.expert_comm(Phase::Forward, "ep combine (all-to-all)", combine);
    b.expert_comm(Phase::Backward, "etp all-gather backward", etp_gather);
    b.expert_comm(Phase::Backward, "ep combine backward (all-to-all)", combine);
    if (c.full) {
        b.expert_comm(Phase::Recompute, "etp reduce-scatter", etp_scatter);
        b.expert_comm(Phase::Recompute, "ep combine (all-to-all)", combine);
    }
    // Unpermutation gathers the k copies back and sums them weighted by the router's probabilities (fused
    // into the combine kernel of a flex dispatcher).
    if (!flex) {
        add_memory_bound(b, c.hp, "moe unpermute", "embedding", permuted_bytes, c.full);
    }

    // Host-bound routed experts: the CPU issues the section's operators only after the sync, so the section
    // lasts at least operators x moe_host_op_us; the GPU waits for the difference. Inputs padded to capacity
    // have static sizes: Megatron-Core's all-to-all dispatcher then takes no device-to-host sync
    // (token_dispatcher.py preprocess, drop_and_pad) and the host runs ahead as elsewhere.
    const HostTerms host = host_terms(*in.profile, in.training->cuda_graphs);
    const double host_op_s = host.moe_host_op_s;
    // A graph of the whole MoE layer (the "moe" scope) exists only with static, capacity-padded shapes.
    const bool captured = in.training->cuda_graphs == CudaGraphs::Scoped && (in.training->cuda_graph_scope & kGraphMoe) != 0;
    const bool synced = !captured && (moe.dropless || !moe.pad_to_capacity);
    if (host_op_s > 0 && synced) {
        MoeHostOps ops = moe_host_operators(local_experts, c.lowp);
        ops.forward += extra_host_fwd;
        ops.backward += extra_host_bwd;
        const double host_s[3] = {ops.forward * host_op_s, ops.backward * host_op_s, c.full ? ops.forward * host_op_s : 0.0};
        for (int i = 0; i < 3; ++i) {
            const double gpu = b.phase_total(phases[i]) - section_start[i];
            b.host_wait(phases[i], "host-bound wait (routed experts after the tokens-per-expert sync)", host_s[i] - gpu);
            // The section's CPU time is the layer's too: the layer's host floor (apply_host_floor) counts its
            // operators at the framework's rate, so the rest of the section's time is added to it.
            b.add_host_seconds(phases[i], std::max(0.0, host_s[i] - (b.host_ops(phases[i]) - section_ops[i]) * host.host_op_s));
        }
    }
    latent_projection(b, c, "moe latent up-projection", tokens, c.h, io);

    const double shared = shared_expert_ffn_hidden_total(m);
    if (shared > 0) {
        tp_collectives(b, c, true);
        ffn_gemms(b, c, c.tokens, shared / c.t, swiglu ? "shared experts gate+up" : "shared experts up", "shared experts down");
        tp_collectives(b, c, false);
    }
    residual(b, outer, "dropout 2", "residual 2");
}

// The flex dispatchers' kernels (DeepEP, HybridEP) run on SMs of their own: DeepSeek-V3 dedicates 20 of an
// H800's 132 SMs to its all-to-all (report Sec. 3.2.2), DeepEP's Buffer defaults to 20 SMs. NCCL's
// all-to-all (the alltoall dispatcher) holds one CTA per channel as every NCCL collective does
// (kNcclOverlapSms, as for overlapped data-parallel traffic, iteration_costs.cpp). While they overlap a
// layer's compute, that compute has the remaining SMs.
double moe_comm_sm_fraction(const TrainingSpec& t, const GpuProfile& profile)
{
    constexpr double kFlexDispatchSms = 20;
    if (profile.sm_count <= 0) {
        return 0;
    }
    const double sms = t.moe_dispatcher == MoeDispatcher::Flex ? kFlexDispatchSms : kNcclOverlapSms;
    return std::min(1.0, sms / profile.sm_count);
}
} // namespace vtrain::layer_ops
