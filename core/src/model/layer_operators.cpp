// SPDX-License-Identifier: MIT
// The operators a layer is built from: GEMMs (with their FP8/FP4 casts), memory-bound kernels, the loss,
// and the tensor-parallel collectives between them.
#include "model/layer_builder.h"

namespace vtrain::layer_ops {

// A context like `c` with other timers (the kernel floor is a timer's): every per-micro-batch field copied.
Ctx with_timers(const Ctx& c, const OperatorTimer& timer, const OperatorTimer& hp)
{
    Ctx g{c.m, c.in, timer, hp, c.comm};
    g.t = c.t;
    g.tokens = c.tokens;
    g.h = c.h;
    g.e = c.e;
    g.hidden_bytes = c.hidden_bytes;
    g.activation_bytes = c.activation_bytes;
    g.full = c.full;
    g.selective = c.selective;
    g.rc_norm = c.rc_norm;
    g.rc_mla_up = c.rc_mla_up;
    g.rc_moe_act = c.rc_moe_act;
    g.rc_moe = c.rc_moe;
    g.lowp = c.lowp;
    g.cast_bpe = c.cast_bpe;
    g.sac = c.sac;
    g.eager = c.eager;
    g.axiswise = c.axiswise;
    g.mxfp8 = c.mxfp8;
    g.frozen = c.frozen;
    return g;
}

// The context a module is timed in: the graphed one when a scoped CUDA graph captures it.
const Ctx& module_ctx(const Ctx& c, unsigned scope_bit)
{
    return c.graphed != nullptr && (c.graph_scope & scope_bit) != 0 ? *c.graphed : c;
}

void add_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, bool recomputed, bool lowp, double bf16_share)
{
    const OperatorTimer& t = lowp ? c.timer : c.hp;
    const double fwd = gemm_time(c, t, lowp, m, n, k, bf16_share);
    b.gemm(Phase::Forward, name, fwd);
    // Backward: the data gradient dX[m,k] = dY W^T, then the weight gradient dW[k,n] = X^T dY, which a frozen
    // weight does not need (autograd skips it when the weight does not require grad).
    const double wgrad = c.frozen ? 0.0 : gemm_time(c, t, lowp, k, n, m, bf16_share);
    b.gemm(Phase::Backward, name, gemm_time(c, t, lowp, m, k, n, bf16_share) + wgrad);
    if (recomputed) {
        b.gemm(Phase::Recompute, name, fwd);
    }
    if (lowp && c.lowp && c.axiswise) {
        b.cast_traffic(Phase::Forward, axiswise_forward_cast_bytes(m, n, k));
        b.cast_traffic(Phase::Backward, axiswise_backward_cast_bytes(m, n, k));
        if (recomputed) {
            b.cast_traffic(Phase::Recompute, axiswise_forward_cast_bytes(m, n, k));
        }
    } else if (lowp && c.lowp) {
        b.cast_traffic(Phase::Forward, m * k * c.cast_bpe);  // the input (weights are cast once and cached)
        b.cast_traffic(Phase::Backward, m * n * c.cast_bpe); // the output gradient
        if (recomputed) {
            b.cast_traffic(Phase::Recompute, m * k * c.cast_bpe);
        }
    }
}

// Only the forward of a GEMM again, before its backward (per-op selective recompute redoes some GEMMs).
void add_recomputed_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, double bf16_share)
{
    b.gemm(Phase::Recompute, name, gemm_time(c, c.timer, true, m, n, k, bf16_share));
    if (c.lowp) {
        b.cast_traffic(Phase::Recompute, c.axiswise ? axiswise_forward_cast_bytes(m, n, k) : m * k * c.cast_bpe);
    }
}

// `groups` GEMMs of the same shape with different weights (the local experts) in one grouped kernel. A
// grouped GEMM fills the GPU with the tiles of all groups, but each group's tiles are as short as its own
// rows: it behaves like one GEMM of m rows and groups x n columns (same tiles, same short-M inefficiency,
// same weight bytes read). The profile's GEMM table at that shape gives the time, so small experts come
// out slow exactly where the measured table is slow at small M.
void add_grouped_gemm(BlockBuilder& b, const Ctx& c, const char* name, double groups, double m, double n, double k, bool recomputed)
{
    const double slow = c.lowp ? lowp_gemm_time_factor(c) : 1.0;
    const double fwd = c.timer.gemm_seconds(m, groups * n, k) * slow;
    b.gemm(Phase::Forward, name, fwd);
    b.gemm(Phase::Backward, name, (c.timer.gemm_seconds(m, groups * k, n) + (c.frozen ? 0.0 : c.timer.gemm_seconds(k, groups * n, m))) * slow);
    if (recomputed) {
        b.gemm(Phase::Recompute, name, fwd);
    }
    if (c.lowp) {
        b.cast_traffic(Phase::Forward, groups * m * k * c.cast_bpe);
        b.cast_traffic(Phase::Backward, groups * m * n * c.cast_bpe);
        if (recomputed) {
            b.cast_traffic(Phase::Recompute, groups * m * k * c.cast_bpe);
        }
    }
}

