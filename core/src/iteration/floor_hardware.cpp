// SPDX-License-Identifier: MIT
// The datasheet figures the physical floors use (physical_floors.h): peaks, HBM bandwidth and link line
// rates, never the calibrated or achievable figures the simulator's cost model reads.
#include <algorithm>
#include <tuple>

#include "vtrain/gpu_datasheet.h"
#include "vtrain/physical_floors.h"

namespace vtrain {
namespace {

// PCIe 4.0 x16: 16 GT/s x 16 lanes = 32 GB/s per direction (PCI-SIG PCI Express 4.0 specification, 2017), the
// host link of A100 SXM4 (NVIDIA A100 datasheet: "PCIe Gen4: 64 GB/s" bidirectional) and the simulator's
// default where a profile states none (model/host_offload.h).
constexpr double kPcie4BytesPerS = 32e9;

// The scale-up (NVLink/xGMI) line rate per direction a datasheet states: "scale_up":
// {"gbytes_per_s_bidirectional": ...} of profiles made from profiles/datasheets/ (make-profile copies the
// datasheet into source_details.figures.datasheet). 0 when the profile does not carry it.
double datasheet_scale_up_bytes_per_s(const GpuProfile& profile)
{
    const nlohmann::json& d = profile.source_details;
    if (!d.is_object() || !d.contains("figures") || !d["figures"].is_object()) {
        return 0;
    }
    const nlohmann::json& f = d["figures"];
    if (!f.contains("datasheet") || !f["datasheet"].is_object() || !f["datasheet"].contains("scale_up")) {
        return 0;
    }
    const nlohmann::json& s = f["datasheet"]["scale_up"];
    if (!s.is_object() || !s.contains("gbytes_per_s_bidirectional") || !s["gbytes_per_s_bidirectional"].is_number()) {
        return 0;
    }
    return s["gbytes_per_s_bidirectional"].get<double>() / 2 * 1e9;
}

// The precision's dense peak: FP32 training runs on TF32 tensor cores where the GPU has them (and the
// simulator's timer picks the TF32 table, else the BF16 one); FP8 and NVFP4 fall back to the next wider
// format a part has (an A100 runs "FP8" GEMMs at BF16 speed). Where several apply the fastest is taken: a
// floor must not assume a slower unit than the simulator may use.
std::pair<std::string, double> precision_peak(const GpuProfile& profile, Precision precision)
{
    const double bf16 = profile.peak_flops("bf16");
    switch (precision) {
    case Precision::Fp32: {
        const double tf32 = profile.peak_flops("tf32");
        if (tf32 > 0) {
            return {"tf32", std::max(tf32, profile.peak_flops("fp32"))};
        }
        return {"bf16", std::max(bf16, profile.peak_flops("fp32"))};
    }
    case Precision::Fp8: {
        const double fp8 = profile.peak_flops("fp8");
        return fp8 > bf16 ? std::pair<std::string, double>{"fp8", fp8} : std::pair<std::string, double>{"bf16", bf16};
    }
    case Precision::Nvfp4: {
        const double fp4 = profile.peak_flops("fp4");
        const double fp8 = profile.peak_flops("fp8");
        if (fp4 >= std::max(fp8, bf16) && fp4 > 0) {
            return {"fp4", fp4};
        }
        return fp8 > bf16 ? std::pair<std::string, double>{"fp8", fp8} : std::pair<std::string, double>{"bf16", bf16};
    }
    case Precision::Fp16: return {"fp16", std::max(profile.peak_flops("fp16"), bf16)};
    case Precision::Bf16: break;
    }
    return {"bf16", bf16};
}

} // namespace

FloorHardware floor_hardware(const ClusterSpec& cluster, const GpuProfile& profile, Precision precision)
{
    FloorHardware hw;
    hw.gpu = profile.id;
    std::tie(hw.peak_dtype, hw.peak_flops) = precision_peak(profile, precision);
    hw.hbm_bytes_per_s = profile.memory_bandwidth_gbytes_per_s * 1e9;
    hw.gpus_per_node = std::max(1, cluster.gpus_per_node > 0 ? cluster.gpus_per_node : profile.links.gpus_per_node);
    const int domain = cluster.nvlink_domain_gpus > 0 ? cluster.nvlink_domain_gpus : profile.links.nvlink_domain_gpus;
    hw.nvlink_domain_gpus = std::max(1, domain > 0 ? domain : hw.gpus_per_node);
    // Scale-up line rate: the datasheet's per-direction rate; a profile without one (made from a spec, e.g.
    // the A100s) gets its achievable bus bandwidth over make-profile's default bus efficiency, i.e. the rate
    // that bus bandwidth implies (gpu_datasheet.h). A bus bandwidth the scenario states describes its own
    // hardware: the line rate is then at least that.
    double line = datasheet_scale_up_bytes_per_s(profile);
    if (line <= 0) {
        line = profile.links.nvlink_bus_gbytes_per_s * 1e9 / kDefaultScaleUpBusEfficiency;
    }
    if (cluster.links.nvlink_bus_gbytes_per_s) {
        line = std::max(line, *cluster.links.nvlink_bus_gbytes_per_s * 1e9);
    }
    hw.nvlink_bytes_per_s = line;
    hw.scale_up_name = profile.vendor == "AMD" ? "xGMI" : "NVLink";
    // NICs at line rate (nic_efficiency is the simulator's achievable share; the floor does not use it).
    hw.nics_per_node = cluster.links.nics_per_node.value_or(profile.links.nics_per_node);
    hw.nic_gbit_per_s = cluster.links.nic_gbit_per_s.value_or(profile.links.nic_gbit_per_s);
    hw.nic_bytes_per_s_per_gpu = hw.nics_per_node * hw.nic_gbit_per_s * 1e9 / 8 / hw.gpus_per_node;
    hw.host_link_bytes_per_s = profile.links.host_link_gbytes_per_s > 0 ? profile.links.host_link_gbytes_per_s * 1e9 : kPcie4BytesPerS;
    return hw;
}

} // namespace vtrain
