// SPDX-License-Identifier: MIT
#include "profile/operator_timer.h"

#include "profile/interpolation.h"

namespace vtrain {

OperatorTimer::OperatorTimer(const GpuProfile& profile, Precision precision, double launch_floor_s)
    : m_profile(profile), m_dtype(to_string(precision)), m_launch_s(launch_floor_s >= 0 ? launch_floor_s : profile.kernel_launch_overhead_us * 1e-6)
{
    m_bytes_per_element = precision == Precision::Fp32 ? 4 : 2; // FP8/FP4 GEMMs still pass BF16 activations
    // Low-precision GEMMs: the profile's own table when it has one ("fp8", "fp4"); otherwise the BF16 table
    // at the datasheet's peak ratio (an FP8 part runs a GEMM ~2x faster than BF16), or BF16 speed on a part
    // without that peak (e.g. FP8 on an A100: Transformer Engine falls back to BF16).
    const bool low = precision == Precision::Fp8 || precision == Precision::Nvfp4;
    const std::string key = precision == Precision::Nvfp4 ? "fp4" : m_dtype;
    if (low) {
        m_dtype = key;
        const double bf16 = profile.peak_flops("bf16");
        const double peak = profile.peak_flops(key);
        if (profile.gemm.find(key) == profile.gemm.end() && bf16 > 0 && peak > bf16) {
            m_gemm_scale = bf16 / peak;
        }
    }
    // fp32 training runs its GEMMs on TF32 tensor cores when a profile has them; otherwise the nearest table.
    const char* preference[] = {key.c_str(), precision == Precision::Fp32 ? "tf32" : "bf16", "bf16", "fp16"};
    for (const char* dtype : preference) {
        const auto it = profile.gemm.find(dtype);
        if (it != profile.gemm.end()) {
            m_gemm = &it->second;
            break;
        }
    }
}

double OperatorTimer::gemm_seconds(double m, double n, double k) const
{
    if (m_gemm == nullptr || m <= 0 || n <= 0 || k <= 0) {
        return 0;
    }
    return floor(m_gemm_scale * interpolate_3d(m_gemm->m, m_gemm->n, m_gemm->k, m_gemm->seconds, m, n, k));
}

double OperatorTimer::batched_gemm_seconds(double batch, double m, double n, double k) const
{
    // A strided batch fills the GPU like one GEMM with batch x m rows.
    return gemm_seconds(batch * m, n, k);
}

double OperatorTimer::flash_forward_seconds(double bh, double seq, double head_dim) const
{
    const AttentionTable& t = m_profile.flash_attention;
    return floor(interpolate_3d(t.batch_heads, t.seq, t.head_dim, t.forward_seconds, bh, seq, head_dim));
}

double OperatorTimer::flash_backward_seconds(double bh, double seq, double head_dim) const
{
    const AttentionTable& t = m_profile.flash_attention;
    return floor(interpolate_3d(t.batch_heads, t.seq, t.head_dim, t.backward_seconds, bh, seq, head_dim));
}

double OperatorTimer::memory_bound_seconds(const std::string& kind, double bytes, bool backward) const
{
    if (bytes <= 0) {
        return 0;
    }
    const auto it = m_profile.memory_bound.find(kind);
    if (it == m_profile.memory_bound.end() || it->second.empty()) {
        // No table: stream the tensor in and out at the datasheet bandwidth.
        return floor(2 * bytes / (m_profile.memory_bandwidth_gbytes_per_s * 1e9));
    }
    const BytesTable& t = it->second;
    return floor(interpolate_1d(t.bytes, backward ? t.backward_seconds : t.forward_seconds, bytes));
}

double OperatorTimer::adam_seconds(double params) const
{
    if (params <= 0) {
        return 0;
    }
    return floor(interpolate_1d(m_profile.adam.params, m_profile.adam.seconds, params));
}

} // namespace vtrain
