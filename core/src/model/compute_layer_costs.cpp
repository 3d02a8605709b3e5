// SPDX-License-Identifier: MIT
// The layer cost model's entry: each distinct layer kind of the model costed once from its mixer
// (attention_costs.cpp) and FFN (ffn_costs.cpp), then the embedding, the output layer and the MTP modules.
// The operators they are built from are layer_operators.cpp; the FP8/FP4 casts, low_precision.cpp.
#include "vtrain/layer_costs.h"

#include <algorithm>
#include <optional>

#include "model/cuda_graphs.h"
#include "model/layer_builder.h"
#include "model/model_math.h"
#include "profile/operator_timer.h"

namespace vtrain {
namespace {

using namespace layer_ops;

// Whether scoped CUDA graphs capture every module of a layer of this kind.
bool layer_captured(const Ctx& c, const LayerKind& kind)
{
    if (c.graphed == nullptr) {
        return false;
    }
    const unsigned scope = c.graph_scope;
    const bool mixer = kind.mixer == MixerKind::Attention ? (scope & kGraphAttn) != 0
                       : kind.mixer == MixerKind::Mamba   ? (scope & kGraphMamba) != 0
                                                          : true;
    const bool ffn = kind.ffn == FfnKind::Dense ? (scope & kGraphMlp) != 0 : kind.ffn == FfnKind::Moe ? (scope & kGraphMoe) != 0 : true;
    return mixer && ffn;
}

void build_layer(BlockCost& block, std::vector<OperatorTime>* ops, const Ctx& c, const LayerKind& kind, const LayerParamSplit& params)
{
    BlockBuilder b(block, ops);
    if (kind.mixer == MixerKind::Attention) {
        if (c.m.attention == AttentionKind::Mla) {
            mla_mixer(b, module_ctx(c, kGraphAttn));
        } else {
            attention_mixer(b, module_ctx(c, kGraphAttn), kind.windowed);
        }
    } else if (kind.mixer == MixerKind::Mamba) {
        mamba_mixer(b, module_ctx(c, kGraphMamba));
    }
    if (kind.ffn == FfnKind::Dense) {
        dense_ffn(b, module_ctx(c, kGraphMlp));
    } else if (kind.ffn == FfnKind::Moe) {
        if (c.rc_moe && !c.full) {
            // The "moe" recompute module: the layer's contexts with `full` set (graphed ones too).
            std::optional<Ctx> graphed;
            Ctx again = c;
            again.full = true;
            if (c.graphed != nullptr) {
                graphed.emplace(*c.graphed);
                graphed->full = true;
                again.graphed = &*graphed;
            }
            moe_ffn(b, module_ctx(again, kGraphMoe), c);
        } else {
            moe_ffn(b, module_ctx(c, kGraphMoe), c);
        }
    }
    b.finish_casts(c.timer);
    // Accumulating this micro-batch's weight gradients into the gradient buffer, when the framework does it
    // as a separate pass (see TrainingSpec::grad_accumulation_bytes; validation: Megatron-LM 2021 and
    // DeepSpeed runs are slower than Megatron-LM 2022 by about this traffic). An add streams 3 bytes per
    // input byte, so the input size is the traffic / 3.
    const double local_params = params.dense / c.t + params.expert / (std::max(1, c.in.ep) * (c.in.etp > 0 ? c.in.etp : c.in.tp));
    // A frozen base (LoRA) accumulates only its adapters' gradients, a negligible share.
    const double traffic = c.frozen ? 0.0 : local_params * c.in.training->grad_accumulation_bytes;
    b.compute(Phase::Backward, "weight-gradient accumulation", traffic > 0 ? c.hp.memory_bound_seconds("residual_add", traffic / 3, false) : 0.0);
    b.apply_overlap(c.in.tp_overlap, c.in.tp_overlap_hidden_fraction, c.in.moe_overlap, c.in.training->tp_overlap_forward_only,
                    moe_comm_sm_fraction(*c.in.training, *c.in.profile));
    // A layer whose every module is captured is one graph replay per pass: the host issues no operator of it
    // (Megatron-Core's local per-layer graphs, scope "full"; or TE graphs of all its modules). Partly captured
    // layers keep the per-operator term, which the profiles were fitted with.
    b.apply_host_floor(layer_captured(c, kind) ? 0.0 : host_terms(*c.in.profile, c.in.training->cuda_graphs).host_op_s);
}

} // namespace

LayerCosts compute_layer_costs(const LayerCostInput& given)
{
    // Groups the caller left unplaced get Megatron's default rank order ("tp-cp-ep-dp-pp": tensor innermost,
    // then context; expert ranks with ETP innermost, then EP) inside the NVLink domain.
    LayerCostInput in = given;
    const int domain = in.comm->links.nvlink_domain_gpus > 0 ? in.comm->links.nvlink_domain_gpus : in.comm->links.gpus_per_node;
    const int etp = in.etp > 0 ? in.etp : in.tp;
    if (in.cp > 1 && in.cp_group.size != in.cp) {
        in.cp_group = place_group(in.cp, in.tp, domain);
    }
    if (in.ep > 1 && in.ep_group.size != in.ep) {
        in.ep_group = place_group(in.ep, etp, domain);
    }
    if (etp > 1 && in.etp_group.size != etp) {
        in.etp_group = etp == in.tp && in.tp_group.size == in.tp ? in.tp_group : place_group(etp, 1, domain);
    }
    const ModelSpec& m = *in.model;
    const Precision precision = in.training->precision;
    const bool lowp = precision == Precision::Fp8 || precision == Precision::Nvfp4;
    const HostTerms host = host_terms(*in.profile, in.training->cuda_graphs);
    const OperatorTimer timer(*in.profile, precision, host.kernel_floor_s);
    const OperatorTimer hp(*in.profile, lowp ? Precision::Bf16 : precision, host.kernel_floor_s);
    // Scoped CUDA graphs: the captured modules' kernels follow each other at a graph's gap.
    const double graph_floor_s = std::min(host.kernel_floor_s, kGraphKernelGapUs * 1e-6);
    const bool scoped = in.training->cuda_graphs == CudaGraphs::Scoped;
    std::optional<OperatorTimer> timer_graphed, hp_graphed; // only when scoped (the explorer calls this per plan)
    if (scoped) {
        timer_graphed.emplace(*in.profile, precision, graph_floor_s);
        hp_graphed.emplace(*in.profile, lowp ? Precision::Bf16 : precision, graph_floor_s);
    }
    LayerCosts out;

    Ctx c{m, in, timer, hp, *in.comm};
    c.t = in.tp;
    c.tokens = static_cast<double>(in.micro_batch) * m.seq_len / std::max(1, in.cp);
    c.h = m.hidden;
    c.e = hp.bytes_per_element();
    // Sequence parallelism shards the norms, dropouts and residuals over the tensor-parallel group.
    c.hidden_bytes = c.tokens * c.h * c.e / (in.sequence_parallel ? c.t : 1.0);
    c.activation_bytes = c.tokens * c.h * c.e; // a full [b, s/cp, h] activation
    c.full = in.recompute == Recompute::Full;
    c.selective = in.recompute == Recompute::Selective;
    c.rc_norm = (in.recompute_modules & kRecomputeLayernorm) != 0;
    c.rc_mla_up = (in.recompute_modules & kRecomputeMlaUpProj) != 0;
    c.rc_moe_act = (in.recompute_modules & kRecomputeMoeAct) != 0;
    c.rc_moe = (in.recompute_modules & kRecomputeMoe) != 0;
    c.lowp = lowp;
    c.cast_bpe = lowp ? cast_bytes_per_element(precision, in.training->fp8_recipe) : 0;
    c.sac = c.selective && in.training->per_op_sac;
    c.eager = in.training->eager_elementwise;
    c.axiswise = lowp && in.training->precision == Precision::Fp8 && in.training->fp8_axiswise_casts;
    c.mxfp8 = lowp && in.training->precision == Precision::Fp8 && in.training->fp8_recipe == Fp8Recipe::Mxfp8;
    c.frozen = in.training->frozen_base();
    std::optional<Ctx> graphed;
    if (scoped) {
        graphed.emplace(with_timers(c, *timer_graphed, *hp_graphed));
        c.graphed = &*graphed;
        c.graph_scope = in.training->cuda_graph_scope;
    }
    const double host_s = host.host_op_s;

    // --- transformer layers: each distinct kind is costed once and shared ------------------------
    {
        // Low-precision recipes that keep the first and last n layers in BF16 (TrainingSpec::bf16_edge_layers):
        // those layers are a kind of their own, costed with the BF16 timer and no casts.
        const int edge = lowp ? std::max(0, in.training->bf16_edge_layers) : 0;
        auto in_bf16 = [&](int i) { return i < edge || i >= m.layers - edge; };
        Ctx bf16 = with_timers(c, hp, hp);
        // No low-precision GEMMs or casts there. The plan's recompute modules apply to every layer, as
        // Megatron-Core's --recompute-modules do (with_timers copies them); scoped graphs are left out.
        bf16.lowp = false;
        bf16.cast_bpe = 0;
        bf16.axiswise = false;
        bf16.mxfp8 = false;
        std::vector<LayerKind> kinds; // distinct kinds in order of appearance
        std::vector<bool> kind_bf16;  // ... and whether they run in BF16 under a low-precision recipe
        std::vector<int> first_index; // a layer of each kind (for its parameter split)
        std::vector<int> count;
        std::vector<int> kind_of(static_cast<std::size_t>(std::max(0, m.layers)), 0);
        for (int i = 0; i < m.layers; ++i) {
            const LayerKind k = layer_kind(m, i);
            int id = 0;
            while (id < static_cast<int>(kinds.size()) &&
                   !(kinds[static_cast<std::size_t>(id)] == k && kind_bf16[static_cast<std::size_t>(id)] == in_bf16(i))) {
                ++id;
            }
            if (id == static_cast<int>(kinds.size())) {
                kinds.push_back(k);
                kind_bf16.push_back(in_bf16(i));
                first_index.push_back(i);
                count.push_back(0);
            }
            kind_of[static_cast<std::size_t>(i)] = id;
            ++count[static_cast<std::size_t>(id)];
        }
        if (kinds.empty()) {
            kinds.push_back(layer_kind(m, 0));
            kind_bf16.push_back(false);
            first_index.push_back(0);
            count.push_back(1);
        }
        const auto common = static_cast<std::size_t>(std::max_element(count.begin(), count.end()) - count.begin());
        std::vector<BlockCost> costs(kinds.size());
        for (std::size_t k = 0; k < kinds.size(); ++k) {
            build_layer(costs[k], k == common ? &out.layer_operators : nullptr, kind_bf16[k] ? bf16 : c, kinds[k],
                        layer_param_split(m, first_index[k]));
        }
        out.layer = costs[static_cast<std::size_t>(kind_of.empty() ? 0 : kind_of[0])];
        if (kinds.size() > 1) {
            out.layers.reserve(kind_of.size());
            for (int id : kind_of) {
                out.layers.push_back(costs[static_cast<std::size_t>(id)]);
            }
        }
    }

    // --- multi-token prediction: norms, the 2h -> h projection, its block and its own output head ----
    if (m.mtp_layers > 0) {
        build_layer(out.mtp, nullptr, c, mtp_block_kind(m), mtp_param_split(m));
        BlockCost extra;
        BlockBuilder b(extra, nullptr);
        add_memory_bound(b, hp, "mtp norms", "layernorm", 2 * c.hidden_bytes, false);
        add_gemm(b, c, "mtp projection", c.tokens, c.h / c.t, 2 * c.h, false);
        add_memory_bound(b, hp, "mtp final norm", "layernorm", c.hidden_bytes, false);
        add_gemm(b, c, "mtp output projection (logits)", c.tokens, m.vocab / c.t, c.h, false, false);
        add_cross_entropy(b, hp, "mtp cross-entropy", c.tokens * (m.vocab / c.t), in.training->te_cross_entropy);
        b.finish_casts(timer);
        out.mtp.forward += extra.forward;
        out.mtp.backward += extra.backward;
    }

    // --- first stage: embedding (vocabulary-parallel: an all-reduce joins the partial lookups) -----
    {
        BlockBuilder b(out.embedding, nullptr);
        if (c.frozen) {
            // A frozen table: the lookup only, no scatter-add into its gradient.
            b.compute(Phase::Forward, "embedding", hp.memory_bound_seconds("embedding", c.activation_bytes, false));
        } else {
            add_memory_bound(b, hp, "embedding", "embedding", c.activation_bytes, false);
        }
        const Collective kind = in.sequence_parallel ? Collective::ReduceScatter : Collective::AllReduce;
        b.communicate(Phase::Forward, "embedding all-reduce", c.comm.collective_seconds(kind, c.activation_bytes, in.tp_group));
        if (c.frozen) {
            // Nothing before a frozen table needs a gradient: autograd stops at the dropout's output.
            b.compute(Phase::Forward, "embedding dropout", hp.memory_bound_seconds("dropout", c.hidden_bytes, false));
        } else {
            add_memory_bound(b, hp, "embedding dropout", "dropout", c.hidden_bytes, false);
        }
        const double traffic = c.frozen ? 0.0 : embedding_params(m) / c.t * in.training->grad_accumulation_bytes;
        b.compute(Phase::Backward, "weight-gradient accumulation", traffic > 0 ? hp.memory_bound_seconds("residual_add", traffic / 3, false) : 0.0);
        b.apply_host_floor(host_s);
        // Fetching the micro-batch, broadcasting it to the tensor-parallel group, mask and positions.
        b.compute(Phase::Forward, "micro-batch overhead (data)", in.profile->microbatch_overhead_us * 1e-6);
    }

    // --- last stage: final norm, output projection, vocabulary-parallel cross-entropy --------------
    {
        BlockBuilder b(out.head, nullptr);
        add_memory_bound(b, hp, "final layernorm", "layernorm", c.hidden_bytes, false);
        if (in.sequence_parallel) {
            b.communicate(Phase::Forward, "sp all-gather", c.comm.collective_seconds(Collective::AllGather, c.activation_bytes, in.tp_group));
            b.communicate(Phase::Backward, "sp reduce-scatter",
                          c.comm.collective_seconds(Collective::ReduceScatter, c.activation_bytes, in.tp_group));
        }
        // The output layer stays in high precision under FP8/FP4 recipes.
        add_gemm(b, c, "output projection (logits)", c.tokens, m.vocab / c.t, c.h, false, false);
        const double traffic = c.frozen ? 0.0 : static_cast<double>(m.vocab) * c.h / c.t * in.training->grad_accumulation_bytes;
        b.compute(Phase::Backward, "weight-gradient accumulation", traffic > 0 ? hp.memory_bound_seconds("residual_add", traffic / 3, false) : 0.0);
        // Unfused, the logits are upcast to fp32 for the loss: the cross-entropy reads [tokens, vocab/t] floats.
        add_cross_entropy(b, hp, "cross-entropy", c.tokens * (m.vocab / c.t), in.training->te_cross_entropy);
        // Max, sum and target logit are all-reduced across the vocabulary shards (3 floats a token).
        b.communicate(Phase::Forward, "loss all-reduce", c.comm.collective_seconds(Collective::AllReduce, c.tokens * 12, in.tp_group));
        b.communicate(Phase::Backward, "input-grad all-reduce",
                      in.sequence_parallel ? 0 : c.comm.collective_seconds(Collective::AllReduce, c.activation_bytes, in.tp_group));
        b.apply_host_floor(host_s);
        // Loss bookkeeping: masking, averaging across the data-parallel group, the schedule's per-step work.
        b.compute(Phase::Forward, "micro-batch overhead (loss)", in.profile->microbatch_overhead_us * 1e-6);
    }
    return out;
}

} // namespace vtrain
