// SPDX-License-Identifier: MIT
#include "vtrain/modeled_profile.h"

#include <algorithm>
#include <cmath>

#include "vtrain/json_fields.h"

namespace vtrain {
namespace {

// Output tile shapes a cuBLAS-class library picks from, with the fraction of the best rate each reaches
// when fully occupied (smaller tiles re-read operands more often).
struct TileShape {
    double m, n, relative_efficiency;
};
constexpr TileShape kTiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.93}, {128, 64, 0.82}, {64, 64, 0.65}};

double round_significant(double v)
{
    if (v <= 0) {
        return v;
    }
    const double scale = std::pow(10.0, 4 - std::ceil(std::log10(v)));
    return std::round(v * scale) / scale;
}

std::vector<double> size_grid(double lo, double hi)
{
    // Powers of two and the points halfway between them (x1.5): quantisation steps fall on the grid.
    std::vector<double> g;
    for (double v = lo; v <= hi; v *= 2) {
        g.push_back(v);
        if (v * 1.5 <= hi && v >= 64) {
            g.push_back(v * 1.5);
        }
    }
    return g;
}

double streaming_seconds(const HardwareSpec& hw, const ModelParameters& p, double bytes_moved, double tensor_bytes)
{
    const double ramp = tensor_bytes / (tensor_bytes + p.memory_half_bytes);
    const double bandwidth = hw.memory_bandwidth_gbytes_per_s * 1e9 * p.memory_efficiency * std::max(ramp, 1e-3);
    return p.memory_fixed_us * 1e-6 + bytes_moved / bandwidth;
}

// Bytes each memory-bound kernel moves per byte of its input, forward and backward.
struct Traffic {
    const char* kind;
    double forward, backward;
};
// Cross-entropy (input: the fp32 logits) is Megatron's vocabulary-parallel loss, which runs as separate
// passes (validation against vTrain's single-node runs, where the output layer dominates small models):
// forward = fp16->fp32 cast 1.5, max 1, in-place subtract 2, exp 2, sum 1, in-place divide 2 (9.5);
// backward = in-place multiply by the incoming gradient 2, fp32->fp16 cast 1.5 (3.5).
constexpr Traffic kTraffic[] = {
    {"layernorm", 2.0, 3.0}, {"gelu", 2.0, 3.0},         {"swiglu", 1.5, 3.0},        {"softmax", 2.0, 3.0},
    {"dropout", 2.5, 2.5},   {"residual_add", 3.0, 2.0}, {"cross_entropy", 9.5, 3.5}, {"embedding", 2.0, 3.0},
};

double flash_seconds(const HardwareSpec& hw, const ModelParameters& p, double peak, double bh, double s, double d, bool backward)
{
    // Causal attention does half of the s x s work; the backward pass does 2.5x the forward's GEMM work.
    const double flops = 4.0 * bh * s * s * d * 0.5 * (backward ? 2.5 : 1.0);
    const double tiles = bh * std::ceil(s / 128.0);
    const double sms = std::max(1, hw.sm_count);
    const double waves = std::ceil(tiles / sms);
    const double occupancy = tiles / (waves * sms);
    // Short sequences spend proportionally more time outside the main loop.
    const double length = s / (s + 256.0);
    const double efficiency = (backward ? p.flash_backward_efficiency : p.flash_forward_efficiency) * occupancy * length;
    const double bytes = 4.0 * bh * s * d * 2 * (backward ? 2.0 : 1.0);
    const double compute = flops / (peak * std::max(efficiency, 1e-3));
    const double memory = bytes / (hw.memory_bandwidth_gbytes_per_s * 1e9 * p.memory_efficiency);
    return p.gemm_fixed_us * 1e-6 + std::max(compute, memory);
}

} // namespace

