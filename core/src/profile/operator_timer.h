// SPDX-License-Identifier: MIT
#pragma once
// Looks operator latencies up in a GPU profile's tables for one data type. A kernel never takes less
// than the launch overhead: short kernels are bound by the host issuing them. For FP8/NVFP4 only GEMMs
// change speed (the profile's "fp8"/"fp4" table, or BF16 scaled by the peak ratio); activations stay BF16.
#include <string>

#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

class OperatorTimer {
public:
    // launch_floor_s >= 0 replaces the profile's kernel_launch_overhead_us (a full-iteration CUDA graph's
    // gap between kernels, cuda_graphs.h); < 0 keeps it.
    OperatorTimer(const GpuProfile& profile, Precision precision, double launch_floor_s = -1);
    // The timer keeps a reference to the profile: a temporary one would dangle.
    OperatorTimer(GpuProfile&&, Precision, double = -1) = delete;

    double gemm_seconds(double m, double n, double k) const;
    // A batch of independent GEMMs of the same shape (attention's bmm).
    double batched_gemm_seconds(double batch, double m, double n, double k) const;
    double flash_forward_seconds(double batch_heads, double seq, double head_dim) const;
    double flash_backward_seconds(double batch_heads, double seq, double head_dim) const;
    double memory_bound_seconds(const std::string& kind, double bytes, bool backward) const;
    double adam_seconds(double params) const;

    double bytes_per_element() const { return m_bytes_per_element; }
    const std::string& dtype() const { return m_dtype; } // the GEMM table's key ("bf16", "fp8", "fp4", ...)

private:
    double floor(double seconds) const { return seconds > m_launch_s ? seconds : m_launch_s; }

    const GpuProfile& m_profile;
    const GemmTable* m_gemm = nullptr;
    std::string m_dtype;
    double m_bytes_per_element = 2;
    double m_gemm_scale = 1; // < 1 when a low-precision GEMM is timed from the BF16 table
    double m_launch_s = 0;
};

} // namespace vtrain
