// SPDX-License-Identifier: MIT
#include "vtrain/gpu_datasheet.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace vtrain {
namespace {

using json_fields::Reader;

// Data types a datasheet may list dense peaks for.
const std::vector<std::string>& known_dtypes()
{
    static const std::vector<std::string> dtypes{"bf16", "fp16", "fp8", "fp4", "tf32", "fp32", "fp64", "int8"};
    return dtypes;
}

// Latencies of the NVLink and network tiers when a datasheet does not give measured ones: the H100 spec's
// estimates (profiles/specs history), the same order as the A100 figures fitted to nccl-tests.
constexpr double kNvlinkBaseLatencyUs = 25;
constexpr double kNvlinkStepLatencyUs = 3;
constexpr double kInterNodeBaseLatencyUs = 10;
constexpr double kInterNodeLatencyUs = 5;
// Achievable fraction of a NIC's line rate: nccl-tests maintainers expect 46-49 GB/s from a 400 Gb/s
// ConnectX-7 (50 GB/s line rate; NVIDIA/nccl-tests issues #267, #290).
constexpr double kNicEfficiency = 0.9;

void check_id(Reader& r, const std::string& id)
{
    if (id.empty()) {
        return;
    }
    bool ok = id.size() <= 64;
    for (const char c : id) {
        ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
    }
    if (!ok) {
        r.error("id", "must be a file stem of at most 64 characters: lower-case letters, digits, '-', '_' or '.'");
    }
}

void check_length(Reader& r, const char* key, const std::string& text, std::size_t max)
{
    if (text.size() > max) {
        r.error(key, "is " + std::to_string(text.size()) + " characters long (at most " + std::to_string(max) + ")");
    }
}

} // namespace

bool text_is_a_number(const std::string& text)
{
    const char* begin = text.c_str();
    while (std::isspace(static_cast<unsigned char>(*begin))) {
        ++begin;
    }
    if (*begin == '\0') {
        return false;
    }
    char* end = nullptr;
    errno = 0;
    std::strtod(begin, &end);
    while (end != nullptr && std::isspace(static_cast<unsigned char>(*end))) {
        ++end;
    }
    return end != nullptr && end != begin && *end == '\0';
}

nlohmann::json read_citations(Reader r, const std::vector<std::string>& required)
{
    nlohmann::json out = nlohmann::json::object();
    if (!r.is_object()) {
        return out;
    }
    for (const auto& [key, value] : r.json().items()) {
        if (!value.is_string()) {
            r.error(key, "must be a citation (text naming the document and its date), not " + std::string(value.type_name()));
            continue;
        }
        const std::string text = value.get<std::string>();
        if (text_is_a_number(text) || text.size() < 4) {
            r.error(key, "must be a citation (text naming the document and its date), not \"" + text.substr(0, 40) + "\"");
        } else if (text.size() > 4000) {
            r.error(key, "is " + std::to_string(text.size()) + " characters long (at most 4000)");
        } else {
            out[key] = text;
        }
    }
    for (const auto& key : required) {
        if (!out.contains(key) && !r.json().contains(key)) {
            r.error(key, "is missing: cite where the figure comes from");
        }
    }
    return out;
}