namespace {

double gemm_seconds_at(const HardwareSpec& hw, const ModelParameters& p, double peak, double max_efficiency, double m, double n, double k, double e)
{
    const double flops = 2.0 * m * n * k;
    const double sms = std::max(1, hw.sm_count);
    const double k_efficiency = k / (k + p.gemm_k_half);
    double best = 0;
    for (const TileShape& tile : kTiles) {
        const double tiles_m = std::ceil(m / tile.m);
        const double tiles_n = std::ceil(n / tile.n);
        const double tiles = tiles_m * tiles_n;
        const double waves = std::ceil(tiles / sms);
        const double wave_efficiency = tiles / (waves * sms);
        const double tile_efficiency = (m * n) / (tiles_m * tile.m * tiles_n * tile.n);
        best = std::max(best, tile.relative_efficiency * wave_efficiency * tile_efficiency);
    }
    const double compute = flops / (peak * max_efficiency * best * k_efficiency);
    const double memory = (m * k + k * n + m * n) * e / (hw.memory_bandwidth_gbytes_per_s * 1e9 * p.memory_efficiency);
    return p.gemm_fixed_us * 1e-6 + std::max(compute, memory);
}

// GEMM tables a profile carries: data type, bytes per operand element, the efficiency ceiling. FP8 and FP4
// GEMMs keep a 16-bit output, which the operand-bytes term ignores (it bounds only tiny GEMMs).
struct GemmKind {
    const char* dtype;
    double bytes_per_element;
    double ModelParameters::*efficiency;
};
constexpr GemmKind kGemmKinds[] = {{"bf16", 2, &ModelParameters::gemm_max_efficiency},
                                   {"tf32", 4, &ModelParameters::gemm_max_efficiency},
                                   {"fp8", 1, &ModelParameters::gemm_max_efficiency_fp8},
                                   {"fp4", 0.5, &ModelParameters::gemm_max_efficiency_fp4}};

} // namespace

double modeled_gemm_seconds(const HardwareSpec& hw, const ModelParameters& p, double peak, double m, double n, double k, double e)
{
    return gemm_seconds_at(hw, p, peak, p.gemm_max_efficiency, m, n, k, e);
}

Expected<ModelParameters> model_parameters_from_json(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"model_parameters", "must be an object"};
    }
    json_fields::Reader r(json, "model_parameters", diags);
    r.reject_unknown({"gemm_max_efficiency", "gemm_max_efficiency_fp8", "gemm_max_efficiency_fp4", "gemm_k_half", "gemm_fixed_us",
                      "flash_forward_efficiency", "flash_backward_efficiency", "memory_efficiency", "memory_half_bytes", "memory_fixed_us",
                      "kernel_launch_overhead_us", "host_overhead_us", "microbatch_overhead_us", "expert_all_to_all_efficiency", "moe_host_op_us"});
    ModelParameters p;
    p.gemm_max_efficiency = r.optional_number("gemm_max_efficiency", 0.01, 1).value_or(p.gemm_max_efficiency);
    p.gemm_max_efficiency_fp8 = r.optional_number("gemm_max_efficiency_fp8", 0.01, 1).value_or(p.gemm_max_efficiency_fp8);
    p.gemm_max_efficiency_fp4 = r.optional_number("gemm_max_efficiency_fp4", 0.01, 1).value_or(p.gemm_max_efficiency_fp4);
    p.gemm_k_half = r.optional_number("gemm_k_half", 0, 1e5).value_or(p.gemm_k_half);
    p.gemm_fixed_us = r.optional_number("gemm_fixed_us", 0, 1e4).value_or(p.gemm_fixed_us);
    p.flash_forward_efficiency = r.optional_number("flash_forward_efficiency", 0.01, 1).value_or(p.flash_forward_efficiency);
    p.flash_backward_efficiency = r.optional_number("flash_backward_efficiency", 0.01, 1).value_or(p.flash_backward_efficiency);
    p.memory_efficiency = r.optional_number("memory_efficiency", 0.01, 1).value_or(p.memory_efficiency);
    p.memory_half_bytes = r.optional_number("memory_half_bytes", 0, 1e12).value_or(p.memory_half_bytes);
    p.memory_fixed_us = r.optional_number("memory_fixed_us", 0, 1e4).value_or(p.memory_fixed_us);
    p.kernel_launch_overhead_us = r.optional_number("kernel_launch_overhead_us", 0, 1e4).value_or(p.kernel_launch_overhead_us);
    p.host_overhead_us = r.optional_number("host_overhead_us", 0, 1e4).value_or(p.host_overhead_us);
    p.microbatch_overhead_us = r.optional_number("microbatch_overhead_us", 0, 1e6).value_or(p.microbatch_overhead_us);
    p.expert_all_to_all_efficiency = r.optional_number("expert_all_to_all_efficiency", 0.01, 1).value_or(p.expert_all_to_all_efficiency);
    p.moe_host_op_us = r.optional_number("moe_host_op_us", 0, 1e4).value_or(p.moe_host_op_us);
    if (!diags.empty()) {
        return diags;
    }
    return p;
}

