// SPDX-License-Identifier: MIT
#pragma once
// Loading the shipped examples and profiles from the source tree, for the benchmark programs.
#include <cstdlib>
#include <iostream>
#include <string>

#include <sys/resource.h>

#include "vtrain/profile_json.h"
#include "vtrain/scenario_json.h"

namespace vtrain::bench {

inline Scenario load_example(const std::string& name)
{
    auto s = load_scenario(std::string(VTRAIN_SOURCE_DIR) + "/examples/" + name);
    if (!s.ok()) {
        std::cerr << name << ": " << s.first_error() << '\n';
        std::exit(1);
    }
    return s.value();
}

inline GpuProfile load_gpu(const std::string& id)
{
    ProfileLibrary lib;
    lib.folders.emplace_back(std::string(VTRAIN_SOURCE_DIR) + "/profiles");
    auto p = lib.load(id);
    if (!p.ok()) {
        std::cerr << id << ": " << p.first_error() << '\n';
        std::exit(1);
    }
    return p.value();
}

// Peak resident memory of this process so far, in MiB (Linux reports ru_maxrss in KiB).
inline double peak_rss_mib()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// CPU seconds (user + system, all threads) this process has used so far: unlike wall time, it does not
// grow when other processes compete for the cores.
inline double cpu_seconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

} // namespace vtrain::bench
