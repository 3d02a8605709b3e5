// SPDX-License-Identifier: MIT
#pragma once
// What every layer's cost is built from (internal to model/): BlockBuilder collects one block's operators
// per phase; Ctx is what the cost functions know about the micro-batch on this GPU. The functions are
// defined by concern: layer_operators.cpp (GEMMs, memory-bound kernels, tensor-parallel collectives),
// low_precision.cpp (FP8/FP4 casts and rates), attention_costs.cpp (attention, MLA and Mamba mixers),
// ffn_costs.cpp (dense and mixture-of-experts FFNs). compute_layer_costs.cpp assembles the layers.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "profile/operator_timer.h"
#include "vtrain/comm_model.h"
#include "vtrain/layer_costs.h"
#include "vtrain/scenario.h"

namespace vtrain::layer_ops {

enum class Stream { Compute, Tp, Ep, Cp };

// Collects operators into a block, keeping a list for reports when asked.
class BlockBuilder {
public:
    BlockBuilder(BlockCost& block, std::vector<OperatorTime>* list) : m_block(block), m_list(list) {}

    void compute(Phase phase, const char* name, double seconds) { add(phase, name, seconds, Stream::Compute); }
    void communicate(Phase phase, const char* name, double seconds) { add(phase, name, seconds, Stream::Tp); }
    void expert_comm(Phase phase, const char* name, double seconds) { add(phase, name, seconds, Stream::Ep); }
    void context_comm(Phase phase, const char* name, double seconds) { add(phase, name, seconds, Stream::Cp); }
    void gemm(Phase phase, const char* name, double seconds)
    {
        m_gemm_s[index(phase)] += seconds;
        compute(phase, name, seconds);
    }
    // Bytes streamed by FP8/FP4 quantize kernels in a phase, charged as one operator by finish_casts().
    void cast_traffic(Phase phase, double bytes) { m_cast_bytes[index(phase)] += bytes; }
    // Seconds charged so far to a phase (compute and communication on the compute stream).
    double phase_total(Phase phase) { return phase_time(phase).total_s(); }
    // Operators the CPU has issued so far in a phase (what apply_host_floor() charges host_s each).
    double host_ops(Phase phase) const { return m_ops[index(phase)]; }
    // `n` more operators the CPU issues in a phase beyond those added (an operator charged as several kernels).
    void add_host_ops(Phase phase, double n) { m_ops[index(phase)] += n; }
    // CPU seconds a phase spends beyond host_s per operator (a section whose operators cost more each).
    void add_host_seconds(Phase phase, double seconds) { m_extra_host_s[index(phase)] += seconds; }
    // GPU idle time waiting for the CPU: charged to compute, not an operator the CPU issues.
    void host_wait(Phase phase, const char* name, double seconds)
    {
        if (seconds <= 0) {
            return;
        }
        phase_time(phase).compute_s += seconds;
        if (m_list != nullptr) {
            m_list->push_back({name, phase, seconds, false});
        }
    }

    void finish_casts(const OperatorTimer& t)
    {
        const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
        for (int i = 0; i < 3; ++i) {
            // A streaming add moves 3 bytes per input byte, so the input size is the traffic / 3.
            const double s = m_cast_bytes[i] > 0 ? t.memory_bound_seconds("residual_add", m_cast_bytes[i] / 3, false) : 0.0;
            compute(phases[i], "low-precision quantize (casts, amax)", s);
        }
    }

    // Overlap: a fraction of the tensor-parallel traffic runs under the GEMMs it feeds (never more than
    // their time); with moe_overlap the dispatch/combine runs under the layer's compute (max, not sum).
    // With `tp_forward_only` (PyTorch async TP) the backward's traffic stays exposed.
    // moe_sm_fraction: share of the GPU's SMs the overlapped dispatch/combine kernels hold while they run;
    // the compute beside them runs on the rest (see moe_comm_sm_fraction()).
    void apply_overlap(bool tp_overlap, double tp_fraction, bool moe_overlap, bool tp_forward_only = false, double moe_sm_fraction = 0)
    {
        const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
        for (int i = 0; i < 3; ++i) {
            PhaseTime& t = phase_time(phases[i]);
            if (tp_overlap && !(tp_forward_only && phases[i] == Phase::Backward)) {
                const double hidden = std::min(tp_fraction * t.tp_comm_s, m_gemm_s[i]);
                t.tp_comm_s -= hidden;
                note(phases[i], "tp communication hidden behind GEMMs", -hidden, OperatorTime::Stream::Tensor);
            }
            if (moe_overlap) {
                // Compute c beside comm m runs at (1 - f) speed while m lasts: the phase takes max(m, c + f m),
                // so the hidden part of m is min(c, (1 - f) m).
                const double hidden = std::min(t.compute_s, (1 - moe_sm_fraction) * t.ep_comm_s);
                t.ep_comm_s -= hidden;
                t.ep_hidden_s += hidden;
                note(phases[i], "expert dispatch/combine hidden behind compute", -hidden, OperatorTime::Stream::Expert);
            }
        }
    }

