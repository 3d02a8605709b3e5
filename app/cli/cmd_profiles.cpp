// SPDX-License-Identifier: MIT
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/json_fields.h"
#include "vtrain/uncertainty.h"

namespace vtrain::cli {

const char* const kProfilesHelp = R"(usage: vtrain profiles [--json]

Lists the GPU profiles found on the search path ($VTRAIN_PROFILE_PATH, ~/.local/share/vtrain/profiles,
the installed profiles): vendor, memory, dense peaks, NVLink domain and host size, default price, and
where the profile comes from: "measured" (operator tables timed on the GPU), "calibrated" (modeled, fitted
to published runs, with a cross-validated band) or "modeled" (datasheet figures, not fitted to runs of
the part). The band is the range the measured iteration time falls in around a prediction; uncalibrated
profiles get a wide default band (marked *), and every simulation that uses one says so.

example:
  vtrain profiles
)";

namespace {

std::string vendor_of(const GpuProfile& p)
{
    if (!p.vendor.empty()) {
        return p.vendor;
    }
    return p.name.substr(0, p.name.find(' ')); // older profiles: the name starts with the vendor
}

std::string peak_text(const GpuProfile& p, const char* dtype)
{
    const double tflops = p.peak_flops(dtype) / 1e12;
    if (tflops <= 0) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", tflops);
    return text;
}

} // namespace

int run_profiles(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {}, {"--json"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    const bool as_json = args->flag("--json");
    const ProfileLibrary library = profile_library();
    nlohmann::json list = nlohmann::json::array();
    if (!as_json) {
        std::printf("%-16s %-7s %-44s %7s %6s %6s %6s %6s %7s %-10s %-16s\n", "id", "vendor", "name", "memory", "bf16", "fp8", "fp4", "domain",
                    "$/GPU-h", "source", "band (80%)");
        std::printf("%-16s %-7s %-44s %7s %6s %6s %6s %6s %7s %-10s %-16s\n", "", "", "", "GiB", "TFLOP/s", "", "", "/host", "", "", "");
    }
    int broken = 0;
    bool any_default_band = false;
    for (const auto& file : library.profile_files()) {
        const auto profile = load_profile(file);
        if (!profile.ok()) {
            ++broken;
            std::cerr << "vtrain: skipping " << file.string() << ": " << profile.first_error() << '\n';
            continue;
        }
        const GpuProfile& p = *profile;
        const PredictionBand band = prediction_band(p).value_or(default_uncalibrated_band());
        const int domain = nvlink_domain_size(p.links);
        if (as_json) {
            list.push_back(
                {{"id", p.id},
                 {"name", p.name},
                 {"vendor", vendor_of(p)},
                 {"source", p.source},
                 {"provenance", profile_provenance(p)},
                 {"memory_gib", p.memory_gib},
                 {"memory_bandwidth_gbytes_per_s", p.memory_bandwidth_gbytes_per_s},
                 {"peak_tflops", p.peak_tflops},
                 {"gpus_per_node", p.links.gpus_per_node},
                 {"nvlink_domain_gpus", domain},
                 {"nics_per_node", p.links.nics_per_node},
                 {"nic_gbit_per_s", p.links.nic_gbit_per_s},
                 {"price_usd_per_gpu_hour", p.price_usd_per_gpu_hour},
                 {"price_source", p.price_source},
                 {"band",
                  {{"low", band.low}, {"high", band.high}, {"coverage", band.coverage}, {"calibrated", band.calibrated}, {"source", band.source}}},
                 {"file", file.string()},
                 {"source_details", p.source_details}});
        } else {
            any_default_band = any_default_band || !band.calibrated;
            const std::string band_text = band_label(band) + (band.calibrated ? "" : " *");
            const std::string topology = std::to_string(domain) + "/" + std::to_string(p.links.gpus_per_node);
            // Names and ids are a profile file's text: control characters are shown, not sent to the terminal.
            std::printf("%-16s %-7s %-44s %7.0f %6s %6s %6s %6s %7.2f %-10s %-16s\n", json_fields::printable(p.id).c_str(),
                        json_fields::printable(vendor_of(p)).c_str(), json_fields::printable(p.name).substr(0, 44).c_str(), p.memory_gib,
                        peak_text(p, "bf16").c_str(), peak_text(p, "fp8").c_str(), peak_text(p, "fp4").c_str(), topology.c_str(),
                        p.price_usd_per_gpu_hour, profile_provenance(p).c_str(), band_text.c_str());
        }
    }
    if (as_json) {
        std::cout << output_json(list, 2) << '\n';
    } else if (any_default_band) {
        std::printf("\n* %s.\n", default_uncalibrated_band().source.c_str());
    }
    return broken > 0 ? kExitFailure : kExitOk;
}

} // namespace vtrain::cli
