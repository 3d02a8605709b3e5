// SPDX-License-Identifier: MIT
#include "vtrain/hardware_spec_json.h"

#include <cmath>

#include "vtrain/gpu_datasheet.h"
#include "vtrain/json_fields.h"
#include "vtrain/profile_json.h"

namespace vtrain {
namespace {

using json_fields::Reader;

// Iterative depth walk: hostile input may nest a million levels.
bool deeper_than(const nlohmann::json& root, int limit)
{
    std::vector<std::pair<const nlohmann::json*, int>> stack{{&root, 0}};
    while (!stack.empty()) {
        const auto [value, depth] = stack.back();
        stack.pop_back();
        if (!value->is_structured()) {
            continue;
        }
        if (depth + 1 > limit) {
            return true;
        }
        for (const auto& child : *value) {
            stack.emplace_back(&child, depth + 1);
        }
    }
    return false;
}

// Free text that reads as a number ("nan", "inf", "1e999") where a block is copied verbatim: a number
// smuggled in as text. Reports the first with its path.
void refuse_numeric_text(const nlohmann::json& root, const std::string& path, Diagnostics& diags)
{
    std::vector<std::pair<const nlohmann::json*, std::string>> stack{{&root, path}};
    while (!stack.empty()) {
        const auto [value, where] = stack.back();
        stack.pop_back();
        if (value->is_object()) {
            for (auto it = value->begin(); it != value->end(); ++it) {
                stack.emplace_back(&it.value(), where + "." + it.key());
            }
        } else if (value->is_array()) {
            for (std::size_t i = 0; i < value->size(); ++i) {
                stack.emplace_back(&(*value)[i], where + "[" + std::to_string(i) + "]");
            }
        } else if (value->is_string() && text_is_a_number(value->get_ref<const std::string&>())) {
            diags.push_back(
                {where, "holds the text \"" + value->get_ref<const std::string&>().substr(0, 40) + "\" where a number or a description belongs"});
            return;
        } else if (value->is_number_float() && !std::isfinite(value->get<double>())) {
            diags.push_back({where, "must be a finite number"});
            return;
        }
    }
}

} // namespace

bool json_deeper_than(const nlohmann::json& json, int limit)
{
    return deeper_than(json, limit);
}

bool is_datasheet(const nlohmann::json& json)
{
    return json.is_object() && json.contains("datasheet_version");
}

Expected<HardwareSpec> hardware_spec_from_json(const nlohmann::json& json)
{
    if (is_datasheet(json)) {
        return hardware_spec_from_datasheet(json);
    }
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a hardware spec must be a JSON object"};
    }
    Reader r(json, "", diags);
    r.reject_unknown({"id", "name", "vendor", "memory_gib", "memory_reserve_gib", "memory_bandwidth_gbytes_per_s", "peak_tflops", "sm_count",
                      "price_usd_per_gpu_hour", "price_source", "links", "model_parameters", "figures_sources", "calibration", "default_band",
                      "description"});
    HardwareSpec hw;
    hw.id = r.required_string("id");
    hw.name = r.required_string("name");
    hw.vendor = r.optional_string("vendor").value_or("");
    hw.memory_gib = r.required_number("memory_gib", 1, 1e4);
    hw.memory_reserve_gib = r.required_number("memory_reserve_gib", 0, 1e3);
    hw.memory_bandwidth_gbytes_per_s = r.required_number("memory_bandwidth_gbytes_per_s", 1, 1e6);
    hw.sm_count = r.required_int("sm_count", 1, 100000);
    hw.price_usd_per_gpu_hour = r.required_number("price_usd_per_gpu_hour", 0, 1e4);
    hw.price_source = r.required_string("price_source");
    Reader peaks = r.child("peak_tflops");
    if (peaks.is_object()) {
        for (const auto& [dtype, v] : peaks.json().items()) {
            if (const auto value = peaks.optional_number(dtype.c_str(), 1e-3, 1e6)) {
                hw.peak_tflops[dtype] = *value;
            }
        }
    }
    Reader l = r.child("links");
    l.reject_unknown({"gpus_per_node", "nvlink_domain_gpus", "nvlink_bus_gbytes_per_s", "nvlink_base_latency_us", "nvlink_step_latency_us",
                      "nics_per_node", "nic_gbit_per_s", "nic_efficiency", "inter_node_base_latency_us", "inter_node_latency_us",
                      "host_link_gbytes_per_s", "host_memory_gbytes_per_s"});
    hw.links.host_link_gbytes_per_s = l.optional_number("host_link_gbytes_per_s", 0, 1e5).value_or(0);
    hw.links.host_memory_gbytes_per_s = l.optional_number("host_memory_gbytes_per_s", 0, 1e5).value_or(0);
    hw.links.gpus_per_node = l.required_int("gpus_per_node", 1, 1024);
    hw.links.nvlink_domain_gpus = l.optional_int("nvlink_domain_gpus", 0, 1'000'000).value_or(0);
    hw.links.nvlink_bus_gbytes_per_s = l.required_number("nvlink_bus_gbytes_per_s", 1, 1e5);
    hw.links.nvlink_base_latency_us = l.required_number("nvlink_base_latency_us", 0, 1e4);
    hw.links.nvlink_step_latency_us = l.required_number("nvlink_step_latency_us", 0, 1e4);
    hw.links.nics_per_node = l.required_int("nics_per_node", 1, 64);
    hw.links.nic_gbit_per_s = l.required_number("nic_gbit_per_s", 1, 1e5);
    hw.links.nic_efficiency = l.required_number("nic_efficiency", 0.01, 1);
    hw.links.inter_node_base_latency_us = l.required_number("inter_node_base_latency_us", 0, 1e4);
    hw.links.inter_node_latency_us = l.required_number("inter_node_latency_us", 0, 1e4);
    if (r.has("figures_sources")) {
        hw.figures_sources = read_citations(r.child("figures_sources"), {});
    } else {
        hw.figures_sources = nlohmann::json::object();
    }
    if (!diags.empty()) {
        return diags;
    }
    return hw;
}

