// SPDX-License-Identifier: MIT
// The floors in words: which resource binds and how much of the predicted iteration it accounts for.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "vtrain/physical_floors.h"

namespace vtrain {
namespace {

std::string number(const char* format, double v)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string percent(double part, double whole)
{
    return whole > 0 ? number("%.0f%%", 100 * part / whole) : std::string("-");
}

std::string bound_word(FloorResource r, const FloorHardware& hw)
{
    switch (r) {
    case FloorResource::Compute: return "compute-bound";
    case FloorResource::Hbm: return "memory-bound";
    case FloorResource::NvLink: return hw.scale_up_name + "-bound";
    case FloorResource::Network: return "network-bound";
    case FloorResource::HostLink: return "host-link-bound";
    }
    return "";
}

std::string everything(FloorResource r, const FloorHardware& hw)
{
    switch (r) {
    case FloorResource::Compute: return "all FLOPs";
    case FloorResource::Hbm: return "all HBM traffic";
    case FloorResource::NvLink: return "all " + hw.scale_up_name + " traffic";
    case FloorResource::Network: return "all network traffic";
    case FloorResource::HostLink: return "all host-link traffic";
    }
    return "";
}

const char* preposition(FloorResource r)
{
    switch (r) {
    case FloorResource::Compute: return " at ";
    case FloorResource::Hbm: return " through ";
    default: break;
    }
    return " over ";
}

} // namespace

std::string floor_resource_label(FloorResource resource, const FloorHardware& hw)
{
    switch (resource) {
    case FloorResource::Compute: {
        std::string dtype = hw.peak_dtype;
        std::transform(dtype.begin(), dtype.end(), dtype.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        return "the " + dtype + " dense peak (" + number("%.0f", hw.peak_flops / 1e12) + " TFLOP/s)";
    }
    case FloorResource::Hbm: return "HBM (" + number("%.2f", hw.hbm_bytes_per_s / 1e12) + " TB/s)";
    case FloorResource::NvLink: return hw.scale_up_name + " (" + number("%.0f", hw.nvlink_bytes_per_s / 1e9) + " GB/s per direction)";
    case FloorResource::Network:
        return "the NICs (" + std::to_string(hw.nics_per_node) + " x " + number("%g", hw.nic_gbit_per_s) + " Gb/s per node of " +
               std::to_string(hw.gpus_per_node) + " GPUs)";
    case FloorResource::HostLink: return "the host link (" + number("%.0f", hw.host_link_bytes_per_s / 1e9) + " GB/s per direction)";
    }
    return "";
}

std::string floor_summary(const PhysicalFloors& floors, const FloorHardware& hw, double iteration_s)
{
    const FloorResource r = floors.binding;
    const double whole = floors.binding_s();
    if (!(whole > 0) || !(iteration_s > 0)) {
        return "no physical floor (the plan has no work)";
    }
    const FloorTerm t = floors.largest_term(r);
    const double part = floors.term_s[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)];
    const bool plural = t == FloorTerm::ModelFlops || t == FloorTerm::RecomputeFlops || t == FloorTerm::Weights || t == FloorTerm::PipelineSends ||
                        t == FloorTerm::TensorParallel;
    std::string s = bound_word(r, hw) + ": the " + to_string(t) + preposition(r) + floor_resource_label(r, hw) + (plural ? " are " : " is ") +
                    percent(part, iteration_s) + " of the iteration";
    if (part < whole * 0.995) {
        s += " (" + everything(r, hw) + " " + percent(whole, iteration_s) + ")";
    }
    return s;
}

} // namespace vtrain