Expected<HardwareSpec> hardware_spec_from_datasheet(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a datasheet must be a JSON object"};
    }
    Reader r(json, "", diags);
    r.reject_unknown({"datasheet_version",
                      "id",
                      "name",
                      "vendor",
                      "description",
                      "memory_gib",
                      "memory_reserve_gib",
                      "memory_bandwidth_tbytes_per_s",
                      "dense_tflops",
                      "compute_units",
                      "tdp_w",
                      "node",
                      "scale_up",
                      "price_usd_per_gpu_hour",
                      "price_source",
                      "sources",
                      "model_parameters",
                      "links",
                      "calibration",
                      "default_band",
                      "host"});
    r.required_int("datasheet_version", 1, 1);
    HardwareSpec hw;
    hw.id = r.required_string("id");
    check_id(r, hw.id);
    hw.name = r.required_string("name");
    check_length(r, "name", hw.name, 200);
    hw.vendor = r.required_string("vendor");
    check_length(r, "vendor", hw.vendor, 40);
    if (const auto d = r.optional_string("description")) {
        check_length(r, "description", *d, 4000);
    }
    hw.memory_gib = r.required_number("memory_gib", 1, 1e4);
    hw.memory_reserve_gib = r.optional_number("memory_reserve_gib", 0, 1e3).value_or(3.0);
    if (hw.memory_gib > 0 && hw.memory_reserve_gib >= hw.memory_gib) {
        r.error("memory_reserve_gib", "must be smaller than memory_gib");
    }
    hw.memory_bandwidth_gbytes_per_s = r.required_number("memory_bandwidth_tbytes_per_s", 0.01, 1000) * 1000;
    hw.sm_count = r.required_int("compute_units", 1, 100000);
    const auto tdp_w = r.optional_number("tdp_w", 1, 1e5);

    Reader peaks = r.child("dense_tflops");
    if (peaks.is_object()) {
        peaks.reject_unknown(known_dtypes());
        for (const auto& dtype : known_dtypes()) {
            if (const auto v = peaks.optional_number(dtype.c_str(), 1e-3, 1e6)) {
                hw.peak_tflops[dtype] = *v;
            }
        }
        if (hw.peak_tflops.count("bf16") == 0 && hw.peak_tflops.count("fp16") == 0) {
            r.error("dense_tflops", "needs at least \"bf16\" or \"fp16\"");
        }
    }

    Reader node = r.child("node");
    node.reject_unknown({"gpus", "nics", "nic_gbit_per_s", "description"});
    hw.links.gpus_per_node = node.required_int("gpus", 1, 1024);
    hw.links.nics_per_node = node.required_int("nics", 1, 64);
    hw.links.nic_gbit_per_s = node.required_number("nic_gbit_per_s", 1, 1e5);
    node.optional_string("description");

    Reader up = r.child("scale_up");
    up.reject_unknown({"domain_gpus", "gbytes_per_s_bidirectional", "bus_efficiency", "name"});
    const int domain = up.required_int("domain_gpus", 1, 1'000'000);
    const double bidirectional = up.required_number("gbytes_per_s_bidirectional", 1, 1e6);
    const double bus_efficiency = up.optional_number("bus_efficiency", 0.01, 1).value_or(kDefaultScaleUpBusEfficiency);
    up.optional_string("name");
    const int host = hw.links.gpus_per_node;
    if (domain > 0 && host > 0 && domain % host != 0 && host % domain != 0) {
        up.error("domain_gpus", "must be a multiple or a divisor of node.gpus (" + std::to_string(host) + "): domains hold whole hosts");
    }
    hw.links.nvlink_domain_gpus = domain == host ? 0 : domain;
    hw.links.nvlink_bus_gbytes_per_s = bidirectional / 2 * bus_efficiency;
    hw.links.nvlink_base_latency_us = kNvlinkBaseLatencyUs;
    hw.links.nvlink_step_latency_us = kNvlinkStepLatencyUs;
    hw.links.nic_efficiency = kNicEfficiency;
    hw.links.inter_node_base_latency_us = kInterNodeBaseLatencyUs;
    hw.links.inter_node_latency_us = kInterNodeLatencyUs;

    // The host side (optional): the GPU's link to host memory per direction and the host's DRAM bandwidth,
    // each as printed with the GPUs that share it; one GPU's share goes into the profile (offload plans).
    nlohmann::json host_printed;
    if (r.has("host")) {
        Reader h = r.child("host");
        h.reject_unknown({"name", "link_gbytes_per_s", "link_gpus", "memory_gbytes_per_s", "memory_gpus"});
        const auto link = h.optional_number("link_gbytes_per_s", 0.1, 1e5);
        const int link_gpus = h.optional_int("link_gpus", 1, 1024).value_or(1);
        const auto memory = h.optional_number("memory_gbytes_per_s", 0.1, 1e6);
        const int memory_gpus = h.optional_int("memory_gpus", 1, 1024).value_or(1);
        h.optional_string("name");
        host_printed = nlohmann::json::object();
        if (link) {
            hw.links.host_link_gbytes_per_s = *link / link_gpus;
            host_printed["link_gbytes_per_s"] = *link;
            host_printed["link_gpus"] = link_gpus;
        }
        if (memory) {
            hw.links.host_memory_gbytes_per_s = *memory / memory_gpus;
            host_printed["memory_gbytes_per_s"] = *memory;
            host_printed["memory_gpus"] = memory_gpus;
        }
    }

    // Measured or fitted link figures (vtrain calibrate --spec writes these) replace the derived ones.
    if (r.has("links")) {
        Reader l = r.child("links");
        l.reject_unknown({"nvlink_bus_gbytes_per_s", "nvlink_base_latency_us", "nvlink_step_latency_us", "nic_efficiency",
                          "inter_node_base_latency_us", "inter_node_latency_us"});
        hw.links.nvlink_bus_gbytes_per_s = l.optional_number("nvlink_bus_gbytes_per_s", 1, 1e5).value_or(hw.links.nvlink_bus_gbytes_per_s);
        hw.links.nvlink_base_latency_us = l.optional_number("nvlink_base_latency_us", 0, 1e4).value_or(hw.links.nvlink_base_latency_us);
        hw.links.nvlink_step_latency_us = l.optional_number("nvlink_step_latency_us", 0, 1e4).value_or(hw.links.nvlink_step_latency_us);
        hw.links.nic_efficiency = l.optional_number("nic_efficiency", 0.01, 1).value_or(hw.links.nic_efficiency);
        hw.links.inter_node_base_latency_us = l.optional_number("inter_node_base_latency_us", 0, 1e4).value_or(hw.links.inter_node_base_latency_us);
        hw.links.inter_node_latency_us = l.optional_number("inter_node_latency_us", 0, 1e4).value_or(hw.links.inter_node_latency_us);
    }

    hw.price_usd_per_gpu_hour = r.required_number("price_usd_per_gpu_hour", 0, 1e4);
    hw.price_source = r.required_string("price_source");
    check_length(r, "price_source", hw.price_source, 4000);
    if (text_is_a_number(hw.price_source)) {
        r.error("price_source", "must say where the price comes from and when, not \"" + hw.price_source.substr(0, 40) + "\"");
    }

    const nlohmann::json sources = read_citations(
        r.child("sources"), r.has("host")
                                ? std::vector<std::string>{"dense_tflops", "memory", "compute_units", "node", "scale_up", "model_parameters", "host"}
                                : std::vector<std::string>{"dense_tflops", "memory", "compute_units", "node", "scale_up", "model_parameters"});
    if (!diags.empty()) {
        return diags;
    }
    // What the profile records: the figures as printed, their citations, and the rules that derived the rest.
    nlohmann::json printed = {
        {"memory_gib", hw.memory_gib},
        {"memory_bandwidth_tbytes_per_s", hw.memory_bandwidth_gbytes_per_s / 1000},
        {"dense_tflops", hw.peak_tflops},
        {"compute_units", hw.sm_count},
        {"node", {{"gpus", host}, {"nics", hw.links.nics_per_node}, {"nic_gbit_per_s", hw.links.nic_gbit_per_s}}},
        {"scale_up", {{"domain_gpus", domain}, {"gbytes_per_s_bidirectional", bidirectional}, {"bus_efficiency", bus_efficiency}}}};
    if (!host_printed.is_null()) {
        printed["host"] = host_printed;
    }
    if (tdp_w) {
        printed["tdp_w"] = *tdp_w;
    }
    hw.figures_sources = sources;
    hw.figures_sources["datasheet"] = printed;
    hw.figures_sources["derived"] =
        "vtrain make-profile --from-datasheet: nvlink_bus_gbytes_per_s = gbytes_per_s_bidirectional / 2 x bus_efficiency; "
        "nic_efficiency 0.9 and the latencies (NVLink 25 us + 3 us per step, network 10 us + 5 us per step) are defaults "
        "unless the datasheet's \"links\" block gives measured ones";
    return hw;
}

} // namespace vtrain