Expected<GpuProfile> build_profile_from_spec(const nlohmann::json& spec)
{
    if (!spec.is_object()) {
        return Diagnostic{"", "a spec or datasheet must be a JSON object"};
    }
    if (deeper_than(spec, kMaxSpecDepth)) {
        return Diagnostic{"", "nests deeper than " + std::to_string(kMaxSpecDepth) + " levels (a spec or datasheet is a few levels deep)"};
    }
    const auto hardware = hardware_spec_from_json(spec);
    const auto parameters = model_parameters_from_json(spec.contains("model_parameters") ? spec["model_parameters"] : nlohmann::json::object());
    Diagnostics diags;
    if (!hardware.ok()) {
        diags = hardware.errors();
    }
    if (!parameters.ok()) {
        diags.insert(diags.end(), parameters.errors().begin(), parameters.errors().end());
    }
    for (const char* block : {"calibration", "default_band"}) {
        if (spec.contains(block) && !spec[block].is_null()) {
            if (!spec[block].is_object()) {
                diags.push_back({block, "must be an object"});
            } else {
                refuse_numeric_text(spec[block], block, diags);
            }
        }
    }
    if (!diags.empty()) {
        return diags;
    }
    GpuProfile profile = make_modeled_profile(*hardware, *parameters);
    if (spec.contains("calibration") && !spec["calibration"].is_null()) {
        profile.calibration = spec["calibration"];
    }
    if (spec.contains("default_band") && !spec["default_band"].is_null()) {
        profile.default_band = spec["default_band"];
    }
    // What make-profile writes must load: the loader range-checks every field and table again.
    const auto reloaded = profile_from_json(profile_to_json(profile));
    if (!reloaded.ok()) {
        return reloaded.errors();
    }
    return profile;
}

} // namespace vtrain
