// SPDX-License-Identifier: MIT
// The calibrated parameters: each one's physical bounds and why, a profile's values by name, and the profile
// rebuilt from a set of them.
#include <algorithm>

#include "vtrain/calibration.h"
#include "vtrain/uncertainty.h"

namespace vtrain {

const std::vector<CalibrationParameter>& calibration_parameters()
{
    // Every range is what the hardware and the software can physically do, so that a fit that hits a
    // bound says the cost model is off somewhere else rather than reporting an impossible efficiency.
    // Hardware terms (peak fractions, HBM, GEMM and attention curves) are not fitted by default (issue 28:
    // calibration fits software, not hardware): each profile takes them from datasheets and microbenchmarks,
    // cited in its datasheet/spec. The software terms carry a prior width for the MAP penalty.
    static const std::vector<CalibrationParameter> list{
        {"gemm_max_efficiency", 0.5, 0.9, false, "fraction of peak", false,
         "large BF16/FP16 GEMMs: at most 0.9 of the dense datasheet peak, which assumes the boost clock that GEMMs do not hold "
         "under the power limit (cuBLAS ~86% on A100; sustained 0.75 on H100 SXM, profiles/h100-measured.json "
         "source_details.sustained_gemm); at least 0.5, since Megatron-LM itself reaches 52% of A100 peak end to end "
         "(163 of 312 TFLOP/s, Narayanan et al. SC'21 Table 1)",
         true, 0.1,
         "fitted only when named: +- 0.1 of the datasheet value, the spread of cuBLAS between shapes and power states (A100 ~0.86 vs H100 SXM 0.75 "
         "sustained)"},
        {"gemm_max_efficiency_fp8", 0.4, 0.8, false, "fraction of the FP8 peak", false,
         "DeepGEMM's best dense FP8 GEMMs reach 1,426 of 1,979 TFLOP/s (72%) on H800 and Megatron's MXFP8 grouped GEMM 2,672 of "
         "5,000 (53%) on GB200 (shared/research/modern-training.md section 10.1): 0.8 leaves room for better kernels, 0.4 for "
         "smaller shapes and the quantisation around the GEMM",
         true, 0.1, "fitted only when named: +- 0.1, between DeepGEMM's 0.72 and Megatron's grouped MXFP8 0.53"},
        {"gemm_max_efficiency_fp4", 0.3, 0.8, false, "fraction of the FP4 peak", false,
         "no public FP4 training-GEMM rate: at most the FP8 ceiling (the fixed per-tile work does not shrink with the element "
         "size), at least 0.3",
         true, 0.12, "fitted only when named: +- 0.12, no public FP4 training-GEMM rate"},
        {"gemm_k_half", 1, 512, true, "elements", false,
         "GEMM main loops pipeline k-tiles of 32-128 elements, so half speed is reached within a few k-tiles", true, 0, ""},
        {"gemm_fixed_us", 0.5, 20, true, "us", false, "prologue and epilogue of one GEMM kernel: microseconds, as a kernel launch", true, 0, ""},
        {"flash_forward_efficiency", 0.25, 0.75, false, "fraction of peak", false,
         "FlashAttention-2 forward reaches 50-73% of A100 peak (Dao 2023, arXiv 2307.08691), FlashAttention-3 up to 75% of "
         "H100's (740 TFLOP/s FP16, Shah et al. 2024, arXiv 2407.08608)",
         true, 0.12, "fitted only when named: +- 0.12, FlashAttention-2 vs -3 and cuDNN on the same part (same papers)"},
        {"flash_backward_efficiency", 0.2, 0.65, false, "fraction of peak", false,
         "the backward pass runs below the forward's rate in both FlashAttention-2 and -3 (same papers)", true, 0.12,
         "fitted only when named: +- 0.12, as the forward"},
        {"memory_efficiency", 0.6, 0.95, false, "fraction of bandwidth", false,
         "streaming kernels cannot beat the HBM datasheet rate; refresh and protocol overheads keep copies ~10% below it "
         "(device copy 0.90 of 3,350 GB/s measured on H100, profiles/h100-measured.json)",
         true, 0.08, "fitted only when named: +- 0.08 around the datasheet value (a device copy reaches 0.90 on H100)"},
        {"memory_half_bytes", 1e4, 1e8, true, "bytes", false, "tensor size at which a streaming kernel reaches half its bandwidth: 10 KB to 100 MB",
         true, 0, ""},
        {"memory_fixed_us", 0.5, 20, true, "us", false, "fixed cost of one memory-bound kernel: microseconds, as a kernel launch", true, 0, ""},
        {"kernel_launch_overhead_us", 1, 30, true, "us", true,
         "GPU-side gap between kernels and the floor of any kernel's time: a CUDA launch takes a few microseconds, eager frameworks "
         "add tens (15 us fitted on A100)",
         false, 2.0,
         "prior x/÷ 2: a launch gap with the host ahead is 2-5 us; PyTorch eager back-to-back kernels take 14.5 us on H100 "
         "(profiles/h100-measured.json, kernel_launch_overhead_us)"},
        {"host_overhead_us", 1, 300, true, "us", true,
         "framework CPU time per operator: PyTorch eager dispatch takes tens of microseconds on x86 hosts, a Transformer Engine module "
         "call 99.7 us on GB200's Grace (TransformerEngine issue #2053); the bound is that slowest measured call x 3, the prior's width",
         false, kHostTermPriorWidth,
         "prior x/÷ 3 around one framework call on the part's host CPU: for the Megatron + Transformer Engine parts one TE "
         "module call, a TE Linear forward taking 99.7 us of CPU on GB200's Grace and 90.5 us on GH200's, a torch Linear "
         "37.1, 33.2 and 13.5 us on GB200, GH200 and a DGX H100's Xeon 8480C (TransformerEngine issue #2053, 2025), so ~36 us "
         "on the x86 hosts (derived: 99.7 x 13.5 / 37.1), the same for Megatron stacks without TE (Megatron-LM, Megatron-"
         "DeepSpeed: Megatron's Python autograd modules over apex's fused kernels, one module call per operator); plain "
         "PyTorch (torchtitan) 20 us, above the torch call"},
        {"moe_host_op_us", 1, 300, true, "us", true,
         "CPU time per operator of a MoE layer's routed-expert section after the tokens-per-expert sync, where no CUDA graph "
         "captures it: one framework call (a TE GEMM or quantize, a permute), as host_overhead_us",
         false, kHostTermPriorWidth, "prior x/÷ 3 around one Transformer Engine module call on the host CPU, as host_overhead_us"},
        {"microbatch_overhead_us", 1, 10000, true, "us", true, "per micro-batch on the first and last stage (data loading, loss): up to 10 ms", false,
         4.0,
         "prior x/÷ 4: the data loader's batch and its broadcast to the tensor-parallel ranks, and the loss bookkeeping, are a few "
         "Python calls and one small collective each (hundreds of microseconds)"},
        {"nic_efficiency", 0.45, 0.98, false, "fraction of line rate", true,
         "nccl-tests reach 46-49 GB/s on a 400 Gb/s NIC (0.92-0.98, modern-training.md section 10 item 9); inside training NCCL "
         "runs up to ~30% slower than alone (vTrain, shared/research/vtrain-method.md), hence the floor",
         false, 0.15, "prior +- 0.15: nccl-tests' 0.92-0.98 alone less vTrain's up to 30% inside training (0.65-0.9)"},
        {"nvlink_bus_gbytes_per_s", 50, 240, false, "GB/s", true,
         "nccl-tests reach ~230 GB/s all-reduce bus bandwidth on 8 A100 (vTrain's trace/a100 LUT); calibration_parameters_for "
         "scales this range to the part's NVLink rate",
         false, 36,
         "prior +- 0.15 of the per-direction NVLink rate (36 GB/s on A100's 240 GB/s range): NCCL inside training runs up to ~30% "
         "below nccl-tests alone (vTrain)"},
        {"nvlink_base_latency_us", 1, 500, true, "us", false, "collective start-up latency inside a node", false, 0, ""},
        {"inter_node_base_latency_us", 1, 1000, true, "us", false, "collective start-up latency across nodes", false, 0, ""},
    };
    return list;
}

std::vector<CalibrationParameter> calibration_parameters_for(const GpuProfile& profile)
{
    std::vector<CalibrationParameter> list = calibration_parameters();
    // The datasheet's NVLink rate, as make-profile --from-datasheet records it.
    double bidirectional = 0;
    if (profile.source_details.is_object()) {
        const nlohmann::json* j = &profile.source_details;
        for (const char* key : {"figures", "datasheet", "scale_up", "gbytes_per_s_bidirectional"}) {
            if (j->is_object() && j->contains(key)) {
                j = &(*j)[key];
            } else {
                j = nullptr;
                break;
            }
        }
        if (j != nullptr && j->is_number()) {
            bidirectional = j->get<double>();
        }
    }
    for (auto& p : list) {
        if (p.name != "nvlink_bus_gbytes_per_s") {
            continue;
        }
        if (bidirectional > 0) {
            const double per_direction = bidirectional / 2;
            p.low = 0.5 * per_direction;
            p.high = 1.06 * per_direction;
            p.prior_width = 0.15 * per_direction;
            p.why = "NCCL's all-reduce bus bandwidth is bounded by the per-direction NVLink rate (" +
                    std::to_string(static_cast<int>(per_direction)) +
                    " GB/s from the datasheet), exceeded only by in-switch reduction (NVLink SHARP: ~476 of 450 GB/s on DGX H100, 1.06x, "
                    "nccl-tests issues #267/#290); 0.5x is a floor well below the 0.8x that datasheet profiles assume";
        } else {
            // Spec profiles without a datasheet rate: the generic range, widened to the profile's own value.
            p.high = std::max(p.high, 1.1 * profile.links.nvlink_bus_gbytes_per_s);
            p.prior_width = 0.15 * p.high;
        }
    }
    return list;
}

double ParameterSet::get(const std::string& name) const
{
    const ModelParameters& m = model;
    if (name == "gemm_max_efficiency")
        return m.gemm_max_efficiency;
    if (name == "gemm_max_efficiency_fp8")
        return m.gemm_max_efficiency_fp8;
    if (name == "gemm_max_efficiency_fp4")
        return m.gemm_max_efficiency_fp4;
    if (name == "gemm_k_half")
        return m.gemm_k_half;
    if (name == "gemm_fixed_us")
        return m.gemm_fixed_us;
    if (name == "flash_forward_efficiency")
        return m.flash_forward_efficiency;
    if (name == "flash_backward_efficiency")
        return m.flash_backward_efficiency;
    if (name == "memory_efficiency")
        return m.memory_efficiency;
    if (name == "memory_half_bytes")
        return m.memory_half_bytes;
    if (name == "memory_fixed_us")
        return m.memory_fixed_us;
    if (name == "kernel_launch_overhead_us")
        return m.kernel_launch_overhead_us;
    if (name == "host_overhead_us")
        return m.host_overhead_us;
    if (name == "moe_host_op_us")
        return m.moe_host_op_us;
    if (name == "microbatch_overhead_us")
        return m.microbatch_overhead_us;
    if (name == "nic_efficiency")
        return nic_efficiency;
    if (name == "nvlink_bus_gbytes_per_s")
        return nvlink_bus_gbytes_per_s;
    if (name == "nvlink_base_latency_us")
        return nvlink_base_latency_us;
    if (name == "inter_node_base_latency_us")
        return inter_node_base_latency_us;
    return 0;
}

void ParameterSet::set(const std::string& name, double v)
{
    ModelParameters& m = model;
    if (name == "gemm_max_efficiency")
        m.gemm_max_efficiency = v;
    else if (name == "gemm_max_efficiency_fp8")
        m.gemm_max_efficiency_fp8 = v;
    else if (name == "gemm_max_efficiency_fp4")
        m.gemm_max_efficiency_fp4 = v;
    else if (name == "gemm_k_half")
        m.gemm_k_half = v;
    else if (name == "gemm_fixed_us")
        m.gemm_fixed_us = v;
    else if (name == "flash_forward_efficiency")
        m.flash_forward_efficiency = v;
    else if (name == "flash_backward_efficiency")
        m.flash_backward_efficiency = v;
    else if (name == "memory_efficiency")
        m.memory_efficiency = v;
    else if (name == "memory_half_bytes")
        m.memory_half_bytes = v;
    else if (name == "memory_fixed_us")
        m.memory_fixed_us = v;
    else if (name == "kernel_launch_overhead_us")
        m.kernel_launch_overhead_us = v;
    else if (name == "host_overhead_us")
        m.host_overhead_us = v;
    else if (name == "moe_host_op_us")
        m.moe_host_op_us = v;
    else if (name == "microbatch_overhead_us")
        m.microbatch_overhead_us = v;
    else if (name == "nic_efficiency")
        nic_efficiency = v;
    else if (name == "nvlink_bus_gbytes_per_s")
        nvlink_bus_gbytes_per_s = v;
    else if (name == "nvlink_base_latency_us")
        nvlink_base_latency_us = v;
    else if (name == "inter_node_base_latency_us")
        inter_node_base_latency_us = v;
}

nlohmann::json ParameterSet::to_json() const
{
    nlohmann::json j = model_parameters_to_json(model);
    j["nic_efficiency"] = nic_efficiency;
    j["nvlink_bus_gbytes_per_s"] = nvlink_bus_gbytes_per_s;
    j["nvlink_base_latency_us"] = nvlink_base_latency_us;
    j["inter_node_base_latency_us"] = inter_node_base_latency_us;
    return j;
}

HardwareSpec hardware_spec_of(const GpuProfile& p)
{
    HardwareSpec hw;
    hw.id = p.id;
    hw.name = p.name;
    hw.vendor = p.vendor;
    hw.memory_gib = p.memory_gib;
    hw.memory_reserve_gib = p.memory_reserve_gib;
    hw.memory_bandwidth_gbytes_per_s = p.memory_bandwidth_gbytes_per_s;
    hw.peak_tflops = p.peak_tflops;
    hw.sm_count = p.sm_count;
    hw.price_usd_per_gpu_hour = p.price_usd_per_gpu_hour;
    hw.price_source = p.price_source;
    hw.links = p.links;
    if (p.source_details.is_object() && p.source_details.contains("figures")) {
        hw.figures_sources = p.source_details["figures"];
    }
    return hw;
}

ParameterSet parameters_of(const GpuProfile& p)
{
    ParameterSet ps;
    if (p.source_details.is_object() && p.source_details.contains("model_parameters")) {
        const auto parsed = model_parameters_from_json(p.source_details["model_parameters"]);
        if (parsed.ok()) {
            ps.model = *parsed;
        }
    }
    ps.model.kernel_launch_overhead_us = p.kernel_launch_overhead_us;
    ps.model.host_overhead_us = p.host_overhead_us;
    ps.model.moe_host_op_us = p.moe_host_op_us;
    ps.model.microbatch_overhead_us = p.microbatch_overhead_us;
    ps.nic_efficiency = p.links.nic_efficiency;
    ps.nvlink_bus_gbytes_per_s = p.links.nvlink_bus_gbytes_per_s;
    ps.nvlink_base_latency_us = p.links.nvlink_base_latency_us;
    ps.inter_node_base_latency_us = p.links.inter_node_base_latency_us;
    return ps;
}

ParameterSet parameters_from_json(const nlohmann::json& j, ParameterSet base)
{
    if (!j.is_object()) {
        return base;
    }
    for (const auto& p : calibration_parameters()) {
        const auto it = j.find(p.name);
        if (it != j.end() && it->is_number()) {
            base.set(p.name, it->get<double>());
        }
    }
    return base;
}

ParameterSet prior_parameters_of(const GpuProfile& p)
{
    const ParameterSet own = parameters_of(p);
    if (p.calibration.is_object()) {
        const auto it = p.calibration.find("start_parameters");
        if (it != p.calibration.end() && it->is_object()) {
            // The MoE terms are written only where they differ from their defaults (model_parameters_to_json),
            // so a prior without them had the defaults: taking the fitted values instead would leak the fit
            // into every refit and every held-out fold that falls back to the prior.
            ParameterSet base = own;
            const ModelParameters defaults;
            base.model.moe_host_op_us = defaults.moe_host_op_us;
            base.model.expert_all_to_all_efficiency = defaults.expert_all_to_all_efficiency;
            return parameters_from_json(*it, base);
        }
    }
    return own;
}

GpuProfile build_profile(const HardwareSpec& hardware, const ParameterSet& ps)
{
    HardwareSpec hw = hardware;
    hw.links.nic_efficiency = ps.nic_efficiency;
    hw.links.nvlink_bus_gbytes_per_s = ps.nvlink_bus_gbytes_per_s;
    hw.links.nvlink_base_latency_us = ps.nvlink_base_latency_us;
    hw.links.inter_node_base_latency_us = ps.inter_node_base_latency_us;
    return make_modeled_profile(hw, ps.model);
}

} // namespace vtrain
