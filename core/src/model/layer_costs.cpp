// SPDX-License-Identifier: MIT
#include "vtrain/layer_costs.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include "model/cuda_graphs.h"
#include "model/layer_comm.h"
#include "model/model_math.h"
#include "profile/operator_timer.h"

namespace vtrain {
namespace {

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
                note(phases[i], "expert dispatch/combine hidden behind compute", -hidden, OperatorTime::Stream::Expert);
            }
        }
    }

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
    int m_ops[3] = {0, 0, 0}; // operators issued per phase (forward, backward, recompute)
    double m_gemm_s[3] = {0, 0, 0};
    double m_cast_bytes[3] = {0, 0, 0};
};

// Bytes a quantize kernel streams per element it casts (read BF16, write the low-precision copy and
// scales): delayed scaling reads once (amax from history); current scaling reads twice (amax, then
// cast); blockwise finds each block's amax in the same pass; MXFP8 writes row- and column-wise copies;
// NVFP4 writes 4-bit values with their scales (Transformer Engine recipe docs,
// shared/research/modern-training.md Sec. 5) in the passes below.
//
// NVFP4 (Transformer Engine's NVFP4BlockScaling, the recipe of arXiv 2509.25149): the inputs of every
// linear layer (fp4_quant_fwd_inp) and the output gradients (fp4_quant_bwd_grad) -- the tensors the
// casts here stand for -- take a random Hadamard transform for their column-wise (wgrad) copy.
// NVFP4Quantizer::quantize_impl (transformer_engine/pytorch/csrc/quantizer.cpp) then runs three kernels
// over the BF16 tensor: nvte_hadamard_transform_amax (the row-wise amax and the post-RHT column-wise
// amax, one read), nvte_quantize_v2 for the row-wise copy (read, write 4 bits + an E4M3 scale per 16), and
// nvte_hadamard_transform_cast_fusion_columnwise for the column-wise copy (read, write the same). That
// fused kernel needs rows % 64 == 0 and cols % 128 == 0; otherwise an unfused RHT writes and rereads a
// BF16 transposed copy (not modeled: the shapes here are taken as eligible). Stochastic rounding of the
// gradients draws its random bits inside the cast (no extra pass); the weights' 2D 16x16 scaling is
// cast once per iteration and cached like every recipe's weights here.
double cast_bytes_per_element(Precision precision, Fp8Recipe recipe)
{
    if (precision == Precision::Nvfp4) {
        return 2 + 2 + 2 + 2 * 0.5625; // three reads; row- and column-wise 4-bit copies + one E4M3 scale per 16
    }
    switch (recipe) {
    case Fp8Recipe::Delayed: return 2 + 1;
    case Fp8Recipe::Current: return 2 + 2 + 1;
    case Fp8Recipe::Blockwise: return 2 + 1 + 4.0 / 128;
    case Fp8Recipe::Mxfp8: return 2 + 2 * (1 + 1.0 / 32);
    }
    return 3;
}

// Rows a low-precision grouped GEMM pads each expert to (TE: 16 for per-tensor/blockwise FP8, 32 MXFP8/FP4).
double fp8_row_alignment(Precision precision, Fp8Recipe recipe)
{
    if (precision == Precision::Nvfp4 || recipe == Fp8Recipe::Mxfp8) {
        return 32;
    }
    return 16;
}

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
    // Scoped CUDA graphs: the modules in graph_scope are timed with `graphed` (this context with timers
    // whose kernel floor is a graph's gap between kernels, cuda_graphs.h); null when nothing is captured.
    const Ctx* graphed = nullptr;
    unsigned graph_scope = 0;
};

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
    return g;
}

// The context a module is timed in: the graphed one when a scoped CUDA graph captures it.
const Ctx& module_ctx(const Ctx& c, unsigned scope_bit)
{
    return c.graphed != nullptr && (c.graph_scope & scope_bit) != 0 ? *c.graphed : c;
}