nlohmann::json model_parameters_to_json(const ModelParameters& p)
{
    nlohmann::json j = {{"gemm_max_efficiency", p.gemm_max_efficiency},
                        {"gemm_max_efficiency_fp8", p.gemm_max_efficiency_fp8},
                        {"gemm_max_efficiency_fp4", p.gemm_max_efficiency_fp4},
                        {"gemm_k_half", p.gemm_k_half},
                        {"gemm_fixed_us", p.gemm_fixed_us},
                        {"flash_forward_efficiency", p.flash_forward_efficiency},
                        {"flash_backward_efficiency", p.flash_backward_efficiency},
                        {"memory_efficiency", p.memory_efficiency},
                        {"memory_half_bytes", p.memory_half_bytes},
                        {"memory_fixed_us", p.memory_fixed_us},
                        {"kernel_launch_overhead_us", p.kernel_launch_overhead_us},
                        {"host_overhead_us", p.host_overhead_us},
                        {"microbatch_overhead_us", p.microbatch_overhead_us}};
    // The MoE terms only where they differ from their defaults (profiles made before them stay identical).
    const ModelParameters defaults;
    if (p.expert_all_to_all_efficiency != defaults.expert_all_to_all_efficiency) {
        j["expert_all_to_all_efficiency"] = p.expert_all_to_all_efficiency;
    }
    if (p.moe_host_op_us != defaults.moe_host_op_us) {
        j["moe_host_op_us"] = p.moe_host_op_us;
    }
    return j;
}