    // Host-bound phases (added for validation against vTrain's single-node runs, where layers of small
    // models take ~3 ms whatever their FLOPs): the CPU issues each operator in `host_s` (Python, PyTorch
    // dispatch, autograd, launch) and runs ahead of the GPU, so a phase lasts max(GPU time, operators x
    // host_s + the CPU seconds of sections priced apart). One thread issues them all, so no section's CPU
    // time hides another's. The idle GPU time is charged to compute. host_s = 0 with no seconds priced apart
    // leaves every phase GPU-bound.
    void apply_host_floor(double host_s)
    {
        const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
        for (int i = 0; i < 3; ++i) {
            host_wait(phases[i], "host-bound wait (framework overhead)", m_ops[i] * host_s + m_extra_host_s[i] - phase_total(phases[i]));
        }
    }

private:
    static int index(Phase phase) { return phase == Phase::Forward ? 0 : phase == Phase::Backward ? 1 : 2; }

    PhaseTime& phase_time(Phase phase)
    {
        return phase == Phase::Forward ? m_block.forward : phase == Phase::Backward ? m_block.backward : m_block.recompute;
    }

    void note(Phase phase, const char* name, double seconds, OperatorTime::Stream stream)
    {
        if (m_list != nullptr && seconds != 0) {
            m_list->push_back({name, phase, seconds, true, stream});
        }
    }

    void add(Phase phase, const char* name, double seconds, Stream stream)
    {
        PhaseTime& t = phase_time(phase);
        switch (stream) {
        case Stream::Compute: t.compute_s += seconds; break;
        case Stream::Tp: t.tp_comm_s += seconds; break;
        case Stream::Ep: t.ep_comm_s += seconds; break;
        case Stream::Cp: t.cp_comm_s += seconds; break;
        }
        if (seconds > 0) {
            ++m_ops[index(phase)];
        }
        if (m_list != nullptr && seconds > 0) {
            const OperatorTime::Stream kinds[] = {OperatorTime::Stream::Compute, OperatorTime::Stream::Tensor, OperatorTime::Stream::Expert,
                                                  OperatorTime::Stream::Context};
            m_list->push_back({name, phase, seconds, stream != Stream::Compute, kinds[static_cast<int>(stream)]});
        }
    }

    BlockCost& m_block;
    std::vector<OperatorTime>* m_list;
    double m_ops[3] = {0, 0, 0};          // operators issued per phase (forward, backward, recompute)
    double m_extra_host_s[3] = {0, 0, 0}; // CPU seconds beyond host_s per operator (add_host_seconds)
    double m_gemm_s[3] = {0, 0, 0};
    double m_cast_bytes[3] = {0, 0, 0};
};

// What every cost function needs about the micro-batch on this GPU.
struct Ctx {
    const ModelSpec& m;
    const LayerCostInput& in;
    const OperatorTimer& timer; // linear layers (low precision when the recipe says so)
    const OperatorTimer& hp;    // what stays in high precision (router, output layer)
    const CommModel& comm;
    double t = 1;      // tensor-parallel size
    double tokens = 0; // b x s / cp: the sequence share of one context-parallel rank
    double h = 0;
    double e = 2;                // activation bytes per element
    double hidden_bytes = 0;     // one [tokens, h] activation, sharded by sequence parallelism
    double activation_bytes = 0; // one [tokens, h] activation
    bool full = false;
    bool selective = false;
    bool rc_norm = false, rc_mla_up = false, rc_moe_act = false; // Plan::recompute_modules
    bool rc_moe = false;                                         // ... "moe" (the whole MoE layer)
    bool lowp = false;                                           // FP8 or NVFP4 GEMMs
    double cast_bpe = 0;
    bool sac = false;      // torchtitan per-op SAC: selective recompute redoes every second matmul + elementwise ops
    bool eager = false;    // eager PyTorch elementwise op sequences (TrainingSpec::eager_elementwise)
    bool axiswise = false; // torchao rowwise FP8 casts (TrainingSpec::fp8_axiswise_casts)
    bool mxfp8 = false;    // MXFP8 block-scaled GEMMs (Fp8Recipe::Mxfp8): kMxfp8GemmTimeFactor
    bool frozen = false;   // the base weights are frozen (LoRA): GEMM backwards compute the data gradient only
    // Scoped CUDA graphs: the modules in graph_scope are timed with `graphed` (this context with timers
    // whose kernel floor is a graph's gap between kernels, cuda_graphs.h); null when nothing is captured.
    const Ctx* graphed = nullptr;
    unsigned graph_scope = 0;
};

Ctx with_timers(const Ctx& c, const OperatorTimer& timer, const OperatorTimer& hp);
const Ctx& module_ctx(const Ctx& c, unsigned scope_bit);

// Eager PyTorch runs torchtitan's Llama elementwise code as separate kernels (torchtitan @ 9dec370,
// torchtitan/models/norms.py RMSNorm and torchtitan/models/llama/model.py apply_rotary_emb, FeedForward).
// Bytes each streams per element, against the one fused kernel torch.compile (or Megatron/TE) runs:
//   RMSNorm  x.float() 2+4, pow 4+4, mean 4, x * rsqrt 4+4, type_as 4+2, * weight 2+2 = 36   (fused: 2+2)
//   SwiGLU   silu 2+2, * 2+2+2 = 10 per element of the FFN width                         (fused: 2+2+2)
//   RoPE     .float() 2+4, complex multiply 8+8, type_as 4+2 = 28 per element of q and k  (fused, not modeled)
constexpr double kEagerNormTraffic = 36.0 / 4.0;
constexpr double kEagerSwigluTraffic = 10.0 / 6.0;
constexpr double kEagerRopeBytesPerElement = 28.0;

// --- low_precision.cpp: FP8/FP4 quantize traffic and GEMM rates ------------------------------------------
double cast_bytes_per_element(Precision precision, Fp8Recipe recipe);
double fp8_row_alignment(Precision precision, Fp8Recipe recipe);
// Cast traffic of one GEMM y[m,n] = x[m,k] w[k,n] under torchao's axiswise (rowwise) scaling.
double axiswise_forward_cast_bytes(double m, double n, double k);
double axiswise_backward_cast_bytes(double m, double n, double k);
// Share of a fused GEMM's Linears that torchao's rowwise recipe keeps in BF16 (0 unless that recipe).
double rowwise_bf16_share(const Ctx& c, std::initializer_list<double> outs, double in_features);
// What the recipe's GEMM kernel takes against the profile's low-precision table (1 for per-tensor scaling).
double lowp_gemm_time_factor(const Ctx& c);
// One GEMM's time at the recipe's rate, `bf16_share` of it at the BF16 rate.
double gemm_time(const Ctx& c, const OperatorTimer& t, bool lowp, double m, double n, double k, double bf16_share);

// --- layer_operators.cpp: GEMMs, memory-bound kernels, tensor-parallel collectives ------------------------
void add_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, bool recomputed, bool lowp = true,
              double bf16_share = 0);