// Eager PyTorch runs torchtitan's Llama elementwise code as separate kernels (torchtitan @ 9dec370,
// torchtitan/models/norms.py RMSNorm and torchtitan/models/llama/model.py apply_rotary_emb, FeedForward).
// Bytes each streams per element, against the one fused kernel torch.compile (or Megatron/TE) runs:
//   RMSNorm  x.float() 2+4, pow 4+4, mean 4, x * rsqrt 4+4, type_as 4+2, * weight 2+2 = 36   (fused: 2+2)
//   SwiGLU   silu 2+2, * 2+2+2 = 10 per element of the FFN width                         (fused: 2+2+2)
//   RoPE     .float() 2+4, complex multiply 8+8, type_as 4+2 = 28 per element of q and k  (fused, not modeled)
constexpr double kEagerNormTraffic = 36.0 / 4.0;
constexpr double kEagerSwigluTraffic = 10.0 / 6.0;
constexpr double kEagerRopeBytesPerElement = 28.0;

// torchao's rowwise recipe (Float8LinearConfig.from_recipe_name("rowwise"): axiswise dynamic scaling of
// input, weight and grad_output, CUTLASS rowwise _scaled_mm) scales each GEMM operand along the GEMM's
// reduction axis, so every operand is cast twice: input along K for the output and along M for the weight
// gradient, grad_output along N for the input gradient and along M for the weight gradient, the weight
// along K and along N (pytorch/ao docs/source/workflows/training.md pseudocode: to_fp8(input),
// to_fp8(input.t()), to_fp8(grad_output), to_fp8(weight), ...), and no weight copy is cached across
// passes (FP8 all-gathers are tensorwise only: torchtitan parallelize.py enable_float8_tensorwise_tp).
// A cast along the contiguous axis reads the row once and writes FP8 (amax and cast in one kernel: 2 + 1
// bytes per element); along the strided axis the amax is a reduction pass of its own (2 + 2 + 1).
constexpr double kAxiswiseContiguousCastBytes = 2 + 1;
constexpr double kAxiswiseStridedCastBytes = 2 + 2 + 1;
// The CUTLASS rowwise _scaled_mm runs slower than the cuBLAS per-tensor kernel the profile's FP8 table
// stands for. Factor on the FP8 GEMM time chosen so that, with the casts above, this model reproduces
// torchao's published end-to-end gain of rowwise over bf16 on 8 x H100 (pytorch/ao torchao/float8 README
// "e2e training benchmarks": Llama3-8B, FSDP2, torch.compile, per-op SAC, batch 1 x 8192: bf16 6150,
// tensorwise 7689.5 (+25.0%), rowwise 6768 tokens/s (+10.05%)); when chosen (session 6 profiles) the model
// gave +29.5% for tensorwise and +10.3% for rowwise with it (torchtitan scenario of that setup,
// FlashAttention-2 floor on). Since torchao's rowwise auto-filter (below) keeps the small Linears in BF16
// and the profiles were refitted, the reproduction no longer holds exactly; the factor was not re-derived.
constexpr double kAxiswiseGemmTimeFactor = 1.22;

// Where rowwise FP8 gains nothing: torchao's auto filter for the rowwise recipe (pytorch/ao
// torchao/float8/float8_linear_utils.py _auto_filter_for_rowwise, PR #2410, thresholds from torchao's H100
// rowwise GEMM tables; root cause in torchtitan issue #1207: small linears ran ~40% slower in rowwise FP8)
// keeps a Linear in BF16 when in_features <= 2048, out_features <= 1024, or in <= 4096 and out <= 2048.
// torchtitan before that filter (2025-06 and earlier) converted them anyway: they run at BF16 GEMM speed
// and still pay their casts. Checked on the shapes one rank multiplies (TP-sharded), as the RCA did.
} // namespace

bool rowwise_gains(double out_features, double in_features)
{
    return !(in_features <= 2048 || out_features <= 1024 || (in_features <= 4096 && out_features <= 2048));
}

