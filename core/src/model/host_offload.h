// SPDX-License-Identifier: MIT
#pragma once
// Offload to host memory (Plan::offload_optimizer, Plan::offload_activations): what leaves the GPU and
// what the transfers cost over the GPU's host link (PCIe or NVLink-C2C, LinkSpec::host_link_gbytes_per_s).
//
// Optimizer offload follows ZeRO-Offload (Ren et al., "ZeRO-Offload: Democratizing Billion-Scale Model
// Training", USENIX ATC 2021, Sec. 4) and Megatron-Core's --optimizer-cpu-offload (HybridDeviceOptimizer):
// fp32 master weights and Adam moments live in host memory and the step runs on the CPU. Per step the GPU
// sends its gradients down, the CPU updates (a streaming pass over master weights, both moments and the
// gradient: memory-bound, at the host DRAM bandwidth one GPU gets), and the new weights come back up. The
// three run one after another (Megatron's default: --overlap-cpu-optimizer-d2h-h2d off; ZeRO-Offload's
// one-step delayed update is not modeled).
//
// Activation offload follows Transformer Engine's CPU offloading (Megatron's --cpu-offloading with
// --cpu-offloading-num-layers N): the stashed activations of a share of the layers (N of a chunk's layers)
// are copied to the host after each layer's forward and back before its backward, on copy engines beside
// the compute; only the part of a copy longer than the compute it hides behind adds time. Whole layers
// leave, so the GPU keeps the other layers' activations of every set in flight plus two layers' copy
// buffers (the one moving and the one prefetched; TE's double buffering), not a whole set. Megatron-Bridge
// pairs it with Megatron-FSDP instead of recompute (scripts/performance/configs/llama/
// llama3_workload_base_configs.py: Llama 3 70B on GB200 FP8-CS offloads 40 of 80 layers, BF16 20, B200 5).
// Not modeled: the host link shared with the NIC behind one PCIe switch (DGX H100 pairs them), so
// offload copies during data-parallel traffic may be slower than this says; pinned-buffer setup and
// CPU contention between the GPUs of a host beyond the DRAM share.
#include "vtrain/gpu_profile.h"
#include "vtrain/memory_model.h"

namespace vtrain {

struct HostLink {
    double link_bytes_per_s = 0;   // per direction, one GPU's share
    double memory_bytes_per_s = 0; // host DRAM, one GPU's share
};
// The profile's host figures; where a profile has none, PCIe 4.0 x16 (32 GB/s per direction, PCI-SIG
// PCI Express 4.0 specification, 2017) and DGX A100's host DRAM share (2 AMD EPYC 7742 with 8 channels of
// DDR4-3200 each = 409.6 GB/s for 8 GPUs = 51.2 GB/s; NVIDIA DGX A100 datasheet, AMD product page).
HostLink host_link(const LinkSpec& links);

// Host-memory bytes the CPU Adam step streams per parameter: reads master weight, both moments and the
// gradient, writes master weight and moments.
double cpu_adam_bytes_per_param(const ParamBytes& bytes);
// Seconds of an optimizer step on the CPU for `params` parameters held by this GPU: gradients down,
// the CPU update, weights up.
double offloaded_optimizer_seconds(double params, const ParamBytes& bytes, const HostLink& link);
// Seconds a copy of `bytes` one way adds beyond the `hidden_behind_s` of compute it overlaps.
double offload_copy_exposed_seconds(double bytes, double hidden_behind_s, const HostLink& link);

} // namespace vtrain