void add_memory_bound(BlockBuilder& b, const OperatorTimer& t, const char* name, const char* kind, double bytes, bool recomputed)
{
    const double fwd = t.memory_bound_seconds(kind, bytes, false);
    b.compute(Phase::Forward, name, fwd);
    b.compute(Phase::Backward, name, t.memory_bound_seconds(kind, bytes, true));
    if (recomputed) {
        b.compute(Phase::Recompute, name, fwd);
    }
}

// A block's RMSNorm/LayerNorm: eager op sequences stream more bytes; per-op SAC recomputes it.
void add_norm(BlockBuilder& b, const Ctx& c, const char* name, double bytes)
{
    add_memory_bound(b, c.hp, name, "layernorm", bytes * (c.eager ? kEagerNormTraffic : 1.0), c.full || c.sac || c.rc_norm);
}

// `passes` memory-bound kernels of the same size charged as one operator (small element-wise chains).
void add_memory_bound_passes(BlockBuilder& b, const OperatorTimer& t, const char* name, const char* kind, double bytes, double passes,
                             bool recomputed)
{
    const double fwd = passes * t.memory_bound_seconds(kind, bytes, false);
    b.compute(Phase::Forward, name, fwd);
    b.compute(Phase::Backward, name, passes * t.memory_bound_seconds(kind, bytes, true));
    if (recomputed) {
        b.compute(Phase::Recompute, name, fwd);
    }
}

// The vocabulary-parallel cross-entropy over `logits` logits of this rank. Megatron's unfused loss runs as
// separate fp32 passes (the "cross_entropy" traffic of the profile, 4-byte input). Transformer Engine's fused
// parallel cross-entropy (transformer_engine/pytorch/triton/cross_entropy.py @ 02965d2: online_softmax_kernel
// reads each 16-bit logit once for the max and the sum; cross_entropy_backward_kernel reads it again and writes
// the gradient in place) moves 2 bytes per logit in the forward and 4 in the backward, and never upcasts.
void add_cross_entropy(BlockBuilder& b, const OperatorTimer& t, const char* name, double logits, bool te_fused)
{
    if (!te_fused) {
        add_memory_bound(b, t, name, "cross_entropy", logits * 4, false);
        return;
    }
    // "residual_add" streams 3 bytes per input byte forward and 2 backward: these calls move exactly the bytes given.
    b.compute(Phase::Forward, name, t.memory_bound_seconds("residual_add", logits * 2 / 3, false));
    b.compute(Phase::Backward, name, t.memory_bound_seconds("residual_add", logits * 4 / 2, true));
}

void tp_collectives(BlockBuilder& b, const Ctx& c, bool entering)
{
    const LayerCostInput& in = c.in;
    // Entering a parallel region: all-gather (SP) or identity; leaving it: reduce-scatter (SP) or
    // all-reduce. The backward pass mirrors the forward's collectives.
    const Collective fwd_kind = in.sequence_parallel ? (entering ? Collective::AllGather : Collective::ReduceScatter) : Collective::AllReduce;
    const Collective bwd_kind = in.sequence_parallel ? (entering ? Collective::ReduceScatter : Collective::AllGather) : Collective::AllReduce;
    const double fwd = (in.sequence_parallel || !entering) ? c.comm.collective_seconds(fwd_kind, c.activation_bytes, in.tp_group) : 0;
    const double bwd = (in.sequence_parallel || entering) ? c.comm.collective_seconds(bwd_kind, c.activation_bytes, in.tp_group) : 0;
    const char* name = in.sequence_parallel ? (entering ? "tp all-gather" : "tp reduce-scatter") : "tp all-reduce";
    b.communicate(Phase::Forward, name, fwd);
    b.communicate(Phase::Backward, name, bwd);
    if (c.full) {
        b.communicate(Phase::Recompute, name, fwd);
    }
    if (in.sequence_parallel && entering) {
        // Sequence parallelism keeps only its shard of the column-parallel GEMM's input, so the backward
        // pass all-gathers it again for the weight gradient (Korthikanti et al. 2022, Sec. 4.2.2). Added
        // for validation: without it SP's backward came out faster than the measured one (Table 4).
        b.communicate(Phase::Backward, "sp all-gather (weight-gradient input)",
                      c.comm.collective_seconds(Collective::AllGather, c.activation_bytes, in.tp_group));
    }
}

void residual(BlockBuilder& b, const Ctx& c, const char* dropout, const char* add)
{
    add_memory_bound(b, c.hp, dropout, "dropout", c.hidden_bytes, c.full);
    add_memory_bound(b, c.hp, add, "residual_add", c.hidden_bytes, c.full);
}
} // namespace vtrain::layer_ops
