// SPDX-License-Identifier: MIT
#include "vtrain/profile_json.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "vtrain/json_fields.h"

#ifndef VTRAIN_SOURCE_PROFILE_DIR
#define VTRAIN_SOURCE_PROFILE_DIR ""
#endif
#ifndef VTRAIN_INSTALL_PROFILE_DIR
#define VTRAIN_INSTALL_PROFILE_DIR ""
#endif

namespace vtrain {
namespace {

using json_fields::Reader;

GemmTable read_gemm(Reader r)
{
    GemmTable t;
    t.m = r.grid("m");
    t.n = r.grid("n");
    t.k = r.grid("k");
    t.seconds = r.positive_values("seconds", t.m.size() * t.n.size() * t.k.size());
    return t;
}

AttentionTable read_attention(Reader r)
{
    AttentionTable t;
    t.batch_heads = r.grid("batch_heads");
    t.seq = r.grid("seq");
    t.head_dim = r.grid("head_dim");
    const std::size_t n = t.batch_heads.size() * t.seq.size() * t.head_dim.size();
    t.forward_seconds = r.positive_values("forward_seconds", n);
    t.backward_seconds = r.positive_values("backward_seconds", n);
    return t;
}

BytesTable read_bytes_table(Reader r)
{
    BytesTable t;
    t.bytes = r.grid("bytes");
    t.forward_seconds = r.positive_values("forward_seconds", t.bytes.size());
    t.backward_seconds = r.positive_values("backward_seconds", t.bytes.size());
    return t;
}

LinkSpec read_links(Reader r)
{
    LinkSpec l;
    l.gpus_per_node = r.required_int("gpus_per_node", 1, 1024);
    l.nvlink_domain_gpus = r.optional_int("nvlink_domain_gpus", 0, 1'000'000).value_or(0);
    if (l.nvlink_domain_gpus > 0 && l.gpus_per_node > 0 && l.nvlink_domain_gpus % l.gpus_per_node != 0 &&
        l.gpus_per_node % l.nvlink_domain_gpus != 0) {
        r.error("nvlink_domain_gpus", "must be a multiple or a divisor of gpus_per_node (" + std::to_string(l.gpus_per_node) +
                                          "): a domain holds whole hosts, or a host whole domains");
    }
    l.nvlink_bus_gbytes_per_s = r.required_number("nvlink_bus_gbytes_per_s", 1, 1e5);
    l.nvlink_base_latency_us = r.required_number("nvlink_base_latency_us", 0, 1e4);
    l.nvlink_step_latency_us = r.required_number("nvlink_step_latency_us", 0, 1e4);
    l.nics_per_node = r.required_int("nics_per_node", 1, 64);
    l.nic_gbit_per_s = r.required_number("nic_gbit_per_s", 1, 1e5);
    l.nic_efficiency = r.optional_number("nic_efficiency", 0.01, 1).value_or(0.9);
    l.inter_node_latency_us = r.required_number("inter_node_latency_us", 0, 1e4);
    l.inter_node_base_latency_us = r.optional_number("inter_node_base_latency_us", 0, 1e4).value_or(0);
    l.host_link_gbytes_per_s = r.optional_number("host_link_gbytes_per_s", 0, 1e5).value_or(0);
    l.host_memory_gbytes_per_s = r.optional_number("host_memory_gbytes_per_s", 0, 1e5).value_or(0);
    return l;
}

nlohmann::json gemm_to_json(const GemmTable& t)
{
    return {{"m", t.m}, {"n", t.n}, {"k", t.k}, {"seconds", t.seconds}};
}

// A band block ("calibration.band" or "default_band"): multipliers around a predicted time.
void check_band(Reader r)
{
    const double low = r.required_number("low", 1e-3, 1e3);
    const double high = r.required_number("high", 1e-3, 1e3);
    r.optional_number("coverage", 1e-3, 0.999);
    if (low > 0 && high > 0 && low > high) {
        r.error("low", "must not exceed high");
    }
    r.optional_string("source");
}

} // namespace

int nvlink_domain_size(const LinkSpec& links)
{
    return links.nvlink_domain_gpus > 0 ? links.nvlink_domain_gpus : std::max(1, links.gpus_per_node);
}

double GpuProfile::peak_flops(const std::string& dtype) const
{
    auto it = peak_tflops.find(dtype);
    if (it == peak_tflops.end()) {
        // Block-scaled formats run on the plain format's tensor cores at its rate (NVIDIA Blackwell
        // datasheet: NVFP4/MXFP4 at the FP4 rate, MXFP8 at the FP8 rate).
        if (dtype == "nvfp4" || dtype == "mxfp4") {
            it = peak_tflops.find("fp4");
        } else if (dtype == "mxfp8") {
            it = peak_tflops.find("fp8");
        }
    }
    return it == peak_tflops.end() ? 0.0 : it->second * 1e12;
}

std::string profile_provenance(const GpuProfile& p)
{
    if (p.source == "measured") {
        return "measured";
    }
    const bool has_band = p.calibration.is_object() && p.calibration.contains("band") && p.calibration["band"].is_object();
    return has_band ? "calibrated" : "modeled";
}

Expected<GpuProfile> profile_from_json(const nlohmann::json& json)
{
    Diagnostics diags;
    if (!json.is_object()) {
        return Diagnostic{"", "a profile must be a JSON object"};
    }
    Reader r(json, "", diags);
    GpuProfile p;
    r.required_int("schema_version", 1, 1);
    p.id = r.required_string("id");
    if (const auto why = json_fields::id_problem(p.id); why && !p.id.empty()) {
        r.error("id", "\"" + json_fields::bounded(p.id) + "\" is not a profile id: it " + *why + " (ids are file names such as \"h100-sxm5-80gb\")");
    }
    p.name = r.required_string("name");
    p.vendor = r.optional_string("vendor").value_or("");
    p.source = r.required_string("source");
    if (!p.source.empty() && p.source != "measured" && p.source != "modeled") {
        r.error("source", "must be \"measured\" or \"modeled\", not \"" + json_fields::bounded(p.source) + "\"");
    }
    if (json.contains("source_details") && json["source_details"].is_object()) {
        p.source_details = json["source_details"];
    } else {
        r.error("source_details", "is missing: a profile must say how it was measured or modeled");
    }
    p.memory_gib = r.required_number("memory_gib", 1, 1e4);
    p.memory_reserve_gib = r.optional_number("memory_reserve_gib", 0, 1e3).value_or(0);
    if (p.memory_reserve_gib >= p.memory_gib && p.memory_gib > 0) {
        r.error("memory_reserve_gib", "must be smaller than memory_gib");
    }
    p.memory_bandwidth_gbytes_per_s = r.required_number("memory_bandwidth_gbytes_per_s", 1, 1e6);
    p.sm_count = r.optional_int("sm_count", 1, 100000).value_or(0);
    p.kernel_launch_overhead_us = r.optional_number("kernel_launch_overhead_us", 0, 1e4).value_or(0);
    p.host_overhead_us = r.optional_number("host_overhead_us", 0, 1e4).value_or(0);
    p.microbatch_overhead_us = r.optional_number("microbatch_overhead_us", 0, 1e6).value_or(0);
    p.expert_all_to_all_efficiency = r.optional_number("expert_all_to_all_efficiency", 0.01, 1).value_or(p.expert_all_to_all_efficiency);
    p.moe_host_op_us = r.optional_number("moe_host_op_us", 0, 1e4).value_or(p.moe_host_op_us);
    p.price_usd_per_gpu_hour = r.optional_number("price_usd_per_gpu_hour", 0, 1e4).value_or(0);
    p.price_source = r.optional_string("price_source").value_or("");

    const Reader peaks = r.child("peak_tflops");
    if (peaks.is_object()) {
        for (const auto& [dtype, value] : peaks.json().items()) {
            Reader pr(peaks.json(), peaks.path(), diags);
            if (const auto v = pr.optional_number(dtype.c_str(), 1e-3, 1e6)) {
                p.peak_tflops[dtype] = *v;
            }
        }
    }
    if (p.peak_tflops.count("bf16") == 0 && p.peak_tflops.count("fp16") == 0) {
        r.error("peak_tflops", "needs at least \"bf16\" or \"fp16\"");
    }
    p.links = read_links(r.child("links"));

    const Reader gemm = r.child("gemm");
    if (gemm.is_object()) {
        for (const auto& [dtype, table] : gemm.json().items()) {
            p.gemm[dtype] = read_gemm(gemm.child(dtype.c_str()));
        }
    }
    if (p.gemm.count("bf16") == 0 && p.gemm.count("fp16") == 0) {
        r.error("gemm", "needs a \"bf16\" or \"fp16\" table");
    }
    p.flash_attention = read_attention(r.child("flash_attention"));
    const Reader mem = r.child("memory_bound");
    for (const auto& kind : memory_bound_kinds()) {
        if (mem.is_object()) {
            p.memory_bound[kind] = read_bytes_table(mem.child(kind.c_str()));
        }
    }
    Reader adam = r.child("adam");
    p.adam.params = adam.grid("params");
    p.adam.seconds = adam.positive_values("seconds", p.adam.params.size());

    if (json.contains("all_reduce") && !json["all_reduce"].is_null()) {
        if (!json["all_reduce"].is_array()) {
            r.error("all_reduce", "must be a list of measured tables");
        } else {
            for (std::size_t i = 0; i < json["all_reduce"].size(); ++i) {
                Reader ar(json["all_reduce"][i], "all_reduce[" + std::to_string(i) + "]", diags);
                CollectiveTable t;
                t.gpus = ar.required_int("gpus", 2, 1024);
                t.bytes = ar.grid("bytes");
                t.seconds = ar.positive_values("seconds", t.bytes.size());
                p.all_reduce.push_back(std::move(t));
            }
        }
    }
    if (json.contains("calibration") && !json["calibration"].is_null()) {
        if (!json["calibration"].is_object()) {
            r.error("calibration", "must be an object");
        } else {
            if (json["calibration"].contains("band")) {
                check_band(r.child("calibration").child("band"));
            }
            p.calibration = json["calibration"];
        }
    }
    if (json.contains("default_band") && !json["default_band"].is_null()) {
        check_band(r.child("default_band"));
        p.default_band = json["default_band"];
    }
    if (!diags.empty()) {
        return diags;
    }
    return p;
}

Expected<GpuProfile> load_profile(const std::filesystem::path& path)
{
    const auto json = json_fields::read_json_file(path);
    if (!json.ok()) {
        return json.errors();
    }
    auto result = profile_from_json(*json);
    if (!result.ok()) {
        Diagnostics prefixed;
        for (const auto& d : result.errors()) {
            prefixed.push_back({path.filename().string() + ": " + d.field, d.message});
        }
        return prefixed;
    }
    return result;
}

nlohmann::json profile_to_json(const GpuProfile& p)
{
    nlohmann::json j;
    j["schema_version"] = 1;
    j["id"] = p.id;
    j["name"] = p.name;
    if (!p.vendor.empty()) {
        j["vendor"] = p.vendor;
    }
    j["source"] = p.source;
    j["source_details"] = p.source_details;
    j["memory_gib"] = p.memory_gib;
    j["memory_reserve_gib"] = p.memory_reserve_gib;
    j["memory_bandwidth_gbytes_per_s"] = p.memory_bandwidth_gbytes_per_s;
    j["peak_tflops"] = p.peak_tflops;
    if (p.sm_count > 0) { // 0: not given (optional), which the reader would refuse as a value
        j["sm_count"] = p.sm_count;
    }
    j["kernel_launch_overhead_us"] = p.kernel_launch_overhead_us;
    j["host_overhead_us"] = p.host_overhead_us;
    j["microbatch_overhead_us"] = p.microbatch_overhead_us;
    j["price_usd_per_gpu_hour"] = p.price_usd_per_gpu_hour;
    j["price_source"] = p.price_source;
    const LinkSpec& l = p.links;
    j["links"] = {{"gpus_per_node", l.gpus_per_node},
                  {"nvlink_domain_gpus", l.nvlink_domain_gpus},
                  {"nvlink_bus_gbytes_per_s", l.nvlink_bus_gbytes_per_s},
                  {"nvlink_base_latency_us", l.nvlink_base_latency_us},
                  {"nvlink_step_latency_us", l.nvlink_step_latency_us},
                  {"nics_per_node", l.nics_per_node},
                  {"nic_gbit_per_s", l.nic_gbit_per_s},
                  {"nic_efficiency", l.nic_efficiency},
                  {"inter_node_base_latency_us", l.inter_node_base_latency_us},
                  {"inter_node_latency_us", l.inter_node_latency_us}};
    // Host figures only where known, so profiles without them read back unchanged.
    if (l.host_link_gbytes_per_s > 0) {
        j["links"]["host_link_gbytes_per_s"] = l.host_link_gbytes_per_s;
    }
    if (l.host_memory_gbytes_per_s > 0) {
        j["links"]["host_memory_gbytes_per_s"] = l.host_memory_gbytes_per_s;
    }
    for (const auto& [dtype, table] : p.gemm) {
        j["gemm"][dtype] = gemm_to_json(table);
    }
    const AttentionTable& a = p.flash_attention;
    j["flash_attention"] = {{"batch_heads", a.batch_heads},
                            {"seq", a.seq},
                            {"head_dim", a.head_dim},
                            {"forward_seconds", a.forward_seconds},
                            {"backward_seconds", a.backward_seconds}};
    for (const auto& [kind, t] : p.memory_bound) {
        j["memory_bound"][kind] = {{"bytes", t.bytes}, {"forward_seconds", t.forward_seconds}, {"backward_seconds", t.backward_seconds}};
    }
    j["adam"] = {{"params", p.adam.params}, {"seconds", p.adam.seconds}};
    if (!p.all_reduce.empty()) {
        for (const auto& t : p.all_reduce) {
            j["all_reduce"].push_back({{"gpus", t.gpus}, {"bytes", t.bytes}, {"seconds", t.seconds}});
        }
    }
    if (!p.calibration.is_null()) {
        j["calibration"] = p.calibration;
    }
    if (!p.default_band.is_null()) {
        j["default_band"] = p.default_band;
    }
    // The MoE terms are written only where they differ from their defaults (profiles made before them stay
    // byte-identical).
    const GpuProfile defaults;
    if (p.expert_all_to_all_efficiency != defaults.expert_all_to_all_efficiency) {
        j["expert_all_to_all_efficiency"] = p.expert_all_to_all_efficiency;
    }
    if (p.moe_host_op_us != defaults.moe_host_op_us) {
        j["moe_host_op_us"] = p.moe_host_op_us;
    }
    return j;
}

ProfileLibrary ProfileLibrary::default_library(const std::filesystem::path& executable_dir)
{
    ProfileLibrary lib;
    if (const char* env = std::getenv("VTRAIN_PROFILE_PATH")) {
        std::string s(env);
        std::size_t start = 0;
        while (start <= s.size()) {
            const std::size_t end = s.find(':', start);
            const std::string part = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!part.empty()) {
                lib.folders.emplace_back(part);
            }
            if (end == std::string::npos) {
                break;
            }
            start = end + 1;
        }
    }
    if (const char* home = std::getenv("HOME")) {
        lib.folders.emplace_back(std::filesystem::path(home) / ".local/share/vtrain/profiles");
    }
    if (!executable_dir.empty()) {
        // Installed layout: <prefix>/bin/vtrain and <prefix>/share/vtrain/profiles.
        lib.folders.push_back(executable_dir.parent_path() / "share/vtrain/profiles");
    }
    if (std::string(VTRAIN_INSTALL_PROFILE_DIR).size() > 0) {
        lib.folders.emplace_back(VTRAIN_INSTALL_PROFILE_DIR);
    }
    if (std::string(VTRAIN_SOURCE_PROFILE_DIR).size() > 0) {
        lib.folders.emplace_back(VTRAIN_SOURCE_PROFILE_DIR);
    }
    return lib;
}

