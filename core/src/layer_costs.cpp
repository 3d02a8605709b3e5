// SPDX-License-Identifier: MIT
#include "vtrain/layer_costs.h"

#include "vtrain/model_math.h"
#include "vtrain/operator_timer.h"

namespace vtrain {
namespace {

// Collects operators into a block, keeping a list for reports when asked.
class BlockBuilder {
public:
    BlockBuilder(BlockCost& block, std::vector<OperatorTime>* list) : m_block(block), m_list(list) {}

    void compute(Phase phase, const char* name, double seconds) { add(phase, name, seconds, false); }
    void communicate(Phase phase, const char* name, double seconds) { add(phase, name, seconds, true); }

    // Host-bound phases (added for validation against vTrain's single-node runs, where layers of small
    // models take ~3 ms whatever their FLOPs): the CPU issues each operator in `host_s` (Python, PyTorch
    // dispatch, autograd, launch) and runs ahead of the GPU, so a phase lasts max(GPU time, operators x
    // host_s). The idle GPU time is charged to compute. host_s = 0 leaves every phase GPU-bound.
    void apply_host_floor(double host_s)
    {
        const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
        for (int i = 0; i < 3; ++i) {
            PhaseTime& t = phase_time(phases[i]);
            const double host = m_ops[i] * host_s;
            if (host > t.total_s()) {
                const double wait = host - t.total_s();
                t.compute_s += wait;
                if (m_list != nullptr) {
                    m_list->push_back({"host-bound wait (framework overhead)", phases[i], wait, false});
                }
            }
        }
    }

private:
    PhaseTime& phase_time(Phase phase)
    {
        return phase == Phase::Forward ? m_block.forward : phase == Phase::Backward ? m_block.backward : m_block.recompute;
    }

    void add(Phase phase, const char* name, double seconds, bool comm)
    {
        PhaseTime& t = phase_time(phase);
        (comm ? t.tp_comm_s : t.compute_s) += seconds;
        if (seconds > 0) {
            ++m_ops[phase == Phase::Forward ? 0 : phase == Phase::Backward ? 1 : 2];
        }
        if (m_list != nullptr && seconds > 0) {
            m_list->push_back({name, phase, seconds, comm});
        }
    }

