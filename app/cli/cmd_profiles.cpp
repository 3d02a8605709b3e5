// SPDX-License-Identifier: MIT
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "commands.h"

namespace vtrain::cli {

const char* const kProfilesHelp = R"(usage: vtrain profiles [--json]

Lists the GPU profiles found on the search path ($VTRAIN_PROFILE_PATH, ~/.local/share/vtrain/profiles,
the installed profiles) with their source: "measured" on a real GPU, or "modeled" from datasheet figures.

example:
  vtrain profiles
)";

int run_profiles(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {}, {"--json"}, error);
    if (!args) {
        return report_bad_input(error);
    }
    const ProfileLibrary library = profile_library();
    nlohmann::json list = nlohmann::json::array();
    if (!args->flag("--json")) {
        std::printf("%-18s %-26s %-9s %8s %9s %10s  %s\n", "id", "name", "source", "memory", "bf16 peak", "$/GPU-h", "file");
    }
    int broken = 0;
    for (const auto& file : library.profile_files()) {
        const auto profile = load_profile(file);
        if (!profile.ok()) {
            ++broken;
            std::cerr << "vtrain: skipping " << file.string() << ": " << profile.first_error() << '\n';
            continue;
        }
        const GpuProfile& p = *profile;
        if (args->flag("--json")) {
            list.push_back({{"id", p.id}, {"name", p.name}, {"source", p.source}, {"memory_gib", p.memory_gib},
                            {"peak_tflops", p.peak_tflops}, {"price_usd_per_gpu_hour", p.price_usd_per_gpu_hour}, {"file", file.string()},
                            {"source_details", p.source_details}});
        } else {
            std::printf("%-18s %-26s %-9s %5.0f GiB %9.0f %10.2f  %s\n", p.id.c_str(), p.name.c_str(), p.source.c_str(), p.memory_gib,
                        p.peak_flops("bf16") / 1e12, p.price_usd_per_gpu_hour, file.string().c_str());
        }
    }
    if (args->flag("--json")) {
        std::cout << output_json(list, 2) << '\n';
    }
    return broken > 0 ? kExitFailure : kExitOk;
}

} // namespace vtrain::cli