std::vector<std::filesystem::path> ProfileLibrary::profile_files() const
{
    std::vector<std::filesystem::path> files;
    std::set<std::string> seen;
    for (const auto& folder : folders) {
        std::error_code ec;
        if (!std::filesystem::is_directory(folder, ec)) {
            continue;
        }
        std::vector<std::filesystem::path> here;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
            if (entry.path().extension() == ".json" && seen.insert(entry.path().stem().string()).second) {
                here.push_back(entry.path());
            }
        }
        std::sort(here.begin(), here.end());
        files.insert(files.end(), here.begin(), here.end());
    }
    return files;
}

std::vector<std::string> ProfileLibrary::ids() const
{
    std::vector<std::string> out;
    for (const auto& f : profile_files()) {
        out.push_back(f.stem().string());
    }
    return out;
}

Expected<GpuProfile> ProfileLibrary::load(const std::string& id) const
{
    if (const auto why = json_fields::id_problem(id)) {
        // A profile id is a file name in the folders below: an absolute or "../" value must not pick any file.
        std::string message = "\""; // (appended: a GCC 12 -Wrestrict false positive on "literal" + string)
        message += json_fields::bounded(id);
        message += "\" is not a GPU profile id: it ";
        message += *why;
        return Diagnostic{"cluster.gpu", message};
    }
    for (const auto& folder : folders) {
        const auto path = folder / (id + ".json");
        std::error_code ec;
        if (std::filesystem::is_regular_file(path, ec)) {
            return load_profile(path);
        }
    }
    std::string known;
    for (const auto& k : ids()) {
        known += (known.empty() ? "" : ", ") + k;
    }
    return Diagnostic{"cluster.gpu", "unknown GPU \"" + json_fields::bounded(id) + "\" (known: " + (known.empty() ? "none found" : known) + ")"};
}

} // namespace vtrain
