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
    double gemm_max_efficiency = 0.8;        // fraction of peak reached by large, well-shaped GEMMs
    double gemm_k_half = 96;                 // reduction length at which the main loop runs at half speed
    double gemm_fixed_us = 4;                // per-GEMM fixed cost (prologue, epilogue)
    double flash_forward_efficiency = 0.55;  // of peak, causal attention at long sequences
    double flash_backward_efficiency = 0.45;
    double memory_efficiency = 0.85;         // fraction of datasheet bandwidth reached by streaming kernels
    double memory_half_bytes = 4e6;          // tensor size at which a streaming kernel reaches half of that
    double memory_fixed_us = 3;              // per-kernel fixed cost of memory-bound kernels
    double kernel_launch_overhead_us = 4;    // host gap between kernels; the floor of any kernel's time
    double host_overhead_us = 0;             // framework CPU time per operator (see GpuProfile::host_overhead_us)
    double microbatch_overhead_us = 0;       // per micro-batch, first and last stage (GpuProfile::microbatch_overhead_us)
};

struct HardwareSpec {
    std::string id;
    std::string name;
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

Expected<HardwareSpec> hardware_spec_from_json(const nlohmann::json& json);
Expected<ModelParameters> model_parameters_from_json(const nlohmann::json& json);
nlohmann::json model_parameters_to_json(const ModelParameters& p);

// Builds a complete profile ("source": "modeled") from datasheet figures and model parameters.
GpuProfile make_modeled_profile(const HardwareSpec& hardware, const ModelParameters& parameters);

// The modeled GEMM time for one shape, without the tables (used to fill them and by tests).
double modeled_gemm_seconds(const HardwareSpec& hw, const ModelParameters& p, double peak_flops, double m, double n, double k,
                            double bytes_per_element);

} // namespace vtrain
