// SPDX-License-Identifier: MIT
#pragma once
// Modeled GPU profiles for GPUs nobody has measured yet: the operator tables are filled from a roofline
// with efficiency curves. GEMMs account for tile quantisation (partial output tiles), wave quantisation
// (tiles / SMs rounded up) and short reduction dimensions; cuBLAS-like tile choice takes the best of a
// few tile shapes. Memory-bound operators stream their bytes at a fraction of the datasheet bandwidth
// with a ramp for small tensors. The free parameters below are what `vtrain calibrate` fits.
#include <nlohmann/json.hpp>

#include "vtrain/diagnostic.h"
#include "vtrain/gpu_profile.h"

namespace vtrain {

struct ModelParameters {
    double gemm_max_efficiency = 0.8; // fraction of peak reached by large, well-shaped BF16/FP16 GEMMs
    // The same for FP8 and FP4 GEMMs, as a fraction of that format's dense peak. Defaults: DeepGEMM's
    // best dense FP8 GEMMs on H800 reach 1,426 of 1,979 TFLOP/s (72%) and Megatron's MXFP8 grouped GEMM on
    // GB200 2,672 of 5,000 (53%) (shared/research/modern-training.md §10.1); 0.65 sits between. No public
    // FP4 training GEMM rate was found: 0.55 is an assumption, lower because the fixed per-tile work does
    // not shrink with the element size.
    double gemm_max_efficiency_fp8 = 0.65;
    double gemm_max_efficiency_fp4 = 0.55;
    double gemm_k_half = 96;                // reduction length at which the main loop runs at half speed
    double gemm_fixed_us = 4;               // per-GEMM fixed cost (prologue, epilogue)
    double flash_forward_efficiency = 0.55; // of peak, causal attention at long sequences
    double flash_backward_efficiency = 0.45;
    double memory_efficiency = 0.85;            // fraction of datasheet bandwidth reached by streaming kernels
    double memory_half_bytes = 4e6;             // tensor size at which a streaming kernel reaches half of that
    double memory_fixed_us = 3;                 // per-kernel fixed cost of memory-bound kernels
    double kernel_launch_overhead_us = 4;       // host gap between kernels; the floor of any kernel's time
    double host_overhead_us = 0;                // framework CPU time per operator (see GpuProfile::host_overhead_us)
    double microbatch_overhead_us = 0;          // per micro-batch, first and last stage (GpuProfile::microbatch_overhead_us)
    double expert_all_to_all_efficiency = 0.65; // GpuProfile::expert_all_to_all_efficiency (HybridEP on B200)
    double moe_host_op_us = 30;                 // GpuProfile::moe_host_op_us (routed-expert section after the sync)
};

struct HardwareSpec {
    std::string id;
    std::string name;
    std::string vendor;
    double memory_gib = 0;
    double memory_reserve_gib = 0;
    double memory_bandwidth_gbytes_per_s = 0;
    std::map<std::string, double> peak_tflops;
    int sm_count = 0;
    double price_usd_per_gpu_hour = 0;
    std::string price_source;
    LinkSpec links;
    nlohmann::json figures_sources; // where each datasheet figure comes from
};

// The "model_parameters" block of a spec or profile (every field optional, range-checked).
Expected<ModelParameters> model_parameters_from_json(const nlohmann::json& json);
nlohmann::json model_parameters_to_json(const ModelParameters& p);

// Builds a complete profile ("source": "modeled") from datasheet figures and model parameters.
GpuProfile make_modeled_profile(const HardwareSpec& hardware, const ModelParameters& parameters);

// The modeled GEMM time for one shape, without the tables (used to fill them and by tests).
double modeled_gemm_seconds(const HardwareSpec& hw, const ModelParameters& p, double peak_flops, double m, double n, double k,
                            double bytes_per_element);

} // namespace vtrain