// --- lora_costs.cpp: a LoRA adapter beside the frozen base layer `target` (nothing unless mode lora targets it) --
// `rows` tokens through a base layer of full widths `in` -> `out`, split by input (row_parallel) or output.
void add_lora(BlockBuilder& b, const Ctx& c, LoraTarget target, double rows, double in, double out, bool row_parallel);
// Only the forward of a GEMM again, before its backward (per-op selective recompute).
void add_recomputed_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, double bf16_share = 0);
// The local experts' GEMMs of one shape in one grouped kernel.
void add_grouped_gemm(BlockBuilder& b, const Ctx& c, const char* name, double groups, double m, double n, double k, bool recomputed);
void add_memory_bound(BlockBuilder& b, const OperatorTimer& t, const char* name, const char* kind, double bytes, bool recomputed);
// A block's RMSNorm/LayerNorm (eager op sequences stream more bytes; per-op SAC recomputes it).
void add_norm(BlockBuilder& b, const Ctx& c, const char* name, double bytes);
// `passes` memory-bound kernels of the same size charged as one operator.
void add_memory_bound_passes(BlockBuilder& b, const OperatorTimer& t, const char* name, const char* kind, double bytes, double passes,
                             bool recomputed);
// The vocabulary-parallel cross-entropy over `logits` logits of this rank.
void add_cross_entropy(BlockBuilder& b, const OperatorTimer& t, const char* name, double logits, bool te_fused);
// Entering (`entering`) or leaving a tensor-parallel region: the collectives of both passes.
void tp_collectives(BlockBuilder& b, const Ctx& c, bool entering);
void residual(BlockBuilder& b, const Ctx& c, const char* dropout, const char* add);

// --- attention_costs.cpp: the token mixers ---------------------------------------------------------------
void attention_mixer(BlockBuilder& b, const Ctx& c, bool windowed);
// Multi-head latent attention (DeepSeek-V3).
void mla_mixer(BlockBuilder& b, const Ctx& c);
// Mamba-2 (state-space duality).
void mamba_mixer(BlockBuilder& b, const Ctx& c);

// --- ffn_costs.cpp: dense and mixture-of-experts FFNs ----------------------------------------------------
void dense_ffn(BlockBuilder& b, const Ctx& c);
// Router, dispatch, experts, combine and shared experts on one rank; `outer` times what sits outside MoELayer.
void moe_ffn(BlockBuilder& b, const Ctx& c, const Ctx& outer);
// Share of the SMs a flex dispatcher's kernels hold while they overlap compute.
double moe_comm_sm_fraction(const TrainingSpec& t, const GpuProfile& profile);

} // namespace vtrain::layer_ops
