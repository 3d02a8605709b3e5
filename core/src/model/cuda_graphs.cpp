// SPDX-License-Identifier: MIT
#include "model/cuda_graphs.h"

#include <algorithm>

namespace vtrain {

HostTerms host_terms(const GpuProfile& profile, CudaGraphs graphs)
{
    HostTerms t;
    t.kernel_floor_s = profile.kernel_launch_overhead_us * 1e-6;
    t.host_op_s = profile.host_overhead_us * 1e-6;
    t.moe_host_op_s = profile.moe_host_op_us * 1e-6;
    if (graphs == CudaGraphs::FullIteration) {
        // One launch per iteration: the host no longer paces the GPU, and the capacity-padded MoE shapes
        // that full-iteration capture requires need no tokens-per-expert sync.
        t.kernel_floor_s = std::min(t.kernel_floor_s, kGraphKernelGapUs * 1e-6);
        t.host_op_s = 0;
        t.moe_host_op_s = 0;
    }
    return t;
}

} // namespace vtrain