namespace {

// Cast traffic of one GEMM y[m,n] = x[m,k] w[k,n] under axiswise scaling, forward and backward.
double axiswise_forward_cast_bytes(double m, double n, double k)
{
    return (m * k + n * k) * kAxiswiseContiguousCastBytes;
}
double axiswise_backward_cast_bytes(double m, double n, double k)
{
    // grad_output along N (dgrad) and along M (wgrad); input along M (wgrad); weight along N (dgrad).
    return m * n * (kAxiswiseContiguousCastBytes + kAxiswiseStridedCastBytes) + (m * k + n * k) * kAxiswiseStridedCastBytes;
}

// Share (by output width) of a GEMM that fuses the Linears of widths `outs` over `in_features` inputs
// where rowwise FP8 gains nothing (rowwise_gains); 0 unless the recipe is torchao rowwise.
double rowwise_bf16_share(const Ctx& c, std::initializer_list<double> outs, double in_features)
{
    if (!c.lowp || !c.axiswise) {
        return 0;
    }
    double total = 0, slow = 0;
    for (const double o : outs) {
        total += o;
        slow += rowwise_gains(o, in_features) ? 0 : o;
    }
    return total > 0 ? slow / total : 0;
}

// One GEMM's time: the low-precision table (x the rowwise kernel factor), with `bf16_share` of it at the
// BF16 rate instead (rowwise FP8 linears too small to gain).
double gemm_time(const Ctx& c, const OperatorTimer& t, bool lowp, double m, double n, double k, double bf16_share)
{
    const double slow = lowp && c.axiswise ? kAxiswiseGemmTimeFactor : 1.0;
    const double fast = t.gemm_seconds(m, n, k) * slow;
    return bf16_share > 0 ? (1 - bf16_share) * fast + bf16_share * c.hp.gemm_seconds(m, n, k) : fast;
}

void add_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, bool recomputed, bool lowp = true, double bf16_share = 0)
{
    const OperatorTimer& t = lowp ? c.timer : c.hp;
    const double fwd = gemm_time(c, t, lowp, m, n, k, bf16_share);
    b.gemm(Phase::Forward, name, fwd);
    b.gemm(Phase::Backward, name, gemm_time(c, t, lowp, m, k, n, bf16_share) + gemm_time(c, t, lowp, k, n, m, bf16_share));
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
void add_recomputed_gemm(BlockBuilder& b, const Ctx& c, const char* name, double m, double n, double k, double bf16_share = 0)
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
    const double fwd = c.timer.gemm_seconds(m, groups * n, k);
    b.gemm(Phase::Forward, name, fwd);
    b.gemm(Phase::Backward, name, c.timer.gemm_seconds(m, groups * k, n) + c.timer.gemm_seconds(k, groups * n, m));
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

// Router kernels per MoE layer forward with router fusion (see moe_ffn()).
constexpr double kMoeRouterKernels = 31;

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
    const double share = attention_keys_per_query(m, windowed) / m.seq_len / cp;
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

void residual(BlockBuilder& b, const Ctx& c, const char* dropout, const char* add)
{
    add_memory_bound(b, c.hp, dropout, "dropout", c.hidden_bytes, c.full);
    add_memory_bound(b, c.hp, add, "residual_add", c.hidden_bytes, c.full);
}

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
    if (m.qk_norm) {
        add_memory_bound(b, c.hp, "q/k norm", "layernorm", c.tokens * (q + kv) / c.t * c.e, c.full);
    }
    if (c.eager) {
        // RoPE on q and k as eager complex arithmetic; a streaming add moves 3 bytes per input byte.
        add_memory_bound(b, c.hp, "rope (eager)", "residual_add", c.tokens * (q + kv) / c.t * kEagerRopeBytesPerElement / 3, c.full || c.sac);
    }
    attention_core(b, c, m.heads / c.t, head_dim, (q + 2 * kv) / c.t, q / c.t, 2 * kv / c.t, windowed);
    add_gemm(b, c, "output projection", c.tokens, c.h, q / c.t, c.full, true, rowwise_bf16_share(c, {c.h}, q / c.t));
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

void dense_ffn(BlockBuilder& b, const Ctx& c)
{
    const bool swiglu = c.m.activation == FfnActivation::SwiGlu;
    add_norm(b, c, "layernorm 2", c.hidden_bytes);
    tp_collectives(b, c, true);
    ffn_gemms(b, c, c.tokens, c.m.effective_ffn_hidden() / c.t, swiglu ? "ffn gate+up" : "ffn up", "ffn down");
    tp_collectives(b, c, false);
    residual(b, c, "dropout 2", "residual 2");
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
    latent_projection(b, c, "moe latent down-projection", tokens, io, c.h);

    // The routed-expert section starts here (after the tokens-per-expert sync): its GPU time per phase.
    const Phase phases[] = {Phase::Forward, Phase::Backward, Phase::Recompute};
    double section_start[3];
    for (int i = 0; i < 3; ++i) {
        section_start[i] = b.phase_total(phases[i]);
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
    const double remote_rows = flex ? moe_remote_domains_per_token(moe.experts, moe.top_k, in.ep_group.nodes) : -1;
    auto network_bytes = [&](double bpe) { return flex ? tokens * remote_rows * io * bpe * skew : -1.0; };
    const double dispatch = expert_all_to_all_seconds(c.comm, moe_dispatch_bytes(tokens, moe.top_k, io, dispatch_bpe) * skew, in.ep_group,
                                                      a2a_efficiency, network_bytes(dispatch_bpe));
    const double combine =
        expert_all_to_all_seconds(c.comm, moe_dispatch_bytes(tokens, moe.top_k, io, c.e) * skew, in.ep_group, a2a_efficiency, network_bytes(c.e));
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
    const double host_op_s = host_terms(*in.profile, in.training->cuda_graphs).moe_host_op_s;
    const bool synced = moe.dropless || !moe.pad_to_capacity;
    if (host_op_s > 0 && synced) {
        MoeHostOps ops = moe_host_operators(local_experts, c.lowp);
        ops.forward += extra_host_fwd;
        ops.backward += extra_host_bwd;
        const double host_s[3] = {ops.forward * host_op_s, ops.backward * host_op_s, c.full ? ops.forward * host_op_s : 0.0};
        for (int i = 0; i < 3; ++i) {
            const double gpu = b.phase_total(phases[i]) - section_start[i];
            b.compute(phases[i], "host-bound wait (routed experts after the tokens-per-expert sync)", std::max(0.0, host_s[i] - gpu));
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
// H800's 132 SMs to its all-to-all (report Sec. 3.2.2), DeepEP's Buffer defaults to 20 SMs. While they overlap
// a layer's compute, that compute has the remaining SMs. NCCL's all-to-all is not counted (0).
double moe_comm_sm_fraction(const TrainingSpec& t, const GpuProfile& profile)
{
    constexpr double kFlexDispatchSms = 20;
    if (t.moe_dispatcher != MoeDispatcher::Flex || profile.sm_count <= 0) {
        return 0;
    }
    return std::min(1.0, kFlexDispatchSms / profile.sm_count);
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
            moe_ffn(b, again, c);
        } else {
            moe_ffn(b, c, c);
        }
    }
    b.finish_casts(c.timer);
    // Accumulating this micro-batch's weight gradients into the gradient buffer, when the framework does it
    // as a separate pass (see TrainingSpec::grad_accumulation_bytes; validation: Megatron-LM 2021 and
    // DeepSpeed runs are slower than Megatron-LM 2022 by about this traffic). An add streams 3 bytes per
    // input byte, so the input size is the traffic / 3.
    const double local_params = params.dense / c.t + params.expert / (std::max(1, c.in.ep) * (c.in.etp > 0 ? c.in.etp : c.in.tp));
    const double traffic = local_params * c.in.training->grad_accumulation_bytes;
    b.compute(Phase::Backward, "weight-gradient accumulation", traffic > 0 ? c.hp.memory_bound_seconds("residual_add", traffic / 3, false) : 0.0);
    b.apply_overlap(c.in.tp_overlap, c.in.tp_overlap_hidden_fraction, c.in.moe_overlap, c.in.training->tp_overlap_forward_only,
                    moe_comm_sm_fraction(*c.in.training, *c.in.profile));
    b.apply_host_floor(host_terms(*c.in.profile, c.in.training->cuda_graphs).host_op_s);
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
        add_memory_bound(b, hp, "embedding", "embedding", c.activation_bytes, false);
        const Collective kind = in.sequence_parallel ? Collective::ReduceScatter : Collective::AllReduce;
        b.communicate(Phase::Forward, "embedding all-reduce", c.comm.collective_seconds(kind, c.activation_bytes, in.tp_group));
        add_memory_bound(b, hp, "embedding dropout", "dropout", c.hidden_bytes, false);
        const double traffic = embedding_params(m) / c.t * in.training->grad_accumulation_bytes;
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
        const double traffic = static_cast<double>(m.vocab) * c.h / c.t * in.training->grad_accumulation_bytes;
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
