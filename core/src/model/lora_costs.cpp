// SPDX-License-Identifier: MIT
// The operators of one LoRA adapter beside its frozen base layer (model/fine_tuning.h): y = W x + (alpha/r) B (A x).
// Adapters are plain Megatron ColumnParallelLinear/RowParallelLinear layers in the parameter dtype (BF16), not
// Transformer Engine FP8 layers, and without dropout (Megatron-Bridge LoRA.dropout 0.0). Collectives as
// Megatron-Bridge's ParallelLinearAdapter runs them (src/megatron/bridge/peft/utils.py):
//   column-parallel base (qkv, fc1): linear_in column-parallel with gather_output (forward all-gather of the
//     [tokens, r] low-rank activation; its input's gradient all-reduced over TP unless sequence parallelism,
//     where the gathered norm output comes from Transformer Engine, return_layernorm_output_gathered);
//     linear_out column-parallel (its input's gradient all-reduced, [tokens, r]).
//   row-parallel base (proj, fc2): linear_in row-parallel (forward all-reduce of [tokens, r]); linear_out
//     column-parallel with gather_output (forward all-gather of [tokens, out], its input's gradient all-reduced);
//     with sequence parallelism the result is scattered to the sequence shards, whose adjoint all-gathers the
//     [tokens, out] gradient in the backward.
#include "model/layer_builder.h"

namespace vtrain::layer_ops {

void add_lora(BlockBuilder& b, const Ctx& c, LoraTarget target, double rows, double in, double out, bool row_parallel)
{
    const TrainingSpec& t = *c.in.training;
    if (t.mode != TrainingMode::Lora || (t.lora_targets & target) == 0) {
        return;
    }
    const double r = t.lora_rank;
    const double tp = c.t;
    const bool sp = c.in.sequence_parallel;
    const OperatorTimer& g = c.hp;
    // A: [in, r] split by rank (column base) or by input (row base); B: [r, out] split by output.
    const double a_in = row_parallel ? in / tp : in;
    const double a_out = row_parallel ? r : r / tp;
    const double b_out = out / tp;
    const double fwd = g.gemm_seconds(rows, a_out, a_in) + g.gemm_seconds(rows, b_out, r);
    b.gemm(Phase::Forward, "lora adapter (x A, then B)", fwd);
    // Backward: dB = (xA)^T dY, d(xA) = dY B^T, dA = x^T d(xA), dx = d(xA) A^T.
    b.gemm(Phase::Backward, "lora adapter gradients (dB, d(xA), dA, dx)",
           g.gemm_seconds(r, b_out, rows) + g.gemm_seconds(rows, r, b_out) + g.gemm_seconds(a_out, a_in, rows) + g.gemm_seconds(rows, a_in, a_out));
    if (c.full) {
        b.gemm(Phase::Recompute, "lora adapter (x A, then B)", fwd);
    }
    // The output scaled by alpha / r and added to the base layer's (width out/t on a column-parallel layer; the
    // full width on a row-parallel one, its sequence shard with sequence parallelism); the input gradient added
    // to the base layer's.
    const double out_local = row_parallel ? (sp ? out / tp : out) : b_out;
    add_memory_bound(b, g, "lora scale + add", "residual_add", rows * out_local * c.e, c.full);
    b.compute(Phase::Backward, "lora input-gradient add", g.memory_bound_seconds("residual_add", rows * a_in * c.e, false));
    if (tp <= 1) {
        return;
    }
    const double low_rank = rows * r * c.e;
    const double full_out = rows * out * c.e;
    const GroupPlacement& group = c.in.tp_group;
    double forward_comm = 0, backward_comm = 0;
    backward_comm += c.comm.collective_seconds(Collective::AllReduce, low_rank, group); // linear_out's input gradient
    if (row_parallel) {
        forward_comm +=
            c.comm.collective_seconds(Collective::AllReduce, low_rank, group) + c.comm.collective_seconds(Collective::AllGather, full_out, group);
        if (sp) {
            backward_comm += c.comm.collective_seconds(Collective::AllGather, full_out, group);
        }
    } else {
        forward_comm += c.comm.collective_seconds(Collective::AllGather, low_rank, group);
        if (!sp) {
            backward_comm += c.comm.collective_seconds(Collective::AllReduce, rows * in * c.e, group);
        }
    }
    b.communicate(Phase::Forward, "lora tp collectives", forward_comm);
    b.communicate(Phase::Backward, "lora tp collectives", backward_comm);
    if (c.full) {
        b.communicate(Phase::Recompute, "lora tp collectives", forward_comm);
    }
}

} // namespace vtrain::layer_ops
