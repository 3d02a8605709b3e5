// SPDX-License-Identifier: MIT
#pragma once
// The host (CPU) terms of a training step under a CUDA-graph setting. A profile carries three: the least
// time of one kernel (the host's launch gap, GpuProfile::kernel_launch_overhead_us), the framework's CPU
// time per operator (host_overhead_us: a layer phase lasts at least operators x this) and the CPU time per
// operator of a MoE layer's routed-expert section, which starts after a device-host sync
// (moe_host_op_us). A full-iteration graph replays every kernel of the forward and backward from one
// launch with static MoE shapes (no sync), so none of the three applies; what stays is the GPU's own gap
// between graph nodes. Per-module graphs (Scoped) and none keep the profile's terms: the shipped
// Blackwell profiles are calibrated on runs with scoped graphs, and the two are not told apart -- except
// for a layer whose every module is in the scope, one replay per pass with no per-operator host time
// (compute_layer_costs.cpp, layer_captured).
#include "vtrain/gpu_profile.h"
#include "vtrain/scenario.h"

namespace vtrain {

struct HostTerms {
    double kernel_floor_s = 0; // no kernel takes less (launch-bound small kernels)
    double host_op_s = 0;      // framework CPU time per operator of a layer phase
    double moe_host_op_s = 0;  // CPU time per operator of the routed-expert section after the sync
};

// Between two kernels replayed from a graph the GPU idles about 0.5 us: NVIDIA's "Getting Started with
// CUDA Graphs" (Alan Gray, NVIDIA Developer Blog, 2019) times a 2.9 us kernel at 3.8 us per kernel when
// launched back to back from a stream and 3.4 us inside a graph.
constexpr double kGraphKernelGapUs = 0.5;

HostTerms host_terms(const GpuProfile& profile, CudaGraphs graphs);

} // namespace vtrain