    BlockCost& m_block;
    std::vector<OperatorTime>* m_list;
    int m_ops[3] = {0, 0, 0}; // operators issued per phase (forward, backward, recompute)
};

// A GEMM C[M,N] = A[M,K] B[K,N] forward, and its two backward GEMMs (input and weight gradients).
void add_gemm(BlockBuilder& b, const OperatorTimer& t, const char* name, double m, double n, double k, bool recomputed)
{
    const double fwd = t.gemm_seconds(m, n, k);
    b.compute(Phase::Forward, name, fwd);
    b.compute(Phase::Backward, name, t.gemm_seconds(m, k, n) + t.gemm_seconds(k, n, m));
    if (recomputed) {
        b.compute(Phase::Recompute, name, fwd);
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

} // namespace

LayerCosts compute_layer_costs(const LayerCostInput& in)
{
    const ModelSpec& m = *in.model;
    const OperatorTimer timer(*in.profile, in.training->precision);
    const CommModel& comm = *in.comm;
    LayerCosts out;

    const double t = in.tp;
    const double tokens = static_cast<double>(in.micro_batch) * m.seq_len;
    const double h = m.hidden;
    const double e = timer.bytes_per_element();
    const double head_dim = m.head_dim();
    const double heads_local = m.heads / t;
    const double kv_width = static_cast<double>(m.effective_kv_heads()) * head_dim;
    const double ffn_local = m.effective_ffn_hidden() / t;
    const bool swiglu = m.activation == FfnActivation::SwiGlu;
    const bool full = in.recompute == Recompute::Full;
    const bool selective = in.recompute == Recompute::Selective;
    // Sequence parallelism shards the norms, dropouts and residuals over the tensor-parallel group.
    const double hidden_bytes = tokens * h * e / (in.sequence_parallel ? t : 1.0);
    const double activation_bytes = tokens * h * e; // a full [b, s, h] activation
    const double host_s = in.profile->host_overhead_us * 1e-6;
    auto accumulate_seconds = [&](double params) {
        const double traffic = params * in.training->grad_accumulation_bytes;
        return traffic > 0 ? timer.memory_bound_seconds("residual_add", traffic / 3, false) : 0.0;
    };

    auto tp_collectives = [&](BlockBuilder& b, bool entering) {
        // Entering a parallel region: all-gather (SP) or identity; leaving it: reduce-scatter (SP) or
        // all-reduce. The backward pass mirrors the forward's collectives.
        Collective fwd_kind = in.sequence_parallel ? (entering ? Collective::AllGather : Collective::ReduceScatter) : Collective::AllReduce;
        Collective bwd_kind = in.sequence_parallel ? (entering ? Collective::ReduceScatter : Collective::AllGather) : Collective::AllReduce;
        const double fwd = (in.sequence_parallel || !entering) ? comm.collective_seconds(fwd_kind, activation_bytes, in.tp_group) : 0;
        const double bwd = (in.sequence_parallel || entering) ? comm.collective_seconds(bwd_kind, activation_bytes, in.tp_group) : 0;
        const char* name = in.sequence_parallel ? (entering ? "tp all-gather" : "tp reduce-scatter") : "tp all-reduce";
        b.communicate(Phase::Forward, name, fwd);
        b.communicate(Phase::Backward, name, bwd);
        if (full) {
            b.communicate(Phase::Recompute, name, fwd);
        }
        if (in.sequence_parallel && entering) {
            // Sequence parallelism keeps only its shard of the column-parallel GEMM's input, so the backward
            // pass all-gathers it again for the weight gradient (Korthikanti et al. 2022, Sec. 4.2.2). Added
            // for validation: without it SP's backward came out faster than the measured one (Table 4).
            b.communicate(Phase::Backward, "sp all-gather (weight-gradient input)",
                          comm.collective_seconds(Collective::AllGather, activation_bytes, in.tp_group));
        }
    };

    // --- transformer layer ---------------------------------------------------------------------
    {
        BlockBuilder b(out.layer, &out.layer_operators);
        add_memory_bound(b, timer, "layernorm 1", "layernorm", hidden_bytes, full);
        tp_collectives(b, true);
        add_gemm(b, timer, "qkv projection", tokens, (h + 2 * kv_width) / t, h, full);
        if (in.training->attention == AttentionKernel::Flash) {
            const double bh = in.micro_batch * heads_local;
            const double fwd = timer.flash_forward_seconds(bh, m.seq_len, head_dim);
            b.compute(Phase::Forward, "attention core (flash)", fwd);
            b.compute(Phase::Backward, "attention core (flash)", timer.flash_backward_seconds(bh, m.seq_len, head_dim));
            if (full) {
                b.compute(Phase::Recompute, "attention core (flash)", fwd);
            }
            // Selective recompute is what flash attention does inside its backward: nothing extra.
        } else {
            const double batch = in.micro_batch * heads_local;
            const double s = m.seq_len;
            const bool again = full || selective;
            const double score_bytes = batch * s * s * e;
            const double qk = timer.batched_gemm_seconds(batch, s, s, head_dim);
            const double av = timer.batched_gemm_seconds(batch, s, head_dim, s);
            b.compute(Phase::Forward, "attention scores (QK^T)", qk);
            b.compute(Phase::Backward, "attention scores (QK^T)",
                      timer.batched_gemm_seconds(batch, s, head_dim, s) + timer.batched_gemm_seconds(batch, head_dim, s, s));
            add_memory_bound(b, timer, "softmax", "softmax", score_bytes, again);
            add_memory_bound(b, timer, "attention dropout", "dropout", score_bytes, again);
            b.compute(Phase::Forward, "attention values (AV)", av);
            b.compute(Phase::Backward, "attention values (AV)",
                      timer.batched_gemm_seconds(batch, s, s, head_dim) + timer.batched_gemm_seconds(batch, s, head_dim, s));
            if (again) {
                b.compute(Phase::Recompute, "attention scores (QK^T)", qk);
                b.compute(Phase::Recompute, "attention values (AV)", av);
            }
        }
        add_gemm(b, timer, "output projection", tokens, h, h / t, full);
        tp_collectives(b, false);
        add_memory_bound(b, timer, "dropout 1", "dropout", hidden_bytes, full);
        add_memory_bound(b, timer, "residual 1", "residual_add", hidden_bytes, full);
        add_memory_bound(b, timer, "layernorm 2", "layernorm", hidden_bytes, full);
        tp_collectives(b, true);
        add_gemm(b, timer, swiglu ? "ffn gate+up" : "ffn up", tokens, (swiglu ? 2 : 1) * ffn_local, h, full);
        add_memory_bound(b, timer, swiglu ? "swiglu" : "gelu", swiglu ? "swiglu" : "gelu",
                         tokens * ffn_local * e * (swiglu ? 2 : 1), full);
        add_gemm(b, timer, "ffn down", tokens, h, ffn_local, full);
        tp_collectives(b, false);
        add_memory_bound(b, timer, "dropout 2", "dropout", hidden_bytes, full);
        add_memory_bound(b, timer, "residual 2", "residual_add", hidden_bytes, full);
        // Accumulating this micro-batch's weight gradients into the gradient buffer, when the framework does
        // it as a separate pass (see TrainingSpec::grad_accumulation_bytes; validation: Megatron-LM 2021 and
        // DeepSpeed runs are slower than Megatron-LM 2022 by about this traffic). An add streams 3 bytes per
        // input byte, so the input size is the traffic / 3.
        b.compute(Phase::Backward, "weight-gradient accumulation",
                  accumulate_seconds(layer_params(m) / t));
        b.apply_host_floor(host_s);
    }

    // --- first stage: embedding (vocabulary-parallel: an all-reduce joins the partial lookups) -----
    {
        BlockBuilder b(out.embedding, nullptr);
        add_memory_bound(b, timer, "embedding", "embedding", activation_bytes, false);
        const Collective kind = in.sequence_parallel ? Collective::ReduceScatter : Collective::AllReduce;
        b.communicate(Phase::Forward, "embedding all-reduce", comm.collective_seconds(kind, activation_bytes, in.tp_group));
        add_memory_bound(b, timer, "embedding dropout", "dropout", hidden_bytes, false);
        b.compute(Phase::Backward, "weight-gradient accumulation", accumulate_seconds(embedding_params(m) / t));
        b.apply_host_floor(host_s);
        // Fetching the micro-batch, broadcasting it to the tensor-parallel group, mask and positions.
        b.compute(Phase::Forward, "micro-batch overhead (data)", in.profile->microbatch_overhead_us * 1e-6);
    }

    // --- last stage: final norm, output projection, vocabulary-parallel cross-entropy --------------
    {
        BlockBuilder b(out.head, nullptr);
        add_memory_bound(b, timer, "final layernorm", "layernorm", hidden_bytes, false);
        if (in.sequence_parallel) {
            b.communicate(Phase::Forward, "sp all-gather", comm.collective_seconds(Collective::AllGather, activation_bytes, in.tp_group));
            b.communicate(Phase::Backward, "sp reduce-scatter",
                          comm.collective_seconds(Collective::ReduceScatter, activation_bytes, in.tp_group));
        }
        add_gemm(b, timer, "output projection (logits)", tokens, m.vocab / t, h, false);
        b.compute(Phase::Backward, "weight-gradient accumulation", accumulate_seconds(static_cast<double>(m.vocab) * h / t));
        // Logits are upcast to fp32 for the loss: the cross-entropy reads [tokens, vocab/t] floats.
        add_memory_bound(b, timer, "cross-entropy", "cross_entropy", tokens * (m.vocab / t) * 4, false);
        // Max, sum and target logit are all-reduced across the vocabulary shards (3 floats a token).
        b.communicate(Phase::Forward, "loss all-reduce", comm.collective_seconds(Collective::AllReduce, tokens * 12, in.tp_group));
        b.communicate(Phase::Backward, "input-grad all-reduce",
                      in.sequence_parallel ? 0 : comm.collective_seconds(Collective::AllReduce, activation_bytes, in.tp_group));
        b.apply_host_floor(host_s);
        // Loss bookkeeping: masking, averaging across the data-parallel group, the schedule's per-step work.
        b.compute(Phase::Forward, "micro-batch overhead (loss)", in.profile->microbatch_overhead_us * 1e-6);
    }
    return out;
}

} // namespace vtrain
