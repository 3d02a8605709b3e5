// SPDX-License-Identifier: MIT
// The token mixers: multi-head and grouped-query attention (flash or Megatron's unfused core, with the
// context-parallel exchange), DeepSeek's multi-head latent attention and the Mamba-2 mixer.
#include "model/layer_builder.h"

#include <cmath>

#include "model/fine_tuning.h"
#include "model/layer_comm.h"
#include "model/model_math.h"

namespace vtrain::layer_ops {
namespace {

// Megatron-LM's fused scale-mask-softmax kernel runs only when FusedScaleMaskSoftmax.is_kernel_available()
// holds: 16 < keys <= 4096, queries, keys and score matrices per rank (micro-batch x local heads) multiples
// of 4, and (causal mask) the score matrices a multiple of the kernel's batches per block: 128 threads /
// min(32, keys rounded up to a power of two) warps, times 2 batches per warp up to 128 keys
// (megatron/model/fused_softmax.py and get_batch_per_block() in scaled_masked_softmax.h, Megatron-LM 2021-22).
bool megatron_fused_softmax_applies(double score_matrices, double queries, double keys)
{
    const auto multiple_of = [](double x, double n) { return std::fmod(std::round(x), n) == 0; };
    if (!(keys > 16 && keys <= 4096 && multiple_of(queries, 4) && multiple_of(keys, 4) && multiple_of(score_matrices, 4))) {
        return false;
    }
    const double pow2 = std::exp2(std::ceil(std::log2(keys)));
    const double batches_per_block = 128.0 / std::min(pow2, 32.0) * (pow2 <= 128 ? 2 : 1);
    return multiple_of(score_matrices, batches_per_block);
}

// The attention core of one rank: flash attention over its s/cp queries (causal load balancing gives every
// rank 1/cp of the work) against min(window, s) keys, plus the context-parallel exchange. `kv_width` is
// the K+V width per token on this tensor-parallel rank that a ring passes around.
void attention_core(BlockBuilder& b, const Ctx& c, double heads_local, double head_dim, double qkv_width, double out_width, double kv_width,
                    bool windowed)
{
    const ModelSpec& m = c.m;
    const LayerCostInput& in = c.in;
    const double cp = std::max(1, in.cp);
    // Packed fine-tuning samples attend within themselves (model/fine_tuning.h).
    const double share = attention_keys_per_query(m, windowed) / m.seq_len / cp * packed_attention_share(m, *in.training);
    const double bh = in.micro_batch * heads_local;
    double fwd = 0, bwd = 0;
    if (in.training->attention == AttentionKernel::Flash) {
        // Past the longest sequence of the profile's table the lookup scales time linearly; causal attention
        // grows with the square of the sequence, so the other factor s / s_max is applied here.
        const auto& grid = in.profile->flash_attention.seq;
        const double beyond = !grid.empty() && m.seq_len > grid.back() ? m.seq_len / grid.back() : 1.0;
        fwd = c.hp.flash_forward_seconds(bh, m.seq_len, head_dim) * share * beyond;
        bwd = c.hp.flash_backward_seconds(bh, m.seq_len, head_dim) * share * beyond;
        if (const double frac = in.training->attention_peak_fraction; frac > 0) {
            // A kernel that reaches at best `frac` of the dense peak (FlashAttention-2 on H100: 35%, Shah et
            // al. 2024, arXiv 2407.08608, abstract) cannot beat that rate at any size. Causal forward: two
            // GEMMs of 2 s^2 d FLOPs each, half of them masked (x share: this rank's part); the backward does
            // 2.5x the forward's FLOPs at FlashAttention-2's backward/forward utilisation, 63% / 73% of A100
            // peak (Dao 2023, arXiv 2307.08691, Sec. 4.1).
            const double s = m.seq_len;
            const double flops = 2 * bh * s * s * head_dim * share;
            const double peak = in.profile->peak_flops("bf16");
            if (peak > 0) {
                fwd = std::max(fwd, flops / (frac * peak));
                bwd = std::max(bwd, 2.5 * flops / (frac * 63.0 / 73.0 * peak));
            }
        }
        b.compute(Phase::Forward, "attention core (flash)", fwd);
        b.compute(Phase::Backward, "attention core (flash)", bwd);
        // Megatron-Core's selective recompute (recompute_modules core_attn) checkpoints the attention core,
        // the fused/flash kernel included, and runs its forward again before the backward
        // (attention.py, _checkpointed_attention_forward); torchtitan's per-op SAC saves SDPA's output instead.
        if (c.full || (c.selective && !c.sac)) {
            b.compute(Phase::Recompute, "attention core (flash)", fwd);
        }
    } else {
        const double batch = bh;
        const double s = m.seq_len / cp; // this rank's queries against all keys
        const double keys = m.seq_len;
        const bool again = c.full || c.selective;
        const double score_bytes = batch * s * keys * c.e;
        const double qk = c.hp.batched_gemm_seconds(batch, s, keys, head_dim);
        const double av = c.hp.batched_gemm_seconds(batch, s, head_dim, keys);
        fwd = qk + av;
        b.compute(Phase::Forward, "attention scores (QK^T)", qk);
        b.compute(Phase::Backward, "attention scores (QK^T)",
                  c.hp.batched_gemm_seconds(batch, s, head_dim, keys) + c.hp.batched_gemm_seconds(batch, head_dim, keys, s));
        if (megatron_fused_softmax_applies(batch, s, keys)) {
            add_memory_bound(b, c.hp, "softmax", "softmax", score_bytes, again);
        } else {
            // Megatron's FusedScaleMaskSoftmax falls back to PyTorch ops in fp32 (softmax_in_fp32, set by
            // query-key layer scaling): cast up, scale, mask fill, softmax, cast down. Five operators and
            // fp32 traffic instead of one kernel; it shows where small models are host-bound (vTrain's
            // single-node t = 8, micro-batch 1 runs: 16 heads / 8 x 1 = 2 score matrices per rank).
            // Input sizes in bytes of a read+write element-wise pass: the fp32 scores are 2 x score_bytes.
            add_memory_bound(b, c.hp, "softmax fallback: cast to fp32", "gelu", 1.5 * score_bytes, again);
            add_memory_bound(b, c.hp, "softmax fallback: scale", "gelu", 2 * score_bytes, again);
            add_memory_bound(b, c.hp, "softmax fallback: causal mask fill", "gelu", 2 * score_bytes, again);
            add_memory_bound(b, c.hp, "softmax (fp32)", "softmax", 2 * score_bytes, again);
            add_memory_bound(b, c.hp, "softmax fallback: cast to fp16", "gelu", 1.5 * score_bytes, again);
        }
        add_memory_bound(b, c.hp, "attention dropout", "dropout", score_bytes, again);
        b.compute(Phase::Forward, "attention values (AV)", av);
        b.compute(Phase::Backward, "attention values (AV)",
                  c.hp.batched_gemm_seconds(batch, s, keys, head_dim) + c.hp.batched_gemm_seconds(batch, s, head_dim, keys));
        bwd = 2 * fwd;
        if (again) {
            b.compute(Phase::Recompute, "attention scores (QK^T)", qk);
            b.compute(Phase::Recompute, "attention values (AV)", av);
        }
    }
    if (in.cp <= 1) {
        return;
    }
    if (in.cp_kind == ContextParallelKind::Ring) {
        // PyTorch's ring (torchtitan) runs SDPA on K/V already repeated to the query heads (torchtitan
        // models/llama/model.py: repeat_kv before scaled_dot_product_attention), so that is what travels,
        // and its dK/dV accumulators travel in fp32 (_templated_ring_attention_backward, accum_dtype).
        const bool torch_ring = in.training->cp_ring_pytorch;
        const double ring_kv_width = torch_ring ? 2 * heads_local * head_dim : kv_width;
        CpRingTraffic ring = cp_ring_traffic(c.tokens, ring_kv_width, c.e, in.cp);
        if (torch_ring) {
            ring.backward_step_bytes = ring.forward_step_bytes * (1 + 4 / c.e);
            const CpRingMergeTraffic merge = cp_ring_pytorch_merge_traffic(c.tokens * heads_local * head_dim, c.tokens * ring_kv_width);
            // Streaming element-wise traffic: the operator tables take the input size, a third of it.
            const double mf = ring.steps * c.hp.memory_bound_seconds("residual_add", merge.forward_bytes / 3, false);
            const double mb = ring.steps * c.hp.memory_bound_seconds("residual_add", merge.backward_bytes / 3, false);
            b.compute(Phase::Forward, "cp ring merge (fp32 ops per step)", mf);
            b.compute(Phase::Backward, "cp ring gradient accumulation (fp32 ops per step)", mb);
            if (c.full) {
                b.compute(Phase::Recompute, "cp ring merge (fp32 ops per step)", mf);
            }
        }
        const double f = cp_ring_exposed_seconds(c.comm, ring.forward_step_bytes, ring.steps, fwd, in.cp, in.cp_group);
        const double g = cp_ring_exposed_seconds(c.comm, ring.backward_step_bytes, ring.steps, bwd, in.cp, in.cp_group);
        b.context_comm(Phase::Forward, "cp ring KV exchange (exposed)", f);
        b.context_comm(Phase::Backward, "cp ring KV + dKV exchange (exposed)", g);
        if (c.full) {
            b.context_comm(Phase::Recompute, "cp ring KV exchange (exposed)", f);
        }
    } else {
        // Ulysses: Q, K, V scattered by heads and gathered by sequence, the output back (forward); dO and
        // dQ, dK, dV in backward. Nothing overlaps them.
        const double bytes = c.tokens * (qkv_width + out_width) * c.e;
        const double s = all_to_all_seconds(c.comm, bytes, in.cp_group);
        b.context_comm(Phase::Forward, "cp all-to-all (heads)", s);
        b.context_comm(Phase::Backward, "cp all-to-all (heads)", s);
        if (c.full) {
            b.context_comm(Phase::Recompute, "cp all-to-all (heads)", s);
        }
    }
}
} // namespace

void attention_mixer(BlockBuilder& b, const Ctx& c, bool windowed)
{
    const ModelSpec& m = c.m;
    const double head_dim = m.head_dim();
    const double q = static_cast<double>(m.heads) * head_dim;
    const double kv = static_cast<double>(m.effective_kv_heads()) * head_dim;
    add_norm(b, c, "layernorm 1", c.hidden_bytes);
    tp_collectives(b, c, true);
    // torchtitan's wq, wk, wv are three Linears (the rowwise filter judges each).
    add_gemm(b, c, "qkv projection", c.tokens, (q + 2 * kv) / c.t, c.h, c.full, true, rowwise_bf16_share(c, {q / c.t, kv / c.t, kv / c.t}, c.h));
    add_lora(b, c, kLoraQkv, c.tokens, c.h, q + 2 * kv, false);
    if (m.qk_norm) {
        add_memory_bound(b, c.hp, "q/k norm", "layernorm", c.tokens * (q + kv) / c.t * c.e, c.full);
    }
    if (c.eager) {
        // RoPE on q and k as eager complex arithmetic; a streaming add moves 3 bytes per input byte.
        add_memory_bound(b, c.hp, "rope (eager)", "residual_add", c.tokens * (q + kv) / c.t * kEagerRopeBytesPerElement / 3, c.full || c.sac);
    }
    attention_core(b, c, m.heads / c.t, head_dim, (q + 2 * kv) / c.t, q / c.t, 2 * kv / c.t, windowed);
    add_gemm(b, c, "output projection", c.tokens, c.h, q / c.t, c.full, true, rowwise_bf16_share(c, {c.h}, q / c.t));
    add_lora(b, c, kLoraProj, c.tokens, q, c.h, true);
    if (c.sac) {
        // torchtitan's per-op SAC policy saves the outputs of matmuls, SDPA and reduce-scatters "except
        // every second mm" of a layer (torchtitan parallelize_llama.py _apply_ac_to_transformer_block, Dec.
        // 2024; torchtitan/distributed/activation_checkpoint.py later): in call order wq 1, wk 2, wv 3, wo 4,
        // w1 5, w3 6, w2 7, so wk, wo and w3 are redone, and every elementwise op is recomputed.
        add_recomputed_gemm(b, c, "k projection (per-op SAC)", c.tokens, kv / c.t, c.h, rowwise_bf16_share(c, {kv / c.t}, c.h));
        add_recomputed_gemm(b, c, "output projection (per-op SAC)", c.tokens, c.h, q / c.t, rowwise_bf16_share(c, {c.h}, q / c.t));
    }
    tp_collectives(b, c, false);
    residual(b, c, "dropout 1", "residual 1");
}

// Multi-head latent attention (DeepSeek-V3 Sec. 2.1.1). The down projections are replicated over the
// tensor-parallel group (Megatron-Core builds them "duplicated"); up projections and heads are split.
void mla_mixer(BlockBuilder& b, const Ctx& c)
{
    const ModelSpec& m = c.m;
    const MlaSpec& a = m.mla;
    const double heads_local = m.heads / c.t;
    const double qk = a.qk_head_dim + a.qk_rope_head_dim;
    add_memory_bound(b, c.hp, "layernorm 1", "layernorm", c.hidden_bytes, c.full || c.rc_norm);
    tp_collectives(b, c, true);
    if (a.q_lora_rank > 0) {
        add_gemm(b, c, "mla q down-projection", c.tokens, a.q_lora_rank, c.h, c.full);
        add_memory_bound(b, c.hp, "mla q norm", "layernorm", c.tokens * a.q_lora_rank * c.e, c.full || c.rc_norm);
        add_gemm(b, c, "mla q up-projection", c.tokens, heads_local * qk, a.q_lora_rank, c.full || c.rc_mla_up);
    } else {
        add_gemm(b, c, "mla q projection", c.tokens, heads_local * qk, c.h, c.full);
    }
    add_gemm(b, c, "mla kv down-projection", c.tokens, a.kv_lora_rank + a.qk_rope_head_dim, c.h, c.full);
    add_memory_bound(b, c.hp, "mla kv norm", "layernorm", c.tokens * a.kv_lora_rank * c.e, c.full || c.rc_norm);
    add_gemm(b, c, "mla kv up-projection", c.tokens, heads_local * (a.qk_head_dim + a.v_head_dim), a.kv_lora_rank, c.full || c.rc_mla_up);
    // Flash attention's cost scales with d_qk + d_v: the mean head size stands for both. Context parallelism
    // exchanges the materialised per-head K and V (the latent form is not what the kernels pass).
    const double kv_width = heads_local * (qk + a.v_head_dim);
    attention_core(b, c, heads_local, (qk + a.v_head_dim) / 2, heads_local * (2 * qk + a.v_head_dim), heads_local * a.v_head_dim, kv_width, false);
    add_gemm(b, c, "output projection", c.tokens, c.h, heads_local * a.v_head_dim, c.full);
    tp_collectives(b, c, false);
    residual(b, c, "dropout 1", "residual 1");
}

// Mamba-2 mixer (Dao & Gu 2024, arXiv 2405.21060): in_proj to z, x, B, C, dt; depthwise conv; the chunked
// state-space-dual scan as batched GEMMs per chunk; gated RMSNorm; out_proj. Heads split over tp.
void mamba_mixer(BlockBuilder& b, const Ctx& c)
{
    const ModelSpec& m = c.m;
    const MambaSpec& s = m.mamba;
    const double heads = mamba_heads(m) / c.t;
    const double groups = std::max(1.0, s.groups / c.t);
    const double inner = heads * s.head_dim;
    const double bc = 2 * groups * s.state_dim;
    add_memory_bound(b, c.hp, "layernorm 1", "layernorm", c.hidden_bytes, c.full || c.rc_norm);
    tp_collectives(b, c, true);
    add_gemm(b, c, "mamba in-projection", c.tokens, 2 * inner + bc + heads, c.h, c.full);
    add_memory_bound(b, c.hp, "mamba conv1d", "gelu", c.tokens * (inner + bc) * c.e, c.full);
    const double q = std::min(128.0, static_cast<double>(m.seq_len)); // Megatron-Core's chunk_size
    const double chunks = c.tokens / q;
    const double n = s.state_dim, p = s.head_dim;
    // The scan's kernels (mamba_ssm's Triton SSD kernels in Megatron-Core) can run slower than the profile's
    // batched-GEMM table says: TrainingSpec::ssd_scan_time_factor scales every one of them (1 = the table).
    const double slow = c.in.training->ssd_scan_time_factor;
    const double cb = slow * c.hp.batched_gemm_seconds(chunks * groups, q, q, n);            // C B^T inside a chunk
    const double states = slow * c.hp.batched_gemm_seconds(chunks * heads, n, p, q);         // chunk states B^T X
    const double fwd = cb + slow * c.hp.batched_gemm_seconds(chunks * heads, q, p, q)        // (masked scores) x X
                       + states + slow * c.hp.batched_gemm_seconds(chunks * heads, q, p, n); // state to output C h
    b.compute(Phase::Forward, "mamba ssd scan", fwd);
    // Each GEMM's two gradients, after the backward recomputes C B^T and the chunk states: the forward keeps
    // neither (mamba_ssm ops/triton/ssd_combined.py, _mamba_chunk_scan_combined_bwd runs _bmm_chunk_fwd,
    // _chunk_state_fwd and _state_passing_fwd again before its gradient kernels).
    b.compute(Phase::Backward, "mamba ssd scan", 2 * fwd + cb + states);
    if (c.full) {
        b.compute(Phase::Recompute, "mamba ssd scan", fwd);
    }
    add_memory_bound(b, c.hp, "mamba gated norm", "layernorm", c.tokens * inner * c.e, c.full);
    add_gemm(b, c, "mamba out-projection", c.tokens, c.h, inner, c.full);
    tp_collectives(b, c, false);
    residual(b, c, "dropout 1", "residual 1");
}
} // namespace vtrain::layer_ops