GpuProfile make_modeled_profile(const HardwareSpec& hw, const ModelParameters& p)
{
    GpuProfile out;
    out.id = hw.id;
    out.name = hw.name;
    out.vendor = hw.vendor;
    out.source = "modeled";
    out.source_details = {
        {"method", "Roofline with efficiency curves (vtrain make-profile). GEMM: time = fixed + max(2MNK / (peak x gemm_max_efficiency x "
                   "tile/wave quantisation x K/(K + gemm_k_half)), operand bytes / (bandwidth x memory_efficiency)); tile quantisation = useful / "
                   "padded output tiles, wave quantisation = tiles / (ceil(tiles / SMs) x SMs), best of tiles 256x128, 128x256, 128x128, 128x64, "
                   "64x64. Flash attention: causal FLOPs (backward 2.5x forward) at flash_*_efficiency x SM occupancy x s/(s + 256). Memory-bound "
                   "kernels: fixed + bytes moved / (bandwidth x memory_efficiency x bytes/(bytes + memory_half_bytes)). Optimizer step (unscale, "
                   "norm, fused Adam, copy to 16-bit weights, zero gradients): 50 bytes per parameter streamed. Host: a layer phase takes "
                   "max(GPU time, operators x host_overhead_us). Not measured on a GPU."},
        {"model_parameters", model_parameters_to_json(p)},
        {"figures", hw.figures_sources}};
    out.memory_gib = hw.memory_gib;
    out.memory_reserve_gib = hw.memory_reserve_gib;
    out.memory_bandwidth_gbytes_per_s = hw.memory_bandwidth_gbytes_per_s;
    out.peak_tflops = hw.peak_tflops;
    out.sm_count = hw.sm_count;
    out.kernel_launch_overhead_us = p.kernel_launch_overhead_us;
    out.host_overhead_us = p.host_overhead_us;
    out.microbatch_overhead_us = p.microbatch_overhead_us;
    out.expert_all_to_all_efficiency = p.expert_all_to_all_efficiency;
    out.moe_host_op_us = p.moe_host_op_us;
    out.price_usd_per_gpu_hour = hw.price_usd_per_gpu_hour;
    out.price_source = hw.price_source;
    out.links = hw.links;

    const auto m_grid = size_grid(16, 262144);
    const auto nk_grid = size_grid(32, 131072);
    // A part without BF16 (V100: FP16 tensor cores only) has its 16-bit table under "fp16".
    const char* sixteen_bit = hw.peak_tflops.count("bf16") || !hw.peak_tflops.count("fp16") ? "bf16" : "fp16";
    for (const GemmKind& kind : kGemmKinds) {
        const std::string dtype = std::string(kind.dtype) == "bf16" ? sixteen_bit : kind.dtype;
        const auto it = hw.peak_tflops.find(dtype);
        if (it == hw.peak_tflops.end()) {
            continue;
        }
        const double efficiency = p.*kind.efficiency;
        GemmTable t;
        t.m = m_grid;
        t.n = nk_grid;
        t.k = nk_grid;
        t.seconds.reserve(t.m.size() * t.n.size() * t.k.size());
        for (double m : t.m) {
            for (double n : t.n) {
                for (double k : t.k) {
                    t.seconds.push_back(round_significant(gemm_seconds_at(hw, p, it->second * 1e12, efficiency, m, n, k, kind.bytes_per_element)));
                }
            }
        }
        out.gemm[dtype] = std::move(t);
    }

    const double peak = hw.peak_tflops.count(sixteen_bit) ? hw.peak_tflops.at(sixteen_bit) * 1e12 : 1e12;
    AttentionTable& a = out.flash_attention;
    a.batch_heads = size_grid(1, 4096);
    a.seq = size_grid(128, 131072);
    a.head_dim = {64, 80, 96, 128, 192, 256};
    for (double bh : a.batch_heads) {
        for (double s : a.seq) {
            for (double d : a.head_dim) {
                a.forward_seconds.push_back(round_significant(flash_seconds(hw, p, peak, bh, s, d, false)));
                a.backward_seconds.push_back(round_significant(flash_seconds(hw, p, peak, bh, s, d, true)));
            }
        }
    }

    std::vector<double> bytes_grid;
    for (double b = 1024; b <= 64.0 * 1024 * 1024 * 1024; b *= 2) {
        bytes_grid.push_back(b);
    }
    for (const Traffic& traffic : kTraffic) {
        BytesTable t;
        t.bytes = bytes_grid;
        for (double b : bytes_grid) {
            t.forward_seconds.push_back(round_significant(streaming_seconds(hw, p, b * traffic.forward, b)));
            t.backward_seconds.push_back(round_significant(streaming_seconds(hw, p, b * traffic.backward, b)));
        }
        out.memory_bound[traffic.kind] = std::move(t);
    }
    // The mixed-precision optimizer step as Megatron-LM and DeepSpeed run it, per parameter (fp32 main
    // gradients): unscale + inf check (read/write 8 B), gradient-norm for clipping (read 4 B), fused Adam
    // (read param, grad, m, v 16 B; write param, m, v 12 B), copy to the 16-bit model weights (read 4 B,
    // write 2 B), zero the gradient buffer (write 4 B): 50 B. (Was Adam alone, 30 B; validation against
    // vTrain's runs, where small models' optimizer step is a visible part of the iteration.)
    for (double n = 1024; n <= 64e9; n *= 2) {
        out.adam.params.push_back(n);
        out.adam.seconds.push_back(round_significant(streaming_seconds(hw, p, 50.0 * n, 4.0 * n)));
    }
    return out;
}

} // namespace vtrain
