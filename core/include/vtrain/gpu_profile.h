// SPDX-License-Identifier: MIT
#pragma once
// A GPU profile: datasheet figures, network links and operator latency tables over shape grids.
// Tables hold seconds at grid points; lookups interpolate in log space (see interpolation.h).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vtrain {

// GEMM latency over an (M, N, K) grid; seconds are stored M-major: index = (i * |N| + j) * |K| + k.
struct GemmTable {
    std::vector<double> m, n, k;
    std::vector<double> seconds;
    bool empty() const { return seconds.empty(); }
};

// Fused (flash) attention latency over (batch x heads, sequence, head size), causal.
struct AttentionTable {
    std::vector<double> batch_heads, seq, head_dim;
    std::vector<double> forward_seconds, backward_seconds;
    bool empty() const { return forward_seconds.empty(); }
};

// A memory-bound operator's latency by the size of its input tensor in bytes.
struct BytesTable {
    std::vector<double> bytes;
    std::vector<double> forward_seconds, backward_seconds;
    bool empty() const { return forward_seconds.empty(); }
};

// Fused Adam step latency by number of parameters updated on one GPU.
struct OptimizerTable {
    std::vector<double> params;
    std::vector<double> seconds;
    bool empty() const { return seconds.empty(); }
};

// A measured collective on one node: seconds by message bytes for a group of `gpus`.
struct CollectiveTable {
    int gpus = 0;
    std::vector<double> bytes;
    std::vector<double> seconds;
};

// A host ("node": GPUs sharing one machine's NICs) and an NVLink domain (GPUs sharing one NVLink/xGMI switch
// fabric) are separate: an HGX/DGX host is its own 8-GPU domain, a GB200/GB300 NVL72 rack is one 72-GPU domain
// made of 18 hosts (compute trays) of 4 GPUs. Traffic inside a domain uses NVLink even between hosts.
struct LinkSpec {
    int gpus_per_node = 8;              // GPUs per host (they share the host's NICs)
    int nvlink_domain_gpus = 0;         // GPUs on one NVLink/xGMI switch fabric (8 HGX, 72 NVL72); 0 = gpus_per_node
    double nvlink_bus_gbytes_per_s = 0; // achievable NCCL bus bandwidth inside an NVLink domain, GB/s
    double nvlink_base_latency_us = 0;  // fixed cost of one collective inside a domain
    double nvlink_step_latency_us = 0;  // cost per ring step inside a domain
    int nics_per_node = 0;
    double nic_gbit_per_s = 0;             // line rate of one NIC
    double nic_efficiency = 0.9;           // achievable fraction of the line rate
    double inter_node_latency_us = 0;      // cost per step between nodes
    double inter_node_base_latency_us = 0; // fixed cost of one collective that spans nodes
    double host_link_gbytes_per_s = 0;     // GPU <-> host memory, per direction, one GPU's share (PCIe, NVLink-C2C); 0 = unknown
    double host_memory_gbytes_per_s = 0;   // host DRAM bandwidth, one GPU's share (for an optimizer step on the CPU); 0 = unknown
};

// GPUs in one NVLink domain (nvlink_domain_gpus, or the host when that is 0).
int nvlink_domain_size(const LinkSpec& links);

