// SPDX-License-Identifier: MIT
// FP8 and FP4 recipes: the bytes their quantize kernels stream, the rows grouped GEMMs pad to, and torchao's
// rowwise (axiswise) scaling with its BF16 fallback for small Linears.
#include "model/layer_builder.h"

#include <cmath>

namespace vtrain {

// Where rowwise FP8 gains nothing: torchao's auto filter for the rowwise recipe (pytorch/ao
// torchao/float8/float8_linear_utils.py _auto_filter_for_rowwise, PR #2410, thresholds from torchao's H100
// rowwise GEMM tables; root cause in torchtitan issue #1207: small linears ran ~40% slower in rowwise FP8)
// keeps a Linear in BF16 when in_features <= 2048, out_features <= 1024, or in <= 4096 and out <= 2048.
// torchtitan before that filter (2025-06 and earlier) converted them anyway: they run at BF16 GEMM speed
// and still pay their casts. Checked on the shapes one rank multiplies (TP-sharded), as the RCA did.
bool rowwise_gains(double out_features, double in_features)
{
    return !(in_features <= 2048 || out_features <= 1024 || (in_features <= 4096 && out_features <= 2048));
}

} // namespace vtrain

namespace vtrain::layer_ops {
namespace {

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
// MXFP8's block-scaled GEMMs (Blackwell tcgen05 with a UE8M0 scale per 32 elements of K) run at the same
// datasheet peak as per-tensor FP8 but load and stage the scale factors of both operands beside each k-tile
// (and Transformer Engine swizzles them into the GEMM's layout first); the Megatron-Bridge performance
// guide says the 1x32 blocks run slower than tensorwise scaling (shared/research/modern-training.md Sec. 5).
// Factor on the FP8 GEMM time chosen, as the rowwise one above, so that this model reproduces torchao's
// published end-to-end gap between the two recipes on 8 x B200 (pytorch/ao
// torchao/prototype/mx_formats/README.md "Training e2e benchmarks on NVIDIA B200": Llama3-8B, FSDP2,
// torch.compile, per-op SAC, batch 1 x 8192: float8 tensorwise 10417.0, mxfp8_cublas 9969.0 tokens/s,
// tensorwise 4.5% faster). With the B200 profile of the time (session 42) the model gave a ratio of 1.009
// without the factor and 1.045 with 1.088; no validation row was used.
constexpr double kMxfp8GemmTimeFactor = 1.09;
} // namespace

double lowp_gemm_time_factor(const Ctx& c)
{
    if (c.axiswise) {
        return kAxiswiseGemmTimeFactor;
    }
    return c.mxfp8 ? kMxfp8GemmTimeFactor : 1.0;
}

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
    const double slow = lowp && c.lowp ? lowp_gemm_time_factor(c) : 1.0;
    const double fast = t.gemm_seconds(m, n, k) * slow;
    return bf16_share > 0 ? (1 - bf16_share) * fast + bf16_share * c.hp.gemm_seconds(m, n, k) : fast;
}

} // namespace vtrain::layer_ops