struct GpuProfile {
    std::string id;                // file stem, e.g. "a100-sxm4-80gb"
    std::string name;              // e.g. "NVIDIA A100-SXM4-80GB"
    std::string vendor;            // "NVIDIA", "AMD", ... (optional; the GUI groups GPUs by it)
    std::string source;            // "measured" or "modeled" (a modeled profile with a calibration band is "calibrated":
                                   // see profile_provenance())
    nlohmann::json source_details; // measured: gpu, driver, cuda, torch, clocks; modeled: method and figures
    double memory_gib = 0;
    double memory_reserve_gib = 0; // CUDA context, allocator fragmentation, workspaces
    double memory_bandwidth_gbytes_per_s = 0;
    std::map<std::string, double> peak_tflops; // dense, by data type: "bf16", "fp16", "fp8", "fp4", "tf32", "fp32"
    int sm_count = 0;
    double kernel_launch_overhead_us = 0; // host gap between consecutive kernels
    // Framework (CPU) time to issue one operator: Python, the PyTorch dispatcher, autograd and the launch.
    // The host runs ahead of the GPU, so a layer's phase takes max(GPU time, operators x this); small
    // models and micro-batches are host-bound. 0 = never host-bound.
    double host_overhead_us = 0;
    // Per micro-batch work outside the layers, on the first stage (fetching the batch, broadcasting it to
    // the tensor-parallel group, attention mask and positions) and again on the last (loss bookkeeping,
    // its data-parallel average): microseconds each. 0 = none.
    double microbatch_overhead_us = 0;
    double price_usd_per_gpu_hour = 0;
    std::string price_source;
    LinkSpec links;
    std::map<std::string, GemmTable> gemm;          // by data type: "bf16" (or "fp16"), and "fp8", "fp4", "tf32" where present
    AttentionTable flash_attention;                 // by data type of the GEMMs (bf16/fp16 behave alike)
    std::map<std::string, BytesTable> memory_bound; // by operator kind (see operator_kinds below)
    OptimizerTable adam;
    std::vector<CollectiveTable> all_reduce; // optional measured intra-node all-reduce
    nlohmann::json calibration;              // how free parameters were fitted, if they were
    // The uncertainty band to report while the profile has no calibration band: {"low", "high", "coverage",
    // "source"} (optional; uncertainty.cpp has the built-in default for uncalibrated profiles).
    nlohmann::json default_band;
    // Mixture-of-experts terms (optional in a profile file; written only when they differ from these defaults).
    // Expert all-to-all inside an NVLink domain reaches this fraction of links.nvlink_bus_gbytes_per_s: the
    // token dispatch/combine kernels move many small rows and use few SMs. Default 0.65: HybridEP on 8 B200
    // moves 531-536 GB/s of dispatch buffer (BF16 dispatch/combine, torch API; DeepEP hybrid-ep
    // docs/README_Hybrid-EP.md), i.e. 0.65 x 720 GB/s bus x 8/7 (shared/research/modern-training.md Sec. 3.3).
    double expert_all_to_all_efficiency = 0.65;
    // Host (CPU) time to issue one operator of the routed-expert section of a MoE layer (permutations,
    // dispatch/combine, one GEMM and quantization per local expert, ...). Megatron-Core's dropless
    // dispatchers read tokens-per-expert back to the host before it (a device-host sync), and that section
    // has dynamic shapes so CUDA graphs cannot capture it: the CPU cannot run ahead there and the section
    // takes max(GPU time, operators x this) (Megatron-LM docs/discussions/deepseek-v3-gb200-optimization,
    // Sec. 2.3 and 3.1). 0 = never host-bound. See model/ffn_costs.cpp, moe_ffn(). Default 30 us: one framework
    // call (a TE GEMM or quantize launch, a permute), half the 60 us fitted per modeled operator (about two
    // kernels) on vTrain's A100 runs (profiles/a100-*.json host_overhead_us); an estimate for calibration to
    // refit. Megatron-Bridge's B200 MoE rows without CUDA graphs fit 20-50 us. The calibrated parts' priors
    // are one Transformer Engine module call on their host CPU instead (36 us x86, 100 us Grace; the
    // datasheets' calibration.start_parameters, TransformerEngine issue #2053).
    double moe_host_op_us = 30;

    // Dense peak FLOP/s for a data type; "nvfp4"/"mxfp4" read the "fp4" peak and "mxfp8" the "fp8" peak.
    double peak_flops(const std::string& dtype) const;
};

// "measured" (operator tables timed on the GPU), "calibrated" (modeled, with a calibration band fitted to
// published runs) or "modeled" (datasheet figures and transferred terms, not fitted to runs of the part).
std::string profile_provenance(const GpuProfile& profile);

// Memory-bound operator kinds every profile provides.
inline const std::vector<std::string>& memory_bound_kinds()
{
    static const std::vector<std::string> kinds{"layernorm", "gelu", "swiglu", "softmax", "dropout", "residual_add", "cross_entropy", "embedding"};
    return kinds;
}

} // namespace vtrain
